/**
 * Building a skill's entry from its files: validate everything and hash every file once.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Digest from "./Digest.js"
import { SkillFileName } from "./Extension.js"
import { FilePath, Segment } from "./internal/generated.js"
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

const sameFile = (a: ManifestFile, b: ManifestFile) =>
  a.path === b.path && a.uri === b.uri && a.digest === b.digest && a.size === b.size && b.bytes instanceof Uint8Array &&
  Buffer.compare(a.bytes, b.bytes) === 0

const isManifest = (u: unknown): u is Manifest => {
  if (typeof u !== "object" || u === null) return false
  const m = u as { readonly [K in keyof Manifest]?: unknown }
  if (typeof m.uri !== "string" || !Array.isArray(m.files)) return false
  const uri = SkillUri.parseSkillMd(m.uri)
  if (Result.isFailure(uri)) return false
  const files: ReadonlyArray<ManifestFile> = m.files
  if (!files.every((file) => typeof file === "object" && file !== null && typeof file.path === "string" && file.bytes instanceof Uint8Array)) return false
  // Valid means exactly what `make` builds from the same files: every derived field agrees.
  const rebuilt = make({ uri: uri.success, files })
  if (Result.isFailure(rebuilt)) return false
  const expected = rebuilt.success
  return m.body === expected.body &&
    SkillFrontmatter.jsonEquals(m.frontmatter as Schema.Json, expected.frontmatter) &&
    SkillFrontmatter.jsonEquals(m.skill as Schema.Json, expected.skill as unknown as Schema.Json) &&
    files.length === expected.files.length && expected.files.every((file, i) => sameFile(file, files[i]!))
}

// A directory and a file of the same name cannot both exist on disk, where tests write manifests.
const collides = (paths: Iterable<string>, path: string) => {
  for (const other of paths) if (other === path || other.startsWith(`${path}/`) || path.startsWith(`${other}/`)) return true
  return false
}

/**
 * A manifest exactly as `make` builds it from its own files. Generating it (`Arbitrary.schema`,
 * `it.prop`) gives valid skills with real files: a rendered `SKILL.md` under a prefix of up to three
 * segments and up to six other files whose names need percent-encoding. Validating one rebuilds and
 * hashes it, which suits tests rather than a hot path.
 *
 * @since 0.1.0
 */
export const Manifest: Schema.declare<Manifest> = Schema.declare<Manifest>(isManifest, {
  expected: "a manifest as Manifest.make builds it from its files",
  toCodecArbitrary: () =>
    Schema.link<Manifest>()(
      Schema.Struct({
        prefix: Schema.Array(Segment).check(Schema.isMaxLength(3)),
        frontmatter: SkillFrontmatter.SkillFrontmatter,
        body: Schema.String,
        files: Schema.Array(Schema.Struct({ path: FilePath, bytes: Schema.Uint8Array })).check(Schema.isMaxLength(6))
      }),
      {
        decode: SchemaGetter.transform(({ prefix, frontmatter, body, files }) => {
          const uri = Result.getOrThrow(SkillUri.skillMd("skill", [...prefix, frontmatter.name]))
          const inputs = new Map<string, Uint8Array>([[SkillFileName, new TextEncoder().encode(SkillFrontmatter.render(frontmatter, body))]])
          for (const { path, bytes } of files) {
            if (!collides(inputs.keys(), path) && Result.isSuccess(SkillUri.file(uri, path))) inputs.set(path, bytes)
          }
          return Result.getOrThrow(make({ uri, files: [...inputs].map(([path, bytes]) => ({ path, bytes })) }))
        }),
        encode: SchemaGetter.forbiddenEncoding
      }
    )
})

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
 * @example
 * ```ts
 * import { Manifest, SkillUri } from "@mcp-skills/core"
 * import { Result } from "effect"
 *
 * const text = (content: string) => new TextEncoder().encode(content)
 * const manifest = Manifest.make({
 *   uri: Result.getOrThrow(SkillUri.skillMd("skill", ["acme", "billing", "refunds"])),
 *   files: [
 *     { path: "SKILL.md", bytes: text("---\nname: refunds\ndescription: Issue refunds\n---\n# Refunds\n") },
 *     { path: "references/policy.md", bytes: text("# Policy\n") }
 *   ]
 * })
 * // Success: the skill's entry (frontmatter, and each file's URI, digest and size) and its files,
 * // or Failure: InvalidSkill listing every problem (paths, frontmatter with its line, name, limits)
 * ```
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
  // A path cannot be a file and a folder at once: no file system holds both, so a host that
  // materialises the skill could not give relative references their URI meaning (R104).
  for (const path of byPath.keys()) {
    for (let slash = path.indexOf("/"); slash !== -1; slash = path.indexOf("/", slash + 1)) {
      if (byPath.has(path.slice(0, slash))) {
        problems.push({ path, reason: `${path.slice(0, slash)} is a file, so it cannot also be a folder holding ${path} (R104)` })
      }
    }
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
  // The parsed strings are slices of the decoded SKILL.md: kept as they are, every manifest a
  // server holds would keep a second copy of its SKILL.md alive. A holder that does not need the
  // body drops it (the server does), and the frontmatter is a copy.
  const frontmatter = structuredClone(parsed.frontmatter)
  return Result.succeed({
    uri: options.uri,
    skill: { uri: options.uri, frontmatter, resources },
    frontmatter,
    body: parsed.body,
    files
  })
}
