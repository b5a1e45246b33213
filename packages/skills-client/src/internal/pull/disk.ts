/**
 * What is installed below the target compared with the lock file, before a pull says `unchanged`
 * or replaces or removes a skill: a file edited, deleted or added there since it was pulled is
 * never overwritten unnoticed. Every entry is `lstat`ed, never followed, and the work is bounded
 * by what the lock file records.
 */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Stream from "effect/Stream"
import { Digest } from "@mcp-skills/core"
import type { Lock, LockSkill } from "../../LockFile.js"
import { type Edits, type Error, MaxDepth, PullError, UnsafePath } from "../../PullError.js"
import { reasonOf } from "../systemError.js"
import { infoAt } from "./paths.js"

/**
 * Entries a skill's folder may hold beyond what a pull wrote there before the check stops
 * looking: enough to name what an editor or a user left, few enough that a folder of millions
 * costs no more than a pull.
 */
export const MaxUnrecordedEntries = 1_000

export const noEdits: Edits = { modified: [], missing: [], added: [], truncated: false }

export const isEdited = (edits: Edits) =>
  edits.modified.length + edits.missing.length + edits.added.length > 0 || edits.truncated

/** Every file path (below the target) the lock file records, whichever skill and server. */
export const recordedPaths = (lock: Lock): ReadonlySet<string> => {
  const paths = new Set<string>()
  for (const skill of lock.skills) for (const file of skill.files) paths.add(`${skill.path}/${file.path}`)
  return paths
}

const readError = (path: string) => (error: PlatformError.PlatformError) =>
  new PullError({ check: "local", file: path, detail: `cannot read ${path}: ${reasonOf(error)}` })

/**
 * The digest of the `size` bytes at `path`, or undefined when it holds another number of bytes
 * (it changed since it was `lstat`ed): read in chunks, never more than `size + 1` bytes.
 */
const digestOf = (path: string, size: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const hasher = yield* fs.stream(path, { bytesToRead: size + 1 }).pipe(
      Stream.runFold(() => Digest.hasher(), (hasher, chunk) => hasher.update(chunk)),
      Effect.mapError(readError(path))
    )
    return hasher.size() === size ? hasher.digest() : undefined
  })

/**
 * Compares the folder of `record` with it: every regular file found (`lstat`, breadth first, at
 * most the entries the record's files need plus {@link MaxUnrecordedEntries}), each recorded file
 * by size and then by digest. A link or anything but a folder or a regular file is refused with
 * {@link UnsafePath}, as a pull never writes through or over one. `recorded` are every path the
 * lock file records: a file another record names (a nested skill's) is not added.
 */
export const inspect = (
  into: string,
  record: LockSkill,
  recorded: ReadonlySet<string>
): Effect.Effect<Edits, Error, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const found = new Map<string, number>()
    // Folders deeper than a pull writes files: nothing recorded is down there.
    const deep: Array<string> = []
    let truncated = false
    if ((yield* infoAt(Path.join(into, ...record.path.split("/")))) !== undefined) {
      // Each recorded file costs its depth in entries (its folders and itself).
      let budget = MaxUnrecordedEntries
      for (const file of record.files) budget += file.path.split("/").length
      const queue: Array<string> = [record.path]
      for (let next = 0; next < queue.length && !truncated; next++) {
        const folder = queue[next]!
        const dir = Path.join(into, ...folder.split("/"))
        const names = yield* fs.readDirectory(dir).pipe(Effect.mapError(readError(dir)))
        for (const name of names.sort()) {
          if (--budget < 0) {
            truncated = true
            break
          }
          const relative = `${folder}/${name}`
          const path = Path.join(dir, name)
          const info = yield* infoAt(path)
          if (info === undefined) continue
          if (info.type === "Directory") {
            if (relative.split("/").length >= MaxDepth) deep.push(`${relative}/`)
            else queue.push(relative)
          } else if (info.type === "File") {
            found.set(relative, Number(info.size))
          } else {
            return yield* new UnsafePath({ path, found: info.type, expected: "regular file" })
          }
        }
      }
    }
    const modified: Array<string> = []
    const missing: Array<string> = []
    for (const file of record.files) {
      const relative = `${record.path}/${file.path}`
      const size = found.get(relative)
      if (size === undefined) missing.push(relative)
      else if (size !== file.size) modified.push(relative)
      else if ((yield* digestOf(Path.join(into, ...relative.split("/")), size)) !== file.digest) modified.push(relative)
    }
    const added = [...[...found.keys()].filter((path) => !recorded.has(path)), ...deep]
    return { modified, missing, added, truncated }
  })
