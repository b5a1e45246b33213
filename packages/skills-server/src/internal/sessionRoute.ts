/**
 * The HTTP side of 2025-11-25 sessions (state in `sessions.ts`): a global `HttpRouter` middleware
 * that learns sessions from effect's `initialize` answers, answers 404 for ids that are not (or no
 * longer) sessions on those paths, and, where effect answers a session's standalone GET stream
 * with 405, serves that stream itself, so HTTP sessions hear of a changed catalogue: it carries
 * `list_changed` and `resources/updated` (for the session's subscriptions) until the session ends
 * or the client leaves.
 *
 * @internal
 */
import { Sse } from "effect/encoding"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as EventStreams from "./eventStreams.js"
import * as FastRoute from "./fastRoute.js"
import * as Notices from "./notices.js"
import * as Sessions from "./sessions.js"
import type { State } from "./surface/request.js"
import * as Telemetry from "./telemetry.js"

const encoder = new TextEncoder()

const event = (method: string, params: Record<string, unknown>) =>
  encoder.encode(
    Sse.encoder.write({ _tag: "Event", event: "message", id: undefined, data: JSON.stringify({ jsonrpc: "2.0", method, params }) })
  )

const isEventStreamGet = (request: HttpServerRequest.HttpServerRequest) => {
  const version = request.headers["mcp-protocol-version"]
  return request.method === "GET" && (request.headers.accept ?? "").includes("text/event-stream") &&
    (version === undefined || version === "2025-11-25")
}

const notFound = HttpServerResponse.empty({ status: 404 })

/** The middleware of one skills layer; `mcpPaths` holds the paths sessions were learnt on. */
export const make = (state: State, mcpPaths: Set<string>) =>
(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>) =>
  Effect.gen(function*() {
    const sessions = state.sessions
    const request = yield* HttpServerRequest.HttpServerRequest
    const session = request.headers["mcp-session-id"]
    if (session === undefined) {
      const response = yield* httpEffect
      if (request.method !== "POST") return response
      // effect names a new session in a pre-response handler of its own; this one runs after it.
      yield* HttpEffect.appendPreResponseHandler((_request, final) => {
        const created = final.headers["mcp-session-id"]
        if (created === undefined || final.status !== 200) return Effect.succeed(final)
        mcpPaths.add(FastRoute.pathOf(request.url))
        return Effect.flatMap(
          sessions.open(created, Sessions.clientOf(request)),
          (full) => full === undefined ? Effect.succeed(final) : Sessions.refusal(request, sessions, full)
        )
      })
      // 2026-07-28 `subscriptions/listen` answers are event streams that a buffering proxy would hold.
      return EventStreams.noProxyBuffering(response)
    }
    if (!mcpPaths.has(FastRoute.pathOf(request.url))) return yield* httpEffect
    if (!(yield* sessions.touch(session))) return isEventStreamGet(request) || request.method !== "GET" ? notFound : yield* httpEffect
    const response = yield* httpEffect
    if (request.method === "DELETE") {
      if (response.status >= 200 && response.status < 300) yield* sessions.end(session)
      return response
    }
    if (response.status !== 405 || !isEventStreamGet(request)) return response
    const writer = yield* Effect.withFiber((fiber) => Effect.succeed(fiber))
    const events = Stream.unwrap(Effect.gen(function*() {
      const opened = yield* sessions.stream(session)
      if (Option.isNone(opened)) return Stream.empty
      const notices = yield* Notices.notices(state, opened.value.latest, opened.value.subscribed)
      return Stream.concat(
        // Sent at once, so the client has its headers (and is subscribed) before any change.
        Stream.make(encoder.encode(": skills session stream\n\n")),
        Stream.map(notices, (notice) =>
          notice._tag === "ResourcesChanged"
            ? event("notifications/resources/list_changed", {})
            : event("notifications/resources/updated", { uri: notice.uri }))
      ).pipe(Stream.interruptWhen(opened.value.ended))
    }))
    const dropped = Effect.andThen(
      Telemetry.count(Telemetry.metrics.notifications, { outcome: "dropped" }),
      Effect.logWarning(
        `a 2025-11-25 session stream was cut: its reader left more than ${sessions.maxPendingBytes} bytes of notifications untaken`,
        { client: Sessions.clientOf(request) }
      )
    )
    return HttpServerResponse.stream(EventStreams.withKeepAlive(EventStreams.bounded(events, sessions.maxPendingBytes, writer, dropped)), {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "mcp-session-id": session, "x-accel-buffering": "no" }
    })
  })

