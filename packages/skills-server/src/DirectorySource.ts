/**
 * Skills from a folder on disk, in the Agent Skills layout (spec R1, R2, R10, R93-R97, R101).
 *
 * Every folder under the root that holds a `SKILL.md` is a skill. Its skill path is its folder path
 * relative to the root (after an optional prefix), so `acme/billing/refunds/SKILL.md` becomes
 * `skill://acme/billing/refunds/SKILL.md`. Its files are every regular file under its folder,
 * including the files of skills nested inside it (R10). If the root itself holds a `SKILL.md`, the
 * root is one skill named after its folder.
 *
 * What is never served:
 * - hidden entries: any file or folder whose name starts with `.` (`.git`, `.env`, `.DS_Store`), and
 *   everything below a hidden folder; a skill's signatures ({@link SignaturesFileName}) are read
 *   from one and relayed in its entry's `_meta`;
 * - symbolic links to folders: they are not followed, so a link can neither loop nor make one file
 *   appear under two paths;
 * - symbolic links to files whose real path is outside the root, or inside it under a hidden name;
 *   a link to a regular file inside the root is served under the link's own path;
 * - anything that is not a regular file (sockets, pipes, devices).
 * Links and special files that are left out are listed in `ignored`, so a user can see why, and so
 * is a `skill.md` spelt in another case outside every skill (a skill needs exactly `SKILL.md`).
 *
 * `load` reads a folder once. `make` gives a `Source` that can scan again: its `definitions`
 * Effect (hand it to `SkillsServer.layer({ skills: source.definitions })`, so `SkillRegistry.reload`
 * rescans) re-reads only files whose size, modification time or inode changed, and a skill whose
 * files are all unchanged keeps its manifest (nothing is hashed again). `watch` reloads the registry
 * when files change, looking again only at the paths the file events named. A `Source` may hold
 * several roots, each with its own prefix, scheme and cache hint; two roots producing the same skill
 * URI is an error naming both folders.
 *
 * The work is split by concern: the walk (`internal/directory/scan`), file stamps and the file cache
 * (`stamps`), which files belong to which skill (`grouping`), loading one root (`load`), a source
 * over several roots (`source`), and watching (`watch`).
 *
 * Torn files: each skill's changed files are read and then stat'ed again; if any changed while it
 * was read, the skill is read again (at most 3 times), otherwise it keeps its last good version, so
 * a version mixing old and new files is never published. A file modified less than a second before
 * it was read is read again on the next full scan, or on a watched one whose events name it
 * (timestamps are coarser than writes), and served anew only if its bytes differ.
 *
 * Files served on demand (`onDemandAbove`): files above the threshold, except `SKILL.md`, are read
 * and hashed when scanned but their bytes are not kept (`LoadedSkill.onDisk` says where they are;
 * the stamps keep their digest); a read takes them from disk and sends them only if they still have
 * the entry's size and digest (see the README). A new version of a skill reads its files on disk
 * once more, since a manifest is made from bytes.
 *
 * Bad edits: a skill that was served and becomes invalid keeps being served as its last good
 * version, with one line naming the file and the rule
 * (`acme/billing/refunds/SKILL.md:3: anchor &x is not allowed; still serving the last good version`);
 * once fixed, the new version is served.
 *
 * A skill that fails validation (`Manifest.make` of `@mcp-skills/core`: frontmatter, name equals
 * folder name, URI rules, limits) is reported in `skipped` with its typed error while the others are
 * loaded, or fails the whole load in `strict` mode.
 *
 * @since 0.1.0
 */
import type { Limits, Signing } from "@mcp-skills/core"
import { Manifest, SkillUri } from "@mcp-skills/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"
import { emptyState, loadRoot } from "./internal/directory/load.js"
import * as Signatures from "./internal/directory/signatures.js"
import * as Sources from "./internal/directory/source.js"
import * as Watcher from "./internal/directory/watch.js"
import * as Skill from "./Skill.js"
import * as SkillRegistry from "./SkillRegistry.js"
import * as SkillsServer from "./SkillsServer.js"

/**
 * The root folder cannot be used: it does not exist, is not a folder, or cannot be read.
 *
 * @since 0.1.0
 */
export class SourceDirectoryError extends Schema.TaggedError<SourceDirectoryError>()("SourceDirectoryError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot load skills from ${this.path}: ${this.reason}`
  }
}

