/**
 * The one sender of the extension's requests (`skills/*`, `resources/read`, directory reads) over
 * stateless Streamable HTTP (2026-07-28). Every request gets the headers and limits of effect's
 * `McpClient.http`, which stays in charge of the handshake and of every other method, and every
 * answer goes through one set of rules ({@link read}): status, content type, size, envelope, id.
 *
 * Only moving the bytes has two ways, chosen by `layerHttp`'s `readTransport`: through the provided
 * `HttpClient` ({@link viaHttpClient}; its middleware sees every request), or over `node:http(s)`
 * on one keep-alive agent whose sockets bound the requests in flight ({@link viaAgent}), which
 * spends nothing on effect's per-request HTTP machinery. Either way a body is decoded as it
 * arrives, cut off past `maxMessageBytes`, and read no further once its answer is known (an SSE
 * stream left open after its response included). `McpClient.http` reads each body as a Stream,
 * re-encodes it to measure it, decodes the envelope with Schema and races every exchange against
 * the transport's close: about 40% of its CPU time per request when pulling a 512-file skill. A
 * server request inside an SSE answer (2026-07-28 has none) is skipped rather than answered.
 *
 * @internal
 */
import * as Http from "node:http"
import * as Https from "node:https"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import {
  ClosedError,
  HttpError,
  LimitError,
  McpClientError,
  ProtocolError,
  TransportError
} from "effect/ai/McpClientError"
import type * as McpSchema from "effect/ai/McpSchema"
import * as Sse from "effect/encoding/Sse"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as Scope from "effect/Scope"
import type { Send } from "./transport.js"

const fail = (reason: ConstructorParameters<typeof McpClientError>[0]["reason"]) => new McpClientError({ reason })

/** What an answer's head says before its body is read; header names in lower case. */
export interface Head {
  readonly status: number
  readonly header: (name: string) => string | undefined
}

/** What the rules make of an answer: the response, or why there is none. */
export type Verdict = McpSchema.JsonRpcResponse | McpClientError

/** A body to read: its bytes as they arrive, until a verdict is reached or the body ends. */
export class Body {
  constructor(
    /** Takes the next bytes; a verdict once one is reached, and then no more is read. */
    readonly push: (bytes: Uint8Array) => Verdict | undefined,
    readonly end: () => Verdict
  ) {}
}

/**
 * Moves one POST and its answer: sends `headers` and `body`, hands the answer's head to `read`,
 * and, when that asks for the body, pushes its bytes until the verdict.
 */
export type Post = (
  headers: Readonly<Record<string, string>>,
  body: string,
  read: (head: Head) => Verdict | Body
) => Effect.Effect<Verdict, McpClientError>

const isRequestId = (u: unknown): u is McpSchema.RequestId => typeof u === "string" || (typeof u === "number" && Number.isFinite(u))

const keysWithin = (record: Record<string, unknown>, allowed: ReadonlySet<string>) => {
  for (const key in record) if (!allowed.has(key)) return false
  return true
}
const SuccessKeys = new Set(["jsonrpc", "id", "result"])
const ErrorKeys = new Set(["jsonrpc", "id", "error"])
const ErrorObjectKeys = new Set(["code", "message", "data"])
const RequestKeys = new Set(["jsonrpc", "id", "method", "params"])

const invalidMessage = () => fail(new ProtocolError({ description: "Invalid JSON-RPC message" }))

// The checks of effect's `McpSchema.JsonRpcMessage` decode (envelope only, excess keys refused),
// by hand: a Schema decode per response costs more than the rest of the response handling.
// Answers the response, `undefined` for a request or notification, or a failure.
const envelope = (json: unknown): McpSchema.JsonRpcResponse | undefined | McpClientError => {
  if (!Predicate.isObject(json) || json.jsonrpc !== "2.0") return invalidMessage()
  if ("method" in json) {
    const valid = typeof json.method === "string" && keysWithin(json, RequestKeys) &&
      (!("id" in json) || isRequestId(json.id)) && (json.params === undefined || Predicate.isObject(json.params))
    return valid ? undefined : invalidMessage()
  }
  if ("result" in json) {
    return isRequestId(json.id) && keysWithin(json, SuccessKeys) ? json as McpSchema.JsonRpcResponse : invalidMessage()
  }
  const error = json.error
  const valid = keysWithin(json, ErrorKeys) && (json.id === undefined || json.id === null || isRequestId(json.id)) &&
    Predicate.isObject(error) && keysWithin(error, ErrorObjectKeys) && Number.isSafeInteger(error.code) &&
    typeof error.message === "string"
  return valid ? json as McpSchema.JsonRpcResponse : invalidMessage()
}

const parse = (text: string): McpSchema.JsonRpcResponse | undefined | McpClientError => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    return fail(new ProtocolError({ description: "Invalid MCP JSON", cause }))
  }
  return envelope(json)
}

