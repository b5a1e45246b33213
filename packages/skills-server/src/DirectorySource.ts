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
 *   everything below a hidden folder;
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
 * when files change (debounced `fs.watch`, recursive). A `Source` may hold several roots, each with
 * its own prefix, scheme and cache hint; two roots producing the same skill URI is an error naming
 * both folders.
 *
 * Torn files: each skill's changed files are read and then stat'ed again; if any changed while it
 * was read, the skill is read again (at most 3 times), otherwise it keeps its last good version, so
 * a version mixing old and new files is never published. A file modified less than a second before
 * it was read is read again on the next scan (timestamps are coarser than writes), and served anew
 * only if its bytes differ.
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
import { Limits, Manifest, SkillUri } from "@mcp-skills/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"
import * as Exit from "effect/Exit"
import * as Semaphore from "effect/Semaphore"
import * as Watcher from "./internal/directory/watch.js"
import * as Skill from "./Skill.js"
import * as SkillRegistry from "./SkillRegistry.js"
import * as SkillsServer from "./SkillsServer.js"

const SkillFileName = "SKILL.md"

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
  /** Every file, `SKILL.md` first, with its path relative to the skill folder and its bytes. */
  readonly files: ReadonlyArray<Manifest.FileInput>
  /** The validated skill: entry, frontmatter and every file with its bytes, digest and size. */
  readonly manifest: Manifest.Manifest
}

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
}

// What a file looked like when stat'ed: a change of any of these means it must be read again.
interface Stamp {
  readonly size: number
  readonly mtimeMs: number
  readonly ino: bigint
}

interface FoundFile extends Stamp {
  readonly segments: ReadonlyArray<string>
  readonly absolute: string
}

// Only what the next scan compares: no paths, which the scan finds again.
interface CachedFile extends Stamp {
  readonly bytes: Uint8Array
  /** Modified too recently to trust the stamp alone: read again next time. */
  readonly racy: boolean
}

const stampOf = (info: FileSystem.File.Info): Stamp => ({
  size: Number(info.size),
  mtimeMs: Option.match(info.mtime, { onNone: () => -1, onSome: (date) => date.getTime() }),
  ino: Option.getOrElse(info.ino, () => -1n)
})

const sameStamp = (a: Stamp, b: Stamp) => a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino

// Filesystem timestamps tick more coarsely than writes: a file this recent may change again
// without its stamp changing.
const RacyMillis = 1_000
const ReadAttempts = 3

// Reads and stats in flight at once: enough to keep the disk and libuv's thread pool busy without
// holding thousands of open files. A skill reads its files side by side, and several skills at once.
const IoConcurrency = 32
const FileConcurrency = 8
const SkillConcurrency = 8

interface Walk {
  readonly files: ReadonlyArray<FoundFile>
  readonly ignored: ReadonlyArray<Ignored>
}

const isHidden = (name: string) => name.startsWith(".")

const systemReasons: Partial<Record<string, string>> = {
  NotFound: "does not exist",
  PermissionDenied: "permission denied",
  Busy: "busy",
  TimedOut: "timed out"
}

const describe = (error: PlatformError.PlatformError) =>
  systemReasons[error.reason._tag] ?? error.reason.message

