/**
 * The one place that touches effect's undocumented MCP server hooks.
 *
 * effect@4.1.0 has no public way to add JSON-RPC methods to `McpServer`. Its protocol adapters
 * (`McpProtocol.v2026_07_28`, `v2025_11_25`, ...) expose `installHandlers(core, lifecycle, target)`
 * typed as `any`, and the runtime calls it once per adapter when the server starts. Wrapping an
 * adapter lets us (1) merge our RPCs into its groups so the dispatcher and the 2026-07-28 HTTP
 * admission know them, (2) install their handlers through `target.install`, (3) wrap the adapter's
 * own `resources/read` and `resources/list` handlers so skill files are answered from our snapshot
 * while every other URI reaches effect's code unchanged, and (4) add our capability to
 * `server/discover` (through `target.context`) and `initialize` (through `lifecycle.initialize`).
 *
 * Verified against effect@4.1.0 (exact pin): `src/ai/internal/mcpRuntime.ts` (`installHandlers`,
 * lifecycle, HTTP admission reading `handlerRpcs`), `mcpProtocolRegistry.ts` (`handlerTarget`),
 * `mcpCore.ts` (`core.resources.read`), `mcpProtocol/v2026_07_28.ts` and `v2025_11_25.ts`
 * (handler objects keyed by method, `registrationPresence`, `serverInfo.extensions`). The wire
 * tests in `test/` fail if a later effect moves any of these, and `hooks` (checked when the skills
 * layer is built) and `installHandlers` (checked when the server starts) fail with
 * `EffectSupport.UnsupportedEffect` when one is missing.
 *
 * Notifications: effect 4.1.0 broadcasts `list_changed` and `resources/updated`
 * to every listener (`McpServer.ts`, the queue consumer of `runWithRuntime`, and
 * `mcpProtocol/v2026_07_28.ts`, the `subscriptions/listen` handler), and the per-client delivery
 * (`projectNotification`) is not told which client it delivers to. So the skills layer never
 * hands its changes to effect; it tells each listener itself (`Extension.notices`):
 *
 * - a 2026-07-28 `subscriptions/listen` request: the handler takes its events from
 *   `context.subscribeServerNotifications` (`HandlerInstallationContext` in
 *   `internal/mcpProtocol.ts`), run in the listen request's fiber with the listen's scope. The
 *   wrapper gives it a subscription of its own carrying effect's events and the skill notices
 *   decided for that request, as `CanonicalServerNotification` values; the handler then applies
 *   its own filters (what the listen asked for) and framing.
 * - a session-revision connection without HTTP (stdio): the connection is learnt from
 *   `lifecycle.initialize(version, profile, clientId)` and `lifecycle.clientNotification`
 *   (`internal/mcpRuntime.ts`, `installHandlers`), and its notices are projected with the
 *   adapter's `projectNotification` and sent with `context.sendNotification`, as effect's own
 *   delivery does for `canDeliver` clients (initialized, subscribed). The connections are kept
 *   on the `target` that `installHandlers` of `internal/mcpRuntime.ts` makes once per run
 *   (`registry.handlerTarget`) and hands to every adapter, and pruned by the transport's
 *   `clientIds` (`RpcServer.Protocol`, which `runWithRuntime` in `McpServer.ts` runs on).
 *
 * Listen streams (`mcpProtocol/v2026_07_28.ts`, `subscriptions/listen`): effect keeps 64 pending
 * notifications per stream and ends it past them (`protocol.end` over HTTP, which writes no
 * message). The wrapper reads the listen's params (its handler, wrapped in `install`), paces the
 * skill notices through `ListenPacing` (each handed out carries, in its `metadata`, which effect
 * copies into `_meta`, what to run once it is sent; the wrapped `sendNotification` strips and runs it),
 * and over HTTP sends `notifications/cancelled` naming the listen before effect ends a stream.
 *
 * HTTP sessions (`mcpStatefulRuntime.ts`): effect keeps each session until a DELETE
 * (`ServerRuntime.terminateHttpSession`), so a session the skills layer expires would stay in
 * effect's map for the life of the server. The stateful adapters' `installHandlers` finds the
 * `ServerRuntime` in its context and leaves a way to end a session on the server (`endHttpSession`).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Headers from "effect/http/Headers"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { EffectSupport } from "@mcp-skills/core"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import { McpProtocol, McpSchema, McpServer } from "effect/ai"
import type * as RpcGroup from "effect/rpc/RpcGroup"
import * as RpcServer from "effect/rpc/RpcServer"
import * as Learning from "./learning.js"
import * as ListenPacing from "./listenPacing.js"
import type { Notice } from "./listenPacing.js"
import { isWireError } from "./port.js"
import type { Connection, Extension, Handler, RequestInfo, WireError } from "./port.js"
import * as Telemetry from "../telemetry.js"

const MCP_SESSION_ID_HEADER = "mcp-session-id"

// effect 4.1.0 `subscriptions/listen` copies a notification's `metadata` into the `_meta` it sends.
const PacedKey = "@mcp-skills/server/paced"

/** The params of the `subscriptions/listen` request being handled (provided around its handler). */
class ListenParams extends Context.Service<ListenParams, { readonly notifications?: unknown }>()(
  "@mcp-skills/server/ListenParams"
) {}

