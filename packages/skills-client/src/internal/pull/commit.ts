/**
 * The last step of a pull: what moves where (staged skills into place, replaced and pruned ones
 * into the staging folder's trash) and the new lock file, run as one journaled transaction.
 */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import { type Error, PullError, UnsafePath } from "../../PullError.js"
import { type Lock, LockFileName, type LockSkill } from "../../LockFile.js"
import { type Op, run } from "./journal.js"
import { readLock, typeAt, writeError } from "./paths.js"
import type { Plan, Staged } from "../../PullModel.js"

const byOriginAndUri = (a: LockSkill, b: LockSkill) =>
  a.origin === b.origin ? (a.uri < b.uri ? -1 : 1) : a.origin < b.origin ? -1 : 1

// The lock file after the pull: staged skills replace their records, pruned ones lose theirs, and
// an unchanged skill keeps its record with the signer that verified it now (--accept-signer).
const nextLock = (planned: Plan, staged: ReadonlyArray<Staged>): Lock => {
  const replaced = new Set(staged.map((s) => s.lock.uri))
  const pruned = new Set(planned.prune ? planned.gone.map((record) => record.uri) : [])
  const unchanged = new Map(planned.steps.filter((step) => step.action === "unchanged").map((step) => [step.skill.uri as string, step]))
  const kept = planned.lock.skills
    .filter((s) => !(s.origin === planned.origin && (replaced.has(s.uri) || pruned.has(s.uri))))
    .map((s) => {
      const step = s.origin === planned.origin ? unchanged.get(s.uri) : undefined
      if (step === undefined || step.signer === s.signer) return s
      const { signer: _, ...rest } = s
      return step.signer === undefined ? rest : { ...rest, signer: step.signer }
    })
  return { version: 1, skills: [...kept, ...staged.map((s) => s.lock)].sort(byOriginAndUri) }
}

// The folder of `path` nearest above it that `folders` holds, if any.
const within = (folders: ReadonlySet<string>, path: string) => {
  for (let at = path.lastIndexOf("/"); at > 0; at = path.lastIndexOf("/", at - 1)) {
    if (folders.has(path.slice(0, at))) return true
  }
  return false
}

// Every move and new folder of the commit, in order, each path checked now with `lstat` (and
// again by the journal right before it is used): a link on the way is refused before anything moves.
const changes = (planned: Plan, staged: ReadonlyArray<Staged>, next: Lock, stagingName: string) =>
  Effect.gen(function*() {
    const { into } = planned
    const at = (relative: string) => Path.join(into, ...relative.split("/"))
    const trash = `${stagingName}/.replaced`
    const ops: Array<Op> = [{ _tag: "MakeDirectory", path: trash }]
    let trashed = 0
    const made = new Set<string>()
    // The folders above `folder`, each one there (a folder, not a link) or made.
    const parents = (folder: string) =>
      Effect.gen(function*() {
        const segments = folder.split("/")
        for (let depth = 1; depth < segments.length; depth++) {
          const parent = segments.slice(0, depth).join("/")
          if (made.has(parent)) continue
          const type = yield* typeAt(at(parent))
          if (type === undefined) {
            ops.push({ _tag: "MakeDirectory", path: parent })
            made.add(parent)
          } else if (type !== "Directory") {
            return yield* new UnsafePath({ path: at(parent), found: type, expected: "directory" })
          }
        }
      })
    // Pruned first: what stays inside a pruned folder moves back before an update replaces it.
    if (planned.prune) {
      const remaining = next.skills.map((s) => s.path).sort()
      const keep = new Set(remaining)
      const gone = new Set(planned.gone.map((record) => record.path))
      for (const record of planned.gone) {
        // Inside a skill that stays, or one pruned with it: its files go with that folder.
        if (within(keep, record.path) || within(gone, record.path)) continue
        const type = yield* typeAt(at(record.path))
        if (type === undefined) continue
        if (type !== "Directory") return yield* new UnsafePath({ path: at(record.path), found: type, expected: "directory" })
        yield* parents(record.path)
        const away = `${trash}/${trashed++}`
        ops.push({ _tag: "Move", from: record.path, to: away })
        const inside = new Set<string>()
        for (const path of remaining) {
          if (!path.startsWith(`${record.path}/`) || within(inside, path)) continue
          inside.add(path)
          const segments = path.split("/")
          for (let depth = record.path.split("/").length; depth < segments.length; depth++) {
            const folder = segments.slice(0, depth).join("/")
            if (made.has(folder)) continue
            ops.push({ _tag: "MakeDirectory", path: folder })
            made.add(folder)
          }
          if ((yield* typeAt(at(path))) !== undefined) {
            ops.push({ _tag: "Move", from: `${away}/${path.slice(record.path.length + 1)}`, to: path })
          }
        }
      }
    }
    for (const { step } of staged) {
      if (step.action === "nested") continue
      // Pulled before into another folder (another layout or prefix): the old one goes.
      const before = step.previous?.path
      if (before !== undefined && before !== step.folder) {
        const type = yield* typeAt(at(before))
        if (type !== undefined && type !== "Directory") return yield* new UnsafePath({ path: at(before), found: type, expected: "directory" })
        if (type !== undefined) ops.push({ _tag: "Move", from: before, to: `${trash}/${trashed++}` })
      }
      yield* parents(step.folder)
      const type = yield* typeAt(at(step.folder))
      if (type !== undefined && (type !== "Directory" || step.action === "add" || before !== step.folder)) {
        return yield* new UnsafePath({ path: at(step.folder), found: type, expected: "directory" })
      }
      if (type !== undefined) ops.push({ _tag: "Move", from: step.folder, to: `${trash}/${trashed++}` })
      ops.push({ _tag: "Move", from: `${stagingName}/${step.folder}`, to: step.folder })
    }
    return ops
  })

export const commit = Effect.fnUntraced(function*(
  planned: Plan,
  staged: ReadonlyArray<Staged>,
  staging: string
): Effect.fn.Return<void, Error, FileSystem.FileSystem> {
  const fs = yield* FileSystem.FileSystem
  const next = nextLock(planned, staged)
  const read = JSON.stringify(planned.lock)
  // Nothing to move and the lock file as it is: nothing is written.
  if (staged.length === 0 && JSON.stringify(next) === read) return
  const ops = yield* changes(planned, staged, next, Path.basename(staging))
  const temp = Path.join(staging, LockFileName)
  yield* fs.writeFileString(temp, JSON.stringify(next, null, 2) + "\n").pipe(Effect.mapError(writeError(temp)))
  // Another pull that committed into the target since this one read the lock file would lose its
  // records to this one's: checked once this commit is announced, so two never both go ahead.
  const unchanged = Effect.flatMap(readLock(planned.into), (now) =>
    JSON.stringify(now) === read ? Effect.void : Effect.fail(
      new PullError({
        check: "busy",
        file: Path.join(planned.into, LockFileName),
        detail: `${Path.join(planned.into, LockFileName)} changed since this pull read it (another pull committed); nothing was changed, pull again`
      })
    ))
  yield* run(planned.into, staging, ops, unchanged)
})
