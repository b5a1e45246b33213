/**
 * The one place that depends on effect's McpClient internals. Verified against effect 4.1.0
 * (pinned exactly): `McpClient.make` has no generic request method, does not expose the server
 * capabilities and sends empty client capabilities, so the Transport it runs over is wrapped to
 * (1) declare the Skills extension in `initialize` / the 2026-07-28 `_meta` envelope,
 * (2) capture `capabilities` from the `initialize` / `server/discover` result and
 * (3) send `skills/*`, `resources/read` and `resources/directory/read` directly with string ids,
 * which cannot collide with McpClient's numeric ids on the stdio transport's id map; over
 * stateless HTTP (2026-07-28) through {@link httpSend}, a leaner sender with the same behaviour.
 * A bump of effect must re-run the wire tests of this package; `connect` fails with
 * `EffectSupport.UnsupportedEffect` when the transport or the handshake is not as relied on here.
 *
 * @internal
 */
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import * as McpClient from "effect/ai/McpClient"
import {
  ClosedError,
  LimitError,
  McpClientError,
  ProtocolError,
  TimeoutError,
  TransportError,
  UnsupportedError,
  HttpError
} from "effect/ai/McpClientError"
import type * as McpSchema from "effect/ai/McpSchema"
import * as Sse from "effect/encoding/Sse"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Scope from "effect/Scope"
import { EffectSupport, Extension } from "@mcp-skills/core"
import type { McpTelemetry } from "@mcp-skills/core"
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

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const fail = (reason: ConstructorParameters<typeof McpClientError>[0]["reason"]) => new McpClientError({ reason })

const Package = "@mcp-skills/client"

