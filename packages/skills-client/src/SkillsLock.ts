/**
 * The lock file of the `npx skills` CLI (npm `skills`, read at 1.7.4): `skills-lock.json` at the
 * root of a project, `{ version: 1, skills: { NAME: { source, sourceType, ..., computedHash } } }`,
 * one entry per skill folder it installed there (`.agents/skills/NAME`, ...). A pull into a host's
 * project folder (`Choices.skillsLock`, `pull --host` and `sync --host` with the project scope)
 * records its skills there too, beside its own `mcp-skills.lock.json`, so that `npx skills list`
 * names where they came from, and `mcp-skills status` shows the skills that CLI installed.
 *
 * Our entries have `sourceType: "mcp"` and no `skillPath`: that CLI's `update` then counts them
 * among the skills it cannot update in place, and its `experimental_sync` prunes only skills it
 * synced itself, so neither replaces them; every other entry is kept exactly as it was.
 *
 * @since 0.2.0
 */
import * as Path from "node:path"
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"

/**
 * The lock file's name, at the project's root.
 *
 * @since 0.2.0
 * @category constants
 */
export const FileName = "skills-lock.json"

/**
 * The `sourceType` of the skills a pull installs (the CLI has no type for an MCP server).
 *
 * @since 0.2.0
 * @category constants
 */
export const SourceType = "mcp"

/**
 * What every entry holds: where the skill came from, and the hash of its folder when installed.
 * The CLI's own entries hold more (`sourceUrl`, `ref`, `skillPath`, ...), kept as they are.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Entry = Schema.Struct({
  source: Schema.String,
  sourceType: Schema.String,
  computedHash: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * A lock file: its entries by skill folder name, each as the file holds it.
 *
 * @since 0.2.0
 * @category models
 */
export interface Lock {
  readonly version: number
  readonly skills: Readonly<Record<string, Readonly<Record<string, unknown>>>>
}

/**
 * A `skills-lock.json` that is not one (not JSON, no numeric `version` of at least 1, no `skills`
 * object), or larger than a lock file: it is left as it is, rather than overwritten.
 *
 * @since 0.2.0
 * @category errors
 */
export class SkillsLockError extends Schema.TaggedError<SkillsLockError>()("SkillsLockError", {
  path: Schema.String,
  problem: Schema.String
}) {
  override get message(): string {
    return `${this.path} is left as it is: ${this.problem}`
  }
}

// The largest lock file read: far more entries than any project installs.
const MaxBytes = 16 * 1024 * 1024

const Shape = Schema.Struct({
  version: Schema.Number.check(Schema.isGreaterThanOrEqualTo(1)),
  skills: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown))
})

/** The files of a folder the hash covers: every regular file below it, `.git` and `node_modules` left out. */
const collect = (
  fs: FileSystem.FileSystem,
  base: string,
  dir: string,
  out: Array<{ readonly relativePath: string; readonly path: string }>
): Effect.Effect<void, PlatformError.PlatformError> =>
  Effect.flatMap(fs.readDirectory(dir), (names) =>
    Effect.forEach(names, (name) => {
      const path = Path.join(dir, name)
      return Effect.flatMap(fs.lstat(path), (info) => {
        if (info.type === "Directory") return name === ".git" || name === "node_modules" ? Effect.void : collect(fs, base, path, out)
        if (info.type === "File") out.push({ relativePath: Path.relative(base, path).split(Path.sep).join("/"), path })
        return Effect.void
      })
    }, { discard: true }))

/**
 * The `computedHash` of a skill folder as the CLI computes it (`computeSkillFolderHash`): SHA-256
 * over its files sorted by relative path (`localeCompare`, as it sorts), each path (UTF-8) then its
 * bytes, no separators; links are neither followed nor hashed, `.git` and `node_modules` left out.
 *
 * @example
 * ```ts
 * import { NodeServices } from "@effect/platform-node"
 * import { SkillsLock } from "@mcp-skills/client"
 * import { Effect } from "effect"
 *
 * // What `npx skills` would record for .agents/skills/notes.
 * const hash = SkillsLock.computedHash(".agents/skills/notes").pipe(Effect.provide(NodeServices.layer))
 * ```
 *
 * @since 0.2.0
 * @category hashing
 */
export const computedHash = (dir: string): Effect.Effect<string, PlatformError.PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const files: Array<{ readonly relativePath: string; readonly path: string }> = []
    yield* collect(fs, dir, dir, files)
    files.sort((a, b) => a.relativePath.localeCompare(b.relativePath))
    const hash = createHash("sha256")
    for (const file of files) {
      hash.update(file.relativePath)
      hash.update(yield* fs.readFile(file.path))
    }
    return hash.digest("hex")
  })

/**
 * The lock file of the project at `project`: an empty one where there is none.
 *
 * @since 0.2.0
 * @category reading
 */
export const read = (project: string): Effect.Effect<Lock, SkillsLockError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = Path.join(project, FileName)
    const refuse = (problem: string) => new SkillsLockError({ path, problem })
    const info = yield* fs.lstat(path).pipe(
      Effect.map((info): FileSystem.File.Info | undefined => info),
      Effect.catchIf((error) => error.reason._tag === "NotFound", () => Effect.succeed(undefined)),
      Effect.mapError((error) => refuse(error.message))
    )
    if (info === undefined) return { version: 1, skills: {} }
    if (info.type !== "File") return yield* refuse(`a ${info.type}, not a regular file`)
    if (Number(info.size) > MaxBytes) return yield* refuse(`${info.size} bytes, more than a lock file holds`)
    const text = yield* fs.readFileString(path).pipe(Effect.mapError((error) => refuse(error.message)))
    return yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Shape))(text).pipe(
      Effect.mapError(() => refuse("not a lock file of npx skills ({ version: 1, skills: { ... } })"))
    )
  })

/**
 * Rewrites the project's lock file with `f` of its entries, as the CLI writes it (entries sorted
 * by name, two-space JSON and a newline), through a file renamed over it; nothing is written when
 * nothing changes.
 *
 * @since 0.2.0
 * @category writing
 */
export const update = (
  project: string,
  f: (skills: Lock["skills"]) => Lock["skills"]
): Effect.Effect<void, SkillsLockError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = Path.join(project, FileName)
    const lock = yield* read(project)
    const next = f(lock.skills)
    const sorted = Object.fromEntries(Object.keys(next).sort().map((name) => [name, next[name]!]))
    if (JSON.stringify(sorted) === JSON.stringify(lock.skills)) return
    const text = JSON.stringify({ version: lock.version, skills: sorted }, null, 2) + "\n"
    const temporary = `${path}.${process.pid}.tmp`
    yield* fs.writeFileString(temporary, text).pipe(
      Effect.andThen(fs.rename(temporary, path)),
      Effect.mapError((error) => new SkillsLockError({ path, problem: error.message }))
    )
  })

/**
 * Whether an entry is one a pull from `origin` wrote.
 *
 * @since 0.2.0
 * @category models
 */
export const isFrom = (entry: Readonly<Record<string, unknown>> | undefined, origin: string): boolean =>
  entry !== undefined && entry["sourceType"] === SourceType && entry["source"] === origin
