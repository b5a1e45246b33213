/**
 * Skill-path templates with named parameters (`customers/{customer}/onboarding`): the address of a
 * skill family, one skill per set of parameter values.
 *
 * A template is parsed and validated once, when the family is defined (`parse`, a typed
 * `InvalidTemplate`). Requests then go through `match`, which resolves a skill or file URI against
 * the template with a few string comparisons and without enumerating any instance, and `expand`,
 * which spells the URI of an instance from its parameters.
 *
 * A parameter stands for exactly one URI segment. Its value is the decoded segment and passes
 * `SkillUri.segment` from `@mcp-skills/core` (not empty, not `.` or `..`, no `/`, `\` or control
 * character), is at most `ServerLimits.MaxParameterLength` characters, and is always spelled with the canonical
 * percent-encoding: `expand` encodes it, `match` decodes it and refuses any other spelling, so one
 * instance has exactly one URI (URIs are compared as exact strings, spec §7 item 9). A parameter
 * in the last position names the skill and must be a valid skill name (R4, R96).
 *
 * ```ts
 * import { Result } from "effect"
 * import { PathTemplate } from "@mcp-skills/server"
 *
 * const template = Result.getOrThrow(PathTemplate.parse("customers/{customer}/onboarding"))
 * const instance = Result.getOrThrow(PathTemplate.expand(template, { customer: "Acme Corp" }))
 * // instance.uri === "skill://customers/Acme%20Corp/onboarding/SKILL.md"
 * const match = PathTemplate.match(template, "skill://customers/Acme%20Corp/onboarding/references/faq.md")
 * // match._tag === "Instance", match.params.customer === "Acme Corp", match.path = ["references", "faq.md"]
 * ```
 *
 * @since 0.1.0
 */
import { Extension, Limits, SkillName, SkillUri } from "@mcp-skills/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as ServerLimits from "./ServerLimits.js"

/**
 * Why a template cannot address skills.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidTemplate extends Schema.TaggedError<InvalidTemplate>()("InvalidTemplate", {
  template: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `invalid skill path template ${JSON.stringify(this.template)}: ${this.reason}`
  }
}

/**
 * Why a value cannot be the given parameter of a template.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidParameter extends Schema.TaggedError<InvalidParameter>()("InvalidParameter", {
  template: Schema.String,
  parameter: Schema.String,
  value: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `invalid value ${JSON.stringify(this.value)} for parameter "${this.parameter}" of ${this.template}: ${this.reason}`
  }
}

// The longest parameter value, in UTF-16 code units of the decoded value (like a file name).
const MaxParameterLength = ServerLimits.MaxParameterLength

/**
 * The parameter names of a template string, as a union of string literals.
 *
 * @since 0.1.0
 * @category models
 */
export type ParameterNames<T extends string> = T extends `${string}{${infer Name}}${infer Rest}` ? Name | ParameterNames<Rest>
  : never

/**
 * Parameter values by name. For a template known only as `string`, any names.
 *
 * @since 0.1.0
 * @category models
 */
export type Params<T extends string = string> = string extends T ? Readonly<Record<string, string>>
  : { readonly [K in ParameterNames<T>]: string }

/**
 * One segment of a template: fixed text (decoded, with its canonical encoding) or a parameter.
 *
 * @since 0.1.0
 * @category models
 */
export type Segment =
  | { readonly _tag: "Literal"; readonly value: string; readonly encoded: string }
  | { readonly _tag: "Parameter"; readonly name: string }

/**
 * A validated template.
 *
 * @since 0.1.0
 * @category models
 */
export interface PathTemplate {
  /** The template as written (`customers/{customer}/onboarding`). */
  readonly template: string
  /** URI scheme, lower case. */
  readonly scheme: string
  readonly segments: ReadonlyArray<Segment>
  /** Parameter names in the order they appear. */
  readonly parameters: ReadonlyArray<string>
  /** `<scheme>://` and the encoded literal segments before the first parameter: every instance URI starts with it. */
  readonly prefix: string
}

