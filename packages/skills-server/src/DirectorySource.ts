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
 * Files are read once, at load time: later edits are not seen until the next `load`.
 *
 * A skill that fails validation (`Manifest.make` of `@mcp-skills/core`: frontmatter, name equals
 * folder name, URI rules, limits) is reported in `skipped` with its typed error while the others are
 * loaded, or fails the whole load in `strict` mode.
 *
 * @since 0.1.0
 */
import { Limits, Manifest, SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"
import * as Skill from "./Skill.js"
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

interface FoundFile {
  readonly segments: ReadonlyArray<string>
  readonly absolute: string
  readonly size: number
}

interface Scan {
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
// regular file, or a link to one, whose real path is inside `realRoot` and not hidden.
const scan = Effect.fnUntraced(function*(realRoot: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const files: Array<FoundFile> = []
  const ignored: Array<Ignored> = []

  const isInsideVisible = (real: string) => {
    const relative = path.relative(realRoot, real)
    if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return false
    return !relative.split(path.sep).some(isHidden)
  }

  const visit = (segments: ReadonlyArray<string>): Effect.Effect<void, SourceDirectoryError> =>
    Effect.gen(function*() {
      const directory = path.join(realRoot, ...segments)
      const entries = yield* fs.readDirectoryEntries(directory).pipe(
        Effect.mapError((error) => new SourceDirectoryError({ path: directory, reason: describe(error) }))
      )
      const sorted = [...entries].filter((entry) => !isHidden(entry.name)).sort((a, b) => a.name < b.name ? -1 : 1)
      for (const entry of sorted) {
        const childSegments = [...segments, entry.name]
        const absolute = path.join(directory, entry.name)
        const shown = childSegments.join("/")
        let type = entry.type
        if (type === "Unknown") {
          type = yield* fs.stat(absolute).pipe(Effect.map((info) => info.type), Effect.orElseSucceed(() => "Unknown" as const))
        }
        if (type === "Directory") {
          yield* visit(childSegments)
        } else if (type === "File") {
          const info = yield* fs.stat(absolute).pipe(Effect.result)
          if (info._tag === "Success") files.push({ segments: childSegments, absolute, size: Number(info.success.size) })
          else ignored.push({ path: shown, reason: `cannot stat: ${describe(info.failure)}` })
        } else if (type === "SymbolicLink") {
          const target = yield* Effect.result(
            Effect.flatMap(fs.realPath(absolute), (real) => Effect.map(fs.stat(real), (info) => ({ real, info })))
          )
          if (target._tag === "Failure") {
            ignored.push({ path: shown, reason: "broken symbolic link" })
          } else if (!isInsideVisible(target.success.real)) {
            ignored.push({ path: shown, reason: "symbolic link to a path outside the root or hidden" })
          } else if (target.success.info.type === "Directory") {
            ignored.push({ path: shown, reason: "symbolic link to a folder (not followed)" })
          } else if (target.success.info.type === "File") {
            files.push({ segments: childSegments, absolute, size: Number(target.success.info.size) })
          } else {
            ignored.push({ path: shown, reason: "symbolic link to something that is not a regular file" })
          }
        } else {
          ignored.push({ path: shown, reason: `not a regular file (${type})` })
        }
      }
    })

  yield* visit([])
  return { files, ignored } satisfies Scan
})

const startsWith = (segments: ReadonlyArray<string>, prefix: ReadonlyArray<string>) =>
  prefix.length <= segments.length && prefix.every((segment, i) => segments[i] === segment)

/**
 * Loads every skill under `root` (see the module description). Fails with `SourceDirectoryError` when
 * the root cannot be used, and in `strict` mode with `InvalidSkills` when any skill folder is invalid.
 *
 * @since 0.1.0
 */
export const load = Effect.fnUntraced(function*(root: string, options: Options = {}) {
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

  // A SKILL.md at the root makes the root a skill named after its folder; every other skill then
  // sits below that name, as if the parent folder had been loaded.
  const rootIsSkill = files.some((file) => file.segments.length === 1 && file.segments[0] === SkillFileName)
  const base = rootIsSkill ? [path.basename(path.resolve(root))] : []

  const skillFolders = files
    .filter((file) => file.segments[file.segments.length - 1] === SkillFileName)
    .map((file) => file.segments.slice(0, -1))

  // A "skill.md" outside every skill is almost certainly a skill with a misspelt file name.
  const hints: Array<Ignored> = files
    .filter((file) => {
      const name = file.segments[file.segments.length - 1]!
      return name !== SkillFileName && name.toLowerCase() === "skill.md" &&
        !skillFolders.some((folder) => startsWith(file.segments, folder))
    })
    .map((file) => ({ path: file.segments.join("/"), reason: `not a skill: the file must be named exactly ${SkillFileName}` }))

  // Files shared by nested skills are read once.
  const cache = new Map<string, Uint8Array>()
  const read = (file: FoundFile) => {
    const cached = cache.get(file.absolute)
    if (cached !== undefined) return Effect.succeed(cached)
    return fs.readFile(file.absolute).pipe(
      Effect.tap((bytes) => Effect.sync(() => cache.set(file.absolute, bytes))),
      Effect.mapError((error) => new UnreadableFile({ path: file.segments.join("/"), reason: describe(error) }))
    )
  }

  const skills: Array<LoadedSkill> = []
  const skipped: Array<InvalidSkillDirectory> = []
  for (const folder of skillFolders) {
    const directory = folder.length === 0 ? "." : folder.join("/")
    const result = yield* Effect.result(Effect.gen(function*() {
      const skillPath = [...prefix, ...base, ...folder]
      const uri = yield* Effect.fromResult(SkillUri.skillMd(scheme, skillPath))
      const members = files.filter((file) => startsWith(file.segments, folder))
      // Refuse an oversized skill from its file sizes, before reading gigabytes into memory.
      const tooLarge = Limits.violations(members.length, members.reduce((sum, file) => sum + file.size, 0), limits)
      if (tooLarge.length > 0) {
        return yield* new Manifest.InvalidSkill({
          uri,
          problems: tooLarge.map((violation) => ({ reason: `${Limits.describe(violation)} (R16)` }))
        })
      }
      const contents = yield* Effect.forEach(members, (file) =>
        Effect.map(read(file), (bytes) => ({ path: file.segments.slice(folder.length).join("/"), bytes })))
      const manifest = yield* Effect.fromResult(Manifest.make({ uri, files: contents, limits }))
      return { directory, path: skillPath, files: manifest.files, manifest } satisfies LoadedSkill
    }))
    if (result._tag === "Success") skills.push(result.success)
    else skipped.push(new InvalidSkillDirectory({ directory, error: result.failure }))
  }

  if (options.strict === true && skipped.length > 0) {
    return yield* new InvalidSkills({ root, invalid: skipped })
  }
  skills.sort((a, b) => a.manifest.skill.uri < b.manifest.skill.uri ? -1 : a.manifest.skill.uri > b.manifest.skill.uri ? 1 : 0)
  return { skills, skipped, ignored: [...ignored, ...hints] } satisfies Loaded
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
