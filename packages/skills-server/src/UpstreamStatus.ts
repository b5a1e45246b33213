/**
 * How one upstream of a gateway (`UpstreamSource`) is doing: reachable or why not, how many
 * verified skills it gives, which it offers were refused and why, how many the admit list does
 * not name, and whether its notifications are heard. It lives here so that the gateway's internals
 * name it without importing the module that runs them.
 *
 * @since 0.1.0
 */
import type { Follow } from "@mcp-skills/client"

/**
 * How one upstream is doing.
 *
 * @example
 * ```ts
 * import { UpstreamSource, type UpstreamStatus } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * // A readiness probe of a gateway: each upstream that is unreachable or deaf to changes, and why.
 * const problems = (statuses: ReadonlyArray<UpstreamStatus.Status>) =>
 *   statuses.flatMap((status) =>
 *     !status.reachable ? [`${status.name}: unreachable (${status.problem ?? "no answer yet"})`]
 *     : status.notifications === "closed" ? [`${status.name}: not hearing its changes`]
 *     : []
 *   )
 *
 * const ready = Effect.gen(function*() {
 *   const upstreams = yield* UpstreamSource.make([{ prefix: "team", transport: UpstreamSource.http("https://skills.team.example/mcp") }])
 *   return problems(yield* upstreams.status)
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Status {
  /** Its prefix, its name in logs and metrics. */
  readonly name: string
  readonly reachable: boolean
  /** Why it is unreachable, while it is. */
  readonly problem: string | undefined
  /** Verified skills it gives the catalogue. */
  readonly skills: number
  /**
   * Whether a look at it has finished. A large upstream may still be in its first look when the
   * gateway starts (it waits `UpstreamSource.Options.startup` for it): `skills` is then what was
   * verified so far, and the rest is served once verified.
   */
  readonly looked: boolean
  /** Verified versions the admit list does not name: hidden in `admit` mode, served in `observe`. */
  readonly unadmitted: number
  /**
   * The entries it offers that are not served for a check they failed, each with why, in the
   * order they were refused. One whose previous version is still served is among them.
   *
   * @since 0.2.0
   */
  readonly refused: ReadonlyArray<Refused>
  /**
   * Its notifications: heard (`open`), not offered by the upstream (`unsupported`: only `ttlMs`
   * re-checks), or not heard right now (`closed`).
   */
  readonly notifications: Follow.Notifications
}

/**
 * An entry of an upstream that is not served, and why (the line the gateway logged for it).
 *
 * @since 0.2.0
 * @category models
 */
export interface Refused {
  /** Its URI at the upstream. */
  readonly uri: string
  /** The check it failed (`FrontmatterMismatch`, `DigestMismatch`, `Collision`, ...): the metric's label. */
  readonly check: string
  readonly reason: string
}
