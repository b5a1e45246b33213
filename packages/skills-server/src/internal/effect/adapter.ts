/**
 * The wrapper of effect's protocol adapters. effect 4.1.0 has no public way to add JSON-RPC methods
 * to `McpServer`; its adapters (`McpProtocol.v2026_07_28`, `v2025_11_25`, ...) expose
 * `installHandlers(core, lifecycle, target)`, typed `any`, which the runtime calls once per adapter
 * when the server starts. Wrapping an adapter (1) merges the extension's RPCs into its groups so
 * the dispatcher and the 2026-07-28 HTTP admission (`handlerRpcs`) know them, (2) installs their
 * handlers through `target.install`, (3) wraps the adapter's own `resources/read`, `resources/list`
 * and subscribe handlers so skill URIs are answered from the snapshot while every other URI
 * reaches effect's code unchanged, and (4) adds the capability to `server/discover` (through
 * `target.context`) and `initialize` (through `lifecycle.initialize`).
 *
 * Listen streams (`mcpProtocol/v2026_07_28.ts`, `subscriptions/listen`): the handler takes its
 * events from `context.subscribeServerNotifications`, run in the listen request's fiber with the
 * listen's scope. The wrapper gives it a subscription of its own carrying effect's events and the
 * skill notices decided for that request, paced by `ListenPacing` (effect keeps 64 pending
 * notifications per stream and ends it past them). Each notice handed out carries, in its
 * `metadata` (which effect copies into `_meta`), what to run once it is sent; the wrapped
 * `sendNotification` strips and runs it. Over HTTP, `notifications/cancelled` names the listen
 * before effect ends a stream without a message.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Context from "effect/Context"
import type * as Headers from "effect/http/Headers"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { Extension as SkillsExtension } from "@mcp-skills/core"
import { McpSchema, McpServer } from "effect/ai"
import type { McpProtocol } from "effect/ai"
import * as Rpc from "effect/rpc/Rpc"
import * as RpcGroup from "effect/rpc/RpcGroup"
import * as RpcServer from "effect/rpc/RpcServer"
import * as Telemetry from "../telemetry.js"
import * as Connections from "./connections.js"
import { verifyInstallation } from "./hooks.js"
import * as Learning from "./learning.js"
import * as ListenPacing from "./listenPacing.js"
import type { Notice } from "./listenPacing.js"
import * as Native from "./native.js"
import { answererIn, exposeNative, exposeSessionEnd, markAnswered } from "./server.js"
import type { Answerer } from "./server.js"
import type { Connection, Extension, Handler, Method, RequestInfo } from "./shapes.js"
import { effectRequest } from "./visibility.js"
import * as ServerLimits from "../../ServerLimits.js"

const WireErrorSchema = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optionalKey(Schema.Unknown)
})
const Meta = Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
const Cursor = Schema.optionalKey(Schema.String)

// The payload schemas accept `_meta`, where the 2026-07-28 request envelope lives. Params are
// optional on 2025-11-25 (every field of skills/list is), as for effect's own list methods.
const rpcs: { readonly [M in Method]: Rpc.Any } = {
  [SkillsExtension.ListSkillsMethod]: Rpc.make(SkillsExtension.ListSkillsMethod, {
    payload: Schema.UndefinedOr(Schema.Struct({ cursor: Cursor, _meta: Meta })),
    success: Schema.Unknown,
    error: WireErrorSchema
  }),
  [SkillsExtension.GetSkillMethod]: Rpc.make(SkillsExtension.GetSkillMethod, {
    payload: { uri: Schema.String, _meta: Meta },
    success: Schema.Unknown,
    error: WireErrorSchema
  }),
  [SkillsExtension.ReadResourceDirectoryMethod]: Rpc.make(SkillsExtension.ReadResourceDirectoryMethod, {
    payload: { uri: Schema.String, cursor: Cursor, _meta: Meta },
    success: Schema.Unknown,
    error: WireErrorSchema
  })
}

/** The extension's methods, to check that no other answerer has them. */
export const methods: ReadonlyArray<Method> = Object.keys(rpcs) as Array<Method>