// Walks the tree below `realRoot` without following symlinked folders; every path it returns is a
// regular file, or a link to one, whose real path is inside `realRoot` and not hidden. Folders are
// read level by level, and their entries stat'ed, with bounded concurrency (one call at a time, a
// large tree spends its time waiting on the file system); the result is in path order regardless.
const scan = Effect.fnUntraced(function*(realRoot: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const files: Array<FoundFile> = []
  const ignored: Array<{ readonly segments: ReadonlyArray<string>; readonly reason: string }> = []

  const isInsideVisible = (real: string) => {
    const relative = path.relative(realRoot, real)
    if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return false
    return !relative.split(path.sep).some(isHidden)
  }

  // What one entry is: a folder to read next, a file to serve, or left out with a reason.
  const classify = (segments: ReadonlyArray<string>, absolute: string, listed: FileSystem.File.Type) =>
    Effect.gen(function*() {
      const type = listed === "Unknown"
        ? yield* fs.stat(absolute).pipe(Effect.map((info) => info.type), Effect.orElseSucceed(() => "Unknown" as const))
        : listed
      if (type === "Directory") return { _tag: "Directory" as const, segments }
      if (type === "File") {
        const info = yield* fs.stat(absolute).pipe(Effect.result)
        return info._tag === "Success"
          ? { _tag: "File" as const, file: { segments, absolute, ...stampOf(info.success) } }
          : { _tag: "Ignored" as const, segments, reason: `cannot stat: ${describe(info.failure)}` }
      }
      if (type === "SymbolicLink") {
        const target = yield* Effect.result(
          Effect.flatMap(fs.realPath(absolute), (real) => Effect.map(fs.stat(real), (info) => ({ real, info })))
        )
        if (target._tag === "Failure") {
          const loop = (target.failure.reason.cause as NodeJS.ErrnoException | undefined)?.code === "ELOOP"
          return { _tag: "Ignored" as const, segments, reason: loop ? "symbolic link loop" : "broken symbolic link" }
        }
        if (!isInsideVisible(target.success.real)) {
          return { _tag: "Ignored" as const, segments, reason: "symbolic link to a path outside the root or hidden" }
        }
        if (target.success.info.type === "Directory") {
          return { _tag: "Ignored" as const, segments, reason: "symbolic link to a folder (not followed)" }
        }
        if (target.success.info.type === "File") {
          return { _tag: "File" as const, file: { segments, absolute, ...stampOf(target.success.info) } }
        }
        return { _tag: "Ignored" as const, segments, reason: "symbolic link to something that is not a regular file" }
      }
      return { _tag: "Ignored" as const, segments, reason: `not a regular file (${type})` }
    })

  let level: ReadonlyArray<ReadonlyArray<string>> = [[]]
  while (level.length > 0) {
    const listings = yield* Effect.forEach(level, (segments) => {
      const directory = path.join(realRoot, ...segments)
      return fs.readDirectoryEntries(directory).pipe(
        Effect.map((entries) =>
          entries.filter((entry) => !isHidden(entry.name)).map((entry) => ({
            segments: [...segments, entry.name],
            absolute: path.join(directory, entry.name),
            type: entry.type
          }))
        ),
        // A folder below the root removed since its parent was listed is simply gone.
        Effect.catch((error) =>
          segments.length > 0 && error.reason._tag === "NotFound"
            ? Effect.succeed([])
            : Effect.fail(new SourceDirectoryError({ path: directory, reason: describe(error) }))
        )
      )
    }, { concurrency: IoConcurrency })
    const entries = yield* Effect.forEach(
      listings.flat(),
      (entry) => classify(entry.segments, entry.absolute, entry.type),
      { concurrency: IoConcurrency }
    )
    const next: Array<ReadonlyArray<string>> = []
    for (const entry of entries) {
      if (entry._tag === "Directory") next.push(entry.segments)
      else if (entry._tag === "File") files.push(entry.file)
      else ignored.push(entry)
    }
    level = next
  }
  files.sort((a, b) => compareSegments(a.segments, b.segments))
  ignored.sort((a, b) => compareSegments(a.segments, b.segments))
  return {
    files,
    ignored: ignored.map((entry) => ({ path: entry.segments.join("/"), reason: entry.reason }))
  } satisfies Walk
})

// Depth-first order with each folder's names in code-unit order.
const compareSegments = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1
  }
  return a.length - b.length
}

/**
 * Counters of a `Source` (cumulative).
 *
 * @since 0.1.0
 */
export interface Stats {
  readonly scans: number
  /** Files read from disk, and their bytes; unchanged files are not read again. */
  readonly readFiles: number
  readonly readBytes: number
  /** Files hashed; a skill whose files are all unchanged is not hashed again. */
  readonly hashedFiles: number
  readonly hashedBytes: number
}

interface State {
  readonly files: Map<string, CachedFile>
  /** Every file the last scan of each root found, by root index, with its stamp. */
  readonly walked: Map<number, ReadonlyArray<FoundFile>>
  /** The last valid version of each skill folder, by root index and folder. */
  readonly good: Map<string, LoadedSkill>
  stats: Stats
}

const emptyState = (): State => ({
  files: new Map(),
  walked: new Map(),
  good: new Map(),
  stats: { scans: 0, readFiles: 0, readBytes: 0, hashedFiles: 0, hashedBytes: 0 }
})

