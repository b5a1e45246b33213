/**
 * The visibility bridge: a server's visibility check runs inside effect's MCP middleware, so the
 * services an `McpServer.middleware` provides (the caller's identity, ...) reach it, and an
 * `McpServer.visibility` hiding the bridge hides every skill.
 *
 * Why a hidden resource: effect 4.1.0 runs MCP middleware only around one of its own
 * registrations (`makeInvoke` in `McpServer.ts`), for the methods of its closed
 * `MiddlewareMethod` union; the global stack lives in a module-private map and the local one in
 * the registration's captured context. No public call runs an effect inside them. So the layer
 * registers one resource (`urn:mcp-skills:visibility`) whose handler runs the check, and reads it
 * through effect's resource registry once per request; a slot in the read's fiber context carries
 * the request in and the decision and the services out. effect's own `EnabledWhen` keeps the
 * resource out of every listing and every read but the bridge's (its reads alone carry
 * `BridgeCapabilities`), so nothing outside this module knows it exists.
 *
 * The same read tells the fast route whether any `McpServer` middleware runs around the check
 * (`probe`: the handler fails with a marker, which effect annotates when it crossed middleware).
 *
 * Per skill: `McpServer` middleware provided to the skills layer (`McpServer.visibility(...).layer`)
 * also decides each skill, as effect's own registrations are decided: its stack runs once per
 * skill the request asks about, with the request's method and the skill's `SKILL.md` URI as
 * `target`, and a gate that fails with effect's `Hidden` hides that skill. effect offers no call
 * that runs a stack with other options, and keeps `layerGlobal` middleware in a private list, so
 * the stack is read from the layer's context (`Hooks.mcpMiddleware`) and run here, synchronously
 * inside the bridge's read, with the services the middleware around it provided: a check that
 * needs to wait (or fails with anything but an MCP error) hides the skill and says so in the log.
 * A public effect call that runs a registration's middleware for a given method and target (the
 * `visible` effect keeps private in `makeInvoke`) would let this and the hidden resource go.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import { McpSchema } from "effect/ai"
import type { McpServer } from "effect/ai"
import * as Exit from "effect/Exit"
import { HiddenTag, isHandlerFailure } from "./hooks.js"
import type { McpMiddlewareFn } from "./hooks.js"
import * as Learning from "./learning.js"
import { isWireError } from "./shapes.js"
import type { EffectRequest, RequestInfo, WireError } from "./shapes.js"

const VisibilityResourceUri = "urn:mcp-skills:visibility"

const ProbeMarker = "mcp-skills: probing for McpServer middleware"

// The client capabilities of the bridge's own reads: the one profile the resource is enabled for.
const BridgeCapabilities: McpSchema.ClientCapabilities = Object.freeze({})

/** A check of one request, run inside effect's middleware. */
export type Check<D> = (request: RequestInfo, method: string) => Effect.Effect<D, WireError, any>

type Slot =
  | { readonly _tag: "Decide"; readonly request: RequestInfo; readonly method: string; readonly out: Out }
  | { readonly _tag: "Capture"; readonly out: Out }
  | { readonly _tag: "Probe" }

interface Out {
  decision: unknown
  services: Context.Context<never> | undefined
}

const CurrentSlot = Context.Reference<Slot | undefined>("@mcp-skills/server/VisibilitySlot", {
  defaultValue: () => undefined
})

interface Reader {
  readonly read: (uri: string) => Effect.Effect<unknown, unknown>
}

/**
 * What a request keeps for the bridge: reads through effect's resource registry (`core`), as
 * effect itself builds an invocation (`invocationFromRequestContext` / `invocationFromClient`), with
 * the bridge's capabilities.
 */
export const effectRequest = (
  core: any,
  requestContext: McpSchema.McpRequestContext["Service"],
  serverClient: unknown
): EffectRequest => {
  const invocation = {
    clientId: requestContext.clientId,
    protocol: {
      protocolVersion: requestContext.protocolVersion,
      clientCapabilities: BridgeCapabilities,
      clientInfo: requestContext.clientInfo,
      requestMetadata: requestContext.requestMetadata
    },
    requestContext,
    serverClient
  }
  const reader: Reader = { read: (uri) => core.resources.read(uri, invocation) }
  return reader as unknown as EffectRequest
}

const readerOf = (request: RequestInfo) => request.effect as unknown as Reader

// Reads the bridge for one request, so effect's middleware runs around its handler: whether it was
// found (an `McpServer.visibility` provided to the skills layer may hide it).
const read = (request: RequestInfo, slot: Slot): Effect.Effect<boolean, WireError> =>
  Effect.provideService(readerOf(request).read(VisibilityResourceUri), CurrentSlot, slot).pipe(
    Effect.as(true),
    Effect.catch((error: any): Effect.Effect<boolean, WireError> =>
      error?._tag === "ResourceNotFound"
        ? Effect.succeed(false)
        : isWireError(error)
        ? Effect.fail<WireError>(error.data === undefined
          ? { code: error.code, message: error.message }
          : { code: error.code, message: error.message, data: error.data })
        : Effect.andThen(
          Effect.logError("reading the skills visibility resource failed", error),
          Effect.fail<WireError>({ code: McpSchema.INTERNAL_ERROR_CODE, message: "Internal error" })
        ))
  )

