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
import { Lock, LockFileName } from "../../LockFile.js"

const isNotFound = (error: PlatformError.PlatformError) => error.reason._tag === "NotFound"

export const writeError = (path: string) => (error: PlatformError.PlatformError) =>
  new PullError({ check: "write", file: path, detail: `cannot write ${path}: ${error.message}` })

// The type of `path` without following a link at it, or undefined when nothing is there.
export const typeAt = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.lstat(path).pipe(
      Effect.map((info): FileSystem.File.Type | undefined => info.type),
      Effect.catchIf(isNotFound, () => Effect.succeed(undefined)),
      Effect.mapError(writeError(path))
    )
  })

export const readLock = (dir: string): Effect.Effect<Lock, Error, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = Path.join(dir, LockFileName)
    const type = yield* typeAt(path)
    if (type === undefined) return { version: 1 as const, skills: [] }
    if (type !== "File") return yield* new UnsafePath({ path, found: type, expected: "regular file" })
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((e) => new PullError({ check: "lock", file: path, detail: `cannot read ${path}: ${e.message}` }))
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

// A folder about to be replaced holds no link anywhere (a link there would look like a file of
// the skill); only folders and regular files are expected.
export const checkTree = (dir: string): Effect.Effect<void, Error, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(dir).pipe(Effect.mapError(writeError(dir)))
    for (const name of names) {
      const path = Path.join(dir, name)
      const type = yield* typeAt(path)
      if (type === "Directory") yield* checkTree(path)
      else if (type !== undefined && type !== "File") yield* new UnsafePath({ path, found: type, expected: "regular file" })
    }
  })
