/**
 * The one place that depends on effect's McpClient internals. Verified against effect 4.1.0
 * (pinned exactly): `McpClient.make` has no generic request method, does not expose the server
 * capabilities and sends empty client capabilities, so the Transport it runs over is wrapped to
 * (1) declare the Skills extension in `initialize` / the 2026-07-28 `_meta` envelope,
 * (2) capture `capabilities` from the `initialize` / `server/discover` result and
 * (3) send `skills/*`, `resources/read` and `resources/directory/read` directly with string ids,
 * which cannot collide with McpClient's numeric ids on the stdio transport's id map.
 * A bump of effect must re-run the wire tests of this package.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as McpClient from "effect/ai/McpClient"
import {
  McpClientError,
  ProtocolError,
  TimeoutError,
  UnsupportedError,
  HttpError
} from "effect/ai/McpClientError"
import type * as McpSchema from "effect/ai/McpSchema"
import type * as Scope from "effect/Scope"
import { Extension } from "@mcp-skills/core"

/** @internal */
export interface Connection {
  readonly protocolVersion: McpClient.ProtocolVersion
  readonly mcp: McpClient.McpClient
  /** The raw server `capabilities` object of the handshake. */
  readonly capabilities: unknown
  /**
   * Sends one request and answers its `result`; JSON-RPC errors (in a body or an HTTP error
   * status) fail with `McpClientError` carrying the code.
   */
  readonly request: (
    method: string,
    params: Record<string, unknown>,
    timeout: Duration.Duration
  ) => Effect.Effect<unknown, McpClientError>
}

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const CapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
const SkillsDeclaration = { [Extension.ExtensionId]: {} }

const withExtension = (capabilities: unknown): Record<string, unknown> => {
  const base = isRecord(capabilities) ? capabilities : {}
  const extensions = isRecord(base.extensions) ? base.extensions : {}
  return { ...base, extensions: { ...extensions, ...SkillsDeclaration } }
}

// Declares the extension wherever McpClient sends client capabilities (spec §7 item 4: servers
// that insist on a client declaration exist; the spec does not require one).
const declare = (message: McpSchema.JsonRpcRequest): McpSchema.JsonRpcRequest => {
  const params = message.params
  if (params === undefined) return message
  if (message.method === "initialize") {
    return { ...message, params: { ...params, capabilities: withExtension(params.capabilities) } }
  }
  const meta = params._meta
  if (isRecord(meta) && CapabilitiesKey in meta) {
    return { ...message, params: { ...params, _meta: { ...meta, [CapabilitiesKey]: withExtension(meta[CapabilitiesKey]) } } }
  }
  return message
}

/**
 * Connects McpClient over a wrapped transport and returns the connection with the captured
 * server capabilities.
 *
 * @internal
 */
export const connect = Effect.fnUntraced(function*(
  transport: McpClient.Transport,
  options: {
    readonly clientInfo: { readonly name: string; readonly version: string }
    readonly timeout: Duration.Duration
  }
): Effect.fn.Return<Connection, McpClientError, Scope.Scope> {
  const protocolVersion = transport.protocol.protocolVersion
  const modern = protocolVersion === "2026-07-28"
  let capabilities: unknown = undefined

  const wrapped: McpClient.Transport = {
    ...transport,
    request: (message, tool) =>
      transport.request(declare(message), tool).pipe(
        Effect.map((response) => {
          if ((message.method === "initialize" || message.method === "server/discover") && "result" in response) {
            const result = response.result
            if (isRecord(result)) capabilities = result.capabilities
          }
          return response
        })
      )
  }

  const mcp = yield* McpClient.make({ ...options.clientInfo, timeout: options.timeout }).pipe(
    Effect.provideService(McpClient.Transport, wrapped)
  )

  const meta = {
    "io.modelcontextprotocol/protocolVersion": protocolVersion,
    "io.modelcontextprotocol/clientInfo": options.clientInfo,
    [CapabilitiesKey]: withExtension({})
  }
  let nextId = 1

  const fail = (reason: ConstructorParameters<typeof McpClientError>[0]["reason"]) => new McpClientError({ reason })

  const request = (method: string, params: Record<string, unknown>, timeout: Duration.Duration) =>
    Effect.suspend(() =>
      transport.request({
        jsonrpc: "2.0",
        id: `skills:${nextId++}`,
        method,
        params: modern ? { ...params, _meta: meta } : params
      })
    ).pipe(
      Effect.flatMap((response): Effect.Effect<unknown, McpClientError> => {
        if ("error" in response && response.error !== undefined) {
          return Effect.fail(fail(
            new ProtocolError({
              code: response.error.code,
              data: response.error.data,
              description: response.error.message
            })
          ))
        }
        const result = response.result
        if (isRecord(result) && result.resultType !== undefined && result.resultType !== "complete") {
          return Effect.fail(fail(new UnsupportedError({ description: `MCP ${method} answered resultType ${String(result.resultType)}` })))
        }
        return Effect.succeed(result)
      }),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () => Effect.fail(fail(new TimeoutError({ operation: method })))
      })
    )

  return { protocolVersion, mcp, capabilities, request }
})

/**
 * The JSON-RPC error code of a failure, whether it came in a response body or with an HTTP
 * error status (2026-07-28 HTTP answers unknown methods with 404 and code -32601).
 *
 * @internal
 */
export const errorCode = (error: McpClientError): number | undefined => {
  const reason = error.reason
  return reason instanceof ProtocolError || reason instanceof HttpError ? reason.code : undefined
}
