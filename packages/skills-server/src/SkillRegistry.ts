/**
 * The catalogue a server publishes: the `SkillRegistry` service holds the current `Snapshot` in a
 * `SubscriptionRef`, builds a new one beside it on every change and swaps it atomically, so a
 * request reads one snapshot from start to end. `replace` and `reload` rebuild from the source
 * (hashing only what changed, `stats` counts it); `upsert` and `remove` update in time
 * proportional to the change. Each returns the `Changes` between the two snapshots.
 *
 * @since 0.1.0
 */
import { SkillUri } from "@mcp-skills/core"
import type { Limits } from "@mcp-skills/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Build from "./internal/build.js"
import { diff } from "./internal/diff.js"
import * as Incremental from "./internal/incremental.js"
import * as WireForms from "./internal/wireForms.js"
import type * as Skill from "./Skill.js"
import * as Snapshots from "./Snapshot.js"
import type { Changes, Snapshot } from "./Snapshot.js"

/**
 * Why the registry refused a set of definitions: every problem of every skill, not only the first.
 *
 * @since 0.1.0
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
 * The snapshot model, named here as well as in `Snapshot` (where each is documented).
 *
 * @since 0.1.0
 */
export type {
  Changes,
  DirectoryChild,
  Directories,
  DirectoryEntry,
  DynamicSkill,
  FamilyEntry,
  FileBase,
  FileEntry,
  Hint,
  InMemoryFile,
  InstanceSkill,
  OnDiskFile,
  RenderedSkill,
  ServedSkill,
  SkillBase,
  SkillChange,
  SkillEntry,
  Snapshot,
  StaticSkill,
  WireContent
} from "./Snapshot.js"

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
 */
export type Origin = "local" | "replica"

/**
 * One swap of the snapshot and what caused it: a change of the catalogue's source (`replace`,
 * `reload`, `update`), or an edit in code (`upsert`, `remove`) with what it put in and took out.
 *
 * @since 0.1.0
 */
export type Commit =
  | { readonly _tag: "Source"; readonly before: Snapshot; readonly after: Snapshot }
  | {
    readonly _tag: "Edit"
    readonly before: Snapshot
    readonly after: Snapshot
    readonly upsert: ReadonlyArray<Skill.Definition>
    readonly remove: ReadonlyArray<string>
    readonly origin: Origin
  }

/**
 * The service holding the current snapshot.
 *
 * @since 0.1.0
 */
export class SkillRegistry extends Context.Service<SkillRegistry, {
  /** The current snapshot; read it once per request. */
  readonly snapshot: Effect.Effect<Snapshot>
  /**
   * Validates `definitions` into a new snapshot and swaps it in, returning what changed; on
   * failure the old one stays. Concurrent calls are serialized.
   */
  readonly replace: (definitions: Iterable<Skill.Definition>) => Effect.Effect<Changes, RegistrationError>
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
   * directory hands over instead of its whole catalogue.
   */
  readonly update: (change: {
    readonly upsert: Iterable<Skill.Definition>
    readonly remove: Iterable<string>
  }) => Effect.Effect<Changes, RegistrationError>
  /**
   * Asks the source the registry was made from for its definitions again and replaces the
   * catalogue with them: for sources without file events (a database, an object store), or to
   * force a directory rescan. A registry made from plain definitions reloads the same ones.
   */
  readonly reload: Effect.Effect<Changes, RegistrationError | ReloadError>
  readonly stats: Effect.Effect<Stats>
  /**
   * Every swap of the snapshot from now on (until the scope closes), with its cause: what the
   * change bus tells other replicas.
   */
  readonly commits: Effect.Effect<Stream.Stream<Commit>, never, Scope.Scope>
  /** The underlying reference, for observers of catalogue changes. */
  readonly ref: SubscriptionRef.SubscriptionRef<Snapshot>
}>()("@mcp-skills/server/SkillRegistry") {}

/**
 * Where a registry's definitions come from: fixed definitions, or an Effect run at start-up and on
 * every `reload` (its failures become `ReloadError` on reload).
 *
 * @since 0.1.0
 */
export type Source = Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, unknown>

/**
 * The key of a definition in a catalogue: its `SKILL.md` URI, or `<scheme>://<template>` for a
 * family (an invalid path keys by its spelling; the build reports it).
 *
 * @since 0.1.0
 */
export const keyOf = (definition: Skill.Definition): string =>
  definition._tag === "Family"
    ? `${definition.scheme.toLowerCase()}://${definition.path}`
    : Result.getOrElse(SkillUri.skillMd(definition.scheme, definition.path), () => `${definition.scheme}://${definition.path.join("/")}`)

const keyed = (into: HashMap.HashMap<string, Skill.Definition>, definitions: Iterable<Skill.Definition>) =>
  HashMap.mutate(into, (map) => {
    for (const definition of definitions) HashMap.set(map, keyOf(definition), definition)
  })

const noChanges: Changes = { added: [], removed: [], changed: [], listChanged: false, updated: [] }

