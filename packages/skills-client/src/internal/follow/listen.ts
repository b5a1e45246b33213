/**
 * Hearing a server's change notifications over HTTP, on the revision its client negotiated:
 * 2026-07-28 `subscriptions/listen` (one POST whose answer is an event stream), or a 2025-11-25
 * session of the follower's own (`initialize`, `resources/subscribe` of each `SKILL.md`, the
 * session's GET stream). Each yields `list_changed` and `updated` as signals; what they say is
 * never trusted, only that something may have changed: the follower looks again and verifies.
 * Every answer read here is bounded (`MaxControlBytes`, `MaxEventBytes`).
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Sse from "effect/encoding/Sse"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as Scope from "effect/Scope"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Stream from "effect/Stream"
import { Extension } from "@mcp-skills/core"
import { ChannelError, type Signal } from "../../FollowChannel.js"

/** Who the follower says it is, in `clientInfo` and in the ids of its own requests. */
export interface ClientInfo {
  readonly name: string
  readonly version: string
}

/** The largest answer to a control request (`initialize`, `resources/subscribe`) read. */
export const MaxControlBytes = 1024 * 1024

/** The largest event of a notification stream read: notifications are small. */
export const MaxEventBytes = 64 * 1024

/** Most `SKILL.md` URIs one channel subscribes to (a 2025-11-25 session's usual cap). */
export const MaxSubscriptions = 1000

const Capabilities = { extensions: { [Extension.ExtensionId]: {} } }

/** Reads a signal out of one JSON-RPC message (anything else says nothing). */
export const signalOf = (message: unknown): Signal | undefined => {
  if (typeof message !== "object" || message === null || "id" in message) return undefined
  const { method, params } = message as { readonly method?: unknown; readonly params?: unknown }
  if (method === "notifications/subscriptions/acknowledged") return { _tag: "Opened" }
  if (method === "notifications/resources/list_changed") return { _tag: "ListChanged" }
  if (method !== "notifications/resources/updated" || typeof params !== "object" || params === null) return undefined
  const uri = (params as { readonly uri?: unknown }).uri
  return typeof uri === "string" ? { _tag: "Updated", uri } : undefined
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The `subscriptions/listen` request a 2026-07-28 channel sends (over HTTP, or written to stdin). */
export const listenRequest = (info: ClientInfo, uris: ReadonlyArray<string>) => ({
  jsonrpc: "2.0",
  id: `${info.name}-listen`,
  method: "subscriptions/listen",
  params: {
    notifications: { resourcesListChanged: true, resourceSubscriptions: uris.slice(0, MaxSubscriptions) },
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": Capabilities,
      "io.modelcontextprotocol/clientInfo": info
    }
  }
})

/** The `resources/subscribe` requests a 2025-11-25 channel sends for `uris`. */
export const subscribeRequests = (info: ClientInfo, uris: ReadonlyArray<string>) =>
  uris.slice(0, MaxSubscriptions).map((uri, i) => ({
    jsonrpc: "2.0",
    id: `${info.name}-subscribe-${i}`,
    method: "resources/subscribe",
    params: { uri }
  }))

const fail = (reason: string, unsupported = false) => Effect.fail(new ChannelError({ reason, unsupported }))

const events = (response: HttpClientResponse.HttpClientResponse): Stream.Stream<Signal, ChannelError> =>
  response.stream.pipe(
    Stream.decodeText(),
    Stream.pipeThroughChannel(Sse.decode({ maxEventSize: MaxEventBytes })),
    Stream.map((event) => signalOf(parse(event.data))),
    Stream.filter(Predicate.isNotUndefined),
    Stream.mapError((error) => new ChannelError({ reason: `the notification stream broke: ${describe(error)}`, unsupported: false }))
  )

const describe = (error: unknown) =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : String(error)

// A status that says the server has no such channel, as against one that failed.
const isUnsupported = (status: number) => status === 404 || status === 405 || status === 501

// The first JSON-RPC message of an answer (a JSON body, or the first event of an event stream), bounded.
const firstMessage = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.gen(function*() {
    let text = ""
    yield* response.stream.pipe(
      Stream.decodeText(),
      Stream.runForEachWhile((chunk) =>
        Effect.suspend(() => {
          text += chunk
          return text.length > MaxControlBytes ? fail(`an answer over ${MaxControlBytes} bytes`) : Effect.succeed(!text.includes("\n\n"))
        })
      ),
      Effect.mapError((error) => error instanceof ChannelError ? error : new ChannelError({ reason: describe(error), unsupported: false }))
    )
    if ((response.headers["content-type"] ?? "").startsWith("text/event-stream")) {
      const data = text.split("\n").find((line) => line.startsWith("data:"))
      return data === undefined ? undefined : parse(data.slice(5))
    }
    return parse(text)
  })

