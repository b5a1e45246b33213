/**
 * Skills from a folder on disk, in the Agent Skills layout (spec R1, R2, R10, R93-R97, R101).
 *
 * Every folder under the root that holds a `SKILL.md` is a skill. Its skill path is its folder path
 * relative to the root (after an optional prefix), so `acme/billing/refunds/SKILL.md` becomes
 * `skill://acme/billing/refunds/SKILL.md`. Its files are every regular file under its folder,
 * including the files of skills nested inside it (R10). If the root itself holds a `SKILL.md`, the
 * root is one skill named after its folder.
 *
 * A cloned skills repository is read as the `npx skills` installer reads it (since 0.2.0): the
 * hidden containers it searches (`skills/.curated`, `.claude/skills` and the other agents' folders)
 * are walked, the folders `.claude-plugin/*.json` name are said where found (`check`), and a
 * container is not part of a URI, so `serve REPO` and `serve REPO/skills` name a skill alike. Two
 * folders that would have one URI both get their own (`Repair` `SharedUri`); `lenient` serves a skill
 * as found where its meaning is plain (see `Options.lenient`).
 *
 * What is never served:
 * - hidden entries: any file or folder whose name starts with `.` (`.git`, `.env`, `.DS_Store`), and
 *   everything below a hidden folder, but for the installer's containers (a hidden folder holding
 *   skills is listed in `ignored`, with how to serve it); `node_modules`; a skill's signatures
 *   ({@link SignaturesFileName}) are read from one and relayed in its entry's `_meta`;
 * - symbolic links to folders: never followed, so a link can neither loop nor make one file
 *   appear under two paths;
 * - symbolic links to files whose real path is outside the root, or inside it under a hidden name;
 *   a link to a regular file inside the root is served under the link's own path;
 * - anything that is not a regular file (sockets, pipes, devices): never opened.
 * What is left out is listed in `ignored`, so a user can see why (so is a `skill.md` spelt in
 * another case). A folder or file inside a skill that cannot be listed or stat'ed
 * (`UnreadableFolder`, `UnreadableFile`) skips that skill. Every path is read through one guard
 * (`internal/directory/guard`): `lstat` first, opened without blocking or following a link,
 * checked with `fstat` to be the regular file stamped, read no further than its stamped size.
 *
 * `load` reads a folder once (how invalid skills, torn reads, signatures files and files served on
 * demand are handled: see there). `make` gives a `Source` that can scan again, re-reading only what
 * changed and keeping the last good version of a skill an edit broke; `watch` reloads the registry
 * when files change, looking again only at the paths the file events named.
 *
 * The work is split by concern under `internal/directory/`: the one way in to the disk (`guard`),
 * the walk (`scan`), file stamps and what is kept of each file (`stamps`), which files belong to
 * which skill (`grouping`), loading one root (`load`), a source over several roots (`source`),
 * signatures files (`signatures`), and watching (`watch`); their bounds are `ServerLimits`'s.
 *
 * @since 0.1.0
 */
import { Manifest } from "@mcp-skills/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as NodePath from "node:path"
import { loadRoot } from "./internal/directory/load.js"
import * as Signatures from "./internal/directory/signatures.js"
import * as Sources from "./internal/directory/source.js"
import * as Watcher from "./internal/directory/watch.js"
import * as Skill from "./Skill.js"
import * as SkillRegistry from "./SkillRegistry.js"
import * as SkillsServer from "./SkillsServer.js"
import { type Check, describeRepaired, type Loaded, type Options, type Root, type Source } from "./DirectoryModel.js"
import * as Layout from "./internal/directory/layout.js"
import { emptyState, realRootOf } from "./internal/directory/refresh.js"
import type * as Snapshot from "./Snapshot.js"
import * as ServerLimits from "./ServerLimits.js"


/**
 * The file at a skill's root that holds its signatures (written by `mcp-skills-server sign`):
 * hidden, so it is never served and is in no manifest; signing a skill changes none of its files.
 *
 * @since 0.1.0
 * @category models
 */
export const SignaturesFileName = Signatures.FileName

/**
 * The content of {@link SignaturesFileName}: `{ "version": 1, "signatures": [...] }`, one record
 * per key, at most 16.
 *
 * @since 0.1.0
 * @category models
 */
export const SignaturesFile = Signatures.File