// Reads one skill's files, re-reading only those whose stamp changed, and re-stats what it read:
// if a file changed meanwhile, the whole skill is read again, so its files belong to one moment.
const readSkill = Effect.fnUntraced(function*(state: State, members: ReadonlyArray<FoundFile>, folder: ReadonlyArray<string>) {
  const fs = yield* FileSystem.FileSystem
  const unreadable = (file: FoundFile) => (error: PlatformError.PlatformError) =>
    new UnreadableFile({ path: file.segments.join("/"), reason: describe(error) })
  let current = members
  for (let attempt = 0; attempt < ReadAttempts; attempt++) {
    const fresh = new Map<string, CachedFile>()
    const inputs = yield* Effect.forEach(current, (file) => {
      const path = file.segments.slice(folder.length).join("/")
      const cached = state.files.get(file.absolute)
      if (cached !== undefined && !cached.racy && sameStamp(cached, file)) {
        return Effect.succeed<Manifest.FileInput>({ path, bytes: cached.bytes })
      }
      return fs.readFile(file.absolute).pipe(
        Effect.mapError(unreadable(file)),
        Effect.map((read): Manifest.FileInput => {
          state.stats = { ...state.stats, readFiles: state.stats.readFiles + 1, readBytes: state.stats.readBytes + read.byteLength }
          // Unchanged bytes keep their array, so the skill's manifest is reused rather than rehashed.
          const bytes = cached !== undefined && Buffer.from(cached.bytes).equals(Buffer.from(read)) ? cached.bytes : read
          fresh.set(file.absolute, {
            size: file.size,
            mtimeMs: file.mtimeMs,
            ino: file.ino,
            bytes,
            racy: Date.now() - file.mtimeMs < RacyMillis
          })
          return { path, bytes }
        })
      )
    }, { concurrency: FileConcurrency })
    let moved = false
    const restamped = yield* Effect.forEach(current, (file) => {
      const entry = fresh.get(file.absolute)
      if (entry === undefined) return Effect.succeed(file)
      return fs.stat(file.absolute).pipe(
        Effect.mapError(unreadable(file)),
        Effect.map((info) => {
          const stamp = stampOf(info)
          if (!sameStamp(stamp, file) || stamp.size !== entry.bytes.byteLength) moved = true
          return { ...file, ...stamp }
        })
      )
    }, { concurrency: FileConcurrency })
    if (!moved) {
      for (const [absolute, entry] of fresh) state.files.set(absolute, entry)
      return inputs
    }
    current = restamped
  }
  return yield* new UnreadableFile({
    path: folder.length === 0 ? SkillFileName : `${folder.join("/")}/${SkillFileName}`,
    reason: `its files kept changing while being read (${ReadAttempts} attempts)`
  })
})