/**
 * One instance of a template: its parameters, its skill path and its URIs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Instance {
  readonly params: Readonly<Record<string, string>>
  /** Decoded skill-path segments; the last one is the skill's name. */
  readonly path: ReadonlyArray<string>
  /** The skill root (no trailing slash). */
  readonly root: string
  /** The URI of the instance's `SKILL.md`. */
  readonly uri: SkillUri.SkillMdUri
}

/**
 * What `match` found for a URI:
 * - `Outside`: the URI is not under this template (another skill, or nothing, may own it);
 * - `Invalid`: it has the template's shape but a parameter or the file path below the skill root
 *   is not acceptable (the request is the caller's mistake; nothing should be rendered for it);
 * - `Instance`: the instance it belongs to and the decoded path below its root (`[]` for the root
 *   itself, `["SKILL.md"]` for its `SKILL.md`).
 *
 * @since 0.1.0
 * @category models
 */
export type Match =
  | { readonly _tag: "Outside" }
  | { readonly _tag: "Invalid"; readonly error: InvalidParameter | SkillUri.InvalidSkillUri }
  | (Instance & { readonly _tag: "Instance"; readonly file: ReadonlyArray<string> })

const parameterPattern = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/
// Worst case of encodeURIComponent: one UTF-16 code unit of the BMP becomes three %XX escapes.
const MaxEncodedPerUnit = 9

const outside: Match = { _tag: "Outside" }

/**
 * Parses and validates a template: `/`-separated segments, each either fixed text (decoded, as in
 * `Skill.make`'s `path`) or one whole `{name}`. At least one parameter, no name twice, every fixed
 * segment a valid URI segment, a fixed last segment a valid skill name, and the longest possible
 * instance URI within `Limits.MaxUriLength`.
 *
 * @since 0.1.0
 * @category codecs
 */
export const parse = <const T extends string>(template: T, scheme = "skill"): Result.Result<PathTemplate, InvalidTemplate> => {
  const fail = (reason: string) => Result.fail(new InvalidTemplate({ template, reason }))
  if (template.length === 0) return fail("empty")
  const raws = template.split("/")
  const segments: Array<Segment> = []
  const parameters: Array<string> = []
  for (const [i, raw] of raws.entries()) {
    const parameter = parameterPattern.exec(raw)
    if (parameter !== null) {
      const name = parameter[1]!
      if (parameters.includes(name)) return fail(`parameter "${name}" appears twice`)
      parameters.push(name)
      segments.push({ _tag: "Parameter", name })
      continue
    }
    if (raw.includes("{") || raw.includes("}")) {
      return fail(`segment "${raw}": a parameter is a whole segment named by letters, digits and "_" ({name})`)
    }
    const encoded = SkillUri.segment(raw)
    if (Result.isFailure(encoded)) return fail(`segment ${i + 1}: ${encoded.failure.reason}`)
    segments.push({ _tag: "Literal", value: raw, encoded: encoded.success })
  }
  if (parameters.length === 0) return fail("no parameter: a skill with a fixed path is a Skill.make, dynamic or rendered skill")
  const last = segments[segments.length - 1]!
  if (last._tag === "Literal" && !SkillName.pattern.test(last.value)) {
    return fail(`the last segment "${last.value}" is the skill's name and must be a valid skill name (R96)`)
  }
  // The scheme and the fixed segments, checked the way core checks a SKILL.md URI.
  const sample = SkillUri.skillMd(scheme, segments.map((segment) => segment._tag === "Literal" ? segment.value : "x"))
  if (Result.isFailure(sample)) return fail(sample.failure.reason)
  const normalizedScheme = scheme.toLowerCase()
  const longest = `${normalizedScheme}://`.length + segments.reduce(
    (sum, segment) => sum + 1 + (segment._tag === "Literal" ? segment.encoded.length : MaxParameterLength * MaxEncodedPerUnit),
    0
  ) + Extension.SkillFileName.length
  if (longest > Limits.MaxUriLength) {
    return fail(
      `an instance URI could be ${longest} characters, over the limit of ${Limits.MaxUriLength} ` +
        `(${MaxParameterLength} characters per parameter)`
    )
  }
  const firstParameter = segments.findIndex((segment) => segment._tag === "Parameter")
  const prefix = `${normalizedScheme}://` +
    segments.slice(0, firstParameter).map((segment) => (segment as { readonly encoded: string }).encoded + "/").join("")
  return Result.succeed({ template, scheme: normalizedScheme, segments, parameters, prefix })
}