/**
 * Loads every skill under `root` (see the module description; its types and errors are
 * `DirectoryModel`'s). Fails with `SourceDirectoryError` when the root cannot be used, and in
 * `strict` mode with `InvalidSkills` when any skill folder is invalid; otherwise a skill that fails
 * validation (`Manifest.make` of `@mcp-skills/core`: frontmatter, name equals folder name, URI
 * rules, limits) is reported in `skipped` with its typed error while the others are loaded. A skill
 * whose frontmatter effect's `McpClient` reads otherwise than YAML 1.2 (and so refuses) is served,
 * and reported in `warnings` with the line and the portable way to write it.
 *
 * **Torn files.** Each skill's changed files are read and then stat'ed again; if any changed while
 * it was read (size, modification or change time, inode), or read empty within a second of a write
 * where it had bytes before (a rewrite in place, between its truncation and its write), the skill
 * is read again (at most 3 times), otherwise it keeps its last good version, so a version mixing
 * old and new files, or an empty moment, is never published. A file modified less than a second
 * before it was read is read again on the next full scan, or on a watched one whose events name it
 * (timestamps are coarser than writes), and served anew only if its bytes differ.
 *
 * **Signatures files** are stamped and read with their skill's files, bounded
 * (`ServerLimits.SignaturesMaxBytes`, `SignaturesMaxRecords`: 16 KiB, 16 records, one per key); one that cannot be read or is past a bound makes its skill invalid,
 * naming it.
 *
 * **Files served on demand** (`onDemandAbove`): files above the threshold, except `SKILL.md`, are
 * read and hashed when scanned but their bytes are not kept (`LoadedSkill.onDisk` says where they
 * are; the stamps keep their digest); a read takes them from disk and sends them only if they still
 * have the entry's size and digest. A new version of a skill reads its files on disk once more,
 * since a manifest is made from bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = Effect.fnUntraced(function*(root: string, options: Options = {}) {
  const { skills, skipped, ignored, warnings, repairs } = yield* loadRoot(emptyState(), 0, root, options)
  return { skills, skipped, ignored, warnings, repairs } satisfies Loaded
})

/**
 * What `serve` would serve, repair and refuse under `root`, without serving it (what
 * `mcp-skills-server check` prints): each skill with where discovery found it, every repair (with
 * `lenient`), every folder refused with its reason, every entry left out, and the counts of each
 * kind. Nothing refused is what a CI check asks for: `counts.refused === 0`.
 *
 * @example
 * ```ts
 * import { DirectorySource } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * const refused = DirectorySource.check("./repo", { lenient: true }).pipe(Effect.map((check) => check.counts.refused))
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const check = Effect.fnUntraced(function*(root: string, options: Omit<Options, "strict"> = {}) {
  const loaded = yield* load(root, { ...options, strict: false })
  const manifests = Layout.readManifests(yield* realRootOf(root))
  const counts: Record<string, number> = {
    served: loaded.skills.length,
    refused: loaded.skipped.length,
    ignored: loaded.ignored.length,
    warnings: loaded.warnings.length
  }
  for (const repaired of loaded.repairs) counts[repaired.repair._tag] = (counts[repaired.repair._tag] ?? 0) + 1
  const result: Check = {
    root,
    served: loaded.skills.map((skill) => ({
      uri: skill.manifest.uri,
      directory: skill.directory,
      found: Layout.foundIn(skill.directory, manifests)
    })),
    repairs: loaded.repairs,
    refused: loaded.skipped,
    ignored: loaded.ignored,
    warnings: loaded.warnings,
    counts
  }
  return result
})

/**
 * A `Source` over one or more roots, each with its own prefix, scheme and cache hint (two roots
 * producing the same skill URI is an error naming both folders). Its `definitions` Effect (hand it
 * to `SkillsServer.layer({ skills: source.definitions })`, so `SkillRegistry.reload` rescans)
 * re-reads only files whose size, modification time or inode changed, and a skill whose files are
 * all unchanged keeps its manifest (nothing is hashed again). `log` receives the problem lines of
 * `definitions`, and the entries newly left out (default: `Effect.logWarning`).
 *
 * **Bad edits.** A skill that was served and becomes invalid keeps being served as its last good
 * version, with one line naming the file and the rule
 * (`acme/billing/refunds/SKILL.md:3: anchor &x is not allowed; still serving the last good version`);
 * once fixed, the new version is served.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  roots: ReadonlyArray<Root>,
  options?: { readonly log?: ((line: string) => Effect.Effect<void>) | undefined }
) => Effect.Effect<Source> = Sources.make

/**
 * The loaded skills as definitions for `SkillsServer.layer` (or `SkillRegistry.replace`). Skipped
 * folders, ignored entries and `warnings` are logged as warnings; use `strict` to fail instead.
 *
 * @example
 * ```ts
 * import { DirectorySource, Skill, SkillsServer } from "@mcp-skills/server"
 *
 * // Two folders and a skill in code in one registry, each folder loaded again on reload.
 * const Skills = SkillsServer.layer({
 *   skills: SkillsServer.combine(
 *     Skill.make({ path: "oncall", files: { "SKILL.md": "---\nname: oncall\ndescription: On call\n---\n" } }),
 *     DirectorySource.definitions("./skills"),
 *     DirectorySource.definitions("./team-skills", { prefix: ["acme", "team"] })
 *   )
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const definitions = (root: string, options: Options = {}) =>
  Effect.gen(function*() {
    const loaded = yield* load(root, options)
    for (const skipped of loaded.skipped) yield* Effect.logWarning(skipped.message)
    for (const ignored of loaded.ignored) yield* Effect.logWarning(`ignored ${ignored.path}: ${ignored.reason}`)
    for (const warning of loaded.warnings) yield* Effect.logWarning(Manifest.describe(warning))
    for (const repaired of loaded.repairs) yield* Effect.logInfo(`repaired ${describeRepaired(repaired)}`)
    return toDefinitions(loaded, options)
  })

/**
 * Definitions for skills already loaded with {@link load}; pass the same `scheme`.
 *
 * @since 0.1.0
 * @category utils
 */
