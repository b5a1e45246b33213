/**
 * The series of a gateway's upstreams (Prometheus: dots become underscores), each labelled with
 * the upstream's name. Recorded only when metrics are on (`Observability.layer`).
 *
 * @internal
 */
import * as Metric from "effect/Metric"
import type * as Effect from "effect/Effect"
import { count } from "../telemetry.js"

const metrics = {
  up: Metric.gauge("mcp_skills.upstream.up", { description: "1 while the gateway reaches the upstream, else 0" }),
  skills: Metric.gauge("mcp_skills.upstream.skills", { description: "Verified skills of the upstream the gateway serves" }),
  refused: Metric.counter("mcp_skills.upstream.refused", {
    description: "Upstream skills not served, by the check they failed (DigestMismatch, UnsignedSkill, Collision, ...)",
    incremental: true
  }),
  syncs: Metric.counter("mcp_skills.upstream.syncs", {
    description: "Looks at the upstream's catalogue, by outcome (success, failure: unreachable or refused)",
    incremental: true
  })
}

/** The upstream is reachable (or not). */
export const up = (upstream: string, reachable: boolean): Effect.Effect<void> => count(metrics.up, { upstream }, reachable ? 1 : 0)

/** How many of its skills the gateway serves. */
export const skills = (upstream: string, held: number): Effect.Effect<void> => count(metrics.skills, { upstream }, held)

/** One skill refused by `check`. */
export const refused = (upstream: string, check: string): Effect.Effect<void> => count(metrics.refused, { upstream, check })

/** One look at the catalogue, and how it went. */
export const synced = (upstream: string, outcome: "success" | "failure"): Effect.Effect<void> =>
  count(metrics.syncs, { upstream, outcome })
