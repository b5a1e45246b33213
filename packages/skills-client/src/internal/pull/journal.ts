/**
 * The one way a pull changes its target: a list of folder moves and new folders, written to a
 * journal in the staging folder before the first is made, then the new lock file renamed over the
 * old one (the commit point). A failure undoes what was done, newest first; a pull killed midway
 * leaves its journal, and the next pull into the folder undoes it, or finishes it when the lock
 * file was renamed already ({@link recover}).
 */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { type Error, PullError, PullInProgress, UnsafePath } from "../../PullError.js"
import { LockFileName } from "../../LockFile.js"
import { removeIfEmpty, typeAt, writeError } from "./paths.js"

// A staging folder carries the id of the process that made it: one that still runs is another
// pull, whose folder is left alone.
const StagingPrefix = ".mcp-skills-staging-"
const JournalName = "journal.json"

// Relative to the target, `/`-separated, never leaving it: a journal is read back from disk.
const Inside = Schema.String.check(
  Schema.makeFilter((path: string) =>
    path.split("/").every((segment) => segment.length > 0 && segment !== "." && segment !== "..") ||
    "a path inside the target"
  )
)

/** One change to the target, relative to it. */
export const Op = Schema.Union([
  Schema.TaggedStruct("MakeDirectory", { path: Inside }),
  Schema.TaggedStruct("Move", { from: Inside, to: Inside })
])

export type Op = typeof Op.Type

const Journal = Schema.fromJsonString(Schema.Struct({ version: Schema.Literal(1), ops: Schema.Array(Op) }))

const absolute = (into: string, relative: string) => Path.join(into, ...relative.split("/"))

const isRunning = (pid: number) => {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * A fresh staging folder inside the target (so every move stays on one file system), removed
 * with the scope; the target itself too when this pull created it and it is empty again (a
 * failed first pull leaves no trace).
 */
export const stagingFolder = (into: string): Effect.Effect<string, Error, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if ((yield* typeAt(into)) === undefined) {
      yield* Effect.acquireRelease(
        fs.makeDirectory(into, { recursive: true }).pipe(Effect.mapError(writeError(into))),
        () => removeIfEmpty(into)
      )
    }
    return yield* Effect.acquireRelease(
      fs.makeTempDirectory({ directory: into, prefix: `${StagingPrefix}${process.pid}-` }).pipe(Effect.mapError(writeError(into))),
      (dir) => Effect.ignore(fs.remove(dir, { recursive: true, force: true }))
    )
  })

// Each op checks, right before it, what it relies on: a link or a file that appeared since the
// plan is refused, never written through.
const apply = (into: string, op: Op) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (op._tag === "MakeDirectory") {
      const path = absolute(into, op.path)
      return yield* fs.makeDirectory(path).pipe(Effect.mapError(writeError(path)))
    }
    const from = absolute(into, op.from)
    const to = absolute(into, op.to)
    const type = yield* typeAt(from)
    if (type !== "Directory") {
      return yield* type === undefined
        ? new PullError({ check: "write", file: from, detail: `${from} went away during the pull` })
        : new UnsafePath({ path: from, found: type, expected: "directory" })
    }
    const segments = op.to.split("/")
    for (let depth = 1; depth < segments.length; depth++) {
      const parent = absolute(into, segments.slice(0, depth).join("/"))
      const found = yield* typeAt(parent)
      if (found !== "Directory") {
        return yield* found === undefined
          ? new PullError({ check: "write", file: parent, detail: `${parent} went away during the pull` })
          : new UnsafePath({ path: parent, found, expected: "directory" })
      }
    }
    const there = yield* typeAt(to)
    if (there !== undefined) {
      return yield* there === "SymbolicLink"
        ? new UnsafePath({ path: to, found: there, expected: "directory" })
        : new PullError({ check: "write", file: to, detail: `${to} appeared during the pull; nothing was replaced` })
    }
    yield* fs.rename(from, to).pipe(Effect.mapError(writeError(to)))
  })

// Newest first; each step undone only when the disk shows it done, so a journal whose last step
// never happened (or happened twice over) is undone all the same.
const undo = (into: string, ops: ReadonlyArray<Op>): Effect.Effect<void, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    for (const op of [...ops].reverse()) {
      if (op._tag === "MakeDirectory") {
        yield* removeIfEmpty(absolute(into, op.path))
        continue
      }
      const from = absolute(into, op.from)
      const to = absolute(into, op.to)
      const done = Effect.all([typeAt(to), typeAt(from)]).pipe(
        Effect.map(([there, left]) => there !== undefined && left === undefined),
        Effect.orElseSucceed(() => false)
      )
      if (yield* done) yield* Effect.ignore(fs.rename(to, from))
    }
  })