// A body decoded as text, refused by `tooLarge` past `maxBytes`.
const text = (maxBytes: number, tooLarge: () => Verdict, complete: (text: string) => Verdict) => {
  const decoder = new TextDecoder()
  const pieces: Array<string> = []
  let bytes = 0
  return new Body(
    (chunk) => {
      bytes += chunk.byteLength
      if (bytes > maxBytes) return tooLarge()
      pieces.push(decoder.decode(chunk, { stream: true }))
      return undefined
    },
    () => {
      pieces.push(decoder.decode())
      return complete(pieces.join(""))
    }
  )
}

// The first message of an SSE body that is not a request or notification, as `answers` judges
// it (`undefined` when the body ends without one); each event at most `maxBytes`. The parser
// bounds an event still arriving; one that arrived whole within a chunk is measured here.
const events = (maxBytes: number, answers: (response: Verdict | undefined) => Verdict) => {
  const decoder = new TextDecoder()
  const data: Array<string> = []
  let tooLarge = false
  const parser = Sse.makeParser((event) => {
    if (event._tag !== "Event" || event.data === "") return
    if (Buffer.byteLength(event.data, "utf8") > maxBytes) tooLarge = true
    else if (!tooLarge) data.push(event.data)
  }, { maxEventSize: maxBytes })
  const next = (error: Sse.SseError | undefined) => {
    for (const item of data.splice(0)) {
      const message = parse(item)
      if (message !== undefined) return answers(message)
    }
    return error === undefined && !tooLarge
      ? undefined
      : fail(new LimitError({ description: "MCP SSE event exceeds maxMessageBytes" }))
  }
  return new Body(
    (chunk) => next(parser.feed(decoder.decode(chunk, { stream: true }))),
    () => next(parser.feed(decoder.decode())) ?? answers(undefined)
  )
}

const mediaType = (head: Head) => head.header("content-type")?.split(";", 1)[0]?.trim().toLowerCase()

/**
 * The rules every answer to `message` is read by, whichever way its bytes came.
 *
 * @internal
 */
export const read = (message: McpSchema.JsonRpcRequest, maxBytes: number) => (head: Head): Verdict | Body => {
  const encoding = head.header("content-encoding")
  // A declared length counts the bytes as read only without a content coding.
  const declared = encoding === undefined || encoding === "identity" ? Number(head.header("content-length")) : NaN
  const fits = !(declared > maxBytes)
  const type = mediaType(head)
  if (head.status < 200 || head.status >= 300) {
    const httpError = (remote: McpSchema.JsonRpcResponse | undefined | McpClientError) => {
      // Error bodies may carry a JSON-RPC error without an id.
      const error = remote !== undefined && !(remote instanceof McpClientError) && "error" in remote ? remote.error : undefined
      return fail(
        new HttpError({
          status: head.status,
          code: error?.code,
          data: error?.data,
          description: error?.message,
          wwwAuthenticate: head.header("www-authenticate"),
          retryAfter: head.header("retry-after")
        })
      )
    }
    return type === "application/json" && fits
      ? text(maxBytes, () => httpError(undefined), (body) => httpError(parse(body)))
      : httpError(undefined)
  }
  if (head.status === 202 || head.status === 204) return fail(new ProtocolError({ description: "MCP request received no response" }))
  const tooLarge = () => fail(new LimitError({ description: "MCP response exceeds maxMessageBytes" }))
  if (!fits) return tooLarge()
  // A response on this exchange belongs to its request; an error may omit the id.
  const answers = (response: Verdict | undefined): Verdict => {
    if (response === undefined) return fail(new TransportError({ description: "MCP response ended before the terminal response" }))
    if (response instanceof McpClientError || response.id === message.id || ("error" in response && response.id == null)) return response
    return fail(new ProtocolError({ description: "HTTP MCP response id does not match its request" }))
  }
  if (type === "application/json") return text(maxBytes, tooLarge, (body) => answers(parse(body)))
  if (type === "text/event-stream") return events(maxBytes, answers)
  return fail(new ProtocolError({ description: "Unsupported MCP response Content-Type" }))
}

const BASE64_SENTINEL_PREFIX = "=?base64?"
const BASE64_SENTINEL_SUFFIX = "?="

// As effect's McpClient: values that are not plain visible ASCII are sent base64 encoded.
const headerValue = (value: string) =>
  /^[\x20-\x7e]*$/.test(value) && value.trim() === value &&
    !(value.startsWith(BASE64_SENTINEL_PREFIX) && value.endsWith(BASE64_SENTINEL_SUFFIX))
    ? value
    : `${BASE64_SENTINEL_PREFIX}${Buffer.from(value, "utf8").toString("base64")}${BASE64_SENTINEL_SUFFIX}`

const Fixed = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28" }

/**
 * The sender over `post`: `headers` (run before each request) go with every request, under the
 * fixed and routing headers (the method, and the uri of a read); closing the scope refuses what is
 * sent after.
 *
 * @internal
 */
