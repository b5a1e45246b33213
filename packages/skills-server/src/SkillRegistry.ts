/**
 * The catalogue a server publishes: the `SkillRegistry` service holds the current `Snapshot` in a
 * `SubscriptionRef`, builds a new one beside it on every change and swaps it atomically, so a
 * request reads one snapshot from start to end. `replace` and `reload` rebuild from the source
 * (hashing only what changed, `stats` counts it); `upsert` and `remove` update in time
 * proportional to the change. Each returns the `Changes` between the two snapshots. Every change,
 * whatever asked for it, goes through one intake and is published once on `commits`.
 *
 * @since 0.1.0
 */
import { McpTelemetry, SkillUri } from "@mcp-skills/core"
import type { Limits } from "@mcp-skills/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as HashMap from "effect/HashMap"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Build from "./internal/build.js"
import { diff } from "./internal/diff.js"
import * as Incremental from "./internal/incremental.js"
import * as Intake from "./internal/intake.js"
import * as Telemetry from "./internal/telemetry.js"
import * as WireForms from "./internal/wireForms.js"
import type * as Skill from "./Skill.js"
import * as Snapshots from "./Snapshot.js"
import type { Changes, Snapshot } from "./Snapshot.js"

/**
 * Why the registry refused a set of definitions: every problem of every skill, not only the first.
 *
 * @since 0.1.0
 * @category errors
 */
export class RegistrationError extends Schema.TaggedError<RegistrationError>()("RegistrationError", {
  problems: Schema.Array(Schema.Struct({ skill: Schema.String, reason: Schema.String }))
}) {
  override get message(): string {
    return `cannot register skills: ${this.problems.map((p) => `${p.skill}: ${p.reason}`).join("; ")}`
  }
}

/**
 * The catalogue source could not produce definitions on `reload`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ReloadError extends Schema.TaggedError<ReloadError>()("ReloadError", {
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot reload skills: ${this.reason}`
  }
}

/**
 * Registry options.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /**
   * Per-skill limits (R15, R16). The defaults are the spec's 512 files and 16 MiB; raising them is
   * an explicit decision because hosts are not obliged to load larger skills.
   */
  readonly limits?: Partial<Limits.Limits> | undefined
  /**
   * URIs other resources of the same server already have (effect's `McpServer.resource`): a
   * catalogue whose skills would serve one is refused, as a read could answer only one of the two.
   */
  readonly reserved?: (() => Iterable<string>) | undefined
  /**
   * Serve only skills with a signature that verifies against the files served (any key: which
   * keys to trust is each client's decision). Others, and skills that cannot be signed (dynamic,
   * rendered, families), are left out with one log line each. Default `false`: every skill is
   * served, and one whose signature no longer verifies is logged.
   */
  readonly requireSigned?: boolean | undefined
}

/**
 * Validates and hashes definitions into a snapshot, or fails with every problem found. With
 * `previous`, a skill whose files are the same bytes keeps its previous manifest (not hashed again).
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = (
  definitions: Iterable<Skill.Definition>,
  options?: Options,
  previous?: Snapshot
): Effect.Effect<Snapshot, RegistrationError> => buildWith(definitions, options, previous)

const buildWith = (definitions: Iterable<Skill.Definition>, settings: Build.Settings | undefined, previous?: Snapshot) =>
  Effect.mapError(Build.build(definitions, settings, previous), ({ problems }) => new RegistrationError({ problems }))

/**
 * Cumulative counters of a registry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  /** Snapshots built (the first one included). */
  readonly builds: number
  /** Files hashed by every build so far; a skill whose files did not change is not hashed again. */
  readonly hashedFiles: number
  readonly hashedBytes: number
  /**
   * Skill definitions validated by every build so far: a full build goes through the whole
   * catalogue (reusing unchanged manifests), `upsert` and `update` only through what changed.
   */
  readonly builtSkills: number
}

/**
 * Who made an edit of the catalogue in code: this process (`upsert`, `remove`), or another replica
 * whose edit came over the change bus (`ChangeBus.layerReplica`), which must not send it back.
 *
 * @since 0.1.0
 * @category models
 */
export type Origin = "local" | "replica"

