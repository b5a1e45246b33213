/**
 * How the command-line server joins other replicas: the change bus it uses (`--redis URL`, or
 * in memory when it runs alone) and the operator's `reload` command.
 *
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ChangeBus from "../ChangeBus.js"
import type * as SkillRegistry from "../SkillRegistry.js"

/**
 * The bus a server uses, and where its lines go.
 *
 * @since 0.1.0
 */
export interface Options {
  /** A Redis URL: replicas sharing it follow each other's catalogue. Without one, the bus is in memory. */
  readonly redis?: string | undefined
  /** Where the revision and bus-driven reloads are reported (problems go to stderr). */
  readonly log: (line: string) => Effect.Effect<void>
}

/**
 * Puts the registry `registrations` provides on the bus: the revision is logged at start-up and on
 * every change, every change is announced, and announcements of other replicas reload it. Without
 * options, `registrations` is returned as it is.
 *
 * @since 0.1.0
 */
export const replicate = (options: Options | undefined) =>
<E, R>(
  registrations: Layer.Layer<SkillRegistry.SkillRegistry, E, R>
): Layer.Layer<SkillRegistry.SkillRegistry, E | ChangeBus.RedisClientMissing, R> =>
  options === undefined ? registrations : ChangeBus.layerReplica({ log: options.log, logProblem: Console.error }).pipe(
    Layer.provide(options.redis === undefined ? ChangeBus.layerMemory : ChangeBus.layerRedis({ url: options.redis })),
    Layer.provideMerge(registrations)
  )

/**
 * Asks every replica on the Redis bus at `url` to reload its skills, and reports how many heard it.
 *
 * @since 0.1.0
 */
export const reloadAll = (url: string) =>
  Effect.flatMap(
    ChangeBus.publishRedis({ url }, { _tag: "Reload" }),
    (receivers) => Console.log(`asked ${receivers} replica${receivers === 1 ? "" : "s"} to reload`)
  )
