/**
 * The 2025-11-25 HTTP sessions a skills layer knows, and what each holds: its
 * `resources/subscribe` URIs and its open session streams. effect 4.1.0 keeps no subscriptions for
 * HTTP sessions and answers their GET stream with 405, so the layer provides both; this module
 * bounds them and makes them end with the session.
 *
 * A session is known from the moment effect answers its `initialize` with an `Mcp-Session-Id`
 * (the layer's router middleware sees that answer), and ends on a successful DELETE or after
 * `idleTimeout` without a request and without an open stream. Ending a session drops its
 * subscriptions, closes its streams and ends effect's record of it too (`endEffect`); a request
 * carrying an id the layer does not know (ended, expired or made up) gets 404, as the transport
 * specifies for a terminated session.
 *
 * At most `maxSessions` sessions live at once, and at most `maxSessionsPerClient` per client: a
 * session opened past either is ended at once (the middleware answers its `initialize` 503).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Admission from "./admission.js"
import * as Nesting from "./nesting.js"
import * as ServerLimits from "../ServerLimits.js"
import * as Telemetry from "./telemetry.js"

/** Bounds of the per-session state, checked (`SkillsServer.SessionOptions` and `ServerLimits`). */
export interface Bounds {
  /** A session without a request and without an open stream for this long ends. */
  readonly idleTimeout: Duration.Duration
  /** Most `resources/subscribe` URIs one session may hold. */
  readonly maxSubscriptions: number
  /** Most sessions held at once. */
  readonly maxSessions: number
  /** Most sessions one client (remote address) holds at once. */
  readonly maxSessionsPerClient: number
  /** Bytes of notifications a session stream holds that its reader has not taken. */
  readonly maxPendingBytes: number
}

/** Why a new session was refused: the server's cap, or the client's. */
export type Full = "server" | "client"

interface Session {
  readonly client: string
  readonly subscriptions: Set<string>
  /** The session's latest skills request: whose eyes decide what its stream may carry. */
  latest: unknown
  lastSeen: number
  /** When it opened (`Clock` millis), for `mcp.server.session.duration`. */
  readonly opened: number
  streams: number
  /** Completed when the session ends: its streams stop. */
  readonly ended: Deferred.Deferred<void>
}

/** Why a subscription was refused. */
export type Refusal = "unknown-session" | "limit"

/** The sessions of one layer. */
export interface Sessions {
  readonly maxSubscriptions: number
  readonly maxSessions: number
  readonly maxSessionsPerClient: number
  readonly maxPendingBytes: number
  /** How long a client refused a session should wait before it tries again. */
  readonly retryAfterSeconds: number
  /**
   * Starts tracking a session effect just created for `client`, or (past a cap) ends it at once
   * and says which cap.
   */
  readonly open: (id: string, client: string) => Effect.Effect<Full | undefined>
  /** Whether the session is known; records activity when it is. */
  readonly touch: (id: string) => Effect.Effect<boolean>
  readonly subscribe: (id: string, uri: string) => Effect.Effect<Refusal | undefined>
  /** Keeps the session's latest skills request (one per session, dropped with it). */
  readonly remember: (id: string, request: unknown) => Effect.Effect<void>
  readonly unsubscribe: (id: string, uri: string) => Effect.Effect<void>
  /** Ends a session: drops its subscriptions and closes its streams. */
  readonly end: (id: string) => Effect.Effect<void>
  /**
   * Opens a stream of the session (counted as activity while open, released with the scope):
   * `None` for an unknown session, otherwise whether it is subscribed to a URI and when it ends.
   */
  readonly stream: (id: string) => Effect.Effect<
    Option.Option<{
      readonly subscribed: (uri: string) => boolean
      /** The session's latest skills request, if it made one. */
      readonly latest: () => unknown
      readonly ended: Effect.Effect<void>
    }>,
    never,
    Scope.Scope
  >
  /** Sessions and subscriptions held right now, expired ones swept first (for tests and diagnostics). */
  readonly size: Effect.Effect<Counts>
  /** The same, as held, without sweeping: what a metrics scrape reads (it must not end sessions). */
  readonly counts: () => Counts
}

/** How many sessions, subscribed URIs and open session streams are held. */
export interface Counts {
  readonly sessions: number
  readonly subscriptions: number
  readonly streams: number
}

/**
 * Sessions for one layer; every session ends when `scope` closes. `endEffect` ends effect's own
 * record of a session (effect keeps one per HTTP session until a DELETE).
 */