/**
 * What asked for a change of the catalogue: code (`replace`, `upsert`, `remove`, `update`), a
 * `reload` asked in code, a watched folder (`DirectorySource.watch`), the change bus (another
 * replica's announcement or edit), a reader that found a file changed on disk (`rescan`), or an
 * upstream skill server's change verified by `UpstreamSource` (`upstream`). The reload series
 * (`mcp_skills.reloads`) counts every change by it.
 *
 * @since 0.1.0
 * @category models
 */
export type Trigger = "code" | "reload" | "watch" | "bus" | "rescan" | "upstream"

/**
 * One commit of the registry's one change stream: a swap of the snapshot, with the snapshot it
 * replaced (`before`, read in the same step as the swap), the new one and what changed between
 * them; or a family saying its instances changed (no swap: `before` and `after` are the snapshot
 * served). A swap comes from a change of the catalogue's source (`replace`, `reload`, `update`)
 * or from an edit in code (`upsert`, `remove`, with what it put in and took out).
 *
 * @since 0.1.0
 * @category models
 */
export type Commit =
  | {
    readonly _tag: "Source"
    readonly trigger: Trigger
    readonly before: Snapshot
    readonly after: Snapshot
    readonly changes: Changes
  }
  | {
    readonly _tag: "Edit"
    readonly trigger: Trigger
    readonly before: Snapshot
    readonly after: Snapshot
    readonly changes: Changes
    readonly upsert: ReadonlyArray<Skill.Definition>
    readonly remove: ReadonlyArray<string>
    readonly origin: Origin
  }
  | {
    readonly _tag: "Family"
    /** The family, by `<scheme>://<template>` (`keyOf`). */
    readonly key: string
    readonly before: Snapshot
    readonly after: Snapshot
    readonly changes: Changes
  }

/**
 * A reload asked for with `requestReload`: `joined` when it joined a reload already asked for and
 * not yet started (whose asker reports it), and the outcome of the reload that covers it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReloadRequest {
  readonly joined: boolean
  readonly result: Effect.Effect<Changes, RegistrationError | ReloadError>
}

/**
 * A change of the catalogue's source (see `SkillRegistry.update`): skills put in, and keys taken out.
 *
 * @since 0.1.0
 * @category models
 */
export interface Update {
  readonly upsert: Iterable<Skill.Definition>
  readonly remove: Iterable<string>
}

