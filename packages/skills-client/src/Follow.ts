/**
 * Following a skills server for as long as a scope lasts: connect, look at it once, then look
 * again whenever one of its notifications says something may have changed, or its cache hint's
 * `ttlMs` (bounded) has passed, since not every server says when it changes. Notifications are
 * heard on every transport and revision: 2026-07-28 `subscriptions/listen`, a 2025-11-25 session
 * with `resources/subscribe`, and over stdio the connection itself. What a notification says is
 * never trusted, only that something may have changed: a burst costs one look, after a quiet
 * time. A look that fails (the server gone, a listing refused) ends the connection, which is made
 * again with capped exponential backoff; all time comes from `Clock`.
 *
 * What a look does is the caller's: the gateway (`UpstreamSource` of `@mcp-skills/server`)
 * verifies and serves what changed, {@link Sync} installs it into a folder.
 *
 * @since 0.1.0
 */
import type { CacheHint, EffectSupport } from "@mcp-skills/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { McpClientError } from "effect/ai/McpClientError"
import * as HttpClient from "effect/http/HttpClient"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import { ChannelError, type Signal } from "./FollowChannel.js"
import * as Listen from "./internal/follow/listen.js"
import * as StdioTap from "./internal/follow/stdioTap.js"
import { clientInfo as defaultClientInfo } from "./internal/settings.js"
import * as SkillsClient from "./SkillsClient.js"
import type { StdioError } from "./SkillsClientError.js"

/**
 * Where a server is and how to speak to it: Streamable HTTP with headers sent on every request
 * (a token), or a command spawned and spoken to over stdio.
 *
 * @since 0.1.0
 * @category models
 */
export type Transport =
  | { readonly _tag: "Http"; readonly url: string; readonly headers: Readonly<Record<string, string>> }
  | {
    readonly _tag: "Stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>> | undefined
    readonly cwd: string | undefined
  }

/**
 * A server over HTTP.
 *
 * @since 0.1.0
 * @category constructors
 */
export const http = (url: string, headers: Readonly<Record<string, string>> = {}): Transport => ({ _tag: "Http", url, headers })

/**
 * A server spawned with `command` and `args`, spoken to over stdio.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stdio = (
  command: string,
  args: ReadonlyArray<string> = [],
  options: { readonly env?: Readonly<Record<string, string>> | undefined; readonly cwd?: string | undefined } = {}
): Transport => ({ _tag: "Stdio", command, args, env: options.env, cwd: options.cwd })

/**
 * How the client of a {@link Transport} is made: `SkillsClient.Options` (`server` defaults to
 * the URL or the command line), the revision to speak (default `"auto"`), and for HTTP how the
 * extension's own reads travel (`SkillsClient.layerHttp`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions extends Omit<SkillsClient.Options, "server"> {
  readonly server?: string | undefined
  readonly protocolVersion?: SkillsClient.ProtocolChoice | undefined
  readonly readTransport?: "HttpClient" | "lean" | undefined
}

/**
 * The verifying client of a transport, its files cached in the `SkillCache` in context. Needs an
 * `HttpClient` for HTTP and a `ChildProcessSpawner` for stdio (`NodeServices.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const clientLayer = (
  transport: Transport,
  options: ClientOptions = {}
): Layer.Layer<
  SkillsClient.SkillsClient,
  McpClientError | EffectSupport.UnsupportedEffect | StdioError,
  HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner
> =>
  transport._tag === "Http"
    ? SkillsClient.layerHttp({ ...options, url: transport.url, headers: transport.headers })
    : SkillsClient.layerStdio({ ...options, command: transport.command, args: transport.args, env: transport.env, cwd: transport.cwd })

/**
 * A live connection: the verifying client, and the notifications it can open, asking for
 * `updated` of the `SKILL.md` URIs given (at most 1,000).
 *
 * @since 0.1.0
 * @category models
 */
export interface Connection {
  readonly client: SkillsClient.Service
  readonly signals: (uris: ReadonlyArray<string>) => Stream.Stream<Signal, ChannelError>
}