// effect 4.1.0 `subscriptions/listen` copies a notification's `metadata` into the `_meta` it sends.
const PacedKey = "@mcp-skills/server/paced"

/**
 * The request a `tools/call` is answered for, as every other skills request sees it: effect runs a
 * tool's handler inside its `tools/call` handler, in the same fiber, so the handler finds it here
 * (`toolRequest`). Held unevaluated: a call to any other tool builds nothing.
 */
const ToolRequest = Context.Reference<Effect.Effect<RequestInfo, never, any> | undefined>("@mcp-skills/server/ToolRequest", {
  defaultValue: () => undefined
})

/**
 * The request of the `tools/call` being handled, `undefined` outside one or on a server whose
 * adapters are not wrapped (`SkillsServer.protocols`).
 */
export const toolRequest: Effect.Effect<RequestInfo | undefined> = Effect.gen(function*() {
  const request = yield* ToolRequest
  return request === undefined ? undefined : yield* (request as Effect.Effect<RequestInfo>)
})

/** The params of the `subscriptions/listen` request being handled (provided around its handler). */
class ListenParams extends Context.Service<ListenParams, { readonly notifications?: unknown }>()(
  "@mcp-skills/server/ListenParams"
) {}

const askedBy = (params: { readonly notifications?: unknown }): ListenPacing.Asked => {
  const asked = (params.notifications ?? {}) as { resourcesListChanged?: unknown; resourceSubscriptions?: unknown }
  const uris = new Set(Array.isArray(asked.resourceSubscriptions) ? asked.resourceSubscriptions : [])
  return { listChanged: asked.resourcesListChanged === true, subscribed: (uri) => uris.has(uri) }
}

/** What a stateless adapter tells the fast route about itself. */
interface Stateless {
  readonly protocolVersion: string
  readonly profile: Learning.Endpoint["profile"]
  readonly directoryRead: boolean
}

const requestInfo = (
  modern: boolean,
  core: any,
  hint: RequestInfo["native"]["hint"],
  server: object,
  serverInfo: Readonly<Record<string, unknown>>,
  connectionOf: (clientId: number) => Connection | undefined,
  stateless: Stateless | undefined
): Effect.Effect<RequestInfo, never, any> =>
  Effect.gen(function*() {
    const requestContext = yield* McpSchema.McpRequestContext
    const serverClient = yield* Effect.serviceOption(McpSchema.McpServerClient)
    const httpRequest = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
    if (stateless !== undefined && Option.isSome(httpRequest)) {
      yield* Learning.reach({ ...stateless, server, request: httpRequest.value, serverInfo })
    }
    const headers: Headers.Headers = Option.isSome(httpRequest) ? httpRequest.value.headers : ({} as Headers.Headers)
    return {
      modern,
      protocolVersion: requestContext.protocolVersion,
      requestContext,
      headers,
      sessionId: headers["mcp-session-id"],
      server,
      connection: modern || Option.isSome(httpRequest) ? undefined : connectionOf(requestContext.clientId),
      serverInfo,
      effect: effectRequest(core, requestContext, Option.getOrUndefined(serverClient)),
      native: Native.forRequest(core, requestContext, Option.getOrUndefined(serverClient), hint)
    } satisfies RequestInfo
  })

// What telemetry records of a request: effect's RPC server hands each handler the JSON-RPC id
// as `requestId` (effect 4.1.0 `RpcServer`, the handler's metadata).
const requestOf = (request: RequestInfo, options: { readonly requestId?: unknown } | undefined) => ({
  protocolVersion: request.protocolVersion,
  requestId: options?.requestId,
  sessionId: request.sessionId
})

/**
 * Returns `base` with the extension's methods, capability and interceptors installed. A `base`
 * that answers one of those methods itself is refused when the server starts (`refuse`): the
 * skills layer refuses it sooner, when it sees the adapters.
 */