/**
 * A file of a skill could not be read from disk.
 *
 * @since 0.1.0
 */
export class UnreadableFile extends Schema.TaggedError<UnreadableFile>()("UnreadableFile", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot read ${this.path}: ${this.reason}`
  }
}

/**
 * Why one skill folder is not served: its URI cannot be built, a file cannot be read, or the skill
 * is invalid (`InvalidSkill` lists every problem).
 *
 * @since 0.1.0
 */
export const SkillProblem = Schema.Union([Manifest.InvalidSkill, SkillUri.InvalidSkillUri, UnreadableFile])

/**
 * @since 0.1.0
 */
export type SkillProblem = typeof SkillProblem.Type

/**
 * A skill folder that was not loaded, with the reason. `directory` is the folder relative to the root
 * (`.` for the root itself).
 *
 * @since 0.1.0
 */
export class InvalidSkillDirectory extends Schema.TaggedError<InvalidSkillDirectory>()("InvalidSkillDirectory", {
  directory: Schema.String,
  error: SkillProblem
}) {
  override get message(): string {
    return `skipped skill folder ${this.directory}: ${this.error.message}`
  }
}

/**
 * In `strict` mode: at least one skill folder is invalid, so nothing is loaded.
 *
 * @since 0.1.0
 */
export class InvalidSkills extends Schema.TaggedError<InvalidSkills>()("InvalidSkills", {
  root: Schema.String,
  invalid: Schema.Array(InvalidSkillDirectory)
}) {
  override get message(): string {
    return `${this.invalid.length} invalid skill folder(s) under ${this.root}:\n` +
      this.invalid.map((entry) => `  ${entry.directory}: ${entry.error.message}`).join("\n")
  }
}

/**
 * Two roots of one source produce the same skill URI.
 *
 * @since 0.1.0
 */
export class UriCollision extends Schema.TaggedError<UriCollision>()("UriCollision", {
  uri: Schema.String,
  first: Schema.String,
  second: Schema.String
}) {
  override get message(): string {
    return `${this.uri} is served from both ${this.first} and ${this.second}; give one of the roots a prefix`
  }
}

/**
 * One line per problem of a skill folder, naming the file (relative to the root) and the rule:
 * `acme/billing/refunds/SKILL.md:3: anchor &x is not allowed`.
 *
 * @since 0.1.0
 */
export const describeProblem = (invalid: InvalidSkillDirectory): string => {
  const folder = invalid.directory === "." ? "" : `${invalid.directory}/`
  const error = invalid.error
  if (error._tag === "InvalidSkill") {
    return error.problems.map((problem) =>
      problem.path === undefined
        ? `${invalid.directory}: ${problem.reason}`
        : Manifest.describe({ ...problem, path: folder + problem.path })
    ).join("; ")
  }
  if (error._tag === "UnreadableFile") return `${error.path}: ${error.reason}`
  return `${invalid.directory}: ${error.reason}`
}

/**
 * A directory entry that was deliberately left out (see the module description).
 *
 * @since 0.1.0
 */
export interface Ignored {
  /** Relative to the root, `/`-separated. */
  readonly path: string
  readonly reason: string
}

/**
 * One skill found on disk and validated. `path` and `files` are what `Skill.fromFiles` takes.
 *
 * @since 0.1.0
 */
export interface LoadedSkill {
  /** The skill folder relative to the root, `/`-separated (`.` for the root itself). */
  readonly directory: string
  /** The decoded skill-path segments: prefix, then the folder path. */
  readonly path: ReadonlyArray<string>
  /**
   * Every file held in memory, `SKILL.md` first, with its path relative to the skill folder and
   * its bytes.
   */
  readonly files: ReadonlyArray<Manifest.FileInput>
  /** The files served on demand (above `onDemandAbove`): where they are, their size and digest. */
  readonly onDisk: ReadonlyArray<Skill.DiskFile>
  /**
   * The validated skill: entry, frontmatter and every file with its digest and size (and its bytes
   * when held in memory).
   */
  readonly manifest: Skill.ManifestView
  /**
   * The signatures stored beside the skill's `SKILL.md` in {@link SignaturesFileName}, relayed
   * with its entry (see `Skill.Static.signatures`); absent when the skill is not signed.
   */
  readonly signatures?: ReadonlyArray<Signing.Signature> | undefined
}

/**
 * The file at a skill's root that holds its signatures (written by `mcp-skills-server sign`):
 * hidden, so it is never served and is in no manifest; signing a skill changes none of its files.
 *
 * @since 0.1.0
 */
export const SignaturesFileName = Signatures.FileName

/**
 * The content of {@link SignaturesFileName}: `{ "version": 1, "signatures": [...] }`, one record
 * per key.
 *
 * @since 0.1.0
 */
export const SignaturesFile = Signatures.File

/**
 * The result of {@link load}: plain data, ordered by skill URI.
 *
 * @since 0.1.0
 */
export interface Loaded {
  readonly skills: ReadonlyArray<LoadedSkill>
  readonly skipped: ReadonlyArray<InvalidSkillDirectory>
  readonly ignored: ReadonlyArray<Ignored>
}

/**
 * Options of {@link load}.
 *
 * @since 0.1.0
 */
export interface Options {
  /** Skill-path segments put before each folder path, e.g. `["acme"]`. Default: none. */
  readonly prefix?: ReadonlyArray<string> | undefined
  /** URI scheme. Default `skill` (R92). */
  readonly scheme?: string | undefined
  /** Fail the whole load when any skill folder is invalid, instead of skipping it. Default `false`. */
  readonly strict?: boolean | undefined
  /** Per-skill limits (R15, R16). Default: those of the specification. */
  readonly limits?: Limits.Limits | undefined
  /**
   * Files larger than this many bytes (except `SKILL.md`) are served on demand, for catalogues
   * larger than memory: read and hashed once when scanned, their bytes then kept neither by the
   * catalogue nor by the file stamps; each `resources/read` reads the file again and sends it only
   * if its size and SHA-256 are those of the catalogue. A file changed behind the server's back
   * triggers a reload and is answered from the reloaded catalogue, verified the same way, or with
   * an error asking to try again (see the README); never with bytes of another digest.
   * Default: every file is held in memory.
   */
  readonly onDemandAbove?: number | undefined
}

/**
 * Counters of a `Source` (cumulative).
 *
 * @since 0.1.0
 */
export interface Stats {
  readonly scans: number
  /**
   * Entries looked at on disk (listed or stat'ed): a full scan looks at every one, a reload driven by
   * `watch` only at the paths its events named (and what is below the folders among them).
   */
  readonly lookedAt: number
  /** Files read from disk, and their bytes; unchanged files are not read again. */
  readonly readFiles: number
  readonly readBytes: number
  /** Files hashed; a skill whose files are all unchanged is not hashed again. */
  readonly hashedFiles: number
  readonly hashedBytes: number
  /** Files of the last scan served on demand: their bytes are not held (see `onDemandAbove`). */
  readonly onDiskFiles: number
  /** Bytes of file content the source holds (shared with the catalogue). */
  readonly heldBytes: number
}

/**
 * Loads every skill under `root` (see the module description). Fails with `SourceDirectoryError` when
 * the root cannot be used, and in `strict` mode with `InvalidSkills` when any skill folder is invalid.
 *
 * @since 0.1.0
 */
export const load = Effect.fnUntraced(function*(root: string, options: Options = {}) {
  const { skills, skipped, ignored } = yield* loadRoot(emptyState(), 0, root, options)
  return { skills, skipped, ignored } satisfies Loaded
})

/**
 * One folder of a `Source`, with its own options (prefix, scheme, cache hint for its skills).
 *
 * @since 0.1.0
 */
export interface Root extends Options {
  readonly path: string
  readonly cacheHint?: Skill.CacheHint | undefined
}

/**
 * The result of one scan of every root.
 *
 * @since 0.1.0
 */
export interface Scan {
  readonly roots: ReadonlyArray<{ readonly root: Root; readonly loaded: Loaded }>
  readonly definitions: ReadonlyArray<Skill.Static>
  /** Problems whose line differs from the previous scan's (a new or changed bad edit). */
  readonly newProblems: ReadonlyArray<string>
  /** Skill folders that had a problem on the previous scan and are valid again. */
  readonly fixed: ReadonlyArray<string>
  /** Entries left out that the previous scan did not leave out (or left out for another reason). */
  readonly newIgnored: ReadonlyArray<string>
}

/**
 * What changed since the previous scan (see `Source.changes`).
 *
 * @since 0.1.0
 */
export interface Changes {
  readonly upsert: ReadonlyArray<Skill.Static>
  /** `SKILL.md` URIs. */
  readonly remove: ReadonlyArray<string>
}

/**
 * Skill folders that can be scanned again, cheaply.
 *
 * @since 0.1.0
 */
export interface Source {
  readonly roots: ReadonlyArray<Root>
  /** Scans every root (reading only changed files); invalid edits keep their skill's last good version. */
  readonly scan: Effect.Effect<Scan, SourceDirectoryError | InvalidSkills | UriCollision>
  /**
   * `scan`, logging each new problem once (see the module description), as definitions: what
   * `SkillsServer.layer({ skills })` takes, run again by `SkillRegistry.reload`.
   */
  readonly definitions: Effect.Effect<ReadonlyArray<Skill.Static>, SourceDirectoryError | InvalidSkills | UriCollision>
  /**
   * `definitions` as a change: the definitions that differ from those of the previous scan (of
   * any kind), and the URIs of the skills that went away; what `watch` hands
   * `SkillRegistry.update`, so a reload costs the registry what changed, not the catalogue.
   */
  readonly changes: Effect.Effect<Changes, SourceDirectoryError | InvalidSkills | UriCollision>
  readonly stats: Effect.Effect<Stats>
  /**
   * Stats every file under the roots and reads none: `missed` lists the absolute paths whose size,
   * modification time or inode differ from the last scan, or that appeared or went away since;
   * `racy` the files read too soon after a write to trust their stamp. What `watch`'s periodic
   * check runs.
   */
  readonly check: Effect.Effect<
    { readonly missed: ReadonlyArray<string>; readonly racy: ReadonlyArray<string> },
    SourceDirectoryError
  >
}

/**
 * A `Source` over one or more roots. `log` receives the problem lines of `definitions`, and the
 * entries newly left out (default: `Effect.logWarning`).
 *
 * @since 0.1.0
 */
export const make: (
  roots: ReadonlyArray<Root>,
  options?: { readonly log?: ((line: string) => Effect.Effect<void>) | undefined }
) => Effect.Effect<Source> = Sources.make

/**
 * The loaded skills as definitions for `SkillsServer.layer` (or `SkillRegistry.replace`). Skipped
 * folders and ignored entries are logged as warnings; use `strict` to fail instead.
 *
 * @since 0.1.0
 */
export const definitions = (root: string, options: Options = {}) =>
  Effect.gen(function*() {
    const loaded = yield* load(root, options)
    for (const skipped of loaded.skipped) yield* Effect.logWarning(skipped.message)
    for (const ignored of loaded.ignored) yield* Effect.logWarning(`ignored ${ignored.path}: ${ignored.reason}`)
    return toDefinitions(loaded, options)
  })

/**
 * Definitions for skills already loaded with {@link load}; pass the same `scheme`.
 *
 * @since 0.1.0
 */
export const toDefinitions = (loaded: Loaded, options: Pick<Options, "scheme"> = {}): ReadonlyArray<Skill.Static> =>
  loaded.skills.map((skill) => Skill.fromFiles(skill, { scheme: options.scheme }))

/**
 * A registration layer serving every skill under `root`, loaded once when the layer is built:
 * `McpServer.layerHttp({ ..., registrations: DirectorySource.layer("./skills") })`. For visibility,
 * cache hints or page size, use `SkillsServer.layer({ skills: DirectorySource.definitions(root), ... })`.
 *
 * @since 0.1.0
 */
export const layer = (root: string, options: Options = {}) => SkillsServer.layer({ skills: definitions(root, options) })

/**
 * Options of {@link watch}.
 *
 * @since 0.1.0
 */
export interface WatchOptions {
  /** Quiet time after the last file event before reloading. Default 100 milliseconds. */
  readonly debounce?: Duration.Input | undefined
  /**
   * Under a continuous stream of events (a large copy, `git checkout` of a big tree), the longest a
   * change waits for its reload. Default 1 second.
   */
  readonly maxDelay?: Duration.Input | undefined
  /**
   * Interval of the periodic stamp check, the safety net for file systems whose events are
   * unreliable (network volumes, containers' bind mounts): every file is stat'ed, none read, and a
   * change no event reported is logged and reloaded. The interval stretches so the check never
   * takes more than a twentieth of the time. `false` turns it off. Default 5 seconds.
   */
  readonly sweep?: Duration.Input | false | undefined
  /**
   * Receives the watcher's own lines: a change the periodic check found that no event reported, a
   * folder that cannot be watched. Default: `Effect.logWarning`.
   */
  readonly log?: ((line: string) => Effect.Effect<void>) | undefined
  /** Called after every reload with what changed, or why it failed (the previous catalogue stays). */
  readonly onReload?: ((
    result: Exit.Exit<SkillRegistry.Changes, SkillRegistry.RegistrationError | SkillRegistry.ReloadError>
  ) => Effect.Effect<void>) | undefined
}

const describeReload = (
  result: Exit.Exit<SkillRegistry.Changes, SkillRegistry.RegistrationError | SkillRegistry.ReloadError>
) =>
  Exit.match(result, {
    onFailure: (cause) => Effect.logWarning("reload failed, still serving the previous skills", cause),
    onSuccess: (changes) =>
      changes.added.length + changes.removed.length + changes.changed.length === 0
        ? Effect.void
        : Effect.logInfo(
          `skills reloaded: ${changes.added.length} added, ${changes.removed.length} removed, ${changes.changed.length} changed`
        )
  })

/**
 * Reloads the `SkillRegistry` (built from `source.definitions`) whenever a file under one of the
 * source's roots changes, and never loses an edit: folders are watched (not file inodes, so files
 * replaced by rename, as editors, `sed -i` and `git checkout` do, keep being seen), events are
 * coalesced into one reload per quiet moment (`debounce`, at most `maxDelay` under a storm), an
 * event during a reload causes another, hidden entries (`.git`, editor swap files) are ignored, and
 * a periodic stamp check (`sweep`) logs and reloads any change the events missed. A reload that
 * fails keeps the previous catalogue. Returns once every root is watched, so no later edit is
 * missed; watching stops when the scope closes.
 *
 * ```ts
 * const source = yield* DirectorySource.make([{ path: "./skills" }])
 * const Skills = SkillsServer.layer({ skills: source.definitions })
 * const Watch = Layer.effectDiscard(DirectorySource.watch(source)).pipe(Layer.provide(Skills))
 * ```
 *
 * @since 0.1.0
 */
export const watch = Effect.fnUntraced(function*(source: Source, options: WatchOptions = {}) {
  const registry = yield* SkillRegistry.SkillRegistry
  const onReload = options.onReload ?? describeReload
  // The registry holds the definitions of the source's last scan as long as neither changed since
  // this watch last brought them in step (the registry is built from the source's first scan).
  // Then a reload hands it only what changed; otherwise (a failed reload, a scan or a `reload`
  // from elsewhere) it reloads the whole catalogue once, and is in step again.
  const inStep = Effect.gen(function*() {
    return { snapshot: yield* registry.snapshot, scans: (yield* source.stats).scans }
  })
  let synced: { readonly snapshot: SkillRegistry.Snapshot; readonly scans: number } | undefined = yield* inStep
  const reloadWhatChanged = (paths: ReadonlySet<string> | undefined) =>
    Effect.gen(function*() {
      const now = yield* inStep
      const incremental = synced !== undefined && synced.snapshot === now.snapshot && synced.scans === now.scans
      synced = undefined
      const changes = yield* (incremental
        ? source.changes.pipe(
          Effect.mapError((error) => new SkillRegistry.ReloadError({ reason: error.message })),
          Effect.flatMap(registry.update)
        )
        : registry.reload).pipe(Effect.provideService(Sources.ChangedPaths, paths))
      synced = yield* inStep
      return changes
    })
  yield* Watcher.run({
    roots: source.roots.map((root) => NodePath.resolve(root.path)),
    // The reload looks again only at what the events named (everything, after an overflow).
    reload: (paths) => reloadWhatChanged(paths).pipe(Effect.exit, Effect.flatMap(onReload)),
    check: source.check.pipe(
      Effect.catch((error) => Effect.as(Effect.logWarning(`periodic check failed: ${error.message}`), { missed: [], racy: [] }))
    ),
    warn: options.log ?? ((line) => Effect.logWarning(line))
  }, {
    debounce: Duration.fromInputUnsafe(options.debounce ?? "100 millis"),
    maxDelay: Duration.fromInputUnsafe(options.maxDelay ?? "1 second"),
    sweep: options.sweep === false ? undefined : Duration.fromInputUnsafe(options.sweep ?? "5 seconds")
  })
})