/**
 * Connects once; the scope owns the connection (the session, or the process). The client is
 * {@link clientLayer}'s; notifications are heard on the revision it negotiated: over HTTP on a
 * channel of their own (each answer read bounded), over stdio on the process's own output.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect = (
  transport: Transport,
  options: ClientOptions
): Effect.Effect<
  Connection,
  McpClientError | EffectSupport.UnsupportedEffect | StdioError,
  Scope.Scope | HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner
> =>
  Effect.gen(function*() {
    const info = options.clientInfo ?? defaultClientInfo
    if (transport._tag === "Http") {
      const http = yield* HttpClient.HttpClient
      const client = Context.get(yield* Layer.build(clientLayer(transport, options)), SkillsClient.SkillsClient)
      const listen = { url: transport.url, headers: transport.headers, info }
      return {
        client,
        signals: (uris) =>
          Stream.provideService(
            client.protocolVersion === "2026-07-28" ? Listen.listen2026({ ...listen, uris }) : Listen.session2025({ ...listen, uris }),
            HttpClient.HttpClient,
            http
          )
      } satisfies Connection
    }
    const tap = yield* StdioTap.make(yield* ChildProcessSpawner.ChildProcessSpawner)
    const built = yield* Layer.build(
      clientLayer(transport, options).pipe(Layer.provide(Layer.succeed(ChildProcessSpawner.ChildProcessSpawner, tap.spawner)))
    )
    const client = Context.get(built, SkillsClient.SkillsClient)
    return {
      client,
      // Over stdio the connection is the channel: ask for notifications on it, then hear them.
      // (A 2026-07-28 listen is acknowledged; a 2025-11-25 connection has been heard since it opened.)
      signals: (uris) =>
        Stream.unwrap(
          client.protocolVersion === "2026-07-28"
            ? Effect.as(tap.write(Listen.listenRequest(info, uris)), Stream.fromQueue(tap.signals))
            : Effect.as(
              Effect.forEach(Listen.subscribeRequests(info, uris), tap.write, { discard: true }),
              Stream.concat(Stream.succeed<Signal>({ _tag: "Opened" }), Stream.fromQueue(tap.signals))
            )
        )
    } satisfies Connection
  })

/**
 * Whether the server's notifications are heard: `open`, not offered by it (`unsupported`: only
 * `ttlMs` re-checks), or not heard right now (`closed`).
 *
 * @since 0.1.0
 * @category models
 */
export type Notifications = "open" | "unsupported" | "closed"

/**
 * What happens while a server is followed, as it happens. `Connected`: a connection is made,
 * before its first look. `Looked`: a look succeeded (`first` of its connection). `Notifications`:
 * the channel opened, closed, or is not offered (`reason`). `Disconnected`: the connection ended
 * (a failed look or connection, `reason` its message); the next one is tried after `retryIn`.
 *
 * @since 0.1.0
 * @category models
 */
export type Event =
  | { readonly _tag: "Connected"; readonly client: SkillsClient.Service }
  | { readonly _tag: "Looked"; readonly first: boolean; readonly hint: CacheHint.CacheHint }
  | { readonly _tag: "Notifications"; readonly state: Notifications; readonly reason: string | undefined }
  | {
    readonly _tag: "Disconnected"
    readonly cause: Cause.Cause<unknown>
    readonly reason: string
    readonly retryIn: Duration.Duration
  }

/**
 * How a server is followed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings<E, R> {
  /** Connects anew (the scope owns the connection), e.g. {@link connect}. */
  readonly connect: Effect.Effect<Connection, unknown, Scope.Scope | R>
  /**
   * One look at the server; the cache hint it answers with sets when the next re-check is due. A
   * failure ends the connection.
   */
  readonly look: (client: SkillsClient.Service) => Effect.Effect<CacheHint.CacheHint, E, R>
  /** The `SKILL.md` URIs to hear `updated` of, read each time the channel opens. Default none. */
  readonly subscriptions?: Effect.Effect<ReadonlyArray<string>> | undefined
  /**
   * Bounds of the look again after `ttlMs` (default 5 seconds to 10 minutes): a `ttlMs` of 0 is
   * no reason to ask without pause, nor a day a reason to miss a change.
   */
  readonly recheck?: { readonly min?: Duration.Input | undefined; readonly max?: Duration.Input | undefined } | undefined
  /** Reconnection backoff: doubling from `base` (default 500 ms) up to `cap` (default 30 s). */
  readonly backoff?: { readonly base?: Duration.Input | undefined; readonly cap?: Duration.Input | undefined } | undefined
  /** Quiet time after a notification before looking, so a burst costs one look (default 50 ms). */
  readonly settle?: Duration.Input | undefined
  /** Told of every {@link Event}. */
  readonly onEvent?: ((event: Event) => Effect.Effect<void, never, R>) | undefined
}