// A pull of another process still running that is committing into `into` (its journal written),
// other than the one staging in `own`.
const committingElsewhere = (into: string, own: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(into).pipe(Effect.mapError(writeError(into)))
    for (const name of names) {
      if (!name.startsWith(StagingPrefix) || name === own) continue
      const pid = Number(name.slice(StagingPrefix.length).split("-")[0])
      if (isRunning(pid) && (yield* typeAt(Path.join(into, name, JournalName))) === "File") return pid
    }
    return undefined
  })

/**
 * Applies `ops` in order, then renames `staging/mcp-skills.lock.json` over the target's lock
 * file; uninterruptible, and a failure undoes every op made. The journal goes first, so a killed
 * process leaves what {@link recover} needs. Two pulls never commit into one target at once: each
 * writes its journal, then looks for another's (of a process still running), and the one that
 * finds one withdraws with {@link PullInProgress} (both may; neither goes ahead unseen); then
 * `check` (the lock file is still the one planned with) runs before the first op.
 */
export const run = (
  into: string,
  staging: string,
  ops: ReadonlyArray<Op>,
  check: Effect.Effect<void, Error, FileSystem.FileSystem> = Effect.void
): Effect.Effect<void, Error, FileSystem.FileSystem> =>
  Effect.uninterruptible(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const journal = Path.join(staging, JournalName)
    const written = `${journal}.tmp`
    yield* fs.writeFileString(written, JSON.stringify({ version: 1, ops }) + "\n").pipe(Effect.mapError(writeError(written)))
    yield* fs.rename(written, journal).pipe(Effect.mapError(writeError(journal)))
    const other = yield* committingElsewhere(into, Path.basename(staging))
    const withdraw = Effect.ignore(fs.remove(journal))
    if (other !== undefined) {
      yield* withdraw
      return yield* new PullInProgress({ path: into, pid: other })
    }
    yield* Effect.tapError(check, () => withdraw)
    let done = 0
    yield* Effect.gen(function*() {
      for (const op of ops) {
        yield* apply(into, op)
        done++
      }
      const lockPath = Path.join(into, LockFileName)
      const type = yield* typeAt(lockPath)
      if (type !== undefined && type !== "File") return yield* new UnsafePath({ path: lockPath, found: type, expected: "regular file" })
      yield* fs.rename(Path.join(staging, LockFileName), lockPath).pipe(Effect.mapError(writeError(lockPath)))
    }).pipe(Effect.tapError(() => undo(into, ops.slice(0, done))))
  }))

/**
 * Finishes what a killed pull left in `into`: a staging folder whose process no longer runs is
 * undone when its lock file was not renamed into place yet (the lock file still describes the
 * folders as they were), and removed. A pull still running elsewhere is left alone, unless it is
 * committing: then this pull fails with {@link PullInProgress} and changes nothing.
 */
export const recover = (into: string): Effect.Effect<void, Error, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if ((yield* typeAt(into)) !== "Directory") return
    const names = yield* fs.readDirectory(into).pipe(Effect.mapError(writeError(into)))
    for (const name of names.filter((name) => name.startsWith(StagingPrefix)).sort()) {
      const staging = Path.join(into, name)
      if ((yield* typeAt(staging)) !== "Directory") continue
      const journal = Path.join(staging, JournalName)
      const committing = (yield* typeAt(journal)) === "File"
      const pid = Number(name.slice(StagingPrefix.length).split("-")[0])
      if (isRunning(pid)) {
        if (committing) return yield* new PullInProgress({ path: into, pid })
        continue
      }
      if (committing && (yield* typeAt(Path.join(staging, LockFileName))) === "File") {
        const text = yield* fs.readFileString(journal).pipe(Effect.mapError(writeError(journal)))
        const { ops } = yield* Schema.decodeUnknownEffect(Journal)(text).pipe(
          Effect.mapError((e) =>
            new PullError({
              check: "lock",
              file: journal,
              detail: `${journal} (left by an interrupted pull) cannot be read back: ${e.message}; compare the folder with ${LockFileName}, then remove ${staging}`
            })
          )
        )
        yield* undo(into, ops)
      }
      yield* fs.remove(staging, { recursive: true }).pipe(Effect.mapError(writeError(staging)))
    }
  })
