/**
 * What the fast route (`fastRoute.ts`) learns about an MCP endpoint from one request that took
 * effect's path: the route's own middleware and our handlers fill a slot the fast route provides
 * around that request, and the fast route trusts a path only once a request on it reached this
 * server's handlers on the stateless revision.
 *
 * @internal
 */
import * as Context from "effect/Context"

/** What one request that took effect's route told of its endpoint. */
export interface Slot {
  /** The body limit `HttpAdmission` enforces on this route, when it is there. */
  maxBodySize: number | undefined
  seen: Seen
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

/** The endpoint as the skills handlers saw it (set by `EffectMcp`). */
export interface Endpoint {
  /** The `McpServer` whose skills handlers answered. */
  readonly server: object
  /** The request object those handlers saw: the same object as the fast route's, or the route rewrote it. */
  readonly request: object
  /** The stateless adapter that decoded the request, and its revision. */
  readonly protocolVersion: string
  readonly profile: (metadata: unknown) => unknown
  readonly serverInfo: Readonly<Record<string, unknown>>
  readonly directoryRead: boolean
}

/** A slot for one request, before anything is learnt. */
export const makeSlot = (): Slot => ({ maxBodySize: undefined, seen: { _tag: "Nothing" } })

/** The slot of the request being learnt from, if any. */
export const CurrentSlot = Context.Reference<Slot | undefined>("@mcp-skills/server/FastRouteLearning", {
  defaultValue: () => undefined
})

/**
 * A visibility decision the fast route made for this request before leaving it to effect: the
 * handlers use it rather than run the check a second time.
 */
export const Decided = Context.Reference<{ readonly method: string; readonly decision: unknown } | undefined>(
  "@mcp-skills/server/FastRouteDecided",
  { defaultValue: () => undefined }
)

const Admission = Symbol.for("@mcp-skills/server/HttpAdmission")

/** Marks `HttpAdmission`'s middleware function: the fast route knows it and honours its limit. */
export const markAdmission = <F extends object>(fn: F): F => Object.assign(fn, { [Admission]: true })

/** Whether `fn` is `HttpAdmission`'s middleware function. */
export const isAdmission = (fn: unknown): boolean =>
  typeof fn === "function" && (fn as unknown as Record<symbol, unknown>)[Admission] === true
