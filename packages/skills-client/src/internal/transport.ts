/**
 * The one place that depends on effect's McpClient internals. Verified against effect 4.1.0
 * (pinned exactly): `McpClient.make` has no generic request method, does not expose the server
 * capabilities and sends empty client capabilities, so the Transport it runs over is wrapped to
 * (1) declare the Skills extension in `initialize` / the 2026-07-28 `_meta` envelope,
 * (2) capture `capabilities` from the `initialize` / `server/discover` result and
 * (3) send `skills/*`, `resources/read` and `resources/directory/read` directly with string ids,
 * which cannot collide with McpClient's numeric ids on the stdio transport's id map; over
 * stateless HTTP (2026-07-28) through `httpSend.ts`, a leaner sender with the same behaviour.
 * A bump of effect must re-run the wire tests of this package; `connect` fails with
 * `EffectSupport.UnsupportedEffect` when the transport or the handshake is not as relied on here.
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as McpClient from "effect/ai/McpClient"
import {
  HttpError,
  McpClientError,
  ProtocolError,
  TimeoutError,
  TransportError,
  UnsupportedError
} from "effect/ai/McpClientError"
import type * as McpSchema from "effect/ai/McpSchema"
import type * as Scope from "effect/Scope"
import { EffectSupport, Extension } from "@mcp-skills/core"
import type { McpTelemetry } from "@mcp-skills/core"
import { MaxCauseDepth } from "../ClientLimits.js"
import * as Telemetry from "./telemetry.js"

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

const fail = (reason: ConstructorParameters<typeof McpClientError>[0]["reason"]) => new McpClientError({ reason })

const Package = "@mcp-skills/client"

// The innermost cause of a failure in its own words: what the operating system said
// ("connect ECONNREFUSED 127.0.0.1:3999", "getaddrinfo ENOTFOUND host"), every attempt of an
// AggregateError (a name resolving to several addresses) once.
const rootCause = (cause: unknown): string | undefined => {
  let innermost: unknown = undefined
  for (let depth = 0; cause instanceof Error && depth < MaxCauseDepth; depth++) {
    innermost = cause
    cause = cause.cause
  }
  if (innermost instanceof AggregateError && innermost.message === "") {
    const attempts = [...new Set(innermost.errors.map((error) => error instanceof Error ? error.message : String(error)))]
    return attempts.length === 0 ? undefined : attempts.join("; ")
  }
  return innermost instanceof Error && innermost.message !== "" ? innermost.message : undefined
}

/**
 * A transport failure whose message names its cause: effect's transports say "MCP HTTP request
 * failed" and leave why in `cause`.
 *
 * @internal
 */
export const explained = (error: McpClientError): McpClientError => {
  const reason = error.reason
  if (reason._tag !== "TransportError") return error
  const why = rootCause(reason.cause)
  if (why === undefined || reason.message.includes(why)) return error
  return fail(new TransportError({ description: `${reason.message}: ${why}`, cause: reason.cause }))
}

const CapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
const SkillsDeclaration = { [Extension.ExtensionId]: {} }

const withExtension = (capabilities: unknown): Record<string, unknown> => {
  const base = Predicate.isObject(capabilities) ? capabilities : {}
  const extensions = Predicate.isObject(base.extensions) ? base.extensions : {}
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
  if (Predicate.isObject(meta) && CapabilitiesKey in meta) {
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
    /** Sends the extension's own requests instead of `transport` (see `httpSend.ts`). */
    readonly send?: Send | undefined
    /** What the transport runs on, for telemetry (`tcp` for HTTP, `pipe` for stdio). */
    readonly network?: McpTelemetry.Transport | undefined
  }
): Effect.fn.Return<Connection, McpClientError | EffectSupport.UnsupportedEffect, Scope.Scope> {
  yield* EffectSupport.verify(Package, {
    "McpClient.Transport.request": typeof transport?.request === "function",
    "McpClient.Transport.protocol.protocolVersion": typeof transport?.protocol?.protocolVersion === "string"
  })
  const protocolVersion = transport.protocol.protocolVersion
  const modern = protocolVersion === "2026-07-28"
  let capabilities: unknown = undefined
  let handshake = false

  const wrapped: McpClient.Transport = {
    ...transport,
    notify: (message) => Effect.mapError(transport.notify(message), explained),
    request: (message, tool) => {
      const isHandshake = message.method === "initialize" || message.method === "server/discover"
      handshake ||= isHandshake
      return transport.request(declare(message), tool).pipe(
        Effect.mapError(explained),
        Effect.map((response) => {
          if (isHandshake && "result" in response) {
            const result = response.result
            if (Predicate.isObject(result)) capabilities = result.capabilities
          }
          return response
        })
      )
    }
  }

  const mcp = yield* McpClient.make({ ...options.clientInfo, timeout: options.timeout }).pipe(
    Effect.provideService(McpClient.Transport, wrapped)
  )
  // The server's capabilities are only seen if McpClient sends its handshake through the transport.
  yield* EffectSupport.verify(Package, {
    [`McpClient.make sends ${modern ? "server/discover" : "initialize"} through McpClient.Transport.request`]: handshake
  })

  const meta = {
    "io.modelcontextprotocol/protocolVersion": protocolVersion,
    "io.modelcontextprotocol/clientInfo": options.clientInfo,
    [CapabilitiesKey]: withExtension({})
  }
  let nextId = 1

  const send: Send = options.send ?? ((message) => transport.request(message))
  const request = (method: string, params: Record<string, unknown>, timeout: Duration.Duration) =>
    Effect.suspend(() => {
      const id = `skills:${nextId++}`
      return Telemetry.request(
        method,
        params,
        { protocolVersion, requestId: id, transport: options.network },
        (error: McpClientError) => ({ code: errorCode(error), tag: error.reason._tag }),
        // The client span's context goes to the server in `_meta` (SEP-414), on every revision.
        (traced) =>
          send({
            jsonrpc: "2.0",
            id,
            method,
            params: modern
              ? { ...params, _meta: traced === undefined ? meta : { ...meta, ...traced } }
              : traced === undefined
              ? params
              : { ...params, _meta: traced }
          }).pipe(
            Effect.mapError(explained),
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
              if (Predicate.isObject(result) && result.resultType !== undefined && result.resultType !== "complete") {
                return Effect.fail(fail(new UnsupportedError({ description: `MCP ${method} answered resultType ${String(result.resultType)}` })))
              }
              return Effect.succeed(result)
            }),
            Effect.timeoutOrElse({
              duration: timeout,
              orElse: () => Effect.fail(fail(new TimeoutError({ operation: method })))
            })
          )
      )
    })

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

/**
 * Sends one JSON-RPC request and answers its response.
 *
 * @internal
 */
export type Send = (message: McpSchema.JsonRpcRequest) => Effect.Effect<McpSchema.JsonRpcResponse, McpClientError>
