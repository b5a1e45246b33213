/** The last step of a pull: staged skills and the new lock file renamed into place, undone on failure. */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import type * as Scope from "effect/Scope"
import { type Error, UnsafePath } from "../../PullError.js"
import { type Lock, LockFileName } from "../../LockFile.js"
import { typeAt, writeError } from "./paths.js"
import type { Plan, Staged } from "../../Pull.js"

export const commit = Effect.fnUntraced(function*(
  planned: Plan,
  staged: ReadonlyArray<Staged>,
  staging: string
): Effect.fn.Return<void, Error, FileSystem.FileSystem> {
  const fs = yield* FileSystem.FileSystem
  const { into } = planned
  const undo: Array<Effect.Effect<void, PlatformError.PlatformError>> = []
  const run = Effect.gen(function*() {
    const trash = Path.join(staging, ".replaced")
    yield* fs.makeDirectory(trash).pipe(Effect.mapError(writeError(trash)))
    for (const [index, { step }] of staged.entries()) {
      if (step.action === "nested") continue
      const target = Path.join(into, step.folder)
      // Parents one at a time, each checked: a link created since the plan is refused here.
      const segments = step.folder.split("/")
      let parent = into
      for (const segment of segments.slice(0, -1)) {
        parent = Path.join(parent, segment)
        const type = yield* typeAt(parent)
        if (type === undefined) {
          const dir = parent
          yield* fs.makeDirectory(dir).pipe(Effect.mapError(writeError(dir)))
          undo.push(fs.remove(dir))
        } else if (type !== "Directory") {
          return yield* new UnsafePath({ path: parent, found: type, expected: "directory" })
        }
      }
      const type = yield* typeAt(target)
      if (type !== undefined && (type !== "Directory" || step.action === "add")) {
        return yield* new UnsafePath({ path: target, found: type, expected: "directory" })
      }
      if (type !== undefined) {
        const old = Path.join(trash, String(index))
        yield* fs.rename(target, old).pipe(Effect.mapError(writeError(target)))
        undo.push(fs.rename(old, target))
      }
      const source = Path.join(staging, step.folder)
      yield* fs.rename(source, target).pipe(Effect.mapError(writeError(target)))
      undo.push(fs.rename(target, source))
    }
    const replaced = new Set(staged.map((s) => s.lock.uri))
    // An unchanged skill keeps its record, with the signer that verified it now (--accept-signer).
    const unchanged = new Map(planned.steps.filter((step) => step.action === "unchanged").map((step) => [step.skill.uri as string, step]))
    const kept = planned.lock.skills.filter((s) => !(s.origin === planned.origin && replaced.has(s.uri))).map((s) => {
      const step = s.origin === planned.origin ? unchanged.get(s.uri) : undefined
      if (step === undefined || step.signer === s.signer) return s
      const { signer: _, ...rest } = s
      return step.signer === undefined ? rest : { ...rest, signer: step.signer }
    })
    const next: Lock = {
      version: 1,
      skills: [...kept, ...staged.map((s) => s.lock)].sort((a, b) =>
        a.origin === b.origin ? (a.uri < b.uri ? -1 : 1) : a.origin < b.origin ? -1 : 1
      )
    }
    const lockPath = Path.join(into, LockFileName)
    const temp = Path.join(staging, LockFileName)
    yield* fs.writeFileString(temp, JSON.stringify(next, null, 2) + "\n").pipe(Effect.mapError(writeError(temp)))
    const type = yield* typeAt(lockPath)
    if (type !== undefined && type !== "File") return yield* new UnsafePath({ path: lockPath, found: type, expected: "regular file" })
    yield* fs.rename(temp, lockPath).pipe(Effect.mapError(writeError(lockPath)))
  })
  yield* run.pipe(
    Effect.tapError(() => Effect.forEach(undo.reverse(), (step) => Effect.ignore(step), { discard: true }))
  )
})

// The staging folder, removed with the scope; the target itself too when this pull created it
// and it is empty again (a failed first pull leaves no trace).
export const stagingFolder = (into: string): Effect.Effect<string, Error, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const existed = (yield* typeAt(into)) !== undefined
    if (!existed) {
      yield* Effect.acquireRelease(
        fs.makeDirectory(into, { recursive: true }).pipe(Effect.mapError(writeError(into))),
        () => Effect.ignore(fs.remove(into))
      )
    }
    return yield* Effect.acquireRelease(
      fs.makeTempDirectory({ directory: into, prefix: ".mcp-skills-staging-" }).pipe(Effect.mapError(writeError(into))),
      (dir) => Effect.ignore(fs.remove(dir, { recursive: true, force: true }))
    )
  })
