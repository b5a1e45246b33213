/**
 * The 2025-11-25 HTTP sessions a skills layer knows, and what each holds: its
 * `resources/subscribe` URIs and its open session streams. effect 4.1.0 keeps no subscriptions for
 * HTTP sessions and answers their GET stream with 405, so the layer provides both; this module
 * bounds them and makes them end with the session.
 *
 * A session is known from the moment effect answers its `initialize` with an `Mcp-Session-Id`
 * (the layer's router middleware sees that answer), and ends on a successful DELETE or after
 * `idleTimeout` without a request and without an open stream. Ending a session drops its
 * subscriptions and closes its streams; a request carrying an id the layer does not know (ended,
 * expired or made up) gets 404, as the transport specifies for a terminated session.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

/** Bounds of the per-session state. */
export interface Options {
  /** A session without a request and without an open stream for this long ends (default 30 minutes). */
  readonly idleTimeout?: Duration.Input | undefined
  /** Most `resources/subscribe` URIs one session may hold (default 1,000). */
  readonly maxSubscriptions?: number | undefined
}

/** Longest URI `resources/subscribe` accepts, in UTF-16 code units (a URI longer than this names nothing we serve). */
export const MaxSubscribeUriLength = 8_192

interface Session {
  readonly subscriptions: Set<string>
  /** The session's latest skills request: whose eyes decide what its stream may carry. */
  latest: unknown
  lastSeen: number
  streams: number
  /** Completed when the session ends: its streams stop. */
  readonly ended: Deferred.Deferred<void>
}

/** Why a subscription was refused. */
export type Refusal = "unknown-session" | "limit"

/** The sessions of one layer. */
export interface Sessions {
  readonly maxSubscriptions: number
  /** Starts tracking a session effect just created. */
  readonly open: (id: string) => Effect.Effect<void>
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
  readonly size: Effect.Effect<{ readonly sessions: number; readonly subscriptions: number; readonly streams: number }>
}

/** Sessions for one layer; every session ends when `scope` closes. */
export const make = (options: Options = {}): Effect.Effect<Sessions, never, Scope.Scope> =>
  Effect.gen(function*() {
    const idle = Duration.fromInputUnsafe(options.idleTimeout ?? "30 minutes")
    const idleMillis = Duration.toMillis(idle)
    if (!(idleMillis > 0)) return yield* Effect.die(new RangeError(`SkillsServer sessions.idleTimeout must be positive, got ${String(options.idleTimeout)}`))
    const maxSubscriptions = options.maxSubscriptions ?? 1_000
    if (!Number.isSafeInteger(maxSubscriptions) || maxSubscriptions < 0) {
      return yield* Effect.die(new RangeError(`SkillsServer sessions.maxSubscriptions must be a nonnegative integer, got ${maxSubscriptions}`))
    }
    const sessions = new Map<string, Session>()
    const end = (id: string) =>
      Effect.suspend(() => {
        const session = sessions.get(id)
        if (session === undefined) return Effect.void
        sessions.delete(id)
        session.subscriptions.clear()
        session.latest = undefined
        return Deferred.succeed(session.ended, undefined)
      })
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
      open: (id) =>
        Effect.gen(function*() {
          const now = yield* sweep
          if (sessions.has(id)) return
          const ended = yield* Deferred.make<void>()
          sessions.set(id, { subscriptions: new Set(), latest: undefined, lastSeen: now, streams: 0, ended })
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
      size: Effect.map(sweep, () => {
        let subscriptions = 0
        let streams = 0
        for (const session of sessions.values()) {
          subscriptions += session.subscriptions.size
          streams += session.streams
        }
        return { sessions: sessions.size, subscriptions, streams }
      })
    }
    return sessionsApi
  })
