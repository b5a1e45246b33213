/**
 * The model of a pull: where skill folders go below the target (`Layout`), what a pull is asked
 * to do (`Choices`), what it decided before reading a file (`Plan`, `Step`) and what it verified
 * into the staging folder (`Staged`, `Progress`). They live here so that the pull's internals
 * name them without importing the module that runs them (`Pull`).
 *
 * @since 0.1.0
 */
import type { Skill } from "@mcp-skills/core"
import type { Lock, LockSkill } from "./LockFile.js"
import type { Edits, PullError } from "./PullError.js"

/**
 * Where each skill's folder goes below the target. `Tree` (the default): its skill path, under
 * its scheme when that is not `skill` (`acme/billing/refunds`), nested skills inside their outer
 * skill's folder. `Flat`: its name (the last path segment, which is its frontmatter `name`) one
 * level below the target, as agent hosts read skills (`refunds`); the skill's other files keep
 * their paths inside it. A `prefix` (lowercase letters, digits and single hyphens, as a skill
 * name) namespaces the folders: `prefix/...` in a tree, `prefix-refunds` flat. A skill pulled
 * before into another folder moves (an update).
 *
 * @since 0.1.0
 * @category models
 */
export type Layout =
  | { readonly _tag: "Tree"; readonly prefix: string | undefined }
  | { readonly _tag: "Flat"; readonly prefix: string | undefined }

/**
 * The tree layout (see {@link Layout}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const tree = (prefix?: string): Layout => ({ _tag: "Tree", prefix })

/**
 * The flat layout of agent hosts (see {@link Layout}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const flat = (prefix?: string): Layout => ({ _tag: "Flat", prefix })

/**
 * What a pull is asked to do; `Pull.Options` adds the progress callback.
 *
 * @since 0.1.0
 * @category models
 */
export interface Choices {
  /** The target folder. */
  readonly into: string
  /** Skill URIs to pull; ignored with `all`. URIs absent from the listing are fetched with `skills/get` (R30). */
  readonly uris?: ReadonlyArray<string> | undefined
  /** Pull every listed skill, and report the skills pulled from this server before that it serves no more. */
  readonly all?: boolean | undefined
  /** Replace skills whose files changed on the server since the last pull. */
  readonly acceptChanges?: boolean | undefined
  /**
   * Accept a skill whose verified signer differs from the one the lock file records (a key
   * rotated, or another author); otherwise such a skill fails the pull with `SignerMismatch`.
   */
  readonly acceptSigner?: boolean | undefined
  /**
   * Replace (or, pruning, remove) installed files that were edited, deleted or added since they
   * were pulled, restoring the verified source; otherwise such a pull fails with `LocalChanges`
   * naming them, and changes nothing.
   */
  readonly overwriteLocal?: boolean | undefined
  /**
   * With `all`, or for `unlisted`: remove the skills the server serves no more, folder and lock
   * record together.
   */
  readonly prune?: boolean | undefined
  /** Where each skill's folder goes below the target (default the tree of skill paths). */
  readonly layout?: Layout | undefined
  /**
   * Without `all`: skills pulled from this server before that the caller found unlisted; each is
   * asked for with `skills/get`, and gone when not served (removed with `prune`).
   */
  readonly unlisted?: ReadonlyArray<string> | undefined
  /**
   * The project whose `skills-lock.json` (the `npx skills` lock, `SkillsLock`) records the skills
   * of the flat layout this pull installs, updates or prunes, beside `mcp-skills.lock.json`:
   * `pull --host` and `sync --host` set it to the current folder with the project scope.
   */
  readonly skillsLock?: string | undefined
}

/**
 * One skill of a plan. `Nested` skills lie inside another selected skill, whose manifest already
 * holds their files (R101): verified against their own entry but not placed separately. `restore`
 * puts back the files of a skill unchanged on the server whose installed files were changed
 * (`overwriteLocal`); `local` says what changed on disk (nothing for `add` and `nested`). `signer`
 * is the trusted signer the lock file will record.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly skill: Skill.Skill
  readonly folder: string
  readonly action: "add" | "update" | "restore" | "unchanged" | "nested"
  readonly previous: LockSkill | undefined
  readonly signer: string | undefined
  readonly local: Edits
}

/**
 * A skill a pull of every listed skill (`all`) left out, and why: its entry is invalid, or it (or
 * the skill its folder lies in) failed a check of its own, its signature or a file's digest.
 * What it installed before stays, and the others are installed.
 *
 * @since 0.2.0
 * @category models
 */
export interface Refused {
  /** `undefined` for an invalid entry without a URI. */
  readonly uri: string | undefined
  readonly error: PullError
}

/**
 * A pull decided from the entries, the lock file and the folder, before any file is read. `gone`
 * are this server's skills in the lock file that it serves no more (found with `all` only),
 * removed when `prune`. With `all`, `refused` are the skills left out so far (their entries
 * failed); `steps` hold the others.
 *
 * @example
 * ```ts
 * import { NodeServices } from "@effect/platform-node"
 * import { Pull, PullModel, SkillsClient } from "@mcp-skills/client"
 * import { Console, Effect } from "effect"
 *
 * // A dry run: what pulling every skill flat into .claude/skills, as acme-<name>, would do.
 * const preview = Effect.gen(function*() {
 *   const client = yield* SkillsClient.SkillsClient
 *   const choices: PullModel.Choices = { into: ".claude/skills", all: true, layout: PullModel.flat("acme") }
 *   const plan: PullModel.Plan = yield* Pull.plan(client, yield* Pull.select(client, choices), choices)
 *   for (const step of plan.steps) yield* Console.log(step.action, step.skill.uri, "->", step.folder)
 *   for (const gone of plan.gone) yield* Console.log("gone", gone.uri)
 * }).pipe(Effect.provide(NodeServices.layer))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan {
  readonly into: string
  readonly origin: string
  readonly lock: Lock
  readonly steps: ReadonlyArray<Step>
  readonly gone: ReadonlyArray<LockSkill>
  readonly prune: boolean
  /** Every listed skill was selected: a skill that fails verification is refused, not the pull. */
  readonly all: boolean
  readonly refused: ReadonlyArray<Refused>
  /** The project whose `skills-lock.json` records this pull's skills too (`Choices.skillsLock`). */
  readonly skillsLock?: string | undefined
}

/**
 * How many bytes of a skill's files have arrived, of `total` (0 for a `"dynamic"` skill).
 *
 * @since 0.1.0
 * @category models
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
 * @category models
 */
export interface Staged {
  readonly step: Step
  readonly bytes: number
  readonly lock: LockSkill
}
