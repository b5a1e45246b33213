/**
 * What is on disk below the target, read without following links: a pull refuses to write through
 * one, so every check here is an `lstat`.
 */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Schema from "effect/Schema"
import { type Error, PullError, UnsafePath } from "../../PullError.js"
import { Lock, LockFileName, MaxLockFileBytes } from "../../LockFile.js"
import { reasonOf } from "../systemError.js"

const isNotFound = (error: PlatformError.PlatformError) => error.reason._tag === "NotFound"

export const writeError = (path: string) => (error: PlatformError.PlatformError) =>
  new PullError({ check: "write", file: path, detail: `cannot write ${path}: ${reasonOf(error)}` })

// What is at `path` without following a link at it, or undefined when nothing is there.
export const infoAt = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.lstat(path).pipe(
      Effect.map((info): FileSystem.File.Info | undefined => info),
      Effect.catchIf(isNotFound, () => Effect.succeed(undefined)),
      Effect.mapError(writeError(path))
    )
  })

// The type of `path` without following a link at it, or undefined when nothing is there.
export const typeAt = (path: string) => Effect.map(infoAt(path), (info) => info?.type)

// A folder this pull made, removed again only while it is empty (node's `rm` refuses a folder
// without `recursive`, and what someone put there since is not ours to remove).
export const removeIfEmpty = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if ((yield* fs.readDirectory(path)).length === 0) yield* fs.remove(path, { recursive: true })
  }).pipe(Effect.ignore)

export const readLock = (dir: string): Effect.Effect<Lock, Error, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = Path.join(dir, LockFileName)
    const info = yield* infoAt(path)
    if (info === undefined) return { version: 1 as const, skills: [] }
    if (info.type !== "File") return yield* new UnsafePath({ path, found: info.type, expected: "regular file" })
    if (Number(info.size) > MaxLockFileBytes) {
      return yield* new PullError({
        check: "lock",
        file: path,
        detail: `${path} holds ${info.size} bytes, more than a lock file a pull writes (at most ${MaxLockFileBytes})`
      })
    }
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((e) => new PullError({ check: "lock", file: path, detail: `cannot read ${path}: ${reasonOf(e)}` }))
    )
    return yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Lock))(text).pipe(
      Effect.mapError((e) => new PullError({ check: "lock", file: path, detail: `${path} is not a lock file: ${e.message}` }))
    )
  })

/**
 * Checks every component of `folder` below `into` without following links: each existing one
 * must be a directory, none a link. Answers whether the last one exists.
 */
export const checkPath = (into: string, folder: string) =>
  Effect.gen(function*() {
    const segments = folder.split("/")
    let path = into
    for (const segment of segments) {
      path = Path.join(path, segment)
      const type = yield* typeAt(path)
      if (type === undefined) return false
      if (type !== "Directory") return yield* new UnsafePath({ path, found: type, expected: "directory" })
    }
    return true
  })