export const wrapAdapter = <A extends McpProtocol.ProtocolAdapter>(
  base: A,
  extension: Extension,
  refuse: (other: Answerer) => unknown
): A => {
  const modern = base.runtime._tag === "Stateless"
  const served = (Object.keys(extension.handlers) as Array<Method>).filter((method) => extension.handlers[method] !== undefined)
  const group = RpcGroup.make(...served.map((method) => rpcs[method]))
  // effect's client middleware provides McpServerClient/McpRequestContext to session revisions and
  // dies for 2026-07-28, where the runtime provides McpRequestContext itself.
  const ours = modern ? group : group.middleware(McpSchema.McpServerClientMiddleware)
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
    clientRpcs: (base.clientRpcs as unknown as RpcGroup.RpcGroup<any>).merge(ours),
    handlerRpcs: baseAny.handlerRpcs === undefined ? undefined : baseAny.handlerRpcs.merge(ours),
    installHandlers: (core: any, lifecycle: any, target: any) =>
      Effect.gen(function*() {
        yield* verifyInstallation(modern, core, lifecycle, target)
        const other = answererIn(base, methods)
        if (other !== undefined) {
          const error = refuse(other)
          return yield* Effect.andThen(Effect.logError(String((error as Error).message ?? error)), Effect.die(error))
        }
        const server: object = yield* McpServer.McpServer
        const info = target.context.serverInfo
        const serverInfo: Record<string, unknown> = { name: info.name, version: info.version }
        for (const key of ["description", "websiteUrl", "icons"]) {
          if (info[key] !== undefined) serverInfo[key] = info[key]
        }
        const stateless: Stateless | undefined = modern
          ? {
            protocolVersion: base.protocolVersion,
            profile: baseAny.runtime.profileFromRequestMetadata,
            directoryRead: extension.handlers["resources/directory/read"] !== undefined
          }
          : undefined
        const connections = Connections.connectionsOf(target)
        const connectionOf = (clientId: number) => connections.get(clientId)?.connection
        // effect's hint of its own skills' results (`McpServer.layerHttp({ cacheHints })`).
        const skillsHint = info.cacheHints?.skills
        const hint = skillsHint === undefined
          ? { ttlMs: 0, cacheScope: "private" as const }
          : { ttlMs: skillsHint.ttlMs, cacheScope: skillsHint.cacheScope === "public" ? "public" as const : "private" as const }
        yield* exposeNative(server, () => Native.holds(core))
        const currentRequest = Effect.tap(
          requestInfo(modern, core, hint, server, serverInfo, connectionOf, stateless),
          (request) => extension.seen(request)
        )
        const context = target.context
        // effect's own handlers of the extension's methods (4.1.1 and later): they answer alone on
        // a server whose skills layer is missing, so `McpServer.skill` keeps working there.
        const effectHandlers: Record<string, (params: unknown, options: unknown) => Effect.Effect<unknown, unknown>> = {}
        const run: Connections.Run = {
          server,
          protocolVersion: base.protocolVersion,
          connections,
          scope: yield* Effect.scope,
          // The transport effect runs this server on (`runWithRuntime` reads the same service):
          // its `clientIds` say which connections are still there.
          transport: yield* Effect.serviceOption(RpcServer.Protocol),
          project: (notice) => base.projectNotification(notice as any) as Effect.Effect<unknown, unknown>,
          send: context.sendNotification,
          extension
        }
        const intercepting = {
          ...target,
          context: modern ? listening(context, extension, currentRequest) : context,
          install: (protocol: unknown, group: unknown, handlers: Record<string, any>) => {
            const replaced: Record<string, any> = { ...handlers }
            for (const method of served) {
              if (typeof handlers[method] === "function") effectHandlers[method] = handlers[method]
            }
            const listen = handlers["subscriptions/listen"]
            if (modern && typeof listen === "function") {
              replaced["subscriptions/listen"] = (params: { readonly notifications?: unknown }, options: unknown) =>
                Effect.provideService(listen(params, options) as Effect.Effect<unknown, unknown>, ListenParams, params)
            }
            const call = handlers["tools/call"]
            if (typeof call === "function") {
              replaced["tools/call"] = (params: unknown, options: unknown) =>
                Effect.provideService(call(params, options) as Effect.Effect<unknown, unknown>, ToolRequest, currentRequest)
            }
            const discover = handlers["server/discover"]
            if (modern && typeof discover === "function") {
              // effect writes `{ directoryRead: true }` over the extension's entry once it holds a
              // skill of its own: the layer that answers declares its own capability.
              replaced["server/discover"] = (...args: ReadonlyArray<unknown>) =>
                Effect.map(discover(...args) as Effect.Effect<any, unknown>, (result) => ({
                  ...result,
                  capabilities: {
                    ...result.capabilities,
                    extensions: extension.served(server)
                      ? withCapability(result.capabilities?.extensions)
                      : Native.holds(core)
                      ? result.capabilities?.extensions
                      : withoutCapability(result.capabilities?.extensions)
                  }
                }))
            }
            for (const [method, interceptor] of Object.entries(extension.intercept)) {
              const original = handlers[method]
              if (typeof original !== "function") continue
              replaced[method] = (params: unknown, options: { readonly requestId?: unknown } | undefined) =>
                Effect.flatMap(currentRequest, (request) =>
                  Telemetry.serve(
                    method,
                    params,
                    requestOf(request, options),
                    interceptor(params, request, Effect.suspend(() => original(params, options) as Effect.Effect<unknown, unknown>))
                  ))
            }
            return target.install(protocol, group, replaced)
          }
        }
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
              })).pipe(Effect.tap(() => Option.isSome(http) ? Effect.void : Connections.connect(run, args[2] as number)))),
          clientNotification: (notification: any, clientId: number, ...rest: ReadonlyArray<unknown>) =>
            Effect.tap(lifecycle.clientNotification(notification, clientId, ...rest), () =>
              notification?._tag === "Initialized" ? Connections.initialized(connections, clientId) : Effect.void)
        }
        if (!modern) yield* exposeSessionEnd(server)
        yield* base.installHandlers(core, wrappedLifecycle, intercepting)
        const handlers: Record<string, unknown> = {}
        for (const method of served) {
          const handler: Handler = extension.handlers[method]!
          handlers[method] = (params: unknown, options?: { readonly requestId?: unknown }) => {
            const alone = effectHandlers[method]
            if (alone !== undefined && !extension.served(server)) return alone(params, options)
            return Effect.flatMap(currentRequest, (request) => Telemetry.serve(method, params, requestOf(request, options), handler(params, request)))
          }
        }
        yield* target.install(base, ours, handlers)
        // effect's skills registered by now (the server's registrations are built before it
        // starts) must not take a URI or a folder of the layer's skills.
        yield* extension.claimed(server, Native.skillUris(core, (server as McpServer.McpServer["Service"]).resources.map((entry) => entry.resource.uri)))
      })
  }
  return markAnswered(wrapped, base, methods) as A
}

// The 2026-07-28 handler context with the capability declared and listen streams carrying the
// skill notices.
const listening = (context: any, extension: Extension, currentRequest: Effect.Effect<RequestInfo, never, any>) => ({
  ...context,
  serverInfo: {
    ...context.serverInfo,
    extensions: { ...context.serverInfo.extensions, [extension.id]: extension.capability }
  },
  // The extension requires the `resources` capability (spec R84) even before any skill exists.
  registrationPresence: Effect.map(context.registrationPresence, (presence: any) => ({ ...presence, resources: true })),
  // Run by the `subscriptions/listen` handler in the listen request's fiber, with the listen's
  // scope: effect's events for this listener plus the skill notices decided for this very request.
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
  // Over HTTP effect ends the stream without a message (`protocol.end`); the client is told
  // first which listen ended and why, so it can listen again (unless it stopped reading: then
  // the stream ends without it after `ServerLimits.CancelNoticeTimeout`).
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
              ServerLimits.CancelNoticeTimeout
            ))
            : Effect.void,
          context.terminateSubscription(protocolVersion, clientId, requestId, reason)
        ))
  })
})
