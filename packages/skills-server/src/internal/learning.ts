/**
 * What the fast route (`fastRoute.ts`) learns about an MCP endpoint from one request that took
 * effect's path: the route's own middleware and our handlers fill a slot the fast route provides
 * around that request, and the fast route trusts a path only once a request on it reached this
 * server's handlers on the stateless revision.
 *
 * @internal
 */
import * as Context from "effect/Context"

/** Filled while one request runs through effect's route. */
export interface Slot {
  /** The `McpServer` whose skills handlers answered (set by `EffectMcp`). */
  server?: object
  /** The request object those handlers saw: the same object as the fast route's, or the route rewrote it. */
  request?: object
  /** The stateless adapter that decoded the request, and its revision. */
  protocolVersion?: string
  profile?: (metadata: unknown) => unknown
  serverInfo?: Readonly<Record<string, unknown>>
  directoryRead?: boolean
  /** The body limit `HttpAdmission` enforces on this route, when it is there. */
  maxBodySize?: number
  /**
   * With a visibility check configured: whether effect runs `McpServer` middleware around the
   * check (then the fast route cannot decide visibility and leaves such requests to effect).
   */
  middleware?: boolean
}

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