/**
 * Builds a registry from definitions (validating and hashing everything once). With an Effect as
 * source, the Effect's failure at start-up is this Effect's failure.
 *
 * @since 0.1.0
 */
export const make = <E = never>(
  source: Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, E>,
  options?: Options
): Effect.Effect<SkillRegistry["Service"], RegistrationError | E> =>
  Effect.gen(function*() {
    const load = Effect.isEffect(source) ? source as Effect.Effect<Iterable<Skill.Definition>, E> : undefined
    const first = load === undefined ? source as Iterable<Skill.Definition> : yield* load
    // One set of wire forms for every snapshot of this registry (they share file entries).
    const settings: Build.Settings = { ...options, wireForms: WireForms.make() }
    const initial = yield* buildWith(first, settings)
    const ref = yield* SubscriptionRef.make(initial)
    const lock = yield* Semaphore.make(1)
    const commits = yield* PubSub.unbounded<Commit>()
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
    // What caused the swap being made (set by the operation holding the lock).
    let cause: Omit<Extract<Commit, { _tag: "Edit" }>, "before" | "after"> | undefined
    const commit = (after: Snapshot, changes: Changes, definitions: HashMap.HashMap<string, Skill.Definition>, built: number) =>
      Effect.gen(function*() {
        const before = yield* SubscriptionRef.get(ref)
        stats = {
          builds: stats.builds + 1,
          hashedFiles: stats.hashedFiles + after.hashed.files,
          hashedBytes: stats.hashedBytes + after.hashed.bytes,
          builtSkills: stats.builtSkills + built
        }
        current = definitions
        yield* SubscriptionRef.set(ref, after)
        const made: Commit = cause === undefined ? { _tag: "Source", before, after } : { ...cause, before, after }
        yield* PubSub.publish(commits, made)
        return changes
      })
    const rebuild = (before: Snapshot, definitions: HashMap.HashMap<string, Skill.Definition>, list?: Iterable<Skill.Definition>) =>
      Effect.flatMap(
        buildWith(list ?? HashMap.values(definitions), settings, before),
        (after) => commit(after, diff(before, after), definitions, after.skills.length)
      )
    const replace = (next: Iterable<Skill.Definition>) =>
      Semaphore.withPermits(lock, 1)(Effect.gen(function*() {
        const before = yield* SubscriptionRef.get(ref)
        // Upserted skills take precedence; duplicates among `next` are still reported by the build.
        const list = [...[...next].filter((definition) => !HashMap.has(runtime, keyOf(definition))), ...HashMap.values(runtime)]
        return yield* rebuild(before, keyed(HashMap.empty(), list), list)
      }))
    // Puts `batch` in and takes `keys` out, validating only these; a family or a nested skill
    // makes it a full rebuild.
    const change = (before: Snapshot, batch: ReadonlyArray<Skill.Definition>, keys: ReadonlyArray<string>) =>
      Effect.gen(function*() {
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
        ) return yield* rebuild(before, definitions)
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
          ? yield* rebuild(before, definitions)
          : yield* commit(applied.snapshot, applied.changes, definitions, batch.length)
      })
    const edit = (batch: ReadonlyArray<Skill.Definition>, keys: ReadonlyArray<string>, origin: Origin) =>
      Semaphore.withPermits(lock, 1)(Effect.gen(function*() {
        cause = { _tag: "Edit", upsert: batch, remove: keys, origin }
        const changes = yield* change(yield* SubscriptionRef.get(ref), batch, keys)
        runtime = HashMap.removeMany(keyed(runtime, batch), keys)
        return changes
      }).pipe(Effect.ensuring(Effect.sync(() => {
        cause = undefined
      }))))
    const upsert = (next: Iterable<Skill.Definition>, origin: Origin = "local") => edit([...next], [], origin)
    const remove = (uris: Iterable<string>, origin: Origin = "local") => edit([], [...uris], origin)
    const update = (next: { readonly upsert: Iterable<Skill.Definition>; readonly remove: Iterable<string> }) =>
      Semaphore.withPermits(lock, 1)(Effect.gen(function*() {
        // A skill added by `upsert` takes precedence over the source's version of it.
        const batch = [...next.upsert].filter((definition) => !HashMap.has(runtime, keyOf(definition)))
        const keys = [...next.remove].filter((key) => !HashMap.has(runtime, key))
        if (batch.length + keys.length === 0) return noChanges
        return yield* change(yield* SubscriptionRef.get(ref), batch, keys)
      }))
    return SkillRegistry.of({
      snapshot: SubscriptionRef.get(ref),
      replace,
      upsert,
      remove,
      update,
      reload: load === undefined
        ? replace(first)
        : Effect.flatMap(Effect.mapError(load, (error) => new ReloadError({ reason: Build.describeError(error) })), replace),
      stats: Effect.sync(() => stats),
      commits: Effect.map(PubSub.subscribe(commits), Stream.fromSubscription),
      ref
    })
  })