/**
 * The service holding the current snapshot.
 *
 * **Details**
 *
 * Every change goes through one intake: changes are applied one at a time, in the order asked,
 * each published once on `commits`. Reloads are coalesced: requests made while one is pending join
 * it, and a reload starts no sooner after the previous one ended than that one took, so a flood of
 * requests (a change bus replaying revisions, readers finding a file changed) costs a bounded
 * number of rebuilds. An operation whose caller is interrupted before it started is withdrawn.
 *
 * @example
 * ```ts
 * import { Skill, SkillRegistry } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * // Add a skill to a running server, then take it away: clients are told as for a reload.
 * const addReport = Effect.gen(function*() {
 *   const registry = yield* SkillRegistry.SkillRegistry
 *   const changes = yield* registry.upsert([
 *     Skill.make({ path: "reports/weekly", files: { "SKILL.md": "---\nname: weekly\ndescription: This week\n---\n" } })
 *   ])
 *   yield* Effect.log(`added ${changes.added.join(", ")}`)
 *   yield* registry.remove(["skill://reports/weekly/SKILL.md"])
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class SkillRegistry extends Context.Service<SkillRegistry, {
  /** The current snapshot; read it once per request. */
  readonly snapshot: Effect.Effect<Snapshot>
  /**
   * Validates `definitions` into a new snapshot and swaps it in, returning what changed; on
   * failure the old one stays.
   */
  readonly replace: (definitions: Iterable<Skill.Definition>, trigger?: Trigger) => Effect.Effect<Changes, RegistrationError>
  /**
   * Adds skills (or families), each replacing the one with the same URI, validating and hashing
   * only these, and swaps the snapshot atomically; on failure nothing changes. A skill that
   * encloses or sits inside no other costs the same in any catalogue size; a nested skill or a
   * family makes this a full rebuild. Upserted skills survive `replace` and `reload` (they take
   * precedence over a source skill with the same URI) until `remove`d.
   */
  readonly upsert: (definitions: Iterable<Skill.Definition>, origin?: Origin) => Effect.Effect<Changes, RegistrationError>
  /**
   * Takes skills out by `SKILL.md` URI (a family by `<scheme>://<template>`), in the same time as
   * `upsert`; unknown URIs are ignored. A removed skill of the source comes back with the next
   * `reload`. It fails only when it must rebuild (a nested skill, a family) and a dynamic skill's
   * `SKILL.md` can no longer be read; then nothing changes.
   */
  readonly remove: (uris: Iterable<string>, origin?: Origin) => Effect.Effect<Changes, RegistrationError>
  /**
   * A change of the catalogue's source, in one swap: `upsert` puts skills in (each replacing the
   * one with the same URI) and `remove` takes skills out by URI, at the cost of `upsert` and
   * `remove`. Unlike `upsert`, these definitions stay the source's: the next `replace` or `reload`
   * replaces them, and a skill added by `upsert` keeps precedence over them. What a watched
   * directory hands over instead of its whole catalogue. Given as an Effect (reading what
   * changed), it runs in the caller's fiber, before the change waits its turn, and its failure is
   * this change's, counted as any other.
   */
  readonly update: <E = never>(change: Update | Effect.Effect<Update, E>, trigger?: Trigger) => Effect.Effect<Changes, RegistrationError | E>
  /**
   * Asks the source the registry was made from for its definitions again and replaces the
   * catalogue with them: for sources without file events (a database, an object store), or to
   * force a directory rescan. A registry made from plain definitions reloads the same ones. The
   * same as `requestReload("reload")`, waiting for its result.
   */
  readonly reload: Effect.Effect<Changes, RegistrationError | ReloadError>
  /**
   * Asks for a reload without waiting for it: a request made while a reload is pending (asked
   * for, its source not read yet) joins it. Await `result` for the outcome.
   */
  readonly requestReload: (trigger: Trigger) => Effect.Effect<ReloadRequest>
  readonly stats: Effect.Effect<Stats>
  /**
   * Every commit from now on (until the scope closes): what listeners are told, and what the
   * change bus tells other replicas.
   */
  readonly commits: Effect.Effect<Stream.Stream<Commit>, never, Scope.Scope>
  /** The underlying reference, for observers of the snapshot (change it only through the registry). */
  readonly ref: SubscriptionRef.SubscriptionRef<Snapshot>
}>()("@mcp-skills/server/SkillRegistry") {}

/**
 * Where a registry's definitions come from: fixed definitions, or an Effect run at start-up and on
 * every `reload` (its failures become `ReloadError` on reload).
 *
 * @since 0.1.0
 * @category models
 */
export type Source = Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, unknown>

/**
 * The key of a definition in a catalogue: its `SKILL.md` URI, or `<scheme>://<template>` for a
 * family (an invalid path keys by its spelling; the build reports it).
 *
 * @since 0.1.0
 * @category utils
 */
export const keyOf = (definition: Skill.Definition): string => {
  if (definition._tag === "Family") return `${definition.scheme.toLowerCase()}://${definition.path}`
  const key = Result.getOrElse(SkillUri.skillMd(definition.scheme, definition.path), () => `${definition.scheme}://${definition.path.join("/")}`)
  // The manifest's own string when it is the same URI: a catalogue keeps one string a skill.
  return definition._tag === "Static" && definition.manifest?.uri === key ? definition.manifest.uri : key
}

const keyed = (into: HashMap.HashMap<string, Skill.Definition>, definitions: Iterable<Skill.Definition>) =>
  HashMap.mutate(into, (map) => {
    for (const definition of definitions) HashMap.set(map, keyOf(definition), definition)
  })

const noChanges: Changes = { added: [], removed: [], changed: [], listChanged: false, updated: [] }

const instancesChanged: Changes = { ...noChanges, listChanged: true }

// What caused a swap: a commit without its snapshots and changes.
type Cause =
  | { readonly _tag: "Source"; readonly trigger: Trigger }
  | Omit<Extract<Commit, { readonly _tag: "Edit" }>, "before" | "after" | "changes">

