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
import * as Disk from "./internal/pull/disk.js"
import * as Journal from "./internal/pull/journal.js"
import * as Names from "./internal/pull/names.js"
import * as Paths from "./internal/pull/paths.js"
import * as Planning from "./internal/pull/plan.js"
import * as SkillsLockRecord from "./internal/pull/skillsLock.js"
import * as Staging from "./internal/pull/stage.js"
import type { Choices, Layout, Plan, Progress, Refused, Staged } from "./PullModel.js"
import type { Lock } from "./LockFile.js"
import type { Edits, Error, PullError, UnsafeName } from "./PullError.js"
import type * as SkillsClient from "./SkillsClient.js"

/**
 * The folder of `skill` below the target in `layout`, `/`-separated.
 *
 * @since 0.1.0
 * @category pulling
 */
export const folderOf: (skill: Skill.Skill, layout?: Layout) => string = Names.folderOf

/**
 * Reads the lock file of a folder; a missing file is an empty lock. Anything but a regular file
 * there is refused before it is opened.
 *
 * @since 0.1.0
 * @category pulling
 */
export const readLock: (dir: string) => Effect.Effect<Lock, Error, FileSystem.FileSystem> = Paths.readLock

/**
 * Finishes what a pull killed while committing left in `dir` (the journal in its staging folder):
 * undone when the lock file was not renamed into place yet, otherwise only cleaned up, so the lock
 * file and the folders agree again. {@link plan} runs it first; a pull still committing in another
 * process fails it with `PullInProgress`.
 *
 * @since 0.1.0
 * @category pulling
 */
export const recover: (dir: string) => Effect.Effect<void, Error, FileSystem.FileSystem> = Journal.recover

/**
 * Step 1: the entries to pull. A broken listing fails here, before anything is read or written,
 * and so does `prune` without `all`. With `all` an invalid entry fails it too; {@link pull} leaves
 * such an entry out instead, and names it.
 *
 * @since 0.1.0
 * @category pulling
 */
export const select = (
  client: SkillsClient.Service,
  options: Pick<Options, "uris" | "all" | "prune">
): Effect.Effect<ReadonlyArray<Skill.Skill>, PullError> =>
  Effect.flatMap(Planning.select(client, options), ({ refused, selected }) =>
    refused.length === 0 ? Effect.succeed(selected) : Effect.fail(refused[0]!.error))

/**
 * Step 2: everything the entries, the lock file and the folder show, for every skill, before any
 * file is read (R17): limits, folder clashes, signers, changes since the last pull on the server
 * and on disk (every installed file against the lock file: size, then digest), links on the way,
 * and with `all` the skills the server serves no more (asked with `skills/get` first). With `all`
 * a skill whose entry fails a check of its own (its signature, its limits) is left out, in the
 * plan's `refused`, rather than failing the plan.
 *
 * @since 0.1.0
 * @category pulling
 */
export const plan: (
  client: SkillsClient.Service,
  selected: ReadonlyArray<Skill.Skill>,
  options: Omit<Options, "uris" | "onProgress">
) => Effect.Effect<Plan, Error, FileSystem.FileSystem> = Planning.plan

/**
 * Step 3: reads every file of every skill to add or update, verified, into `staging` (a fresh
 * folder inside the target, so the commit's renames stay on one file system). SKILL.md first:
 * no other file of a skill is requested until it passed. With the plan's `all`, a skill whose
 * file fails verification (a digest, a size, its frontmatter) is `refused` and the others staged;
 * otherwise it fails the step.
 *
 * @since 0.1.0
 * @category pulling
 */
export const stage: (
  client: SkillsClient.Service,
  planned: Plan,
  staging: string,
  onProgress?: Options["onProgress"]
) => Effect.Effect<
  { readonly staged: ReadonlyArray<Staged>; readonly refused: ReadonlyArray<Refused> },
  PullError | UnsafeName,
  FileSystem.FileSystem
> = Staging.stage

/**
 * Step 4: moves every staged skill into place (an accepted older copy, and a pruned skill, into the
 * staging folder's trash) and renames the new lock file over the old one, as one transaction: the
 * moves are journaled before the first, every path is checked again right before it is used, a
 * failure undoes the moves done so far, newest first, and an interrupt waits for the end. A killed
 * process leaves the journal for {@link recover}.
 *
 * @since 0.1.0
 * @category pulling
 */
export const commit: (
  planned: Plan,
  staged: ReadonlyArray<Staged>,
  staging: string
) => Effect.Effect<void, Error, FileSystem.FileSystem> = Committing.commit


/**
 * What a pull did to one skill. `Updated` lists the file uris added, removed and changed on the
 * server, and `local` what changed on disk and was overwritten; `Restored` put back the files of a
 * skill unchanged on the server. `Gone` is a skill pulled from this server before that it serves no
 * more, left in place; `Pruned` one removed, folder and lock record.
 *
 * @since 0.1.0
 * @category models
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
    readonly local: Edits
    /** The folder it was in before, when it moved (another layout or prefix). */
    readonly movedFrom: string | undefined
  }
  | {
    readonly _tag: "Restored"
    readonly uri: string
    readonly path: string
    readonly files: number
    readonly bytes: number
    readonly local: Edits
  }
  | { readonly _tag: "Unchanged"; readonly uri: string; readonly path: string }
  /** A skill inside another selected skill, verified and recorded in the lock; its files came with `within`. */
  | { readonly _tag: "Nested"; readonly uri: string; readonly path: string; readonly within: string }
  | { readonly _tag: "Gone"; readonly uri: string; readonly path: string }
  | { readonly _tag: "Pruned"; readonly uri: string; readonly path: string }

