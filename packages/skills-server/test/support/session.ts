/**
 * A raw 2025-11-25 HTTP session over fetch: initialize, subscribe, DELETE, and its GET stream.
 */
import { Effect } from "effect"
import type * as Scope from "effect/Scope"

const json = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** POSTs one message; the body is the JSON answer (the first `data:` of an event stream). */
export const post = async (url: string, headers: Record<string, string>, body: unknown) => {
  const response = await fetch(url, { method: "POST", headers: { ...json, ...headers }, body: JSON.stringify(body) })
  const text = await response.text()
  const data = text.split("\n").find((line) => line.startsWith("data:"))
  return {
    status: response.status,
    headers: response.headers,
    body: data === undefined ? text.length === 0 ? undefined : JSON.parse(text) : JSON.parse(data.slice(5))
  }
}

/** An initialized session. */
export const open = async (url: string, extra: Record<string, string> = {}) => {
  const init = await post(url, extra, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }
  })
  const id = init.headers.get("mcp-session-id")!
  const headers = { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25", ...extra }
  await post(url, headers, { jsonrpc: "2.0", method: "notifications/initialized" })
  return {
    id,
    headers,
    subscribe: (uri: string, more: Record<string, string> = {}) =>
      post(url, { ...headers, ...more }, { jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri } }),
    close: () => fetch(url, { method: "DELETE", headers }).then((response) => response.status)
  }
}

/** The session's GET stream. */
export const getStream = (url: string, id: string, signal?: AbortSignal) =>
  fetch(url, {
    method: "GET",
    headers: { accept: "text/event-stream", "mcp-session-id": id, "mcp-protocol-version": "2025-11-25" },
    signal: signal ?? null
  })

/** Reads a stream to its end (or fails the test after a generous bound). */
export const drained = (response: Response) =>
  Effect.promise(async () => {
    const reader = response.body!.getReader()
    for (;;) if ((await reader.read()).done) return true
  }).pipe(Effect.timeout("20 seconds"))

/** Polls `check` on real time until it gives a value (generous bound). */
export const poll = <A>(what: string, check: Effect.Effect<A | undefined>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

/**
 * Collects every JSON-RPC message an event-stream response carries into `events`, until the scope
 * closes (which aborts the request); `headers` are the response's.
 */
export const eventStream = (
  request: (signal: AbortSignal) => Promise<Response>
): Effect.Effect<{ readonly events: Array<any>; readonly headers: Headers }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const abort = new AbortController()
    const stream = yield* Effect.promise(() => request(abort.signal))
    if (stream.status !== 200) return yield* Effect.die(new Error(`the event stream answered ${stream.status}`))
    const events: Array<any> = []
    const reading = (async () => {
      const decoder = new TextDecoder()
      let buffer = ""
      const reader = stream.body!.getReader()
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }))
        if (done) return
        buffer += decoder.decode(value, { stream: true })
        const blocks = buffer.split("\n\n")
        buffer = blocks.pop()!
        for (const block of blocks) {
          const data = block.split("\n").find((line) => line.startsWith("data:"))
          if (data !== undefined) events.push(JSON.parse(data.slice(5)))
        }
      }
    })()
    yield* Effect.addFinalizer(() => Effect.promise(() => (abort.abort(), reading)))
    return { events, headers: stream.headers }
  })

/** The messages of `eventStream`. */
export const streamEvents = (request: (signal: AbortSignal) => Promise<Response>): Effect.Effect<Array<any>, never, Scope.Scope> =>
  Effect.map(eventStream(request), (stream) => stream.events)

/** Opens the session's stream and collects every JSON-RPC message it carries, until the scope closes. */
export const sessionEvents = (url: string, id: string): Effect.Effect<Array<any>, never, Scope.Scope> =>
  streamEvents((signal) => getStream(url, id, signal))

/** The `_meta` of a 2026-07-28 request. */
export const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "0" }
}

/** A `skills/list` nested `depth` levels deep in all: the message, its params, `_meta`, then arrays. */
export const deepRequest = (revision: "2026-07-28" | "2025-11-25", id: string | number, depth: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "skills/list",
    params: { _meta: { ...(revision === "2026-07-28" ? modernMeta : {}), deep: 0 } }
  }).replace(`"deep":0`, `"deep":${"[".repeat(depth - 3)}${"]".repeat(depth - 3)}`)

const Acknowledged = "notifications/subscriptions/acknowledged"

/**
 * A 2026-07-28 `subscriptions/listen` over HTTP with `headers` and `notifications`, acknowledged:
 * `events()` is every message it carried since (the acknowledgement left out), until the scope
 * closes; `headers` are the stream's response headers.
 */
export const listen = (
  url: string,
  headers: Record<string, string>,
  notifications: Record<string, unknown>
): Effect.Effect<{ readonly events: () => ReadonlyArray<any>; readonly headers: Headers }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stream = yield* eventStream((signal) =>
      fetch(url, {
        method: "POST",
        signal,
        headers: {
          ...json,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "subscriptions/listen",
          ...headers
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "subscriptions/listen", params: { notifications, _meta: modernMeta } })
      })
    )
    yield* poll("the acknowledgement", Effect.sync(() => stream.events.some((message) => message.method === Acknowledged) ? true : undefined))
    return { events: () => stream.events.filter((message) => message.method !== Acknowledged), headers: stream.headers }
  })

/** The messages of `listen`. */
export const listenEvents = (
  url: string,
  headers: Record<string, string>,
  notifications: Record<string, unknown>
): Effect.Effect<() => ReadonlyArray<any>, never, Scope.Scope> => Effect.map(listen(url, headers, notifications), (stream) => stream.events)
