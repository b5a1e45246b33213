/**
 * The session-revision connections without HTTP (stdio) of one run of a server, which the skills
 * layer tells of changes itself: effect 4.1.0 broadcasts `list_changed` and `resources/updated`
 * to every listener, and its per-client delivery (`projectNotification`) is not told which
 * client it delivers to.
 *
 * A connection is learnt from `lifecycle.initialize(version, profile, clientId)` and
 * `lifecycle.clientNotification` (`internal/mcpRuntime.ts`, `installHandlers`), and its notices
 * are projected with the adapter's `projectNotification` and sent with `context.sendNotification`,
 * as effect's own delivery does for `canDeliver` clients (initialized, subscribed). The records are
 * kept on the `target` that `installHandlers` of `internal/mcpRuntime.ts` makes once per run
 * (`registry.handlerTarget`) and hands to every adapter, and pruned by the transport's `clientIds`
 * (`RpcServer.Protocol`, which `runWithRuntime` in `McpServer.ts` runs on).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as RpcServer from "effect/rpc/RpcServer"
import * as Telemetry from "../telemetry.js"
import type { Connection, Extension, RequestInfo } from "./shapes.js"

interface Connected {
  readonly connection: Connection
  /** Closed when the connection initializes again or the server stops: ends its notices. */
  readonly scope: Scope.Closeable
  /** Done on `notifications/initialized`: notices wait for it (MCP lifecycle). */
  readonly initialized: Deferred.Deferred<void>
}

const Connections = Symbol.for("@mcp-skills/server/Connections")

/**
 * The stdio connections of one run of a server, shared by all its wrapped adapters (effect hands
 * each the same `target`): a connection that initializes again, with any revision, replaces its
 * record. Kept on `target`, which lives as long as the run.
 */
export const connectionsOf = (target: object): Map<number, Connected> => {
  const existing = (target as Record<symbol, Map<number, Connected> | undefined>)[Connections]
  if (existing !== undefined) return existing
  const connections = new Map<number, Connected>()
  Object.defineProperty(target, Connections, { value: connections, enumerable: false })
  return connections
}

const makeConnection = (): Connection => {
  let latest: RequestInfo | undefined
  const subscriptions = new Set<string>()
  return {
    latest: () => latest,
    remember: (request) => {
      latest = request
    },
    subscribed: (uri) => subscriptions.has(uri),
    subscribe: (uri) => void subscriptions.add(uri),
    unsubscribe: (uri) => void subscriptions.delete(uri)
  }
}

/** What one adapter's run hands to `connect`. */
export interface Run {
  readonly server: object
  readonly protocolVersion: string
  readonly connections: Map<number, Connected>
  /** The scope of this run of the server (effect's `runWithRuntime` is scoped). */
  readonly scope: Scope.Scope
  readonly transport: Option.Option<RpcServer.Protocol["Service"]>
  readonly project: (notice: unknown) => Effect.Effect<unknown, unknown>
  readonly send: ((protocolVersion: string, clientId: number, notification: unknown) => Effect.Effect<void>) | undefined
  readonly extension: Extension
}

/**
 * A stdio connection (re)initializes: from now on it is told of the skill changes it may see, none
 * before it has sent `notifications/initialized` (effect's `deliveryClientIds`); a change in
 * between is told once it has.
 */
export const connect = (run: Run, clientId: number) =>
  Effect.gen(function*() {
    // The connections a multi-client transport no longer has go as the next one arrives.
    const live = Option.isSome(run.transport) ? yield* run.transport.value.clientIds : undefined
    for (const [id, connected] of run.connections) {
      if (id === clientId || live?.has(id) === false) {
        run.connections.delete(id)
        yield* Scope.close(connected.scope, Exit.void)
      }
    }
    const scope = yield* Scope.fork(run.scope)
    yield* Scope.provide(Telemetry.session(run.protocolVersion, "pipe"), scope)
    const connected: Connected = { connection: makeConnection(), scope, initialized: yield* Deferred.make<void>() }
    run.connections.set(clientId, connected)
    const send = run.send
    if (send === undefined) return
    const notices = yield* Scope.provide(run.extension.notices({ _tag: "Connection", server: run.server, connection: connected.connection }), scope)
    yield* Effect.forkIn(
      Stream.runForEach(notices, (notice) =>
        Deferred.await(connected.initialized).pipe(
          Effect.andThen(run.project(notice)),
          Effect.flatMap((projected) => projected === undefined ? Effect.void : send(run.protocolVersion, clientId, projected))
        )).pipe(Effect.ignoreCause),
      scope
    )
  })

/** `notifications/initialized` from `clientId`: its notices may flow. */
export const initialized = (connections: Map<number, Connected>, clientId: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    const connected = connections.get(clientId)
    return connected === undefined ? Effect.void : Deferred.succeed(connected.initialized, undefined)
  })