/**
 * Builds a registry from definitions (validating and hashing everything once), with its change
 * intake running until the scope closes (which ends every `commits` stream). With an Effect as
 * source, the Effect's failure at start-up is this Effect's failure.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <E = never>(
  source: Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, E>,
  options?: Options
): Effect.Effect<SkillRegistry["Service"], RegistrationError | E, Scope.Scope> =>
  Effect.gen(function*() {
    const load = Effect.isEffect(source) ? source as Effect.Effect<Iterable<Skill.Definition>, E> : undefined
    const first = load === undefined ? source as Iterable<Skill.Definition> : yield* load
    // One set of wire forms for every snapshot of this registry (they share file entries).
    const settings: Build.Settings = { ...options, wireForms: WireForms.make() }
    const initial = yield* buildWith(first, settings)
    const ref = yield* SubscriptionRef.make(initial)
    const commits = yield* Effect.acquireRelease(PubSub.unbounded<Commit>(), PubSub.shutdown)
    const intake = yield* Intake.make
    // Changes are counted in the series of the context the registry was made in, whoever asks.
    const telemetry = yield* McpTelemetry.Current
    const counted = <E>(trigger: Trigger, change: Effect.Effect<Changes, E>) =>
      Effect.provideService(Telemetry.applied(trigger, change), McpTelemetry.Current, telemetry)
    let stats: Stats = {
      builds: 1,
      hashedFiles: initial.hashed.files,
      hashedBytes: initial.hashed.bytes,
      builtSkills: initial.skills.length
    }
    // The definitions of the current catalogue, and those added by `upsert` (which outlive a
    // `replace` or `reload`), by key; persistent, so an upsert copies neither.
    let current = keyed(HashMap.empty(), first)
    let runtime = HashMap.empty<string, Skill.Definition>()

    // Each family that says when its instances changed is heard while it is in the catalogue; a
    // burst of its changes is one commit per turn of the intake.
    const heard = yield* FiberMap.make<string>()
    const following = new Map<string, Skill.Family<any>>()
    const told = (key: string) =>
      Effect.suspend(() => {
        const now = SubscriptionRef.getUnsafe(ref)
        return now.families.some((family) => Snapshots.familyKey(family) === key)
          ? PubSub.publish(commits, { _tag: "Family", key, before: now, after: now, changes: instancesChanged })
          : Effect.void
      })
    const follow = (snapshot: Snapshot) =>
      Effect.gen(function*() {
        const present = new Set<string>()
        for (const family of snapshot.families) {
          const changes = family.definition.changes
          if (changes === undefined) continue
          const key = Snapshots.familyKey(family)
          present.add(key)
          if (following.get(key) === family.definition) continue
          following.set(key, family.definition)
          yield* FiberMap.run(
            heard,
            key,
            Stream.runForEach(changes, () => intake.once(key, Effect.asVoid(told(key)))).pipe(
              Effect.catchCause((cause) => Effect.logWarning(`the changes of the family ${key} failed; no more are heard`, cause))
            )
          )
        }
        for (const key of [...following.keys()]) {
          if (present.has(key)) continue
          following.delete(key)
          yield* FiberMap.remove(heard, key)
        }
      })

    // Swaps `after` in and publishes it: only ever inside a job of the intake, so `before` is the
    // snapshot it replaces and no other change comes between.
    const commit = (cause: Cause, after: Snapshot, changes: Changes, definitions: HashMap.HashMap<string, Skill.Definition>, built: number) =>
      Effect.gen(function*() {
        const before = SubscriptionRef.getUnsafe(ref)
        stats = {
          builds: stats.builds + 1,
          hashedFiles: stats.hashedFiles + after.hashed.files,
          hashedBytes: stats.hashedBytes + after.hashed.bytes,
          builtSkills: stats.builtSkills + built
        }
        current = definitions
        yield* SubscriptionRef.set(ref, after)
        yield* PubSub.publish(commits, { ...cause, before, after, changes } as Commit)
        yield* follow(after)
        return changes
      })
    const rebuild = (cause: Cause, before: Snapshot, definitions: HashMap.HashMap<string, Skill.Definition>, list?: Iterable<Skill.Definition>) =>
      Effect.flatMap(
        buildWith(list ?? HashMap.values(definitions), settings, before),
        (after) => commit(cause, after, diff(before, after), definitions, after.skills.length)
      )
    // Each operation is one job of the intake, counted by what asked for it.
    const applied = <E>(trigger: Trigger, job: Effect.Effect<Changes, E>) => counted(trigger, intake.run(job))
    const replaceNow = (next: Iterable<Skill.Definition>, trigger: Trigger) =>
      Effect.suspend(() => {
        // Upserted skills take precedence; duplicates among `next` are still reported by the build.
        const list = [...[...next].filter((definition) => !HashMap.has(runtime, keyOf(definition))), ...HashMap.values(runtime)]
        return rebuild({ _tag: "Source", trigger }, SubscriptionRef.getUnsafe(ref), keyed(HashMap.empty(), list), list)
      })
    // Puts `batch` in and takes `keys` out, validating only these; a family or a nested skill
    // makes it a full rebuild.
    const change = (cause: Cause, batch: ReadonlyArray<Skill.Definition>, keys: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const before = SubscriptionRef.getUnsafe(ref)
        const twice = batch.map(keyOf).filter((key, i, all) => all.indexOf(key) !== i)
        if (twice.length > 0) {
          return yield* new RegistrationError({
            problems: [...new Set(twice)].map((skill) => ({ skill, reason: "registered twice (duplicate skill URI)" }))
          })
        }
        const definitions = HashMap.removeMany(keyed(current, batch), keys)
        if (
          batch.some((definition) => definition._tag === "Family") ||
          keys.some((key) => before.families.some((family) => Snapshots.familyKey(family) === key))
        ) return yield* rebuild(cause, before, definitions)
        // Only the new definitions are validated and hashed (unchanged files are reused).
        const added = batch.length === 0 ? undefined : yield* buildWith(batch, settings, before)
        const conflicts = added === undefined ? [] : Build.familyConflicts(
          before.families,
          added.skills.map((skill) => ({ uri: skill.uri, scheme: skill.uri.slice(0, skill.uri.indexOf("://")), path: skill.path }))
        )
        if (conflicts.length > 0) return yield* new RegistrationError({ problems: conflicts })
        // A definition the build left out (signatures required) takes its previous version out too,
        // as a full build would.
        const refused = added === undefined ? [] : batch.map(keyOf).filter((key) => !added.byUri.has(key))
        const applied = Incremental.apply(before, added, [...keys, ...refused])
        return applied === undefined
          ? yield* rebuild(cause, before, definitions)
          : yield* commit(cause, applied.snapshot, applied.changes, definitions, batch.length)
      })
    const edit = (batch: ReadonlyArray<Skill.Definition>, keys: ReadonlyArray<string>, origin: Origin) => {
      const trigger: Trigger = origin === "replica" ? "bus" : "code"
      return applied(
        trigger,
        Effect.tap(change({ _tag: "Edit", trigger, upsert: batch, remove: keys, origin }, batch, keys), () =>
          Effect.sync(() => {
            runtime = HashMap.removeMany(keyed(runtime, batch), keys)
          }))
      )
    }
    const loadAgain = load === undefined
      ? Effect.succeed(first)
      : Effect.mapError(load, (error) => new ReloadError({ reason: Build.describeError(error) }))
    const requestReload = yield* Intake.coalesce((trigger: Trigger) =>
      counted(trigger, Effect.flatMap(loadAgain, (definitions) => intake.run(replaceNow(definitions, trigger))))
    )
    const updateNow = (next: Update, trigger: Trigger) =>
      Effect.suspend(() => {
        // A skill added by `upsert` takes precedence over the source's version of it.
        const batch = [...next.upsert].filter((definition) => !HashMap.has(runtime, keyOf(definition)))
        const keys = [...next.remove].filter((key) => !HashMap.has(runtime, key))
        return batch.length + keys.length === 0 ? Effect.succeed(noChanges) : change({ _tag: "Source", trigger }, batch, keys)
      })
    yield* follow(initial)
    return SkillRegistry.of({
      snapshot: SubscriptionRef.get(ref),
      replace: (next, trigger = "code") => applied(trigger, replaceNow(next, trigger)),
      upsert: (next, origin = "local") => edit([...next], [], origin),
      remove: (uris, origin = "local") => edit([], [...uris], origin),
      update: (next, trigger = "code") =>
        Effect.isEffect(next)
          ? counted(trigger, Effect.flatMap(next, (read) => intake.run(updateNow(read, trigger))))
          : applied(trigger, updateNow(next, trigger)),
      reload: Effect.flatMap(requestReload("reload"), (asked) => asked.result),
      requestReload,
      stats: Effect.sync(() => stats),
      commits: Effect.map(PubSub.subscribe(commits), Stream.fromSubscription),
      ref
    })
  })