// Whether effect runs any `McpServer` middleware (local or global) around the bridge.
const probe = (request: RequestInfo): Effect.Effect<boolean> =>
  Effect.provideService(readerOf(request).read(VisibilityResourceUri), CurrentSlot, { _tag: "Probe" }).pipe(
    // Answered: some middleware answered in the handler's place.
    Effect.as(true),
    Effect.catchCause((cause) => {
      const failure = Cause.findFail(cause)
      if (Result.isFailure(failure)) return Effect.succeed(true)
      const error = failure.success.error as { readonly message?: unknown } | undefined
      const ours = typeof error?.message === "string" && error.message.includes(ProbeMarker)
      return Effect.succeed(!ours || isHandlerFailure(Cause.reasonAnnotations(failure.success)))
    })
  )

// Whether `gates`, run around nothing for `uri` as effect runs a registration's stack on a list,
// let the skill through; each URI is asked once per request.
const gateOf = (
  gates: ReadonlyArray<McpMiddlewareFn>,
  request: RequestInfo,
  method: string,
  services: Context.Context<never>
) => {
  const known = new Map<string, boolean>()
  return (uri: string): boolean => {
    const seen = known.get(uri)
    if (seen !== undefined) return seen
    const options = {
      method,
      target: uri,
      payload: undefined,
      requestContext: request.requestContext,
      headers: request.headers,
      sessionId: request.sessionId
    }
    const run = gates.reduce((effect: Effect.Effect<unknown, unknown, unknown>, fn) => fn(effect, options), Effect.void)
    const exit = Effect.runSyncExit(Effect.provideContext(run as Effect.Effect<unknown, unknown>, services))
    const allowed = Exit.isSuccess(exit)
    if (Exit.isFailure(exit)) {
      const failure = Cause.findErrorOption(exit.cause)
      const hidden = failure._tag === "Some" && (failure.value as { readonly _tag?: unknown } | undefined)?._tag === HiddenTag
      if (!hidden) {
        Effect.runFork(Effect.provideContext(
          Effect.logWarning(`an McpServer middleware around the skills layer failed or waited while deciding ${uri}: the skill is hidden from this request`, exit.cause),
          services
        ))
      }
    }
    known.set(uri, allowed)
    return allowed
  }
}

/** One request's decision (`undefined`: effect's own visibility hid the bridge), and its services. */
export interface Verdict<D> {
  readonly decision: D | undefined
  readonly services: Context.Context<never> | undefined
}

/** The bridge of one skills layer. */
export interface Bridge<D> {
  /** Runs the check for one request; present when a check is configured. */
  readonly decide: ((request: RequestInfo, method: string) => Effect.Effect<Verdict<D>, WireError>) | undefined
  /** The services effect's and `HttpRouter`'s middleware provide to this request. */
  readonly services: (request: RequestInfo) => Effect.Effect<Context.Context<never>, WireError>
}

/**
 * Registers the bridge on `server` with `check`, if any. Registered even without a check: it makes
 * effect declare (and, over stdio, honour) `resources.subscribe`, which it does only for servers
 * with a resource of its own.
 */
export const register = <D>(
  server: McpServer.McpServer["Service"],
  check: Check<D> | undefined,
  gates: ReadonlyArray<McpMiddlewareFn> = []
): Effect.Effect<Bridge<D>, never, Scope.Scope> =>
  Effect.gen(function*() {
    // The layer's decision narrowed by the stack's, each skill's asked once per request.
    const gated = (decided: D, request: RequestInfo, method: string, services: Context.Context<never>): D => {
      const allowed = gateOf(gates, request, method, services)
      return (typeof decided === "boolean"
        ? (decided ? (skill: { readonly uri: string }) => allowed(skill.uri) : false)
        : (skill: { readonly uri: string }) => (decided as (skill: unknown) => boolean)(skill) && allowed(skill.uri)) as D
    }
    const handle = Effect.gen(function*() {
      const slot = yield* CurrentSlot
      if (slot === undefined) return yield* Effect.die("the skills visibility resource was read outside a skills request")
      if (slot._tag === "Probe") return yield* Effect.fail(new Error(ProbeMarker))
      // What the middleware provided, for a skill family's callbacks.
      const services = yield* Effect.context<never>()
      slot.out.services = services
      if (slot._tag === "Decide" && check !== undefined) {
        const decided = yield* check(slot.request, slot.method)
        slot.out.decision = gates.length === 0 ? decided : gated(decided, slot.request, slot.method, services)
      }
      return { contents: [] }
    })
    yield* server.addResource({
      resource: new McpSchema.Resource({ uri: VisibilityResourceUri, name: "skills-visibility" }),
      annotations: Context.make(McpSchema.EnabledWhen, ({ capabilities }) => capabilities === BridgeCapabilities),
      services: yield* Effect.context<never>(),
      // The check's error and service types are carried by the skills layer's type; effect's
      // registration signature cannot express them.
      handle: handle as unknown as Effect.Effect<McpSchema.ReadResourceResult, McpSchema.InternalError, McpSchema.McpRequestContext>
    })
    return {
      decide: check === undefined ? undefined : (request, method) =>
        Effect.gen(function*() {
          const fast = yield* Learning.decided
          if (fast !== undefined && fast.method === method) return { decision: fast.decision as D, services: undefined }
          const out: Out = { decision: undefined, services: undefined }
          const found = yield* read(request, { _tag: "Decide", request, method, out })
          // A request the fast route learns from tells it whether effect's middleware wraps the check.
          if (request.modern && (yield* Learning.needsProbe)) yield* Learning.recordProbe(yield* probe(request))
          return { decision: found ? out.decision as D : undefined, services: out.services }
        }),
      services: (request) =>
        Effect.suspend(() => {
          const out: Out = { decision: undefined, services: undefined }
          return Effect.map(read(request, { _tag: "Capture", out }), () => out.services ?? Context.empty())
        })
    }
  })
