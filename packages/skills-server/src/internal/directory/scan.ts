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
import { describeError, type Stamp, under } from "./stamps.js"

/** An entry left out, with the reason; `path` relative to the root, `/`-separated. */
export interface Left {
  readonly path: string
  readonly reason: string
}

/** One entry: a folder to walk, a file to serve (with its stamp, its target's for a link), or left out. */
export type Entry =
  | { readonly _tag: "Directory" }
  | { readonly _tag: "File"; readonly stamp: Stamp }
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

/**
 * What the entry at `relative` is; `listed` is its type from the folder listing, if known. A link
 * to a file is read through its own path (`under(realRoot, relative)`), as every file is.
 */
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
      return stats === undefined ? { _tag: "Gone" } : { _tag: "File", stamp: stats }
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
    if (target.isFile()) return { _tag: "File", stamp: target }
    return { _tag: "Ignored", reason: "symbolic link to something that is not a regular file" }
  }
  return { _tag: "Ignored", reason: `not a regular file (${kind})` }
}

/** What a walk found, besides the files it handed over one by one. */
export interface Walked {
  /** How many files. */
  files: number
  readonly ignored: Array<Left>
  /** Every folder walked, the start included. */
  readonly folders: Array<string>
}

// System calls between two yields to the scheduler: a few milliseconds of work.
const CallsPerYield = 512

/**
 * Walks the folder at `relative` (`""` for the root) and everything visible below it, handing each
 * file to `onFile` with its path relative to the root and its stamp. A folder below the start that
 * is removed while the walk runs is simply gone; the start folder failing is a
 * `SourceDirectoryError` unless `startMayBeGone`.
 */
export const walk = Effect.fnUntraced(function*(
  realRoot: string,
  onFile: (relative: string, stamp: Stamp) => void,
  relative = "",
  startMayBeGone = false
) {
  const out: Walked = { files: 0, ignored: [], folders: [] }
  const pending = [relative]
  let calls = 0
  while (pending.length > 0) {
    const folder = pending.pop()!
    const directory = under(realRoot, folder)
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
      // Joined into one flat string, not concatenated: a concatenation is a rope that keeps its
      // parts (the folder's path, the entry's name) alive as long as the path is kept.
      const path = folder === "" ? entry.name : [folder, entry.name].join("/")
      const found = classify(realRoot, path, entry)
      switch (found._tag) {
        case "Directory":
          pending.push(path)
          break
        case "File":
          out.files++
          onFile(path, found.stamp)
          break
        case "Ignored":
          out.ignored.push({ path, reason: found.reason })
          break
        case "Gone":
          break
      }
    }
    calls += entries.length + 1
    if (calls >= CallsPerYield) {
      calls = 0
      yield* Effect.yieldNow
    }
  }
  return out
})
