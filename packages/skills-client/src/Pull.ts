/**
 * Installs skills from a server into a local folder, all or nothing, in four steps: {@link select},
 * {@link plan}, {@link stage}, {@link commit}. The file system is effect's `FileSystem` service.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import { McpTelemetry, type Skill } from "@mcp-skills/core"
import * as Committing from "./internal/pull/commit.js"
import * as Paths from "./internal/pull/paths.js"
import * as Planning from "./internal/pull/plan.js"
import * as Staging from "./internal/pull/stage.js"
import type { Lock, LockSkill } from "./LockFile.js"
import type { Error, PullError, UnsafeName } from "./PullError.js"
import type * as SkillsClient from "./SkillsClient.js"

/**
 * Reads the lock file of a folder; a missing file is an empty lock. Anything but a regular file
 * there is refused before it is opened.
 *
 * @since 0.1.0
 */
export const readLock: (dir: string) => Effect.Effect<Lock, Error, FileSystem.FileSystem> = Paths.readLock

/**
 * Step 1: the entries to pull. A broken listing fails here, before anything is read or written.
 *
 * @since 0.1.0
 */
export const select: (
  client: SkillsClient.Service,
  options: Pick<Options, "uris" | "all">
) => Effect.Effect<ReadonlyArray<Skill.Skill>, PullError> = Planning.select

/**
 * Step 2: everything the entries, the lock file and the folder show, for every skill, before any
 * file is read (R17): limits, folder clashes, changes since the last pull, links on the way.
 *
 * @since 0.1.0
 */
export const plan: (
  client: SkillsClient.Service,
  selected: ReadonlyArray<Skill.Skill>,
  options: Pick<Options, "into" | "acceptChanges" | "acceptSigner">
) => Effect.Effect<Plan, Error, FileSystem.FileSystem> = Planning.plan

/**
 * Step 3: reads every file of every skill to add or update, verified, into `staging` (a fresh
 * folder inside the target, so the commit's renames stay on one file system). SKILL.md first:
 * no other file of a skill is requested until it passed.
 *
 * @since 0.1.0
 */
export const stage: (
  client: SkillsClient.Service,
  planned: Plan,
  staging: string,
  onProgress?: Options["onProgress"]
) => Effect.Effect<ReadonlyArray<Staged>, PullError | UnsafeName, FileSystem.FileSystem> = Staging.stage

/**
 * Step 4: moves every staged skill into place (an accepted older copy into the staging folder's
 * trash) and renames the new lock file over the old one. Every path is checked again right before
 * it is used; a failure undoes the renames done so far, newest first.
 *
 * @since 0.1.0
 */
export const commit: (
  planned: Plan,
  staged: ReadonlyArray<Staged>,
  staging: string
) => Effect.Effect<void, Error, FileSystem.FileSystem> = Committing.commit


/**
 * One skill of a plan. `Nested` skills lie inside another selected skill, whose manifest already
 * holds their files (R101): verified against their own entry but not placed separately.
 *
 * @since 0.1.0
 */
export interface Step {
  readonly skill: Skill.Skill
  readonly folder: string
  readonly action: "add" | "update" | "unchanged" | "nested"
  readonly previous: LockSkill | undefined
  /** The trusted signer the lock file will record (the client checked its signature). */
  readonly signer: string | undefined
}

/**
 * A pull decided from the entries, the lock file and the folder, before any file is read.
 *
 * @since 0.1.0
 */
export interface Plan {
  readonly into: string
  readonly origin: string
  readonly lock: Lock
  readonly steps: ReadonlyArray<Step>
}

/**
 * How many bytes of a skill's files have arrived, of `total` (0 for a `"dynamic"` skill).
 *
 * @since 0.1.0
 */
export interface Progress {
  readonly skill: string
  readonly bytes: number
  readonly total: number
}

/**
 * One skill verified into the staging folder.
 *
 * @since 0.1.0
 */
export interface Staged {
  readonly step: Step
  readonly bytes: number
  readonly lock: LockSkill
}

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
 * folder or inside one is refused with `PullError.UnsafePath`, and the lock file must be a regular
 * file, checked before it is opened (a FIFO would block the reader). Names are checked from the
 * entries before anything is written: no hidden segment, no deeper than `PullError.MaxDepth`, no two
 * names one file system could take for one (`PullError.UnsafeName`).
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
    const staging = yield* Committing.stagingFolder(planned.into)
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
        : { _tag: "Updated", ...counts, ...Planning.diffFiles(step.previous.files, done.lock.files) }
    })
    return { skills }
  })).pipe(McpTelemetry.span("mcp_skills.pull"))