const askedBy = (params: { readonly notifications?: unknown }): ListenPacing.Asked => {
  const asked = (params.notifications ?? {}) as { resourcesListChanged?: unknown; resourceSubscriptions?: unknown }
  const uris = new Set(Array.isArray(asked.resourceSubscriptions) ? asked.resourceSubscriptions : [])
  return { listChanged: asked.resourcesListChanged === true, subscribed: (uri) => uris.has(uri) }
}

/** What a stateless adapter tells the fast route about itself (see `learning.ts`). */
interface Learnt {
  readonly protocolVersion: string
  readonly profile: (metadata: unknown) => unknown
  readonly directoryRead: boolean
}

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
const connectionsOf = (target: object): Map<number, Connected> => {
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

const requestInfo = (
  modern: boolean,
  core: any,
  server: object,
  serverInfo: Readonly<Record<string, unknown>>,
  connectionOf: (clientId: number) => Connection | undefined,
  learnt: Learnt | undefined
): Effect.Effect<RequestInfo, never, any> =>
  Effect.gen(function*() {
    const requestContext = yield* McpSchema.McpRequestContext
    const serverClient = yield* Effect.serviceOption(McpSchema.McpServerClient)
    const httpRequest = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
    const slot = yield* Learning.CurrentSlot
    if (slot !== undefined && learnt !== undefined && Option.isSome(httpRequest)) {
      slot.seen = {
        _tag: "Reached",
        endpoint: {
          server,
          request: httpRequest.value,
          protocolVersion: learnt.protocolVersion,
          profile: learnt.profile,
          serverInfo,
          directoryRead: learnt.directoryRead
        },
        middleware: slot.seen._tag === "Reached" ? slot.seen.middleware : undefined
      }
    }
    const headers: Headers.Headers = Option.isSome(httpRequest) ? httpRequest.value.headers : ({} as Headers.Headers)
    // Same invocation record effect builds in `invocationFromRequestContext` / `invocationFromClient`.
    const invocation = {
      clientId: requestContext.clientId,
      protocol: {
        protocolVersion: requestContext.protocolVersion,
        clientCapabilities: requestContext.clientCapabilities,
        clientInfo: requestContext.clientInfo,
        requestMetadata: requestContext.requestMetadata
      },
      requestContext,
      serverClient: Option.getOrUndefined(serverClient)
    }
    return {
      modern,
      protocolVersion: requestContext.protocolVersion,
      requestContext,
      headers,
      sessionId: headers[MCP_SESSION_ID_HEADER],
      server,
      connection: modern || Option.isSome(httpRequest) ? undefined : connectionOf(requestContext.clientId),
      serverInfo,
      readRegisteredResource: (uri: string) =>
        (core.resources.read(uri, invocation) as Effect.Effect<unknown, any>).pipe(
          Effect.map(Option.some),
          Effect.catch((error: any): Effect.Effect<Option.Option<unknown>, WireError> =>
            error?._tag === "ResourceNotFound"
              ? Effect.succeed(Option.none())
              : isWireError(error)
              ? Effect.fail<WireError>(error.data === undefined
                ? { code: error.code, message: error.message }
                : { code: error.code, message: error.message, data: error.data })
              : Effect.andThen(
                Effect.logError("reading an effect resource failed", error),
                Effect.fail<WireError>({ code: McpSchema.INTERNAL_ERROR_CODE, message: "Internal error" })
              )
          )
        ),
      middlewareAround: (uri: string, marker: string) =>
        (core.resources.read(uri, invocation) as Effect.Effect<unknown, unknown>).pipe(
          // Answered: some middleware answered in the handler's place.
          Effect.as(true),
          Effect.catchCause((cause) => {
            const failure = Cause.findFail(cause)
            if (Result.isFailure(failure)) return Effect.succeed(true)
            const error = failure.success.error as { readonly message?: unknown } | undefined
            const ours = typeof error?.message === "string" && error.message.includes(marker)
            return Effect.succeed(!ours || Cause.reasonAnnotations(failure.success).mapUnsafe.has(HandlerFailureKey))
          })
        )
    } satisfies RequestInfo
  })

// What telemetry records of a request: effect's RPC server hands each handler the JSON-RPC id
// as `requestId` (effect 4.1.0 `RpcServer`, the handler's metadata).
const requestOf = (request: RequestInfo, options: { readonly requestId?: unknown } | undefined) => ({
  protocolVersion: request.protocolVersion,
  requestId: options?.requestId,
  sessionId: request.sessionId
})

// effect 4.1.0 `McpServer.runMiddleware` annotates a handler's failure with this key when the
// handler ran inside middleware.
const HandlerFailureKey = "effect/ai/McpServer/HandlerFailure"

const Attached = Symbol.for("@mcp-skills/server/SkillsServer")

/**
 * Attaches the skills layer's state to the `McpServer` it serves, for as long as the layer's scope
 * is open: the wrapped adapters find it through the server of each request. effect keeps its own
 * per-server state in a module-level map keyed by the service; ours lives on the service itself,
 * so it needs no global and goes with the layer. Fails with `existing` when another skills layer is
 * already attached to this server.
 */
export const attach = <S>(server: object, state: S): Effect.Effect<void, { readonly existing: S }, Scope.Scope> =>
  Effect.suspend(() => {
    const existing = (server as Record<symbol, S | undefined>)[Attached]
    if (existing !== undefined) return Effect.fail({ existing })
    return Effect.acquireRelease(
      Effect.sync(() => {
        Object.defineProperty(server, Attached, { value: state, configurable: true, enumerable: false, writable: false })
      }),
      () => Effect.sync(() => delete (server as Record<symbol, unknown>)[Attached])
    )
  })

/** The state attached to `server` by `attach`, if any. */
export const attached = <S>(server: object): S | undefined => (server as Record<symbol, S | undefined>)[Attached]

// effect 4.1.0 `HttpRouter`: a route middleware provided around a layer is a context entry under
// this key prefix, holding the stack of middleware functions that `router.add` applies.
const RouteMiddlewareKeyPrefix = "effect/http/HttpRouter/Middleware-"

/**
 * The `HttpRouter` route middleware functions in `context` (those provided around the layer that
 * built it, such as middleware provided to `McpServer.layerHttp`).
 */
export const routeMiddleware = (context: Context.Context<never>): ReadonlyArray<unknown> => {
  const found: Array<unknown> = []
  for (const [key, value] of context.mapUnsafe) {
    if (key.startsWith(RouteMiddlewareKeyPrefix) && Array.isArray(value)) found.push(...value)
  }
  return found
}

// effect 4.1.0: the MCP runtime service `McpServer.layerHttp` provides to its registrations.
const ServerRuntimeKey = "effect/ai/McpRuntime/ServerRuntime"

const SessionEnd = Symbol.for("@mcp-skills/server/SessionEnd")

type EndSession = (id: string) => Effect.Effect<void>

/**
 * Ends effect's own record of the HTTP session `id` (as its DELETE does, in-flight requests of the
 * session included); nothing when `server` runs no HTTP session revision.
 */
export const endHttpSession = (server: object, id: string): Effect.Effect<void> =>
  Effect.suspend(() => (server as Record<symbol, EndSession | undefined>)[SessionEnd]?.(id) ?? Effect.void)

// Run by the stateful adapters' `installHandlers`, for as long as the run's scope is open.
const exposeSessionEnd = (server: object) =>
  Effect.gen(function*() {
    const runtime = (yield* Effect.context<never>()).mapUnsafe.get(ServerRuntimeKey) as
      | { readonly terminateHttpSession?: (headers: Headers.Headers) => Effect.Effect<unknown> }
      | undefined
    const terminate = runtime?.terminateHttpSession
    if (terminate === undefined || Object.hasOwn(server, SessionEnd)) return
    const end: EndSession = (id) => Effect.asVoid(terminate(Headers.fromInput({ [MCP_SESSION_ID_HEADER]: id })))
    yield* Effect.acquireRelease(
      Effect.sync(() => Object.defineProperty(server, SessionEnd, { value: end, configurable: true, enumerable: false })),
      () => Effect.sync(() => delete (server as Record<symbol, unknown>)[SessionEnd])
    )
  })

/**
 * Whether `context` is a server layer's own (the skills layer given as `registrations`): only
 * then does it hold the route middleware provided to that server.
 */
export const isInsideServer = (context: Context.Context<never>): boolean => context.mapUnsafe.has(ServerRuntimeKey)

const isFunction = (u: unknown): boolean => typeof u === "function"

const Package = "@mcp-skills/server"

/**
 * The hooks of effect's protocol adapters and `HttpRouter` that this module relies on before the
 * server starts, each with whether the installed effect has it.
 */
export const hooks: Effect.Effect<Readonly<Record<string, boolean>>, never, Scope.Scope> = Effect.gen(function*() {
  const found: Record<string, boolean> = {}
  const adapters: ReadonlyArray<readonly [string, any, McpProtocol.RuntimeDescriptor["_tag"]]> = [
    ["v2026_07_28", McpProtocol.v2026_07_28, "Stateless"],
    ["v2025_11_25", McpProtocol.v2025_11_25, "Stateful"]
  ]
  for (const [name, adapter, runtime] of adapters) {
    found[`McpProtocol.${name}.installHandlers`] = isFunction(adapter?.installHandlers)
    found[`McpProtocol.${name}.projectNotification`] = isFunction(adapter?.projectNotification)
    found[`McpProtocol.${name}.clientRpcs.merge`] = isFunction(adapter?.clientRpcs?.merge)
    found[`McpProtocol.${name}.runtime._tag "${runtime}"`] = adapter?.runtime?._tag === runtime
  }
  const modern: any = McpProtocol.v2026_07_28
  found["McpProtocol.v2026_07_28.runtime.profileFromRequestMetadata"] = isFunction(modern?.runtime?.profileFromRequestMetadata)
  // Read by effect's 2026-07-28 HTTP admission to know which methods exist.
  found["McpProtocol.v2026_07_28.handlerRpcs.merge"] = isFunction(modern?.handlerRpcs?.merge)
  const probe = yield* Layer.build(HttpRouter.middleware((effect) => effect).layer).pipe(Effect.orDie)
  found[`HttpRouter middleware under "${RouteMiddlewareKeyPrefix}"`] = routeMiddleware(probe).length > 0
  return found
})

/**
 * The hooks `installHandlers` receives from effect's runtime: a server whose effect lacks one
 * stops at start-up, with the reason logged, instead of answering requests with errors.
 */
const verifyInstallation = (modern: boolean, core: any, lifecycle: any, target: any) => {
  const context = target?.context
  return EffectSupport.verify(Package, {
    "installHandlers core.resources.read": isFunction(core?.resources?.read),
    "installHandlers target.install": isFunction(target?.install),
    "installHandlers target.context.serverInfo": typeof context?.serverInfo === "object" && context.serverInfo !== null,
    ...(modern
      ? {
        "installHandlers target.context.registrationPresence": Effect.isEffect(context?.registrationPresence),
        "installHandlers target.context.subscribeServerNotifications": Effect.isEffect(context?.subscribeServerNotifications)
      }
      : {
        "installHandlers lifecycle.initialize": isFunction(lifecycle?.initialize),
        "installHandlers lifecycle.clientNotification": isFunction(lifecycle?.clientNotification)
      })
  }).pipe(Effect.tapError((error) => Effect.logError(error.message)), Effect.orDie)
}

/**
 * Fails with `UnsupportedEffect` when the installed effect lacks one of `hooks`.
 */
export const verify: Effect.Effect<void, EffectSupport.UnsupportedEffect, Scope.Scope> = Effect.flatMap(
  hooks,
  (found) => EffectSupport.verify(Package, found)
)

/**
 * Returns `base` with the extension's methods, capability and interceptors installed.
 */
export const wrapAdapter = <A extends McpProtocol.ProtocolAdapter>(base: A, extension: Extension): A => {
  const modern = base.runtime._tag === "Stateless"
  // effect's client middleware provides McpServerClient/McpRequestContext to session revisions and
  // dies for 2026-07-28, where the runtime provides McpRequestContext itself.
  const rpcs = modern ? extension.rpcs : extension.rpcs.middleware(McpSchema.McpServerClientMiddleware)
  const baseAny = base as any
  const withCapability = (extensions: Readonly<Record<string, unknown>> | undefined) => ({
    ...extensions,
    [extension.id]: extension.capability
  })
  const withoutCapability = (extensions: Readonly<Record<string, unknown>> | undefined) => {
    if (extensions === undefined || !(extension.id in extensions)) return extensions
    const { [extension.id]: _, ...rest } = extensions
    return rest
  }
  const wrapped = {
    ...baseAny,
    clientRpcs: (base.clientRpcs as unknown as RpcGroup.RpcGroup<any>).merge(rpcs),
    handlerRpcs: baseAny.handlerRpcs === undefined ? undefined : baseAny.handlerRpcs.merge(rpcs),
    installHandlers: (core: any, lifecycle: any, target: any) =>
      Effect.gen(function*() {
        yield* verifyInstallation(modern, core, lifecycle, target)
        const server: object = yield* McpServer.McpServer
        // The scope of this run of the server (effect's `runWithRuntime` is scoped): stdio
        // connections are told of changes until it closes.
        const runScope = yield* Effect.scope
        // The transport effect runs this server on (`runWithRuntime` reads the same service): its
        // `clientIds` say which connections are still there.
        const transport = yield* Effect.serviceOption(RpcServer.Protocol)
        const info = target.context.serverInfo
        const serverInfo: Record<string, unknown> = { name: info.name, version: info.version }
        for (const key of ["description", "websiteUrl", "icons"]) {
          if (info[key] !== undefined) serverInfo[key] = info[key]
        }
        const learnt: Learnt | undefined = modern
          ? {
            protocolVersion: base.protocolVersion,
            profile: baseAny.runtime.profileFromRequestMetadata,
            directoryRead: extension.handlers["resources/directory/read"] !== undefined
          }
          : undefined
        const connections = connectionsOf(target)
        const connectionOf = (clientId: number) => connections.get(clientId)?.connection
        const currentRequest = requestInfo(modern, core, server, serverInfo, connectionOf, learnt)
        const bind = (method: string, handler: Handler) => (params: unknown, options?: { readonly requestId?: unknown }) =>
          Effect.flatMap(currentRequest, (request) => Telemetry.serve(method, params, requestOf(request, options), handler(params, request)))
        const context = target.context
        const intercepting = {
          ...target,
          context: modern
            ? {
              ...context,
              serverInfo: {
                ...context.serverInfo,
                extensions: withCapability(context.serverInfo.extensions)
              },
              // The extension requires the `resources` capability (spec R84) even before any skill exists.
              registrationPresence: Effect.map(
                context.registrationPresence,
                (presence: any) => ({ ...presence, resources: true })
              ),
              // Run by the `subscriptions/listen` handler in the listen request's fiber, with the
              // listen's scope: effect's events for this listener plus the skill notices decided
              // for this very request.
              subscribeServerNotifications: Effect.gen(function*() {
                const events: PubSub.Subscription<unknown> = yield* context.subscribeServerNotifications
                const notices = yield* extension.notices({ _tag: "Listen", request: yield* currentRequest })
                const merged = yield* Effect.acquireRelease(PubSub.unbounded<unknown>(), PubSub.shutdown)
                const subscription = yield* PubSub.subscribe(merged)
                yield* Effect.forkScoped(Effect.forever(Effect.flatMap(PubSub.take(events), (event) => PubSub.publish(merged, event))))
                const params = yield* Effect.serviceOption(ListenParams)
                const publish = (notice: Notice, sent?: Effect.Effect<void>) =>
                  Effect.asVoid(PubSub.publish(merged, {
                    notification: sent === undefined ? notice : { ...notice, metadata: { [PacedKey]: sent } }
                  }))
                const pacer = Option.isNone(params) ? undefined : ListenPacing.make(askedBy(params.value), publish)
                yield* Effect.forkScoped(Stream.runForEach(notices, (notice) => pacer === undefined ? publish(notice) : pacer.offer(notice)))
                yield* Telemetry.listenOpen
                return subscription
              }),
              ...(context.sendNotification === undefined ? {} : {
                sendNotification: (protocolVersion: string, clientId: number, notification: any) => {
                  const meta = notification?.payload?._meta
                  const sent: Effect.Effect<void> | undefined = meta?.[PacedKey]
                  if (sent === undefined) return context.sendNotification(protocolVersion, clientId, notification)
                  const { [PacedKey]: _, ...rest } = meta
                  return context.sendNotification(protocolVersion, clientId, {
                    ...notification,
                    payload: { ...notification.payload, _meta: rest }
                  }).pipe(Effect.ensuring(sent))
                }
              }),
              // Over HTTP effect ends the stream without a message (`protocol.end`); the client is
              // told first which listen ended and why, so it can listen again (unless it stopped
              // reading: then the stream ends after a second without it).
              ...(context.terminateSubscription === undefined ? {} : {
                terminateSubscription: (protocolVersion: string, clientId: number, requestId: unknown, reason: string) =>
                  Effect.flatMap(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (http) =>
                    Effect.andThen(
                      Option.isSome(http) && context.sendNotification !== undefined
                        ? Effect.ignoreCause(Effect.timeout(
                          context.sendNotification(protocolVersion, clientId, {
                            tag: "notifications/cancelled",
                            payload: { requestId, reason }
                          }),
                          "1 second"
                        ))
                        : Effect.void,
                      context.terminateSubscription(protocolVersion, clientId, requestId, reason)
                    ))
              })
            }
            : context,
          install: (protocol: unknown, group: unknown, handlers: Record<string, any>) => {
            const replaced: Record<string, any> = { ...handlers }
            const listen = handlers["subscriptions/listen"]
            if (modern && typeof listen === "function") {
              replaced["subscriptions/listen"] = (params: { readonly notifications?: unknown }, options: unknown) =>
                Effect.provideService(listen(params, options) as Effect.Effect<unknown, unknown>, ListenParams, params)
            }
            const discover = handlers["server/discover"]
            if (modern && typeof discover === "function") {
              replaced["server/discover"] = (...args: ReadonlyArray<unknown>) =>
                Effect.map(discover(...args) as Effect.Effect<any, unknown>, (result) =>
                  extension.served(server) ? result : {
                    ...result,
                    capabilities: { ...result.capabilities, extensions: withoutCapability(result.capabilities?.extensions) }
                  })
            }
            for (const [method, interceptor] of Object.entries(extension.intercept)) {
              const original = handlers[method]
              if (typeof original !== "function") continue
              replaced[method] = (params: unknown, options: { readonly requestId?: unknown } | undefined) =>
                Effect.flatMap(
                  currentRequest,
                  (request) =>
                    Telemetry.serve(
                      method,
                      params,
                      requestOf(request, options),
                      interceptor(params, request, Effect.suspend(() => original(params, options) as Effect.Effect<unknown, unknown>))
                    )
                )
            }
            return target.install(protocol, group, replaced)
          }
        }
        // A stdio connection (re)initializes: from now on it is told of the skill changes it may
        // see, none before it has sent `notifications/initialized` (effect's `deliveryClientIds`);
        // a change in between is told once it has.
        const connect = (clientId: number) =>
          Effect.gen(function*() {
            // The connections a multi-client transport no longer has go as the next one arrives.
            const live = Option.isSome(transport) ? yield* transport.value.clientIds : undefined
            for (const [id, connected] of connections) {
              if (id === clientId || live?.has(id) === false) {
                connections.delete(id)
                yield* Scope.close(connected.scope, Exit.void)
              }
            }
            const scope = yield* Scope.fork(runScope)
            yield* Scope.provide(Telemetry.session(base.protocolVersion, "pipe"), scope)
            const connected: Connected = { connection: makeConnection(), scope, initialized: yield* Deferred.make<void>() }
            connections.set(clientId, connected)
            const send = context.sendNotification
            if (send === undefined) return
            const notices = yield* Scope.provide(extension.notices({ _tag: "Connection", server, connection: connected.connection }), scope)
            yield* Effect.forkIn(
              Stream.runForEach(notices, (notice) =>
                Deferred.await(connected.initialized).pipe(
                  Effect.andThen(base.projectNotification(notice as any) as Effect.Effect<unknown, unknown>),
                  Effect.flatMap((projected) =>
                    projected === undefined ? Effect.void : send(base.protocolVersion, clientId, projected)
                  )
                )).pipe(Effect.ignoreCause),
              scope
            )
          })
        const wrappedLifecycle = lifecycle === undefined ? undefined : {
          ...lifecycle,
          initialize: (...args: ReadonlyArray<unknown>) =>
            Effect.flatMap(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (http) =>
              Effect.map(lifecycle.initialize(...args), (result: any) => ({
                ...result,
                capabilities: {
                  ...result.capabilities,
                  // A changed catalogue emits notifications/resources/list_changed, and
                  // resources/updated for subscribed files: to stdio connections (see `connect`),
                  // and on the skills session stream over HTTP (where effect refuses subscriptions).
                  resources: {
                    ...result.capabilities.resources,
                    listChanged: true,
                    ...(Option.isSome(http) ? { subscribe: true } : {})
                  },
                  extensions: extension.served(server)
                    ? withCapability(result.capabilities.extensions)
                    : result.capabilities.extensions
                }
              })).pipe(Effect.tap(() => Option.isSome(http) ? Effect.void : connect(args[2] as number)))),
          clientNotification: (notification: any, clientId: number, ...rest: ReadonlyArray<unknown>) =>
            Effect.tap(lifecycle.clientNotification(notification, clientId, ...rest), () =>
              Effect.suspend(() => {
                const connected = connections.get(clientId)
                return connected !== undefined && notification?._tag === "Initialized"
                  ? Deferred.succeed(connected.initialized, undefined)
                  : Effect.void
              }))
        }
        if (!modern) yield* exposeSessionEnd(server)
        yield* base.installHandlers(core, wrappedLifecycle, intercepting)
        const handlers: Record<string, unknown> = {}
        for (const [method, handler] of Object.entries(extension.handlers)) handlers[method] = bind(method, handler)
        yield* target.install(base, rpcs, handlers)
      })
  }
  return wrapped as A
}
