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
 * tests in `test/` fail if a later effect moves any of these.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Headers from "effect/http/Headers"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type { McpProtocol } from "effect/ai"
import { McpSchema, McpServer } from "effect/ai"
import type * as RpcGroup from "effect/rpc/RpcGroup"

/** The JSON-RPC error shape effect sends as is (`{ code, message, data? }`). */
export interface WireError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** What one incoming request looks like to our handlers, independent of the transport. */
export interface RequestInfo {
  /** 2026-07-28 (stateless, per-request `_meta`) rather than a session revision. */
  readonly modern: boolean
  readonly protocolVersion: string
  readonly requestContext: McpSchema.McpRequestContext["Service"]
  readonly headers: Headers.Headers
  readonly sessionId: string | undefined
  /**
   * Reads `uri` through effect's own resource registry for this request, so effect's middleware
   * (local and global) and visibility run around the registration's handler. `None` when effect
   * reports the resource as not found (absent, or hidden by an `McpServer.visibility`).
   */
  readonly readRegisteredResource: (uri: string) => Effect.Effect<Option.Option<unknown>, WireError>
  /** The `McpServer` service this request belongs to (identifies the server). */
  readonly server: object
  /** The server's `Implementation` for 2026-07-28 `_meta["io.modelcontextprotocol/serverInfo"]`. */
  readonly serverInfo: Readonly<Record<string, unknown>>
}

/** One method's handler: the decoded params in, the wire result (or a JSON-RPC error) out. */
export type Handler = (params: any, request: RequestInfo) => Effect.Effect<unknown, WireError>

/**
 * A handler that may answer a built-in method itself and otherwise falls back to effect's
 * handler (`next`).
 */
export type Interceptor = (
  params: any,
  request: RequestInfo,
  next: Effect.Effect<unknown, unknown>
) => Effect.Effect<unknown, unknown>

/** What the wrapper adds to an adapter. */
export interface Extension {
  readonly id: string
  readonly capability: Readonly<Record<string, unknown>>
  /** Group of our RPCs (payload schemas must accept `_meta`). */
  readonly rpcs: RpcGroup.RpcGroup<any>
  readonly handlers: Readonly<Record<string, Handler>>
  readonly intercept: Readonly<Record<string, Interceptor>>
}

const MCP_SESSION_ID_HEADER = "mcp-session-id"

const requestInfo = (
  modern: boolean,
  core: any,
  server: object,
  serverInfo: Readonly<Record<string, unknown>>
): Effect.Effect<RequestInfo, never, any> =>
  Effect.gen(function*() {
    const requestContext = yield* McpSchema.McpRequestContext
    const serverClient = yield* Effect.serviceOption(McpSchema.McpServerClient)
    const httpRequest = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
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
        )
    } satisfies RequestInfo
  })

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

/** Whether a failure has the JSON-RPC error shape effect sends as is. */
export const isWireError = (error: unknown): error is WireError =>
  typeof error === "object" && error !== null && typeof (error as WireError).code === "number" &&
  typeof (error as WireError).message === "string"

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
  const wrapped = {
    ...baseAny,
    clientRpcs: (base.clientRpcs as unknown as RpcGroup.RpcGroup<any>).merge(rpcs),
    handlerRpcs: baseAny.handlerRpcs === undefined ? undefined : baseAny.handlerRpcs.merge(rpcs),
    installHandlers: (core: any, lifecycle: any, target: any) =>
      Effect.gen(function*() {
        const server: object = yield* McpServer.McpServer
        const info = target.context.serverInfo
        const serverInfo: Record<string, unknown> = { name: info.name, version: info.version }
        for (const key of ["description", "websiteUrl", "icons"]) {
          if (info[key] !== undefined) serverInfo[key] = info[key]
        }
        const bind = (handler: Handler) => (params: unknown) =>
          Effect.flatMap(requestInfo(modern, core, server, serverInfo), (request) => handler(params, request))
        const intercepting = {
          ...target,
          context: modern
            ? {
              ...target.context,
              serverInfo: {
                ...target.context.serverInfo,
                extensions: withCapability(target.context.serverInfo.extensions)
              },
              // The extension requires the `resources` capability (spec R84) even before any skill exists.
              registrationPresence: Effect.map(
                target.context.registrationPresence,
                (presence: any) => ({ ...presence, resources: true })
              )
            }
            : target.context,
          install: (protocol: unknown, group: unknown, handlers: Record<string, any>) => {
            const replaced: Record<string, any> = { ...handlers }
            for (const [method, interceptor] of Object.entries(extension.intercept)) {
              const original = handlers[method]
              if (typeof original !== "function") continue
              replaced[method] = (params: unknown, options: unknown) =>
                Effect.flatMap(
                  requestInfo(modern, core, server, serverInfo),
                  (request) =>
                    interceptor(params, request, Effect.suspend(() => original(params, options) as Effect.Effect<unknown, unknown>))
                )
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
                  // resources/updated for subscribed files: effect delivers them over stdio, the
                  // skills session stream over HTTP (where effect refuses subscriptions).
                  resources: {
                    ...result.capabilities.resources,
                    listChanged: true,
                    ...(Option.isSome(http) ? { subscribe: true } : {})
                  },
                  extensions: withCapability(result.capabilities.extensions)
                }
              })))
        }
        yield* base.installHandlers(core, wrappedLifecycle, intercepting)
        const handlers: Record<string, unknown> = {}
        for (const [method, handler] of Object.entries(extension.handlers)) handlers[method] = bind(handler)
        yield* target.install(base, rpcs, handlers)
      })
  }
  return wrapped as A
}
