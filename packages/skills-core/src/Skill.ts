/**
 * Skill entries as they travel in `skills/list` and `skills/get` (spec §1.1-§1.3).
 *
 * Decoding an entry checks everything the entry alone can show (spec §5.1 step 1) except the limits,
 * which a host may raise (R15) and which `Limits.violations` reports: the URI is a `SKILL.md` URI whose
 * last skill-path segment is the frontmatter `name` (R4), `resources` is an array or `"dynamic"` (R5,
 * R6), and an array lists `SKILL.md` (R7), no URI twice, and nothing outside the skill (R8).
 *
 * @since 0.1.0
 */
import * as McpSchema from "effect/ai/McpSchema"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Digest } from "./Digest.js"
import { SkillFileName } from "./Extension.js"
import { FilePath, Segment, withGenerator } from "./internal/generated.js"
import * as Limits from "./Limits.js"
import { SkillFrontmatter } from "./SkillFrontmatter.js"
import * as SkillUri from "./SkillUri.js"

/**
 * One file of a manifest: its URI, the digest of its raw bytes and their length (R9, R14).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SkillResource = Schema.Struct({
  uri: SkillUri.SkillUri,
  digest: Digest,
  size: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
})

/**
 * @since 0.1.0
 * @category models
 */
export type SkillResource = typeof SkillResource.Type

/**
 * The marker of a skill whose content is generated and has no stable digests (R11).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Dynamic = Schema.Literal("dynamic")

/**
 * A complete manifest or the `"dynamic"` marker (R5).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Resources = Schema.Union([Schema.Array(SkillResource), Dynamic])

/**
 * @since 0.1.0
 * @category models
 */
export type Resources = typeof Resources.Type

/**
 * The problems of an entry that the structural schema cannot see, as one message each.
 *
 * @since 0.1.0
 * @category utils
 */
export const problems = (skill: {
  readonly uri: SkillUri.SkillMdUri
  readonly frontmatter: { readonly name: string }
  readonly resources: Resources
}): ReadonlyArray<string> => {
  const out: Array<string> = []
  const name = SkillUri.skillName(skill.uri)
  if (name !== skill.frontmatter.name) {
    out.push(`the last skill-path segment "${name}" differs from frontmatter name "${skill.frontmatter.name}" (R4)`)
  }
  if (skill.resources === "dynamic") return out
  if (!skill.resources.some((resource) => resource.uri === skill.uri)) out.push(`resources do not list the skill's ${SkillFileName} (R7)`)
  const seen = new Set<string>()
  for (const resource of skill.resources) {
    if (seen.has(resource.uri)) out.push(`${resource.uri} is listed twice (R7)`)
    seen.add(resource.uri)
    if (!SkillUri.contains(skill.uri, resource.uri)) out.push(`${resource.uri} is outside the skill (R8)`)
  }
  return out
}

/**
 * One skill entry, identical in `skills/list` and `skills/get` (R45). As a generator (`it.prop`,
 * `Arbitrary.schema`) it builds entries that pass every check instead of filtering random ones: the
 * frontmatter `name` is the last skill-path segment and a manifest lists the `SKILL.md` and each
 * file once, all inside the skill.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Skill = withGenerator(
  Schema.Struct({
    uri: SkillUri.SkillMdUri,
    frontmatter: SkillFrontmatter,
    resources: Resources,
    // Annotations under implementations' own prefixes (R139), e.g. `Signing.MetaKey`; the
    // extension gives them no meaning, and they are kept so that a reader can judge them.
    _meta: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json))
  }).check(Schema.makeFilter((skill) => problems(skill).map((issue) => ({ path: [], issue })))),
  Schema.Struct({
    prefix: Schema.Array(Segment).check(Schema.isMaxLength(3)),
    frontmatter: SkillFrontmatter,
    skillMd: Schema.Struct({ digest: Digest, size: SkillResource.fields.size }),
    resources: Schema.Union([Schema.Array(Schema.Struct({ path: FilePath, digest: Digest, size: SkillResource.fields.size })), Dynamic])
  }),
  ({ prefix, frontmatter, skillMd, resources }) => {
    const uri = Result.getOrThrow(SkillUri.skillMd("skill", [...prefix, frontmatter.name]))
    if (resources === "dynamic") return { uri, frontmatter, resources }
    // Paths that name SKILL.md in another case or repeat one are left out: each file is listed once.
    const listed = new Map<string, SkillResource>([[uri, { uri, ...skillMd }]])
    for (const { path, ...rest } of resources) {
      const file = SkillUri.file(uri, path)
      if (Result.isSuccess(file) && !listed.has(file.success)) listed.set(file.success, { uri: file.success, ...rest })
    }
    return { uri, frontmatter, resources: [...listed.values()] }
  }
)

/**
 * @since 0.1.0
 * @category models
 */
export type Skill = typeof Skill.Type

