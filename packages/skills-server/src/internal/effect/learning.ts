/**
 * What the fast route (`fastRoute.ts`) learns about an MCP endpoint from one request that took
 * effect's path: the fast route runs that request inside `learn`, which provides a slot in the
 * request's fiber context; `HttpAdmission` (`reportBodyLimit`), the wrapped adapters (`reach`) and
 * the visibility bridge (`recordProbe`) fill it as the request passes, and the fast route trusts a
 * path only once a request on it reached this server's handlers on the stateless revision. A
 * request the fast route leaves to effect after deciding its visibility carries that decision
 * the same way (`withDecision`, read back by `decided`).
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** What one request that took effect's route told of its endpoint. */
export interface Learnt {
  /** The body limit `HttpAdmission` enforces on this route, when it is there. */
  readonly maxBodySize: number | undefined
  readonly seen: Seen
}

/** Whether the request reached the skills handlers of a server on the stateless revision. */
export type Seen =
  | { readonly _tag: "Nothing" }
  | {
    readonly _tag: "Reached"
    readonly endpoint: Endpoint
    /**
     * With a visibility check configured: whether effect runs `McpServer` middleware around the
     * check (then the fast route cannot decide visibility and leaves such requests to effect);
     * `undefined` until probed.
     */
    readonly middleware: boolean | undefined
  }

/** The endpoint as the skills handlers saw it. */
export interface Endpoint {
  /** The `McpServer` whose skills handlers answered. */
  readonly server: object
  /** The request object those handlers saw: the same object as the fast route's, or the route rewrote it. */
  readonly request: object
  /** The stateless adapter that decoded the request, and its revision. */
  readonly protocolVersion: string
  /** effect's decoding of a request's `_meta` on that revision (its `profileFromRequestMetadata`). */
  readonly profile: (metadata: unknown) => Effect.Effect<unknown, unknown>
  readonly serverInfo: Readonly<Record<string, unknown>>
  readonly directoryRead: boolean
}

interface Slot {
  maxBodySize: number | undefined
  seen: Seen
}

const CurrentSlot = Context.Reference<Slot | undefined>("@mcp-skills/server/FastRouteLearning", {
  defaultValue: () => undefined
})

/** Runs `httpEffect` (a request on effect's route), with what it told of its endpoint. */
export const learn = <A, E, R>(httpEffect: Effect.Effect<A, E, R>): Effect.Effect<readonly [A, Learnt], E, R> =>
  Effect.suspend(() => {
    const slot: Slot = { maxBodySize: undefined, seen: { _tag: "Nothing" } }
    return Effect.map(Effect.provideService(httpEffect, CurrentSlot, slot), (response) => [response, slot] as const)
  })

/** Tells a request being learnt from the body limit `HttpAdmission` enforces on its endpoint. */
export const reportBodyLimit = (maxBytes: number): Effect.Effect<void> =>
  CurrentSlot.useSync((slot) => {
    if (slot !== undefined) slot.maxBodySize = Math.min(slot.maxBodySize ?? maxBytes, maxBytes)
  })

/** Tells a request being learnt from (on the stateless revision) that it reached `endpoint`'s handlers. */
export const reach = (endpoint: Endpoint): Effect.Effect<void> =>
  CurrentSlot.useSync((slot) => {
    if (slot === undefined) return
    slot.seen = { _tag: "Reached", endpoint, middleware: slot.seen._tag === "Reached" ? slot.seen.middleware : undefined }
  })

/** Whether the request is being learnt from, reached the handlers, and effect's middleware is not probed yet. */
export const needsProbe: Effect.Effect<boolean> = CurrentSlot.useSync((slot) =>
  slot !== undefined && slot.seen._tag === "Reached" && slot.seen.middleware === undefined
)

/** Records whether effect runs `McpServer` middleware around the visibility check. */
export const recordProbe = (middleware: boolean): Effect.Effect<void> =>
  CurrentSlot.useSync((slot) => {
    if (slot !== undefined && slot.seen._tag === "Reached") slot.seen = { ...slot.seen, middleware }
  })

/** A visibility decision the fast route made for a request before leaving it to effect. */
export interface Decided {
  readonly method: string
  readonly decision: unknown
}

const CurrentDecision = Context.Reference<Decided | undefined>("@mcp-skills/server/FastRouteDecided", {
  defaultValue: () => undefined
})

/** Runs `httpEffect` carrying the fast route's decision, so the check is not run a second time. */
export const withDecision = <A, E, R>(httpEffect: Effect.Effect<A, E, R>, decided: Decided): Effect.Effect<A, E, R> =>
  Effect.provideService(httpEffect, CurrentDecision, decided)

/** The fast route's decision for this request, if it made one. */
export const decided: Effect.Effect<Decided | undefined> = CurrentDecision.useSync((decision) => decision)

const Admission = Symbol.for("@mcp-skills/server/HttpAdmission")

/** Marks `HttpAdmission`'s middleware function: the fast route knows it and honours its limit. */
export const markAdmission = <F extends object>(fn: F): F => Object.assign(fn, { [Admission]: true })

/** Whether `fn` is `HttpAdmission`'s middleware function. */
export const isAdmission = (fn: unknown): boolean =>
  typeof fn === "function" && (fn as unknown as Record<symbol, unknown>)[Admission] === true
