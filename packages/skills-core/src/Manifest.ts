/**
 * Building a skill's entry from its files: validate everything and hash every file once.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Digest from "./Digest.js"
import { SkillFileName } from "./Extension.js"
import * as Limits from "./Limits.js"
import type { Skill, SkillResource } from "./Skill.js"
import * as SkillFrontmatter from "./SkillFrontmatter.js"
import * as SkillUri from "./SkillUri.js"

/**
 * One file handed to `make`: a `/`-separated path relative to the skill root and its raw bytes.
 *
 * @since 0.1.0
 */
export interface FileInput {
  readonly path: string
  readonly bytes: Uint8Array
  /**
   * The digest of exactly these bytes when the caller already has it (a rebuild that kept the file
   * unchanged): it is trusted, so a reload hashes only what changed.
   */
  readonly digest?: Digest.Digest | undefined
}

/**
 * One validated, hashed file of a manifest.
 *
 * @since 0.1.0
 */
export interface ManifestFile {
  readonly uri: SkillUri.SkillUri
  readonly path: string
  readonly bytes: Uint8Array
  readonly digest: Digest.Digest
  readonly size: number
}

/**
 * A validated skill: its entry, its parsed `SKILL.md` and its files, `SKILL.md` first.
 *
 * @since 0.1.0
 */
export interface Manifest {
  readonly uri: SkillUri.SkillMdUri
  readonly skill: Skill
  readonly frontmatter: SkillFrontmatter.SkillFrontmatter
  readonly body: string
  readonly files: ReadonlyArray<ManifestFile>
}

/**
 * One thing wrong with a skill: the file it concerns (when one does), the line (for frontmatter) and why.
 *
 * @since 0.1.0
 */
export const Problem = Schema.Struct({
  path: Schema.optionalKey(Schema.String),
  line: Schema.optionalKey(Schema.Int),
  reason: Schema.String
})

/**
 * @since 0.1.0
 */
export type Problem = typeof Problem.Type

/**
 * A skill that cannot be served, with every problem found (not only the first).
 *
 * @since 0.1.0
 */
export class InvalidSkill extends Schema.TaggedError<InvalidSkill>()("InvalidSkill", {
  uri: Schema.String,
  problems: Schema.Array(Problem)
}) {
  override get message(): string {
    return `invalid skill ${this.uri}: ${this.problems.map(describe).join("; ")}`
  }
}

/**
 * A problem as one line: `path:line: reason`.
 *
 * @since 0.1.0
 */
export const describe = (problem: Problem): string =>
  `${problem.path === undefined ? "" : `${problem.path}${problem.line === undefined ? "" : `:${problem.line}`}: `}${problem.reason}`

/**
 * Validates and hashes a skill's files into its manifest: `SKILL.md` first, then the other files in
 * code-unit order of their paths, each with digest and size; the frontmatter from `SKILL.md` with the
 * name equal to the last skill-path segment (R4); every path inside the skill; the limits (R16).
 *
 * @since 0.1.0
 */
export const make = (options: {
  readonly uri: SkillUri.SkillMdUri
  readonly files: Iterable<FileInput>
  readonly limits?: Limits.Limits | undefined
}): Result.Result<Manifest, InvalidSkill> => {
  const problems: Array<Problem> = []
  const byPath = new Map<string, ManifestFile>()
  for (const input of options.files) {
    const uri = SkillUri.file(options.uri, input.path)
    if (Result.isFailure(uri)) {
      problems.push({ path: input.path, reason: uri.failure.reason })
      continue
    }
    if (byPath.has(input.path)) {
      problems.push({ path: input.path, reason: "the same path is given twice" })
      continue
    }
    byPath.set(input.path, {
      uri: uri.success,
      path: input.path,
      bytes: input.bytes,
      digest: input.digest ?? Digest.make(input.bytes),
      size: input.bytes.byteLength
    })
  }
  const skillMd = byPath.get(SkillFileName)
  let parsed: { readonly frontmatter: SkillFrontmatter.SkillFrontmatter; readonly body: string } | undefined
  if (skillMd === undefined) {
    problems.push({ reason: `no ${SkillFileName} at the skill root (R1)` })
  } else {
    const result = SkillFrontmatter.parseSkillMd(skillMd.bytes)
    if (Result.isFailure(result)) {
      const error = result.failure
      problems.push({
        path: SkillFileName,
        ...(error.line === undefined ? {} : { line: error.line }),
        reason: error.field === undefined ? error.reason : `${error.field}: ${error.reason}`
      })
    } else {
      parsed = result.success
      const name = SkillUri.skillName(options.uri)
      if (parsed.frontmatter.name !== name) {
        problems.push({
          path: SkillFileName,
          reason: `frontmatter name "${parsed.frontmatter.name}" differs from the skill's directory name "${name}" (R4)`
        })
      }
    }
  }
  const rest = [...byPath.values()].filter((file) => file !== skillMd).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const files = skillMd === undefined ? rest : [skillMd, ...rest]
  const total = files.reduce((sum, file) => sum + file.size, 0)
  for (const violation of Limits.violations(files.length, total, options.limits)) {
    problems.push({ reason: `${Limits.describe(violation)} (R16)` })
  }
  if (problems.length > 0 || parsed === undefined) return Result.fail(new InvalidSkill({ uri: options.uri, problems }))
  const resources: ReadonlyArray<SkillResource> = files.map((file) => ({ uri: file.uri, digest: file.digest, size: file.size }))
  return Result.succeed({
    uri: options.uri,
    skill: { uri: options.uri, frontmatter: parsed.frontmatter, resources },
    frontmatter: parsed.frontmatter,
    body: parsed.body,
    files
  })
}
