/**
 * The typed errors of a directory source (re-exported by `DirectorySource`).
 */
import { Manifest, SkillUri } from "@mcp-skills/core"
import * as Schema from "effect/Schema"

/**
 * The root folder cannot be used: it does not exist, is not a folder, or cannot be read.
 *
 * @since 0.1.0
 */
export class SourceDirectoryError extends Schema.TaggedError<SourceDirectoryError>()("SourceDirectoryError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot load skills from ${this.path}: ${this.reason}`
  }
}

/**
 * A file of a skill could not be read from disk.
 *
 * @since 0.1.0
 */
export class UnreadableFile extends Schema.TaggedError<UnreadableFile>()("UnreadableFile", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot read ${this.path}: ${this.reason}`
  }
}

/**
 * Why one skill folder is not served: its URI cannot be built, a file cannot be read, or the skill
 * is invalid (`InvalidSkill` lists every problem).
 *
 * @since 0.1.0
 */
export const SkillProblem = Schema.Union([Manifest.InvalidSkill, SkillUri.InvalidSkillUri, UnreadableFile])

/**
 * @since 0.1.0
 */
export type SkillProblem = typeof SkillProblem.Type

/**
 * A skill folder that was not loaded, with the reason. `directory` is the folder relative to the root
 * (`.` for the root itself).
 *
 * @since 0.1.0
 */
export class InvalidSkillDirectory extends Schema.TaggedError<InvalidSkillDirectory>()("InvalidSkillDirectory", {
  directory: Schema.String,
  error: SkillProblem
}) {
  override get message(): string {
    return `skipped skill folder ${this.directory}: ${this.error.message}`
  }
}

/**
 * In `strict` mode: at least one skill folder is invalid, so nothing is loaded.
 *
 * @since 0.1.0
 */
export class InvalidSkills extends Schema.TaggedError<InvalidSkills>()("InvalidSkills", {
  root: Schema.String,
  invalid: Schema.Array(InvalidSkillDirectory)
}) {
  override get message(): string {
    return `${this.invalid.length} invalid skill folder(s) under ${this.root}:\n` +
      this.invalid.map((entry) => `  ${entry.directory}: ${entry.error.message}`).join("\n")
  }
}

/**
 * Two roots of one source produce the same skill URI.
 *
 * @since 0.1.0
 */
export class UriCollision extends Schema.TaggedError<UriCollision>()("UriCollision", {
  uri: Schema.String,
  first: Schema.String,
  second: Schema.String
}) {
  override get message(): string {
    return `${this.uri} is served from both ${this.first} and ${this.second}; give one of the roots a prefix`
  }
}

/**
 * One line per problem of a skill folder, naming the file (relative to the root) and the rule:
 * `acme/billing/refunds/SKILL.md:3: anchor &x is not allowed`.
 *
 * @since 0.1.0
 */
export const describeProblem = (invalid: InvalidSkillDirectory): string => {
  const folder = invalid.directory === "." ? "" : `${invalid.directory}/`
  const error = invalid.error
  if (error._tag === "InvalidSkill") {
    return error.problems.map((problem) =>
      problem.path === undefined
        ? `${invalid.directory}: ${problem.reason}`
        : Manifest.describe({ ...problem, path: folder + problem.path })
    ).join("; ")
  }
  if (error._tag === "UnreadableFile") return `${error.path}: ${error.reason}`
  return `${invalid.directory}: ${error.reason}`
}