/**
 * An entry that must not be loaded (R6), with every problem found. `uri` is the entry's `uri` when
 * it had a string one.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSkillEntry extends Schema.TaggedError<InvalidSkillEntry>()("InvalidSkillEntry", {
  uri: Schema.optionalKey(Schema.String),
  problems: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `invalid skill entry${this.uri === undefined ? "" : ` ${this.uri}`}: ${this.problems.join("; ")}`
  }
}

const decodeSkill = Schema.decodeUnknownResult(Skill, { errors: "all" })

// The schema formatter writes each issue as a message line followed by an indented "at <path>" line.
const problemLines = (message: string): Array<string> => {
  const out: Array<string> = []
  for (const line of message.split("\n")) {
    const trimmed = line.trim()
    if (trimmed.length === 0) continue
    if (trimmed.startsWith("at ") && out.length > 0) out[out.length - 1] = `${trimmed.slice(3)}: ${out[out.length - 1]}`
    else out.push(trimmed)
  }
  return out
}

/**
 * Decodes an untrusted entry (R90), reporting every problem.
 *
 * @example
 * ```ts
 * import { Skill } from "@mcp-skills/core"
 * import { Result } from "effect"
 *
 * const entry = Skill.decode({
 *   uri: "skill://notes/SKILL.md",
 *   frontmatter: { name: "notes", description: "Take notes" },
 *   resources: "dynamic"
 * })
 * Result.isSuccess(entry) // true: a well-formed entry whose name matches its URI
 * Result.isFailure(Skill.decode({ uri: "skill://notes/SKILL.md", frontmatter: { name: "other", description: "x" }, resources: [] }))
 * // true: InvalidSkillEntry, the name is not the folder's
 * ```
 *
 * @since 0.1.0
 * @category codecs
 */
export const decode = (input: unknown): Result.Result<Skill, InvalidSkillEntry> =>
  Result.mapError(decodeSkill(input), (error) => {
    const uri = typeof input === "object" && input !== null && "uri" in input && typeof input.uri === "string"
      ? input.uri
      : undefined
    return new InvalidSkillEntry({
      ...(uri === undefined ? {} : { uri }),
      problems: problemLines(error.message)
    })
  })

/**
 * Whether an entry carries the `"dynamic"` marker instead of a manifest.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDynamic = (skill: Skill): skill is Skill & { readonly resources: "dynamic" } => skill.resources === "dynamic"

/**
 * The limits a manifest breaks (R15-R17); always empty for `"dynamic"` entries, whose budget is
 * counted against fetched bytes instead (R18).
 *
 * @since 0.1.0
 * @category utils
 */
export const limitViolations = (skill: Skill, limits: Limits.Limits = Limits.defaults): ReadonlyArray<Limits.Violation> =>
  skill.resources === "dynamic"
    ? []
    : Limits.violations(skill.resources.length, skill.resources.reduce((total, resource) => total + resource.size, 0), limits)

/**
 * The manifest item of `uri`, if the entry lists it.
 *
 * @since 0.1.0
 * @category utils
 */
export const findResource = (skill: Skill, uri: string): SkillResource | undefined =>
  skill.resources === "dynamic" ? undefined : skill.resources.find((resource) => resource.uri === uri)

/**
 * The entry as effect's `McpSchema.Skill`, for an app that also uses effect's `McpClient` or
 * `McpServer`. Always succeeds: every entry is one of effect's.
 *
 * @since 0.2.0
 * @category codecs
 */
export const toMcpSchema = (skill: Skill): McpSchema.Skill =>
  new McpSchema.Skill({
    uri: skill.uri,
    frontmatter: skill.frontmatter,
    resources: skill.resources === "dynamic"
      ? "dynamic"
      : skill.resources.map((resource) => new McpSchema.SkillResource(resource)),
    ...(skill._meta === undefined ? {} : { _meta: skill._meta })
  })

/**
 * One of effect's `McpSchema.Skill` as an entry, checked as `decode` checks one received (R90):
 * effect's schema takes any string for a URI and any value in the frontmatter, so this fails with
 * `InvalidSkillEntry` naming each problem (a URI that is not a `SKILL.md` URI, a name that is not
 * its folder's, a frontmatter value that is not JSON, a number past ±(2^53−1)).
 *
 * @example
 * ```ts
 * import { Skill } from "@mcp-skills/core"
 * import { Result } from "effect"
 * import { McpSchema } from "effect/ai"
 *
 * const theirs = new McpSchema.Skill({ uri: "skill://notes/SKILL.md", frontmatter: { name: "notes", description: "Take notes" }, resources: "dynamic" })
 * const ours = Skill.fromMcpSchema(theirs) // Success: the entry
 * Result.map(ours, Skill.toMcpSchema)       // Success: an McpSchema.Skill equal to theirs
 * ```
 *
 * @since 0.2.0
 * @category codecs
 */
export const fromMcpSchema = (skill: McpSchema.Skill): Result.Result<Skill, InvalidSkillEntry> => {
  // effect's type lets `_meta` be `undefined`; an entry has the key only with a value.
  const { _meta, ...rest } = skill
  return decode(_meta === undefined ? rest : { ...rest, _meta })
}
