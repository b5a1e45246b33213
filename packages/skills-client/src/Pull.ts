/**
 * Installs skills from a server into a local folder, all or nothing, in four steps: {@link select},
 * {@link plan}, {@link stage}, {@link commit}. The file system is effect's `FileSystem` service.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as SkillsClient from "./SkillsClient.js"
import { commit, stagingFolder } from "./internal/pull/commit.js"
import type { Error } from "./internal/pull/errors.js"
import { diffFiles, plan, select } from "./internal/pull/plan.js"
import { type Progress, stage } from "./internal/pull/stage.js"

export { commit } from "./internal/pull/commit.js"
export { Check, type Error, MaxDepth, NameProblem, PullError, toPullError, UnsafeName, UnsafePath } from "./internal/pull/errors.js"
export { Lock, LockFileName } from "./internal/pull/lock.js"
export { readLock } from "./internal/pull/paths.js"
export { type Plan, plan, select, type Step } from "./internal/pull/plan.js"
export { type Progress, stage, type Staged } from "./internal/pull/stage.js"

/**
 * What a pull did to one skill. `Updated` lists the file uris added, removed and changed.
 *
 * @since 0.1.0
 */
export type Outcome =
  | { readonly _tag: "Added"; readonly uri: string; readonly path: string; readonly files: number; readonly bytes: number }
  | {
    readonly _tag: "Updated"
    readonly uri: string
    readonly path: string
    readonly files: number
    readonly bytes: number
    readonly added: ReadonlyArray<string>
    readonly removed: ReadonlyArray<string>
    readonly changed: ReadonlyArray<string>
  }
  | { readonly _tag: "Unchanged"; readonly uri: string; readonly path: string }
  /** A skill inside another selected skill, verified and recorded in the lock; its files came with `within`. */
  | { readonly _tag: "Nested"; readonly uri: string; readonly path: string; readonly within: string }

/**
 * What a pull did, per selected skill in selection order.
 *
 * @since 0.1.0
 */
export interface Summary {
  readonly skills: ReadonlyArray<Outcome>
}

/**
 * @since 0.1.0
 */
export interface Options {
  /** The target folder. */
  readonly into: string
  /** Skill URIs to pull; ignored with `all`. URIs absent from the listing are fetched with `skills/get` (R30). */
  readonly uris?: ReadonlyArray<string> | undefined
  readonly all?: boolean | undefined
  /** Replace skills whose files changed since the last pull. */
  readonly acceptChanges?: boolean | undefined
  /**
   * Accept a skill whose verified signer differs from the one the lock file records (a key
   * rotated, or another author); otherwise such a skill fails the pull with check `signer`.
   */
  readonly acceptSigner?: boolean | undefined
  /** Called as bytes of a skill arrive. */
  readonly onProgress?: ((progress: Progress) => void) | undefined
}

/**
 * Pulls skills into `options.into`: {@link select}, {@link plan}, {@link stage}, {@link commit}.
 *
 * **Details**
 *
 * All or nothing: nothing below the target moves before every selected skill verified, and a
 * failure while committing undoes the renames already done, so the target and
 * `mcp-skills.lock.json` are left as they were; the lock file is renamed into place last. Only a
 * killed process can leave a commit half done, and then the lock file still describes the previous
 * pull.
 *
 * A pull never writes through a symbolic link: every path component below the target is checked
 * with `lstat` in the plan and again just before the commit, a link anywhere on the way, at a skill
 * folder or inside one is refused with {@link UnsafePath}, and the lock file must be a regular
 * file, checked before it is opened (a FIFO would block the reader). Names are checked from the
 * entries before anything is written: no hidden segment, no deeper than {@link MaxDepth}, no two
 * names one file system could take for one ({@link UnsafeName}).
 *
 * @since 0.1.0
 */
export const pull = (
  client: SkillsClient.Service,
  options: Options
): Effect.Effect<Summary, Error, FileSystem.FileSystem> =>
  Effect.scoped(Effect.gen(function*() {
    const selected = yield* select(client, options)
    const planned = yield* plan(client, selected, options)
    const staging = yield* stagingFolder(planned.into)
    const staged = yield* stage(client, planned, staging, options.onProgress)
    yield* commit(planned, staged, staging)
    const byUri = new Map(staged.map((s) => [s.lock.uri, s]))
    const skills = planned.steps.map((step): Outcome => {
      if (step.action === "nested") {
        const within = planned.steps.find((outer) => outer.action !== "nested" && step.folder.startsWith(outer.folder + "/"))
        // The outermost selected skill around it is never nested itself.
        return { _tag: "Nested", uri: step.skill.uri, path: step.folder, within: within!.skill.uri }
      }
      const done = byUri.get(step.skill.uri)
      if (step.action === "unchanged" || done === undefined) return { _tag: "Unchanged", uri: step.skill.uri, path: step.folder }
      const counts = { uri: step.skill.uri, path: step.folder, files: done.lock.files.length, bytes: done.bytes }
      return step.previous === undefined
        ? { _tag: "Added", ...counts }
        : { _tag: "Updated", ...counts, ...diffFiles(step.previous.files, done.lock.files) }
    })
    return { skills }
  }))