/**
 * What a pull did, per selected skill in selection order, then per skill gone from the server;
 * and with `all`, the skills it left out, each with why (none were installed or changed).
 *
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  readonly skills: ReadonlyArray<Outcome>
  readonly refused: ReadonlyArray<Refused>
}

/**
 * @since 0.1.0
 * @category options
 */
export interface Options extends Choices {
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
 * `mcp-skills.lock.json` are left as they were; the lock file is renamed into place last. A killed
 * process leaves its journal, and the next pull undoes or finishes that commit first ({@link recover}).
 * With `all`, a skill that fails verification (an invalid entry, a signature, a file's digest or
 * size) is left out and named in `refused`, and the others are installed as one commit: one bad
 * skill of a catalogue does not keep the rest out.
 *
 * Nothing changed on disk since the last pull is overwritten unnoticed: a file edited, deleted or
 * added below an installed skill fails the pull with `LocalChanges` unless `overwriteLocal`, and a
 * skill the lock file pins to a signer changes only under `trust` (`SignerMismatch`).
 *
 * A pull never writes through a symbolic link: every path component below the target is checked
 * with `lstat` in the plan and again just before the commit, a link anywhere on the way, at a skill
 * folder or inside one is refused with `PullError.UnsafePath`, and the lock file must be a regular
 * file, checked before it is opened (a FIFO would block the reader). Names are checked from the
 * entries before anything is written: no hidden segment, no deeper than `PullError.MaxDepth`, no two
 * names one file system could take for one (`PullError.UnsafeName`).
 *
 * @example
 * ```ts
 * import { NodeServices } from "@effect/platform-node"
 * import { Pull, SkillsClient } from "@mcp-skills/client"
 * import { Console, Effect } from "effect"
 *
 * // Every skill of the server into ./vendor-skills, all or nothing, with mcp-skills.lock.json.
 * const install = Effect.gen(function*() {
 *   const client = yield* SkillsClient.SkillsClient
 *   const { skills } = yield* Pull.pull(client, { into: "./vendor-skills", all: true })
 *   for (const outcome of skills) yield* Console.log(outcome._tag, outcome.uri)
 * }).pipe(Effect.provide(NodeServices.layer))
 * ```
 *
 * @since 0.1.0
 * @category pulling
 */
export const pull = (
  client: SkillsClient.Service,
  options: Options
): Effect.Effect<Summary, Error, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const { refused, selected } = yield* Planning.select(client, options)
    return yield* apply(client, yield* Planning.plan(client, selected, options, refused), options.onProgress)
  }).pipe(McpTelemetry.span("mcp_skills.pull"))

// Files and folder as the lock file records them already: a "dynamic" skill read again unchanged.
const sameAsBefore = ({ step, lock }: Staged) =>
  step.previous !== undefined && step.previous.path === lock.path && step.action === "update" && !Disk.isEdited(step.local) &&
  step.previous.signer === lock.signer &&
  step.previous.files.length === lock.files.length &&
  step.previous.files.every((file, i) => file.uri === lock.files[i]!.uri && file.digest === lock.files[i]!.digest)

/**
 * Steps 3 and 4 of a planned pull, and what they did: {@link stage} into a fresh staging folder
 * (removed at the end, whatever happens), then {@link commit}. A skill read again exactly as the
 * lock file records it (a `"dynamic"` one that did not change) is `Unchanged` and not moved; a
 * pull that changes nothing writes nothing.
 *
 * @since 0.1.0
 * @category pulling
 */
export const apply = (
  client: SkillsClient.Service,
  planned: Plan,
  onProgress?: Options["onProgress"]
): Effect.Effect<Summary, Error, FileSystem.FileSystem> =>
  Effect.scoped(Effect.gen(function*() {
    const staging = yield* Journal.stagingFolder(planned.into)
    const { refused, staged: verified } = yield* stage(client, planned, staging, onProgress)
    const staged = verified.filter((s) => !sameAsBefore(s))
    yield* commit(planned, staged, staging)
    const byUri = new Map(staged.map((s) => [s.lock.uri, s]))
    const left = new Set(refused.map((refusal) => refusal.uri))
    const skills = planned.steps.filter((step) => !left.has(step.skill.uri)).map((step): Outcome => {
      const { uri } = step.skill
      if (step.action === "nested") {
        const within = planned.steps.find((outer) => outer.action !== "nested" && step.folder.startsWith(outer.folder + "/"))
        // The outermost selected skill around it is never nested itself.
        return { _tag: "Nested", uri, path: step.folder, within: within!.skill.uri }
      }
      const done = byUri.get(uri)
      if (step.action === "unchanged" || done === undefined) return { _tag: "Unchanged", uri, path: step.folder }
      const counts = { uri, path: step.folder, files: done.lock.files.length, bytes: done.bytes }
      switch (step.action) {
        case "add":
          return { _tag: "Added", ...counts }
        case "restore":
          return { _tag: "Restored", ...counts, local: step.local }
        case "update":
          return {
            _tag: "Updated",
            ...counts,
            ...Planning.diffFiles(step.previous?.files ?? [], done.lock.files),
            local: step.local,
            movedFrom: step.previous !== undefined && step.previous.path !== step.folder ? step.previous.path : undefined
          }
      }
    })
    for (const record of planned.gone) skills.push({ _tag: planned.prune ? "Pruned" : "Gone", uri: record.uri, path: record.path })
    yield* SkillsLockRecord.record(planned, skills)
    return { skills, refused: [...planned.refused, ...refused] }
  }))