// The innermost cause of a failure in its own words: what the operating system said
// ("connect ECONNREFUSED 127.0.0.1:3999", "getaddrinfo ENOTFOUND host"), every attempt of an
// AggregateError (a name resolving to several addresses) once.
const rootCause = (cause: unknown): string | undefined => {
  let innermost: unknown = undefined
  for (let depth = 0; cause instanceof Error && depth < 8; depth++) {
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
    /** Sends the extension's own requests instead of `transport` (see {@link httpSend}). */
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
            if (isRecord(result)) capabilities = result.capabilities
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

const isRequestId = (u: unknown): u is McpSchema.RequestId => typeof u === "string" || (typeof u === "number" && Number.isFinite(u))

const keysWithin = (record: Record<string, unknown>, allowed: ReadonlySet<string>) => {
  for (const key in record) if (!allowed.has(key)) return false
  return true
}
const SuccessKeys = new Set(["jsonrpc", "id", "result"])
const ErrorKeys = new Set(["jsonrpc", "id", "error"])
const ErrorObjectKeys = new Set(["code", "message", "data"])
const RequestKeys = new Set(["jsonrpc", "id", "method", "params"])

// The checks of effect's `McpSchema.JsonRpcMessage` decode (envelope only, excess keys refused),
// by hand: a Schema decode per response costs more than the rest of the response handling.
// Answers the response, `undefined` for a request or notification, or a failure.
const envelope = (json: unknown): McpSchema.JsonRpcResponse | undefined | McpClientError => {
  const invalid = () => fail(new ProtocolError({ description: "Invalid JSON-RPC message" }))
  if (!isRecord(json) || json.jsonrpc !== "2.0") return invalid()
  if ("method" in json) {
    const valid = typeof json.method === "string" && keysWithin(json, RequestKeys) &&
      (!("id" in json) || isRequestId(json.id)) && (json.params === undefined || isRecord(json.params))
    return valid ? undefined : invalid()
  }
  if ("result" in json) {
    return isRequestId(json.id) && keysWithin(json, SuccessKeys) ? json as McpSchema.JsonRpcResponse : invalid()
  }
  const error = json.error
  const valid = keysWithin(json, ErrorKeys) && (json.id === undefined || json.id === null || isRequestId(json.id)) &&
    isRecord(error) && keysWithin(error, ErrorObjectKeys) && Number.isSafeInteger(error.code) &&
    typeof error.message === "string"
  return valid ? json as McpSchema.JsonRpcResponse : invalid()
}

const BASE64_SENTINEL_PREFIX = "=?base64?"
const BASE64_SENTINEL_SUFFIX = "?="

// As effect's McpClient: values that are not plain visible ASCII are sent base64 encoded.
const headerValue = (value: string) =>
  /^[\x20-\x7e]*$/.test(value) && value.trim() === value &&
    !(value.startsWith(BASE64_SENTINEL_PREFIX) && value.endsWith(BASE64_SENTINEL_SUFFIX))
    ? value
    : `${BASE64_SENTINEL_PREFIX}${Buffer.from(value, "utf8").toString("base64")}${BASE64_SENTINEL_SUFFIX}`

const mediaType = (response: HttpClientResponse.HttpClientResponse) =>
  response.headers["content-type"]?.split(";", 1)[0]?.trim().toLowerCase()

// The body of one request and its 2026-07-28 routing headers (the method, and the uri of a read).
const prepare = (message: McpSchema.JsonRpcRequest, maxBytes: number, closed: boolean) => {
  if (closed) return fail(new ClosedError({ description: "MCP HTTP transport closed" }))
  const body = JSON.stringify(message)
  if (Buffer.byteLength(body, "utf8") > maxBytes) return fail(new LimitError({ description: "MCP message exceeds maxMessageBytes" }))
  const routing: Record<string, string> = { "mcp-method": message.method }
  const uri = message.params?.uri
  if (message.method === "resources/read" && typeof uri === "string") routing["mcp-name"] = headerValue(uri)
  return { body, routing }
}

/**
 * A lean sender for the extension's requests over stateless Streamable HTTP (2026-07-28), on the
 * same `HttpClient` and with the same headers, limits and errors as `McpClient.http`, which stays
 * in charge of the handshake and of every other MCP method. `McpClient.http` reads each body as
 * an effect `Stream`, measures it by re-encoding it, decodes the envelope with Schema, scopes an
 * abort per request and races each exchange against the transport's close: about 40% of its CPU
 * time per request when pulling a 512-file skill. Here a JSON body is read with `response.text`
 * and checked by hand; SSE answers are read as a stream as before. A server request inside an SSE
 * answer (2026-07-28 has none: no server-to-client requests) is skipped rather than answered.
 *
 * @internal
 */
export const httpSend = Effect.fnUntraced(function*(options: {
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly maxMessageBytes: number
}): Effect.fn.Return<Send, never, HttpClient.HttpClient | Scope.Scope> {
  const client = yield* HttpClient.HttpClient
  const maxBytes = options.maxMessageBytes
  let closed = false
  yield* Effect.addFinalizer(() => Effect.sync(() => void (closed = true)))
  const headers = { ...options.headers, accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28" }
  const tooLarge = (description: string) => fail(new LimitError({ description }))
  const cannotRead = (cause: unknown) =>
    cause instanceof McpClientError ? cause : fail(new TransportError({ description: "Cannot read MCP response", cause }))

  const readText = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string, McpClientError> => {
    const encoding = response.headers["content-encoding"]
    const length = encoding === undefined || encoding === "identity" ? Number(response.headers["content-length"]) : NaN
    // Without a declared length of the bytes as read (none, or compressed), the body is read as a
    // bounded stream, so a huge answer is cut off rather than buffered whole.
    const text = Number.isFinite(length)
      ? length > maxBytes ? Effect.fail(tooLarge("MCP response exceeds maxMessageBytes")) : response.text
      : response.stream.pipe(
        Stream.mapError(cannotRead),
        Stream.limitBytes(maxBytes, () => Stream.fail(tooLarge("MCP response exceeds maxMessageBytes"))),
        Stream.mkUint8Array,
        Effect.map((bytes) => new TextDecoder().decode(bytes))
      )
    return Effect.mapError(text, cannotRead)
  }

  const parse = (text: string): Effect.Effect<McpSchema.JsonRpcResponse | undefined, McpClientError> => {
    if (Buffer.byteLength(text, "utf8") > maxBytes) return Effect.fail(tooLarge("MCP message exceeds maxMessageBytes"))
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (cause) {
      return Effect.fail(fail(new ProtocolError({ description: "Invalid MCP JSON", cause })))
    }
    const message = envelope(json)
    return message instanceof McpClientError ? Effect.fail(message) : Effect.succeed(message)
  }

  const httpError = (response: HttpClientResponse.HttpClientResponse) =>
    Effect.gen(function*() {
      // Error bodies may carry a JSON-RPC error without an id.
      const remote = mediaType(response) === "application/json"
        ? yield* readText(response).pipe(
          Effect.flatMap(parse),
          Effect.map((message) => message !== undefined && "error" in message ? message.error : undefined),
          Effect.orElseSucceed(() => undefined)
        )
        : undefined
      return yield* fail(
        new HttpError({
          status: response.status,
          code: remote?.code,
          data: remote?.data,
          description: remote?.message,
          wwwAuthenticate: response.headers["www-authenticate"],
          retryAfter: response.headers["retry-after"]
        })
      )
    })

  const readSse = (response: HttpClientResponse.HttpClientResponse) => {
    const events: Array<string> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event" && event.data !== "") events.push(event.data)
    }, { maxEventSize: maxBytes })
    return response.stream.pipe(
      Stream.decodeText(),
      Stream.flatMap((chunk) => {
        const error = parser.feed(chunk)
        const parsed = Stream.fromIterable(events.splice(0))
        return error === undefined
          ? parsed
          : parsed.pipe(Stream.concat(Stream.fail(tooLarge("MCP SSE event exceeds maxMessageBytes"))))
      }),
      Stream.mapEffect(parse),
      Stream.filter(Predicate.isNotUndefined),
      Stream.runHead,
      Effect.map(Option.getOrUndefined),
      Effect.mapError(cannotRead)
    )
  }

  return (message) =>
    Effect.gen(function*() {
      const prepared = prepare(message, maxBytes, closed)
      if (prepared instanceof McpClientError) return yield* prepared
      const { body, routing } = prepared
      const response = yield* client.execute(
        HttpClientRequest.post(options.url).pipe(
          HttpClientRequest.setHeaders({ ...headers, ...routing }),
          HttpClientRequest.bodyText(body, "application/json")
        )
      ).pipe(
        // Clients using `filterStatusOk` surface error responses as failures.
        Effect.catch((cause) =>
          cause.response === undefined
            ? Effect.fail(fail(new TransportError({ description: "MCP HTTP request failed", cause })))
            : Effect.succeed(cause.response)
        )
      )
      if (response.status < 200 || response.status >= 300) return yield* httpError(response)
      if (response.status === 202 || response.status === 204) {
        return yield* fail(new ProtocolError({ description: "MCP request received no response" }))
      }
      const type = mediaType(response)
      const answer = type === "application/json"
        ? yield* Effect.flatMap(readText(response), parse)
        : type === "text/event-stream"
        ? yield* readSse(response)
        : yield* fail(new ProtocolError({ description: "Unsupported MCP response Content-Type" }))
      if (answer === undefined) {
        return yield* fail(new TransportError({ description: "MCP response ended before the terminal response" }))
      }
      // A response on this exchange belongs to its request; an error may omit the id.
      if (answer.id !== message.id && !("error" in answer && answer.id == null)) {
        return yield* fail(new ProtocolError({ description: "HTTP MCP response id does not match its request" }))
      }
      return answer
    })
})

/**
 * The leanest sender for the extension's requests over stateless Streamable HTTP (2026-07-28):
 * `node:http(s)` on one keep-alive agent whose socket count bounds the requests in flight
 * (`maxSockets`; more wait in the agent's queue), each body decoded to text chunk by chunk as it
 * arrives and cut off past `maxMessageBytes`. Same requests, headers, limits, envelope checks and
 * errors as {@link httpSend}; it bypasses the `HttpClient` service, so middleware on that client
 * does not see these requests (headers given here do). Interrupting a request (a timeout)
 * destroys its socket; closing the scope destroys the agent.
 *
 * @internal
 */
export const leanSend = Effect.fnUntraced(function*(options: {
  readonly url: string
  readonly headers: Effect.Effect<Readonly<Record<string, string>>>
  readonly maxMessageBytes: number
  readonly maxSockets: number
}): Effect.fn.Return<Send, never, Scope.Scope> {
  const url = new URL(options.url)
  const secure = url.protocol === "https:"
  const agent = secure
    ? new Https.Agent({ keepAlive: true, maxSockets: options.maxSockets })
    : new Http.Agent({ keepAlive: true, maxSockets: options.maxSockets })
  let closed = false
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      closed = true
      agent.destroy()
    })
  )
  const maxBytes = options.maxMessageBytes
  const tooLarge = (description: string) => fail(new LimitError({ description }))
  const base = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "content-type": "application/json" }

  interface Answer {
    readonly status: number
    readonly type: string | undefined
    readonly headers: Http.IncomingHttpHeaders
    readonly text: string
  }

  const exchange = (headers: Record<string, string>, body: string) =>
    Effect.callback<Answer, McpClientError>((resume) => {
      const request = (secure ? Https.request : Http.request)(url, { method: "POST", agent, headers })
      request.on("error", (cause) => resume(Effect.fail(fail(new TransportError({ description: "MCP HTTP request failed", cause })))))
      request.on("response", (response) => {
        const declared = Number(response.headers["content-length"])
        if (declared > maxBytes) {
          response.destroy()
          return resume(Effect.fail(tooLarge("MCP response exceeds maxMessageBytes")))
        }
        const decoder = new TextDecoder()
        const pieces: Array<string> = []
        let bytes = 0
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.byteLength
          if (bytes > maxBytes) {
            response.destroy()
            return resume(Effect.fail(tooLarge("MCP response exceeds maxMessageBytes")))
          }
          pieces.push(decoder.decode(chunk, { stream: true }))
        })
        response.on("error", (cause) => resume(Effect.fail(fail(new TransportError({ description: "Cannot read MCP response", cause })))))
        response.on("end", () => {
          pieces.push(decoder.decode())
          resume(Effect.succeed({
            status: response.statusCode ?? 0,
            type: response.headers["content-type"]?.split(";", 1)[0]?.trim().toLowerCase(),
            headers: response.headers,
            text: pieces.join("")
          }))
        })
      })
      request.end(body)
      return Effect.sync(() => request.destroy())
    })

  const parse = (text: string): McpSchema.JsonRpcResponse | undefined | McpClientError => {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (cause) {
      return fail(new ProtocolError({ description: "Invalid MCP JSON", cause }))
    }
    return envelope(json)
  }

  // The first response among the events of an SSE body (a 2026-07-28 server sends no requests).
  const fromSse = (text: string): McpSchema.JsonRpcResponse | undefined | McpClientError => {
    const events: Array<string> = []
    const error = Sse.makeParser((event) => {
      if (event._tag === "Event" && event.data !== "") events.push(event.data)
    }, { maxEventSize: maxBytes }).feed(text)
    if (error !== undefined) return tooLarge("MCP SSE event exceeds maxMessageBytes")
    for (const data of events) {
      const message = parse(data)
      if (message !== undefined) return message
    }
    return undefined
  }

  return (message) =>
    Effect.gen(function*() {
      const prepared = prepare(message, maxBytes, closed)
      if (prepared instanceof McpClientError) return yield* prepared
      const { body, routing } = prepared
      const answer = yield* exchange({ ...(yield* options.headers), ...base, ...routing }, body)
      if (answer.status < 200 || answer.status >= 300) {
        const parsed = answer.type === "application/json" ? parse(answer.text) : undefined
        const remote = parsed !== undefined && !(parsed instanceof McpClientError) && "error" in parsed ? parsed.error : undefined
        const wwwAuthenticate = answer.headers["www-authenticate"]
        const retryAfter = answer.headers["retry-after"]
        return yield* fail(
          new HttpError({
            status: answer.status,
            code: remote?.code,
            data: remote?.data,
            description: remote?.message,
            wwwAuthenticate: typeof wwwAuthenticate === "string" ? wwwAuthenticate : undefined,
            retryAfter: typeof retryAfter === "string" ? retryAfter : undefined
          })
        )
      }
      if (answer.status === 202 || answer.status === 204) {
        return yield* fail(new ProtocolError({ description: "MCP request received no response" }))
      }
      const response = answer.type === "application/json"
        ? parse(answer.text)
        : answer.type === "text/event-stream"
        ? fromSse(answer.text)
        : fail(new ProtocolError({ description: "Unsupported MCP response Content-Type" }))
      if (response instanceof McpClientError) return yield* response
      if (response === undefined) {
        return yield* fail(new TransportError({ description: "MCP response ended before the terminal response" }))
      }
      if (response.id !== message.id && !("error" in response && response.id == null)) {
        return yield* fail(new ProtocolError({ description: "HTTP MCP response id does not match its request" }))
      }
      return response
    })
})