const loadWith = Effect.fnUntraced(function*(state: State, rootIndex: number, root: string, options: Options) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const scheme = options.scheme ?? "skill"
  const prefix = options.prefix ?? []
  const limits = options.limits ?? Limits.defaults

  const realRoot = yield* fs.realPath(path.resolve(root)).pipe(
    Effect.mapError((error) => new SourceDirectoryError({ path: root, reason: describe(error) }))
  )
  const info = yield* fs.stat(realRoot).pipe(
    Effect.mapError((error) => new SourceDirectoryError({ path: root, reason: describe(error) }))
  )
  if (info.type !== "Directory") return yield* new SourceDirectoryError({ path: root, reason: "not a folder" })

  const { files, ignored } = yield* scan(realRoot)
  state.walked.set(rootIndex, files)
  // Files that are gone leave the cache.
  const found = new Set(files.map((file) => file.absolute))
  const inside = realRoot + path.sep
  for (const absolute of state.files.keys()) {
    if (absolute.startsWith(inside) && !found.has(absolute)) state.files.delete(absolute)
  }

  // A SKILL.md at the root makes the root a skill named after its folder; every other skill then
  // sits below that name, as if the parent folder had been loaded.
  const rootIsSkill = files.some((file) => file.segments.length === 1 && file.segments[0] === SkillFileName)
  const base = rootIsSkill ? [path.basename(path.resolve(root))] : []

  // Every skill folder with its files, in one pass: a file belongs to each skill folder among its
  // ancestors (R10: nested skills' files are their enclosing skills' files too).
  const members = new Map<string, Array<FoundFile>>()
  const skillFolders: Array<ReadonlyArray<string>> = []
  for (const file of files) {
    if (file.segments[file.segments.length - 1] !== SkillFileName) continue
    const folder = file.segments.slice(0, -1)
    skillFolders.push(folder)
    members.set(folder.join("/"), [])
  }
  // A "skill.md" outside every skill is almost certainly a skill with a misspelt file name.
  const hints: Array<Ignored> = []
  for (const file of files) {
    let enclosed = false
    for (let depth = file.segments.length - 1; depth >= 0; depth--) {
      const skill = members.get(file.segments.slice(0, depth).join("/"))
      if (skill === undefined) continue
      skill.push(file)
      enclosed = true
    }
    const name = file.segments[file.segments.length - 1]!
    if (!enclosed && name !== SkillFileName && name.toLowerCase() === "skill.md") {
      hints.push({ path: file.segments.join("/"), reason: `not a skill: the file must be named exactly ${SkillFileName}` })
    }
  }

  const loadSkill = (folder: ReadonlyArray<string>, key: string, directory: string) =>
    Effect.gen(function*() {
      const skillPath = [...prefix, ...base, ...folder]
      const uri = yield* Effect.fromResult(SkillUri.skillMd(scheme, skillPath))
      const mine = members.get(directory === "." ? "" : directory)!
      // Refuse an oversized skill from its file sizes, before reading gigabytes into memory.
      const tooLarge = Limits.violations(mine.length, mine.reduce((sum, file) => sum + file.size, 0), limits)
      if (tooLarge.length > 0) {
        return yield* new Manifest.InvalidSkill({
          uri,
          problems: tooLarge.map((violation) => ({ reason: `${Limits.describe(violation)} (R16)` }))
        })
      }
      const contents = yield* readSkill(state, mine, folder)
      const previous = state.good.get(key)
      // A file whose bytes are the very buffer of the last good version keeps its digest.
      const known = new Map(previous?.manifest.files.map((file) => [file.path, file]))
      if (
        previous !== undefined && previous.manifest.uri === uri && previous.manifest.files.length === contents.length &&
        contents.every((file) => known.get(file.path)?.bytes === file.bytes)
      ) return previous
      const inputs = contents.map((file) => {
        const before = known.get(file.path)
        return before !== undefined && before.bytes === file.bytes ? { ...file, digest: before.digest } : file
      })
      const hashed = inputs.filter((file) => file.digest === undefined)
      state.stats = {
        ...state.stats,
        hashedFiles: state.stats.hashedFiles + hashed.length,
        hashedBytes: state.stats.hashedBytes + hashed.reduce((sum, file) => sum + file.bytes.byteLength, 0)
      }
      const manifest = yield* Effect.fromResult(Manifest.make({ uri, files: inputs, limits }))
      return { directory, path: skillPath, files: manifest.files, manifest } satisfies LoadedSkill
    })

  // Skills are read side by side (each reading its files side by side): what they share is the
  // file cache and the counters, both updated synchronously.
  const results = yield* Effect.forEach(skillFolders, (folder) => {
    const directory = folder.length === 0 ? "." : folder.join("/")
    const key = `${rootIndex}\n${directory}`
    return Effect.map(Effect.result(loadSkill(folder, key, directory)), (result) => ({ key, directory, result }))
  }, { concurrency: SkillConcurrency })

  const skills: Array<LoadedSkill> = []
  const skipped: Array<InvalidSkillDirectory> = []
  const kept: Array<{ readonly skill: LoadedSkill; readonly problem: InvalidSkillDirectory }> = []
  const present = new Set<string>()
  for (const { key, directory, result } of results) {
    present.add(key)
    if (result._tag === "Success") {
      skills.push(result.success)
      state.good.set(key, result.success)
      continue
    }
    const problem = new InvalidSkillDirectory({ directory, error: result.failure })
    const last = state.good.get(key)
    if (last === undefined) skipped.push(problem)
    else kept.push({ skill: last, problem })
  }
  // A folder that is gone is no longer a skill: its last good version goes with it.
  for (const key of state.good.keys()) {
    if (key.startsWith(`${rootIndex}\n`) && !present.has(key)) state.good.delete(key)
  }

  if (options.strict === true && skipped.length + kept.length > 0) {
    return yield* new InvalidSkills({ root, invalid: [...skipped, ...kept.map((entry) => entry.problem)] })
  }
  for (const entry of kept) skills.push(entry.skill)
  skills.sort((a, b) => a.manifest.skill.uri < b.manifest.skill.uri ? -1 : a.manifest.skill.uri > b.manifest.skill.uri ? 1 : 0)
  return { skills, skipped, ignored: [...ignored, ...hints], kept: kept.map((entry) => entry.problem) }
})

/**
 * Loads every skill under `root` (see the module description). Fails with `SourceDirectoryError` when
 * the root cannot be used, and in `strict` mode with `InvalidSkills` when any skill folder is invalid.
 *
 * @since 0.1.0
 */
export const load = Effect.fnUntraced(function*(root: string, options: Options = {}) {
  const { skills, skipped, ignored } = yield* loadWith(emptyState(), 0, root, options)
  return { skills, skipped, ignored } satisfies Loaded
})

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
 * A `Source` over one or more roots. `log` receives the problem lines of `definitions`
 * (default: `Effect.logWarning`).
 *
 * @since 0.1.0
 */