export const make = Effect.fnUntraced(function*(
  post: Post,
  options: {
    readonly headers: Effect.Effect<Readonly<Record<string, string>>>
    readonly maxMessageBytes: number
  }
): Effect.fn.Return<Send, never, Scope.Scope> {
  const maxBytes = options.maxMessageBytes
  let closed = false
  yield* Effect.addFinalizer(() => Effect.sync(() => void (closed = true)))
  return (message) =>
    Effect.gen(function*() {
      if (closed) return yield* fail(new ClosedError({ description: "MCP HTTP transport closed" }))
      const body = JSON.stringify(message)
      if (Buffer.byteLength(body, "utf8") > maxBytes) return yield* fail(new LimitError({ description: "MCP message exceeds maxMessageBytes" }))
      const uri = message.params?.uri
      const headers = {
        ...(yield* options.headers),
        ...Fixed,
        "mcp-method": message.method,
        ...(message.method === "resources/read" && typeof uri === "string" ? { "mcp-name": headerValue(uri) } : {})
      }
      const verdict = yield* post(headers, body, read(message, maxBytes))
      return verdict instanceof McpClientError ? yield* verdict : verdict
    })
})

const cannotRead = (cause: unknown) =>
  cause instanceof McpClientError ? cause : fail(new TransportError({ description: "Cannot read MCP response", cause }))

/**
 * Posts through `client`, so its middleware sees every request. A body of declared length (no
 * larger than the limit: the rules checked it first) is read in one call of the platform's reader,
 * which costs far less than a stream of chunks; any other body is read as a stream.
 *
 * @internal
 */
export const viaHttpClient = (client: HttpClient.HttpClient, url: string): Post => (headers, body, readHead) =>
  Effect.gen(function*() {
    const response = yield* client.execute(
      HttpClientRequest.post(url).pipe(HttpClientRequest.setHeaders(headers), HttpClientRequest.bodyText(body, "application/json"))
    ).pipe(
      // Clients using `filterStatusOk` surface error responses as failures.
      Effect.catch((cause) =>
        cause.response === undefined
          ? Effect.fail(fail(new TransportError({ description: "MCP HTTP request failed", cause })))
          : Effect.succeed(cause.response)
      )
    )
    const head: Head = { status: response.status, header: (name) => response.headers[name] }
    const reading = readHead(head)
    if (!(reading instanceof Body)) return reading
    const encoding = head.header("content-encoding")
    if ((encoding === undefined || encoding === "identity") && head.header("content-length") !== undefined) {
      const bytes = yield* Effect.mapError(response.arrayBuffer, cannotRead)
      return reading.push(new Uint8Array(bytes)) ?? reading.end()
    }
    let verdict: Verdict | undefined
    yield* response.stream.pipe(
      Stream.runForEachWhile((chunk) => Effect.sync(() => (verdict = reading.push(chunk)) === undefined)),
      Effect.mapError(cannotRead)
    )
    return verdict ?? reading.end()
  })

/**
 * Posts over `node:http(s)` on one keep-alive agent with at most `maxSockets` sockets: more
 * requests wait in the agent's queue. It bypasses the `HttpClient` service, so middleware on that
 * client does not see these requests (headers given to the sender do). Interrupting a request (a
 * timeout) destroys its socket, as does an answer left unread; closing the scope destroys the agent.
 *
 * @internal
 */
export const viaAgent = Effect.fnUntraced(function*(url: string, maxSockets: number): Effect.fn.Return<Post, never, Scope.Scope> {
  const target = new URL(url)
  const secure = target.protocol === "https:"
  const agent = secure ? new Https.Agent({ keepAlive: true, maxSockets }) : new Http.Agent({ keepAlive: true, maxSockets })
  yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
  const post: Post = (headers, body, readHead) =>
    Effect.callback<Verdict, McpClientError>((resume) => {
      let settled = false
      const settle = (verdict: Effect.Effect<Verdict, McpClientError>) => {
        if (settled) return
        settled = true
        resume(verdict)
      }
      const request = (secure ? Https.request : Http.request)(target, {
        method: "POST",
        agent,
        headers: { ...headers, "content-type": "application/json" }
      })
      request.on("error", (cause) => settle(Effect.fail(fail(new TransportError({ description: "MCP HTTP request failed", cause })))))
      request.on("response", (response) => {
        const reading = readHead({
          status: response.statusCode ?? 0,
          header: (name) => {
            const value = response.headers[name]
            return typeof value === "string" ? value : undefined
          }
        })
        const done = (verdict: Verdict) => {
          if (!response.complete) response.destroy()
          settle(Effect.succeed(verdict))
        }
        if (!(reading instanceof Body)) return done(reading)
        response.on("data", (chunk: Buffer) => {
          const verdict = reading.push(chunk)
          if (verdict !== undefined) done(verdict)
        })
        response.on("error", (cause) => settle(Effect.fail(fail(new TransportError({ description: "Cannot read MCP response", cause })))))
        response.on("end", () => done(reading.end()))
      })
      request.end(body)
      return Effect.sync(() => request.destroy())
    })
  return post
})