const isNamePosition = (template: PathTemplate, index: number) => index === template.segments.length - 1

/**
 * Checks one decoded value for a parameter of the template and returns its canonical encoding.
 *
 * @since 0.1.0
 * @category templates
 */
export const parameter = (
  template: PathTemplate,
  name: string,
  value: string
): Result.Result<string, InvalidParameter> => {
  const index = template.segments.findIndex((segment) => segment._tag === "Parameter" && segment.name === name)
  if (index === -1) return invalidParameter(template, name, value, "not a parameter of the template")
  return checkValue(template, index, name, value)
}

const parameterError = (template: PathTemplate, parameter: string, value: string, reason: string) =>
  new InvalidParameter({ template: template.template, parameter, value, reason })

const invalidParameter = (template: PathTemplate, parameter: string, value: string, reason: string) =>
  Result.fail(parameterError(template, parameter, value, reason))

const invalidMatch = (error: InvalidParameter | SkillUri.InvalidSkillUri): Match => ({ _tag: "Invalid", error })

const checkValue = (
  template: PathTemplate,
  index: number,
  name: string,
  value: string
): Result.Result<string, InvalidParameter> => {
  if (value.length > MaxParameterLength) {
    return invalidParameter(template, name, value.slice(0, 64) + "…", `longer than ${MaxParameterLength} characters`)
  }
  const encoded = SkillUri.segment(value)
  if (Result.isFailure(encoded)) return invalidParameter(template, name, value, encoded.failure.reason)
  if (isNamePosition(template, index) && !SkillName.pattern.test(value)) {
    return invalidParameter(
      template,
      name,
      value,
      "the last segment is the skill's name: 1 to 64 lowercase letters, digits and single hyphens (R96)"
    )
  }
  return Result.succeed(encoded.success)
}

const instance = (
  template: PathTemplate,
  params: Readonly<Record<string, string>>,
  path: ReadonlyArray<string>,
  encoded: ReadonlyArray<string>
): Instance => {
  const root = `${template.scheme}://${encoded.join("/")}`
  return { params, path, root, uri: `${root}/${Extension.SkillFileName}` as SkillUri.SkillMdUri }
}

/**
 * The instance of the template for these parameter values. Every parameter must be given, and
 * nothing else.
 *
 * @example
 * ```ts
 * import { PathTemplate } from "@mcp-skills/server"
 * import { Result } from "effect"
 *
 * const template = Result.getOrThrow(PathTemplate.parse("customers/{customer}/onboarding"))
 * PathTemplate.expand(template, { customer: "acme" })  // Success: skill://customers/acme/onboarding/SKILL.md
 * PathTemplate.expand(template, { customer: ".." })    // Failure: InvalidParameter naming "customer"
 * ```
 *
 * @since 0.1.0
 * @category templates
 */
export const expand = (
  template: PathTemplate,
  params: Readonly<Record<string, string>>
): Result.Result<Instance, InvalidParameter> => {
  for (const name of Object.keys(params)) {
    if (!template.parameters.includes(name)) {
      return invalidParameter(template, name, String(params[name]), "not a parameter of the template")
    }
  }
  const path: Array<string> = []
  const encoded: Array<string> = []
  for (const [index, segment] of template.segments.entries()) {
    if (segment._tag === "Literal") {
      path.push(segment.value)
      encoded.push(segment.encoded)
      continue
    }
    const value: unknown = params[segment.name]
    if (typeof value !== "string") return invalidParameter(template, segment.name, String(value), "missing")
    const checked = checkValue(template, index, segment.name, value)
    if (Result.isFailure(checked)) return Result.fail(checked.failure)
    path.push(value)
    encoded.push(checked.success)
  }
  return Result.succeed(instance(template, params, path, encoded))
}