export const make = Effect.fnUntraced(function*(
  roots: ReadonlyArray<Root>,
  options: { readonly log?: ((line: string) => Effect.Effect<void>) | undefined } = {}
) {
  const services = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
  const state = emptyState()
  let reported = new Map<string, string>()
  let reportedIgnored = new Map<string, string>()
  const lock = yield* Semaphore.make(1)
  const log = options.log ?? ((line: string) => Effect.logWarning(line))
  const scanAll = Effect.gen(function*() {
    const results: Array<{ root: Root; loaded: Loaded & { readonly kept: ReadonlyArray<InvalidSkillDirectory> } }> = []
    for (const [index, root] of roots.entries()) {
      results.push({ root, loaded: yield* loadWith(state, index, root.path, root) })
    }
    state.stats = { ...state.stats, scans: state.stats.scans + 1 }
    const owners = new Map<string, string>()
    const definitions: Array<Skill.Static> = []
    for (const { root, loaded } of results) {
      for (const skill of loaded.skills) {
        const place = `${root.path}/${skill.directory}`
        const other = owners.get(skill.manifest.uri)
        if (other !== undefined) return yield* new UriCollision({ uri: skill.manifest.uri, first: other, second: place })
        owners.set(skill.manifest.uri, place)
        definitions.push(Skill.fromFiles(skill, { scheme: root.scheme, cacheHint: root.cacheHint }))
      }
    }
    const problems = new Map<string, string>()
    for (const [index, { loaded }] of results.entries()) {
      const prefix = roots.length === 1 ? "" : `${roots[index]!.path}: `
      for (const invalid of loaded.skipped) {
        problems.set(`${index}\n${invalid.directory}`, `${prefix}${describeProblem(invalid)}; not served`)
      }
      for (const invalid of loaded.kept) {
        problems.set(`${index}\n${invalid.directory}`, `${prefix}${describeProblem(invalid)}; still serving the last good version`)
      }
    }
    const newProblems = [...problems].filter(([key, line]) => reported.get(key) !== line).map(([, line]) => line)
    const fixed = [...reported.keys()].filter((key) => !problems.has(key)).map((key) => {
      const [index, directory] = key.split("\n") as [string, string]
      return roots.length === 1 ? directory : `${roots[Number(index)]!.path}/${directory}`
    })
    reported = problems
    const ignored = new Map<string, string>()
    for (const [index, { loaded }] of results.entries()) {
      const prefix = roots.length === 1 ? "" : `${roots[index]!.path}/`
      for (const entry of loaded.ignored) ignored.set(`${index}\n${entry.path}`, `ignored ${prefix}${entry.path}: ${entry.reason}`)
    }
    const newIgnored = [...ignored].filter(([key, line]) => reportedIgnored.get(key) !== line).map(([, line]) => line)
    reportedIgnored = ignored
    return {
      roots: results.map(({ root, loaded }) => ({ root, loaded: { skills: loaded.skills, skipped: loaded.skipped, ignored: loaded.ignored } })),
      definitions,
      newProblems,
      fixed,
      newIgnored
    } satisfies Scan
  }).pipe(
    Effect.provideContext(services),
    // One scan at a time: the file cache and the last good versions are shared.
    Semaphore.withPermits(lock, 1)
  )
  const check = Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const missed: Array<string> = []
    for (const [index, root] of roots.entries()) {
      const realRoot = yield* fs.realPath(path.resolve(root.path)).pipe(
        Effect.mapError((error) => new SourceDirectoryError({ path: root.path, reason: describe(error) }))
      )
      const before = new Map((state.walked.get(index) ?? []).map((file) => [file.absolute, file]))
      for (const file of (yield* scan(realRoot)).files) {
        const last = before.get(file.absolute)
        before.delete(file.absolute)
        if (last === undefined || !sameStamp(last, file)) missed.push(file.absolute)
      }
      missed.push(...before.keys())
    }
    const racy = [...state.files].filter(([, file]) => file.racy).map(([absolute]) => absolute)
    return { missed, racy }
  }).pipe(Effect.provideContext(services), Semaphore.withPermits(lock, 1))
  return {
    roots,
    scan: scanAll,
    definitions: Effect.gen(function*() {
      const result = yield* scanAll
      for (const line of result.newProblems) yield* log(line)
      for (const directory of result.fixed) yield* log(`${directory}: valid again, serving the new version`)
      for (const line of result.newIgnored) yield* log(line)
      return result.definitions
    }),
    stats: Effect.sync(() => state.stats),
    check
  } satisfies Source
})

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
  const path = yield* Path.Path
  const registry = yield* SkillRegistry.SkillRegistry
  const onReload = options.onReload ?? describeReload
  yield* Watcher.run({
    roots: source.roots.map((root) => path.resolve(root.path)),
    reload: () => Effect.flatMap(Effect.exit(registry.reload), onReload),
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