export const toDefinitions = (loaded: Loaded, options: Pick<Options, "scheme"> = {}): ReadonlyArray<Skill.Static> =>
  loaded.skills.map((skill) => Skill.fromFiles(skill, { scheme: options.scheme }))

/**
 * A registration layer serving every skill under `root`, loaded once when the layer is built:
 * `McpServer.layerHttp({ ..., registrations: DirectorySource.layer("./skills") })`. For visibility,
 * cache hints or page size, use `SkillsServer.layer({ skills: DirectorySource.definitions(root), ... })`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (root: string, options: Options = {}) => SkillsServer.layer({ skills: definitions(root, options) })

/**
 * Options of {@link watch}.
 *
 * @since 0.1.0
 * @category options
 */
export interface WatchOptions {
  /** Quiet time after the last file event before reloading. Default `ServerLimits.WatchDebounce` (100 ms). */
  readonly debounce?: Duration.Input | undefined
  /**
   * Under a continuous stream of events (a large copy, `git checkout` of a big tree), the longest a
   * change waits for its reload. Default `ServerLimits.WatchMaxDelay` (1 second).
   */
  readonly maxDelay?: Duration.Input | undefined
  /**
   * Interval of the periodic stamp check, the safety net for file systems whose events are
   * unreliable (network volumes, containers' bind mounts): every file is stat'ed, none read, and a
   * change no event reported is logged and reloaded. The interval stretches so the check never
   * takes more than a twentieth of the time. `false` turns it off. Default `ServerLimits.WatchSweep`
   * (5 seconds).
   */
  readonly sweep?: Duration.Input | false | undefined
  /**
   * Receives the watcher's own lines: a change the periodic check found that no event reported, a
   * folder that cannot be watched. Default: `Effect.logWarning`.
   */
  readonly log?: ((line: string) => Effect.Effect<void>) | undefined
  /** Called after every reload with what changed, or why it failed (the previous catalogue stays). */
  readonly onReload?: ((
    result: Exit.Exit<Snapshot.Changes, SkillRegistry.RegistrationError | SkillRegistry.ReloadError>
  ) => Effect.Effect<void>) | undefined
}

const describeReload = (
  result: Exit.Exit<Snapshot.Changes, SkillRegistry.RegistrationError | SkillRegistry.ReloadError>
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
 * @category constructors
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
  let synced: { readonly snapshot: Snapshot.Snapshot; readonly scans: number } | undefined = yield* inStep
  const reloadWhatChanged = (paths: ReadonlySet<string> | undefined) =>
    Effect.gen(function*() {
      const now = yield* inStep
      const incremental = synced !== undefined && synced.snapshot === now.snapshot && synced.scans === now.scans
      synced = undefined
      // Both go through the registry's intake, counted as the watch's; a whole reload there reads
      // the source in the registry's own fiber, so it walks every root rather than `paths`.
      const changes = yield* (incremental
        ? registry.update(
          source.changes.pipe(
            Effect.mapError((error) => new SkillRegistry.ReloadError({ reason: error.message })),
            Effect.provideService(Sources.ChangedPaths, paths)
          ),
          "watch"
        )
        : Effect.flatMap(registry.requestReload("watch"), (asked) => asked.result))
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
    debounce: Duration.fromInputUnsafe(options.debounce ?? ServerLimits.WatchDebounce),
    maxDelay: Duration.fromInputUnsafe(options.maxDelay ?? ServerLimits.WatchMaxDelay),
    sweep: options.sweep === false ? undefined : Duration.fromInputUnsafe(options.sweep ?? ServerLimits.WatchSweep)
  })
})
