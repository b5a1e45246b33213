/**
 * A committed pull recorded in the project's `skills-lock.json` (`SkillsLock`): each skill it
 * installed or updated in the flat layout under its folder name, with the folder's
 * `computedHash`; one it pruned, or moved to another folder, no longer under the old name. Only
 * entries this server wrote are replaced or removed. The pull is done by then: a lock file that
 * cannot be read or written is said in the log, and leaves the pull as it is.
 */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type { Plan } from "../../PullModel.js"
import * as SkillsLock from "../../SkillsLock.js"

/** What the lock file needs of each outcome of a pull (`Pull.Outcome`). */
interface Done {
  readonly _tag: string
  readonly path: string
  readonly movedFrom?: string | undefined
}

/** Records the outcomes of `planned`'s commit in its project's lock file. */
export const record = (planned: Plan, outcomes: ReadonlyArray<Done>): Effect.Effect<void, never, FileSystem.FileSystem> => {
  const project = planned.skillsLock
  if (project === undefined) return Effect.void
  return Effect.gen(function*() {
    const before = yield* SkillsLock.read(project)
    const hashes = new Map<string, string>()
    const dropped = new Set<string>()
    for (const outcome of outcomes) {
      // The CLI knows a skill by its folder right below the host's: the flat layout.
      if (outcome.path.includes("/")) continue
      const ours = SkillsLock.isFrom(before.skills[outcome.path], planned.origin)
      const changed = outcome._tag === "Added" || outcome._tag === "Updated" || outcome._tag === "Restored"
      if (changed || outcome._tag === "Unchanged" && !ours) {
        hashes.set(outcome.path, yield* SkillsLock.computedHash(Path.join(planned.into, outcome.path)))
      }
      if (outcome._tag === "Pruned") dropped.add(outcome.path)
      if (outcome._tag === "Updated" && outcome.movedFrom !== undefined) dropped.add(outcome.movedFrom)
    }
    yield* SkillsLock.update(project, (skills) => {
      const next: Record<string, Readonly<Record<string, unknown>>> = {}
      for (const [name, entry] of Object.entries(skills)) {
        if (!(dropped.has(name) && SkillsLock.isFrom(entry, planned.origin))) next[name] = entry
      }
      for (const [name, computedHash] of hashes) {
        const entry = next[name]
        // A name another tool recorded is its own: a pull does not write into a folder it did not make.
        if (entry !== undefined && !SkillsLock.isFrom(entry, planned.origin)) continue
        next[name] = { source: planned.origin, sourceType: SkillsLock.SourceType, computedHash }
      }
      return next
    })
  }).pipe(Effect.catch((error) => Effect.logWarning(`${Path.join(project, SkillsLock.FileName)} not updated: ${error.message}`)))
}
