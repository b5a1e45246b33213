/**
 * What the skills layer keeps on, changes in, and learns from effect's `McpServer` service and
 * the layer context around it: its state attached to the service (`attach`), the end of an HTTP
 * session in effect's own records (`endHttpSession`), a resource registered later at a skill's URI
 * refused (`guardRegistrations`, a patch of `addResource`), the route middleware around the
 * endpoint (`endpointOf`), whether something else already answers the extension's methods
 * (`otherAnswerer`), and whether effect's own registrations hold skills (`holdsNative`).
 *
 * @internal
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Headers from "effect/http/Headers"
import type * as Scope from "effect/Scope"
import { McpProtocol } from "effect/ai"
import type { McpServer } from "effect/ai"
import { routeMiddleware, runtimeOf } from "./hooks.js"
import { isAdmission } from "./learning.js"

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

const NativeHeld = Symbol.for("@mcp-skills/server/NativeHeld")

/**
 * Run by the wrapped adapters' `installHandlers`, for as long as the run's scope is open: leaves
 * on the server whether effect's own registrations hold a skill, for `holdsNative`.
 */
export const exposeNative = (server: object, holds: () => boolean) =>
  Object.hasOwn(server, NativeHeld) ? Effect.void : Effect.acquireRelease(
    Effect.sync(() => Object.defineProperty(server, NativeHeld, { value: holds, configurable: true, enumerable: false })),
    () => Effect.sync(() => delete (server as Record<symbol, unknown>)[NativeHeld])
  )

/**
 * Whether effect's own registrations (`McpServer.skill`) on `server` hold a skill: answers that
 * list them are effect's path's to make, since they ask effect's visibility per request.
 */
export const holdsNative = (server: object): boolean =>
  (server as Record<symbol, (() => boolean) | undefined>)[NativeHeld]?.() ?? false

const SessionEnd = Symbol.for("@mcp-skills/server/SessionEnd")

type EndSession = (id: string) => Effect.Effect<void>

/**
 * Ends effect's own record of the HTTP session `id` (as its DELETE does, in-flight requests of the
 * session included); nothing when `server` runs no HTTP session revision. effect keeps each
 * session until a DELETE (`mcpStatefulRuntime.ts`), so one the skills layer expires would
 * otherwise stay in effect's map for the life of the server.
 */
export const endHttpSession = (server: object, id: string): Effect.Effect<void> =>
  Effect.suspend(() => (server as Record<symbol, EndSession | undefined>)[SessionEnd]?.(id) ?? Effect.void)

/**
 * Run by the stateful adapters' `installHandlers`, for as long as the run's scope is open: finds
 * the MCP runtime in its context and leaves on the server a way to end one of its HTTP sessions.
 */
export const exposeSessionEnd = (server: object) =>
  Effect.gen(function*() {
    const terminate = runtimeOf(yield* Effect.context<never>())?.terminateHttpSession
    if (terminate === undefined || Object.hasOwn(server, SessionEnd)) return
    const end: EndSession = (id) => Effect.asVoid(terminate(Headers.fromInput({ "mcp-session-id": id })))
    yield* Effect.acquireRelease(
      Effect.sync(() => Object.defineProperty(server, SessionEnd, { value: end, configurable: true, enumerable: false })),
      () => Effect.sync(() => delete (server as Record<symbol, unknown>)[SessionEnd])
    )
  })

/**
 * Runs `refuse` before every resource effect registers from now on (a later `McpServer.resource`
 * layer, or `addResource` at run time), for as long as the scope is open. effect's `addResource`
 * has no error channel, so a refusal is a defect, failing whatever registered it.
 */
export const guardRegistrations = (
  server: McpServer.McpServer["Service"],
  refuse: (uri: string) => Effect.Effect<void>
): Effect.Effect<void, never, Scope.Scope> => {
  const target = server as { addResource: McpServer.McpServer["Service"]["addResource"] }
  const original = target.addResource
  return Effect.acquireRelease(
    Effect.sync(() => {
      target.addResource = (resource) => Effect.andThen(refuse(resource.resource.uri), original(resource))
    }),
    () =>
      Effect.sync(() => {
        target.addResource = original
      })
  )
}

