/**
 * The walk: which entries under a root are files to serve, and which are left out and why.
 *
 * One `readdir` with file types per folder; a `stat` per regular file for its stamp, and for
 * symbolic links their real path and target. Symbolic links to folders are not followed, so a link
 * can neither loop nor make one file appear under two paths; links to files are served under their
 * own path when their real path is inside the root and not hidden. Hidden entries (a name starting
 * with `.`) and everything below them are skipped.
 */
import { SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { SourceDirectoryError } from "../../DirectoryModel.js"
import { describeError, type Found, stampOf } from "./stamps.js"

/** An entry left out, with the reason; `path` relative to the root, `/`-separated. */
export interface Left {
  readonly path: string
  readonly reason: string
}

/** One entry: a folder to walk, a file to serve, or left out. */
export type Entry =
  | { readonly _tag: "Directory" }
  | { readonly _tag: "File"; readonly found: Found }
  | { readonly _tag: "Ignored"; readonly reason: string }
  | { readonly _tag: "Gone" }

const kindOf = (entry: NodeFs.Dirent | NodeFs.Stats) =>
  entry.isFile()
    ? "File"
    : entry.isDirectory()
    ? "Directory"
    : entry.isSymbolicLink()
    ? "SymbolicLink"
    : entry.isFIFO()
    ? "FIFO"
    : entry.isSocket()
    ? "Socket"
    : entry.isBlockDevice()
    ? "BlockDevice"
    : entry.isCharacterDevice()
    ? "CharacterDevice"
    : "Unknown"

/** True when `real` is strictly inside `realRoot` and no segment of it is hidden. */
const insideVisible = (realRoot: string, real: string) => {
  const relative = NodePath.relative(realRoot, real)
  if (relative === "" || relative.startsWith("..") || NodePath.isAbsolute(relative)) return false
  return !relative.split(NodePath.sep).some(SkillUri.isHidden)
}

/** What the entry at `relative` is; `listed` is its type from the folder listing, if known. */
// `relative` is `/`-separated and has no `.` or `..` segment: where `/` is the separator, joining
// is concatenating, without `path.join`'s normalization of every one of 80,000 paths.
export const under = NodePath.sep === "/"
  ? (realRoot: string, relative: string) => relative === "" ? realRoot : realRoot === "/" ? `/${relative}` : `${realRoot}/${relative}`
  : NodePath.join

export const classify = (realRoot: string, relative: string, listed?: NodeFs.Dirent): Entry => {
  const absolute = under(realRoot, relative)
  let kind = listed === undefined ? undefined : kindOf(listed)
  if (kind === undefined || kind === "Unknown") {
    const stats = NodeFs.lstatSync(absolute, { throwIfNoEntry: false })
    if (stats === undefined) return { _tag: "Gone" }
    kind = kindOf(stats)
  }
  if (kind === "Directory") return { _tag: "Directory" }
  if (kind === "File") {
    try {
      const stats = NodeFs.statSync(absolute, { throwIfNoEntry: false })
      return stats === undefined ? { _tag: "Gone" } : { _tag: "File", found: { relative, absolute, stamp: stampOf(stats) } }
    } catch (error) {
      return { _tag: "Ignored", reason: `cannot stat: ${describeError(error)}` }
    }
  }
  if (kind === "SymbolicLink") {
    let real: string
    let target: NodeFs.Stats
    try {
      real = NodeFs.realpathSync(absolute)
      target = NodeFs.statSync(real)
    } catch (error) {
      return {
        _tag: "Ignored",
        reason: (error as NodeJS.ErrnoException).code === "ELOOP" ? "symbolic link loop" : "broken symbolic link"
      }
    }
    if (!insideVisible(realRoot, real)) return { _tag: "Ignored", reason: "symbolic link to a path outside the root or hidden" }
    if (target.isDirectory()) return { _tag: "Ignored", reason: "symbolic link to a folder (not followed)" }
    if (target.isFile()) return { _tag: "File", found: { relative, absolute, stamp: stampOf(target) } }
    return { _tag: "Ignored", reason: "symbolic link to something that is not a regular file" }
  }
  return { _tag: "Ignored", reason: `not a regular file (${kind})` }
}

/** What a walk found. */
export interface Walked {
  readonly files: Array<Found>
  readonly ignored: Array<Left>
  /** Every folder walked, the start included. */
  readonly folders: Array<string>
}

// System calls between two yields to the scheduler: a few milliseconds of work.
const CallsPerYield = 512

/**
 * Walks the folder at `relative` (`""` for the root) and everything visible below it. A folder
 * below the start that is removed while the walk runs is simply gone; the start folder failing is
 * a `SourceDirectoryError` unless `startMayBeGone`.
 */
export const walk = Effect.fnUntraced(function*(realRoot: string, relative = "", startMayBeGone = false) {
  const out: Walked = { files: [], ignored: [], folders: [] }
  const pending = [relative]
  let calls = 0
  while (pending.length > 0) {
    const folder = pending.pop()!
    const directory = NodePath.join(realRoot, folder)
    let entries: Array<NodeFs.Dirent>
    try {
      entries = NodeFs.readdirSync(directory, { withFileTypes: true })
    } catch (error) {
      const gone = (error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR"
      if (gone && (folder !== relative || startMayBeGone)) continue
      return yield* new SourceDirectoryError({ path: directory, reason: describeError(error) })
    }
    out.folders.push(folder)
    for (const entry of entries) {
      if (SkillUri.isHidden(entry.name)) continue
      const path = folder === "" ? entry.name : `${folder}/${entry.name}`
      const found = classify(realRoot, path, entry)
      if (found._tag === "Directory") pending.push(path)
      else if (found._tag === "File") out.files.push(found.found)
      else if (found._tag === "Ignored") out.ignored.push({ path, reason: found.reason })
    }
    calls += entries.length + 1
    if (calls >= CallsPerYield) {
      calls = 0
      yield* Effect.yieldNow
    }
  }
  return out
})