const duration = (input: Duration.Input | undefined, fallback: Duration.Input) => Duration.fromInputUnsafe(input ?? fallback)

const delay = (attempt: number, bounds: { readonly base: Duration.Duration; readonly cap: Duration.Duration }) =>
  Duration.min(bounds.cap, Duration.times(bounds.base, 2 ** Math.min(attempt, 20)))

/**
 * The message of a failure, for a line a person reads.
 *
 * @since 0.1.0
 * @category utils
 */
export const describeCause = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String(error.message)
    : String(error)
}

/**
 * Follows a server until interrupted (see the module description); it never fails: every failure
 * is a `Disconnected` event and a reconnection.
 *
 * @example
 * ```ts
 * import { Follow } from "@mcp-skills/client"
 * import { Effect } from "effect"
 *
 * const follow = Effect.gen(function*() {
 *   yield* Follow.run({
 *     connect: Follow.connect(Follow.http("http://127.0.0.1:3000/mcp"), {}),
 *     look: (client) => Effect.map(client.listSkills(), (listing) => listing.cacheHint)
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run = <E, R>(settings: Settings<E, R>): Effect.Effect<never, never, R> =>
  Effect.gen(function*() {
    const recheck = { min: duration(settings.recheck?.min, "5 seconds"), max: duration(settings.recheck?.max, "10 minutes") }
    const backoff = { base: duration(settings.backoff?.base, "500 millis"), cap: duration(settings.backoff?.cap, "30 seconds") }
    const settle = duration(settings.settle, "50 millis")
    const tell = (event: Event) => settings.onEvent?.(event) ?? Effect.void
    const subscriptions = settings.subscriptions ?? Effect.succeed([])

    // Notifications of one connection, opened again (with backoff) when they break; each one, its
    // opening (a change made before it opened was told to nobody) and each break (the server may
    // be gone) wakes the look.
    const hear = (connection: Connection, wake: Queue.Queue<void>) =>
      Effect.gen(function*() {
        for (let attempt = 0;; attempt++) {
          const exit = yield* subscriptions.pipe(
            Effect.flatMap((uris) =>
              connection.signals(uris).pipe(
                Stream.runForEach((signal) =>
                  Effect.gen(function*() {
                    // A channel that was heard starts its backoff over when it breaks.
                    attempt = 0
                    if (signal._tag === "Opened") yield* tell({ _tag: "Notifications", state: "open", reason: undefined })
                    yield* Queue.offer(wake, undefined)
                  })
                )
              )
            ),
            Effect.exit
          )
          yield* Queue.offer(wake, undefined)
          const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
          if (error instanceof ChannelError && error.unsupported) {
            return yield* tell({ _tag: "Notifications", state: "unsupported", reason: error.reason })
          }
          yield* tell({ _tag: "Notifications", state: "closed", reason: Exit.isFailure(exit) ? describeCause(exit.cause) : undefined })
          yield* Effect.sleep(delay(attempt, backoff))
        }
      })

    // One connection, for as long as its looks succeed (it only ends by failing).
    const connected = Effect.gen(function*() {
      const connection = yield* settings.connect
      yield* tell({ _tag: "Connected", client: connection.client })
      let hint = yield* settings.look(connection.client)
      yield* tell({ _tag: "Looked", first: true, hint })
      const wake = yield* Queue.sliding<void>(1)
      yield* Effect.forkScoped(hear(connection, wake))
      for (;;) {
        const ttl = Duration.clamp(Duration.millis(hint.ttlMs), { minimum: recheck.min, maximum: recheck.max })
        yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(ttl))
        yield* Effect.sleep(settle)
        yield* Queue.clear(wake)
        hint = yield* settings.look(connection.client)
        yield* tell({ _tag: "Looked", first: false, hint })
      }
    })

    for (let attempt = 0;; attempt++) {
      const began = yield* Clock.currentTimeMillis
      const exit = yield* Effect.exit(Effect.scoped(connected))
      // A connection that served for a while starts the backoff over.
      if ((yield* Clock.currentTimeMillis) - began > Duration.toMillis(backoff.cap)) attempt = 0
      // A connection only ends by failing: its loop has no end.
      const cause = Exit.isFailure(exit) ? exit.cause : Cause.empty
      const retryIn = delay(attempt, backoff)
      yield* tell({ _tag: "Disconnected", cause, reason: describeCause(cause), retryIn })
      yield* Effect.sleep(retryIn)
    }
  })