/** The options of a channel over HTTP. */
export interface HttpOptions {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly info: ClientInfo
  /** `SKILL.md` URIs to hear `updated` for. */
  readonly uris: ReadonlyArray<string>
}

const send = (client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, Scope.Scope>, request: HttpClientRequest.HttpClientRequest) =>
  client.execute(request).pipe(Effect.mapError((error) => new ChannelError({ reason: describe(error), unsupported: false })))

const post = (options: HttpOptions, headers: Readonly<Record<string, string>>, body: unknown) =>
  HttpClientRequest.post(options.url).pipe(
    HttpClientRequest.setHeaders({
      ...options.headers,
      ...headers,
      accept: "application/json, text/event-stream",
      "content-type": "application/json"
    }),
    HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
  )

/** A 2026-07-28 `subscriptions/listen` stream. */
export const listen2026 = (options: HttpOptions): Stream.Stream<Signal, ChannelError, HttpClient.HttpClient> =>
  Stream.unwrap(Effect.gen(function*() {
    const client = HttpClient.withScope(yield* HttpClient.HttpClient)
    const response = yield* send(
      client,
      post(options, { "mcp-protocol-version": "2026-07-28", "mcp-method": "subscriptions/listen" }, listenRequest(options.info, options.uris))
    )
    if (isUnsupported(response.status)) return yield* fail(`subscriptions/listen answered HTTP ${response.status}`, true)
    if (response.status !== 200) return yield* fail(`subscriptions/listen answered HTTP ${response.status}`)
    if (!(response.headers["content-type"] ?? "").startsWith("text/event-stream")) {
      // A JSON answer is an error (or an end) rather than a stream: there is nothing to hear.
      const message = yield* firstMessage(response)
      const code = (message as { readonly error?: { readonly code?: unknown } } | undefined)?.error?.code
      return yield* fail(`subscriptions/listen was answered without a stream`, code === -32601)
    }
    return events(response)
  }))

/** A 2025-11-25 session of the follower's own: its GET stream, with `resources/subscribe` of `uris`. */
export const session2025 = (options: HttpOptions): Stream.Stream<Signal, ChannelError, HttpClient.HttpClient> =>
  Stream.unwrap(Effect.gen(function*() {
    const plain = yield* HttpClient.HttpClient
    const client = HttpClient.withScope(plain)
    const legacy = { "mcp-protocol-version": "2025-11-25" }
    const initialize = yield* send(client, post(options, {}, {
      jsonrpc: "2.0",
      id: `${options.info.name}-initialize`,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: Capabilities, clientInfo: options.info }
    }))
    if (initialize.status !== 200) return yield* fail(`initialize answered HTTP ${initialize.status}`)
    const id = initialize.headers["mcp-session-id"]
    yield* firstMessage(initialize)
    if (id === undefined) return yield* fail("the server keeps no 2025-11-25 session", true)
    const session = { ...legacy, "mcp-session-id": id }
    yield* Effect.addFinalizer(() =>
      plain.execute(HttpClientRequest.delete(options.url).pipe(HttpClientRequest.setHeaders({ ...options.headers, ...session }))).pipe(
        Effect.timeout("2 seconds"),
        Effect.ignore
      )
    )
    yield* Effect.scoped(send(client, post(options, session, { jsonrpc: "2.0", method: "notifications/initialized" })))
    const stream = yield* send(
      client,
      HttpClientRequest.get(options.url).pipe(HttpClientRequest.setHeaders({ ...options.headers, ...session, accept: "text/event-stream" }))
    )
    if (isUnsupported(stream.status)) return yield* fail(`the session stream answered HTTP ${stream.status}`, true)
    if (stream.status !== 200) return yield* fail(`the session stream answered HTTP ${stream.status}`)
    // Subscriptions the server refuses leave `list_changed`, which is enough to look again.
    for (const request of subscribeRequests(options.info, options.uris)) {
      yield* Effect.scoped(Effect.flatMap(send(client, post(options, session, request)), firstMessage)).pipe(Effect.ignore)
    }
    return Stream.concat(Stream.succeed<Signal>({ _tag: "Opened" }), events(stream))
  }))