const decode = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

/**
 * Resolves a URI against the template without enumerating instances: a skill's `SKILL.md`, any
 * file or directory below an instance's root, or the root itself. The fixed segments must match
 * exactly; each parameter's segment is decoded and checked like `expand` checks a value, and must
 * be spelled canonically; a path below the root must be a valid, canonical skill URI.
 *
 * @since 0.1.0
 * @category templates
 */
export const match = (template: PathTemplate, uri: string): Match => {
  if (!uri.startsWith(template.prefix)) return outside
  const raws = uri.slice(template.scheme.length + 3).split("/")
  const count = template.segments.length
  if (raws.length < count) return outside
  for (let i = 0; i < count; i++) {
    const segment = template.segments[i]!
    if (segment._tag === "Literal" && raws[i] !== segment.encoded) return outside
  }
  // The URI has the template's shape: from here on it names this family, rightly or wrongly.
  const params: Record<string, string> = {}
  const path: Array<string> = []
  for (let i = 0; i < count; i++) {
    const segment = template.segments[i]!
    const raw = raws[i]!
    if (segment._tag === "Literal") {
      path.push(segment.value)
      continue
    }
    const value = decode(raw)
    if (value === undefined) return invalidMatch(parameterError(template, segment.name, raw, "malformed percent-encoding"))
    const checked = checkValue(template, i, segment.name, value)
    if (Result.isFailure(checked)) return invalidMatch(checked.failure)
    if (checked.success !== raw) {
      const reason = `not canonically encoded (the URI of this value spells it ${checked.success})`
      return invalidMatch(parameterError(template, segment.name, raw, reason))
    }
    params[segment.name] = value
    path.push(value)
  }
  let file: ReadonlyArray<string> = []
  if (raws.length > count) {
    const parsed = SkillUri.parse(uri)
    if (Result.isFailure(parsed)) return invalidMatch(parsed.failure)
    if (SkillUri.format(parsed.success) !== uri) return invalidMatch(new SkillUri.InvalidSkillUri({ uri, reason: "not in canonical form" }))
    file = parsed.success.segments.slice(count)
  }
  return { _tag: "Instance", ...instance(template, params, path, raws.slice(0, count)), file }
}

/**
 * How the skills addressed by two templates (or a template and a fixed skill path) relate, given
 * some valid parameter values: `"same"` when one URI can name a skill of both, `"encloses"` when
 * a skill of `a` can contain a skill of `b` (R10 nesting), `"inside"` for the converse, and
 * `undefined` when they can never meet. A registry refuses every relation but `undefined`: an
 * instance's files are rendered per request, so no static manifest could list them, and a URI
 * must resolve to one skill without enumerating.
 *
 * @since 0.1.0
 * @category templates
 */
export const relation = (
  a: PathTemplate,
  b: PathTemplate | { readonly scheme: string; readonly path: ReadonlyArray<string> }
): "same" | "encloses" | "inside" | undefined => {
  const bSegments: ReadonlyArray<Segment> = "segments" in b
    ? b.segments
    : b.path.map((value) => ({ _tag: "Literal", value, encoded: "" }))
  if (a.scheme !== b.scheme.toLowerCase()) return undefined
  const common = Math.min(a.segments.length, bSegments.length)
  for (let i = 0; i < common; i++) {
    const x = a.segments[i]!
    const y = bSegments[i]!
    if (x._tag === "Literal" && y._tag === "Literal") {
      if (x.value !== y.value) return undefined
    } else if (x._tag === "Literal" && y._tag === "Parameter") {
      if ("segments" in b && Result.isFailure(checkValue(b, i, y.name, x.value))) return undefined
    } else if (x._tag === "Parameter" && y._tag === "Literal") {
      if (Result.isFailure(checkValue(a, i, x.name, y.value))) return undefined
    }
    // Two parameters always share a value: any valid skill name is a valid value of both.
  }
  return a.segments.length === bSegments.length ? "same" : a.segments.length < bSegments.length ? "encloses" : "inside"
}