export const make = (
  bounds: Bounds,
  endEffect: (id: string) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<Sessions, never, Scope.Scope> =>
  Effect.gen(function*() {
    const idleMillis = Duration.toMillis(bounds.idleTimeout)
    const { maxPendingBytes, maxSessions, maxSessionsPerClient, maxSubscriptions } = bounds
    const sessions = new Map<string, Session>()
    const perClient = new Map<string, number>()
    const end = (id: string) =>
      Effect.suspend(() => {
        const session = sessions.get(id)
        if (session === undefined) return Effect.void
        sessions.delete(id)
        const held = perClient.get(session.client)! - 1
        if (held === 0) perClient.delete(session.client)
        else perClient.set(session.client, held)
        session.subscriptions.clear()
        session.latest = undefined
        return Effect.andThen(
          Telemetry.sessionEnded(session.opened),
          Effect.andThen(Deferred.succeed(session.ended, undefined), endEffect(id))
        )
      })
    const counts = (): Counts => {
      let subscriptions = 0
      let streams = 0
      for (const session of sessions.values()) {
        subscriptions += session.subscriptions.size
        streams += session.streams
      }
      return { sessions: sessions.size, subscriptions, streams }
    }
    // Expired sessions are swept on the way into the next session request (at most every quarter
    // of the timeout), not by a timer: a server nobody talks to holds no fiber and grows nothing.
    let lastSweep = yield* Clock.currentTimeMillis
    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now - lastSweep < idleMillis / 4) return now
      lastSweep = now
      const expired = [...sessions].filter(([, session]) => session.streams === 0 && now - session.lastSeen >= idleMillis)
      for (const [id] of expired) yield* end(id)
      return now
    })
    yield* Effect.addFinalizer(() => Effect.forEach([...sessions.keys()], end, { discard: true }))
    const sessionsApi: Sessions = {
      maxSubscriptions,
      maxPendingBytes,
      maxSessions,
      maxSessionsPerClient,
      retryAfterSeconds: ServerLimits.retryAfterSeconds(bounds.idleTimeout),
      open: (id, client) =>
        Effect.gen(function*() {
          const now = yield* sweep
          if (sessions.has(id)) return undefined
          const held = perClient.get(client) ?? 0
          const full: Full | undefined = sessions.size >= maxSessions ? "server" : held >= maxSessionsPerClient ? "client" : undefined
          if (full !== undefined) {
            yield* Telemetry.count(Telemetry.metrics.sessionsRefused, { cap: full })
            yield* endEffect(id)
            return full
          }
          const ended = yield* Deferred.make<void>()
          sessions.set(id, { client, subscriptions: new Set(), latest: undefined, lastSeen: now, opened: now, streams: 0, ended })
          perClient.set(client, held + 1)
          return undefined
        }),
      touch: (id) =>
        Effect.map(sweep, (now) => {
          const session = sessions.get(id)
          if (session === undefined) return false
          session.lastSeen = now
          return true
        }),
      subscribe: (id, uri) =>
        Effect.sync(() => {
          const session = sessions.get(id)
          if (session === undefined) return "unknown-session"
          if (!session.subscriptions.has(uri) && session.subscriptions.size >= maxSubscriptions) return "limit"
          session.subscriptions.add(uri)
          return undefined
        }),
      unsubscribe: (id, uri) => Effect.sync(() => void sessions.get(id)?.subscriptions.delete(uri)),
      remember: (id, request) =>
        Effect.sync(() => {
          const session = sessions.get(id)
          if (session !== undefined) session.latest = request
        }),
      end,
      stream: (id) =>
        Effect.suspend(() => {
          const session = sessions.get(id)
          if (session === undefined) return Effect.succeed(Option.none())
          return Effect.as(
            Effect.acquireRelease(
              Effect.sync(() => session.streams++),
              () =>
                Effect.flatMap(Clock.currentTimeMillis, (now) =>
                  Effect.sync(() => {
                    session.streams--
                    session.lastSeen = now
                  }))
            ),
            Option.some({
              subscribed: (uri: string) => session.subscriptions.has(uri),
              latest: () => session.latest,
              ended: Deferred.await(session.ended)
            })
          )
        }),
      size: Effect.map(sweep, counts),
      counts
    }
    return sessionsApi
  })

/**
 * Who a session counts against for `maxSessionsPerClient`: the request's remote address as the
 * server sees it (the peer, or the forwarded client when effect's `HttpMiddleware.xForwardedHeaders`
 * trusts a proxy in front).
 */
export const clientOf = (request: HttpServerRequest.HttpServerRequest): string => Option.getOrElse(request.remoteAddress, () => "")

// JSON-RPC's implementation-defined server error range: the request was fine, the server is full.
const ServerBusy = -32000

/**
 * The answer to an `initialize` past a cap: 503, `Retry-After`, and a JSON-RPC error with the
 * request's id (the body is read already: effect read it to answer).
 */
export const refusal = (
  request: HttpServerRequest.HttpServerRequest,
  sessions: Sessions,
  full: Full
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.map(Effect.option(request.text), (text) => {
    const limit = full === "server" ? sessions.maxSessions : sessions.maxSessionsPerClient
    // An id that cannot be read is answered as null, as JSON-RPC says.
    return Admission.errorResponse(503, Option.isSome(text) ? Nesting.idOfText(text.value) : null, {
      code: ServerBusy,
      message: full === "server"
        ? `Too many sessions: this server holds at most ${limit}; retry later, or use protocol 2026-07-28, which needs no session`
        : `Too many sessions from this client: at most ${limit}; end one (DELETE) or retry later`,
      data: { limit: full === "server" ? "maxSessions" : "maxSessionsPerClient", max: limit, retryAfterSeconds: sessions.retryAfterSeconds }
    }, { "retry-after": String(sessions.retryAfterSeconds) })
  })