/** The endpoint a skills layer is built for, as far as its layer context tells. */
export interface Endpoint {
  /** The layer is one of the server's own registrations: it sees the route middleware below. */
  readonly insideServer: boolean
  /** An `HttpAdmission` is provided to the endpoint. */
  readonly admission: boolean
  /** Route middleware other than `HttpAdmission` (auth, logging, ...) is provided to the endpoint. */
  readonly otherMiddleware: boolean
}

/** What `context` (the skills layer's) tells of the HTTP endpoint it serves. */
export const endpointOf = (context: Context.Context<never>): Endpoint => {
  const middleware = routeMiddleware(context)
  return {
    insideServer: runtimeOf(context) !== undefined,
    admission: middleware.some(isAdmission),
    otherMiddleware: middleware.some((fn) => !isAdmission(fn))
  }
}

/** Another answerer of the extension's methods on one server: who it is, and which methods it answers. */
export interface Answerer {
  readonly answerer: string
  readonly methods: ReadonlyArray<string>
}

const Answered = Symbol.for("@mcp-skills/server/AnsweredByBase")

/**
 * Marks `wrapped` (an adapter of ours) with the extension's methods its `base` already answers:
 * the wrapper would install a second handler over them.
 */
export const markAnswered = <A extends object>(wrapped: A, base: object, methods: ReadonlyArray<string>): A => {
  Object.defineProperty(wrapped, Answered, { value: answeredBy(base, methods), enumerable: false })
  return wrapped
}

// The methods an adapter answers itself: for a wrapped one, what its base answered.
const answeredBy = (adapter: unknown, methods: ReadonlyArray<string>): ReadonlyArray<string> => {
  const marked = (adapter as Record<symbol, ReadonlyArray<string> | undefined> | undefined)?.[Answered]
  if (marked !== undefined) return marked
  if (effectAdapters.has(adapter)) return []
  const requests = (adapter as { readonly clientRpcs?: { readonly requests?: ReadonlyMap<string, unknown> } } | undefined)
    ?.clientRpcs?.requests
  return requests === undefined ? [] : methods.filter((method) => requests.has(method))
}

// effect's own adapters answer the extension's methods from effect's skills core (4.1.1 and
// later): the skills layer takes those methods over and serves effect's skills with its own
// (`native.ts`), so they are no second answerer. Any other adapter that carries them is.
const effectAdapters: ReadonlySet<unknown> = new Set([
  McpProtocol.v2026_07_28,
  McpProtocol.v2025_11_25,
  McpProtocol.v2025_06_18,
  McpProtocol.v2025_03_26,
  McpProtocol.v2024_11_05
])

/**
 * Another answerer of `methods` on the server of `context`, if any: a protocol adapter of the
 * server (read from the layer's context when the skills layer is one of the server's
 * registrations) other than effect's own whose methods already include them, or one wrapped twice.
 */
export const otherAnswerer = (
  context: Context.Context<never>,
  methods: ReadonlyArray<string>
): Answerer | undefined => {
  for (const adapter of runtimeOf(context)?.protocols ?? []) {
    const answered = answeredBy(adapter, methods)
    if (answered.length > 0) return { answerer: describeAdapter(adapter), methods: answered }
  }
  return undefined
}

/** The answerer `base`'s own methods make, if it answers any of `methods`: the wrapper's last check. */
export const answererIn = (base: object, methods: ReadonlyArray<string>): Answerer | undefined => {
  const answered = answeredBy(base, methods)
  return answered.length === 0 ? undefined : { answerer: describeAdapter(base), methods: answered }
}

const describeAdapter = (adapter: unknown) =>
  `the protocol adapter of ${String((adapter as { readonly protocolVersion?: unknown } | undefined)?.protocolVersion)}`
