/**
 * Every undocumented name of effect 4.1.x this folder reads, said once, and the check that the
 * installed effect still has each one (`verify` when the skills layer is built, `verifyInstallation`
 * when the server starts): a server whose effect lacks one stops with
 * `EffectSupport.UnsupportedEffect` naming it, instead of answering requests with errors.
 *
 * Read from effect's own source: `src/ai/internal/mcpRuntime.ts` (`installHandlers`, the
 * lifecycle, the HTTP admission reading `handlerRpcs`), `mcpProtocolRegistry.ts` (`handlerTarget`),
 * `mcpCore.ts` (`core.resources.read`, `core.skills`, `core.registrationPresence`), `mcpProtocol/v2026_07_28.ts` and `v2025_11_25.ts`
 * (handlers keyed by method, `registrationPresence`, `serverInfo.extensions`), `McpServer.ts`
 * (`runMiddleware`'s failure annotation, the MCP runtime service) and `http/HttpRouter.ts` (route
 * middleware in a layer's context).
 *
 * @internal
 */
import { EffectSupport } from "@mcp-skills/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import { McpProtocol, McpServer } from "effect/ai"

/** The package named by `UnsupportedEffect`. */
export const Package = "@mcp-skills/server"

/**
 * `McpServer.runMiddleware` annotates a handler's failure with this key when the handler ran
 * inside middleware.
 */
export const HandlerFailureKey = "effect/ai/McpServer/HandlerFailure"

// A route middleware provided around a layer is a context entry under this key prefix, holding the
// stack of middleware functions that `router.add` applies.
const RouteMiddlewareKeyPrefix = "effect/http/HttpRouter/Middleware-"

// An `McpServer.middleware` or `McpServer.visibility` provided around a layer is a context entry
// under this key prefix, holding its stack of middleware functions (effect's `MiddlewareImpl`).
const McpMiddlewareKeyPrefix = "effect/ai/McpServer/Middleware-"

// The MCP runtime service `McpServer.layerHttp` (and `layerStdio`, `layer`) provides to its
// registrations: the protocol adapters of the server (`protocols`) and, for HTTP sessions,
// `terminateHttpSession`.
const ServerRuntimeKey = "effect/ai/McpRuntime/ServerRuntime"

/** What this folder reads of effect's MCP runtime service. */
export interface ServerRuntime {
  readonly protocols?: ReadonlyArray<unknown> | undefined
  readonly terminateHttpSession?: ((headers: unknown) => Effect.Effect<unknown>) | undefined
}

/** The MCP runtime service of `context`: present in the context of a server's own registrations. */
export const runtimeOf = (context: Context.Context<never>): ServerRuntime | undefined =>
  context.mapUnsafe.get(ServerRuntimeKey) as ServerRuntime | undefined

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

/**
 * The `McpServer` middleware functions provided around the layer that built `context` (its
 * `.layer`, not `layerGlobal`, which effect keeps in a module-private list), innermost first and
 * each once, as effect stacks a registration's.
 */
export const mcpMiddleware = (context: Context.Context<never>): ReadonlyArray<McpMiddlewareFn> => {
  const found: Array<McpMiddlewareFn> = []
  for (const [key, value] of context.mapUnsafe) {
    if (!key.startsWith(McpMiddlewareKeyPrefix) || !Array.isArray(value)) continue
    for (const fn of value) if (typeof fn === "function" && !found.includes(fn)) found.push(fn)
  }
  return found
}

/** One of effect's MCP middleware functions: the handler's effect and the request's options in. */
export type McpMiddlewareFn = (effect: Effect.Effect<unknown, unknown, unknown>, options: unknown) => Effect.Effect<unknown, unknown, unknown>

/** The tag of the failure an `McpServer.visibility` gate raises for a hidden registration. */
export const HiddenTag = "effect/ai/McpServer/Hidden"

/** Whether `annotations` (a failure's) carry effect's mark of a handler that failed inside middleware. */
export const isHandlerFailure = (annotations: Context.Context<never>): boolean => annotations.mapUnsafe.has(HandlerFailureKey)

const isFunction = (u: unknown): boolean => typeof u === "function"

/**
 * The hooks of effect's protocol adapters and `HttpRouter` this folder relies on before the
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
  const mcpProbe = yield* Layer.build(McpServer.visibility(() => Effect.succeed(false)).layer).pipe(Effect.orDie)
  const gate = mcpMiddleware(mcpProbe)[0]
  found[`McpServer middleware under "${McpMiddlewareKeyPrefix}"`] = gate !== undefined
  if (gate !== undefined) {
    found[`McpServer.visibility fails with "${HiddenTag}"`] = yield* Effect.match(gate(Effect.void, {}) as Effect.Effect<unknown, unknown>, {
      onFailure: (error) => (error as { readonly _tag?: unknown } | undefined)?._tag === HiddenTag,
      onSuccess: () => false
    })
  }
  return found
})

/** Fails with `UnsupportedEffect` when the installed effect lacks one of `hooks`. */
export const verify: Effect.Effect<void, EffectSupport.UnsupportedEffect, Scope.Scope> = Effect.flatMap(
  hooks,
  (found) => EffectSupport.verify(Package, found)
)

/**
 * The hooks `installHandlers` receives from effect's runtime: a server whose effect lacks one
 * stops at start-up, with the reason logged.
 */
export const verifyInstallation = (modern: boolean, core: any, lifecycle: any, target: any) => {
  const context = target?.context
  return EffectSupport.verify(Package, {
    "installHandlers core.resources.read": isFunction(core?.resources?.read),
    "installHandlers core.skills.list": isFunction(core?.skills?.list),
    "installHandlers core.skills.get": isFunction(core?.skills?.get),
    "installHandlers core.skills.readDirectory": isFunction(core?.skills?.readDirectory),
    "installHandlers core.skills.ownsFile": isFunction(core?.skills?.ownsFile),
    "installHandlers core.registrationPresence": Effect.isEffect(core?.registrationPresence),
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
