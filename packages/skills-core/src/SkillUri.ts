/**
 * Skill URIs: `<scheme>://<skill-path>/<file-path>` (spec §4, R92-R105).
 *
 * Parsing is strict about everything that could make two URIs name one file or make a path leave a
 * skill: empty, `.` and `..` segments (also percent-encoded), encoded `/` and `\`, backslashes,
 * query, fragment, trailing slash, control characters and case variants of `SKILL.md`. URIs from
 * other servers are compared as exact strings and never rewritten (spec §7 item 9); `format` gives
 * the canonical spelling this package produces itself.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { SkillFileName } from "./Extension.js"
import { MaxUriLength } from "./Limits.js"

/**
 * Why a string is not an acceptable skill URI or relative reference.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSkillUri extends Schema.TaggedError<InvalidSkillUri>()("InvalidSkillUri", {
  uri: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `invalid skill URI ${JSON.stringify(this.uri)}: ${this.reason}`
  }
}

/**
 * A skill URI taken apart: the scheme in lower case and the percent-decoded path segments
 * (the authority is the first segment).
 *
 * @since 0.1.0
 * @category models
 */
export interface Parsed {
  readonly scheme: string
  readonly segments: ReadonlyArray<string>
}

const schemePattern = /^[A-Za-z][A-Za-z0-9+.-]*$/
// RFC 3986 pchar without pct-encoded (checked separately) plus "/" between segments.
const allowedCharacters = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/
const escapePattern = /%(?![0-9A-Fa-f]{2})/
const controlCharacters = /[\u0000-\u001f\u007f]/
const skillMdSuffix = `/${SkillFileName}`

const leavesSkill = "\"..\" leaves the skill"

const invalid = (uri: string, reason: string) => Result.fail(new InvalidSkillUri({ uri, reason }))

const isSkillMdVariant = (segment: string) => segment !== SkillFileName && segment.toLowerCase() === "skill.md"

const decodeSegment = (uri: string, raw: string): Result.Result<string, InvalidSkillUri> => {
  if (escapePattern.test(raw)) return invalid(uri, `segment "${raw}" has a malformed percent-escape`)
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    return invalid(uri, `segment "${raw}" does not decode to UTF-8`)
  }
  if (decoded === "." || decoded === "..") {
    return invalid(uri, raw === decoded ? `dot segment "${raw}"` : `percent-encoded dot segment "${raw}"`)
  }
  if (decoded.includes("/") || decoded.includes("\\")) return invalid(uri, `segment "${raw}" encodes a slash or backslash`)
  if (controlCharacters.test(decoded)) return invalid(uri, `segment "${raw}" encodes a control character`)
  return Result.succeed(decoded)
}

/**
 * Takes a skill URI apart, refusing every form listed in the module description.
 *
 * @since 0.1.0
 * @category codecs
 */
export const parse = (uri: string): Result.Result<Parsed, InvalidSkillUri> => {
  if (uri.length === 0) return invalid(uri, "empty")
  if (uri.length > MaxUriLength) return invalid(uri.slice(0, 64) + "…", `longer than ${MaxUriLength} characters (Limits.MaxUriLength)`)
  if (uri.includes("?")) return invalid(uri, "a query is not allowed")
  if (uri.includes("#")) return invalid(uri, "a fragment is not allowed")
  if (uri.includes("\\")) return invalid(uri, "backslashes are not allowed")
  if (controlCharacters.test(uri)) return invalid(uri, "control characters are not allowed")
  const separator = uri.indexOf("://")
  if (separator <= 0) return invalid(uri, "expected <scheme>://<skill-path>")
  const scheme = uri.slice(0, separator)
  if (!schemePattern.test(scheme)) return invalid(uri, `"${scheme}" is not a URI scheme`)
  const rest = uri.slice(separator + 3)
  if (!allowedCharacters.test(rest)) return invalid(uri, "characters outside RFC 3986 must be percent-encoded")
  if (rest.length === 0) return invalid(uri, "no skill path")
  if (rest.endsWith("/")) return invalid(uri, "a trailing slash is not allowed")
  const raws = rest.split("/")
  const segments: Array<string> = []
  for (const raw of raws) {
    if (raw.length === 0) return invalid(uri, "empty path segment")
    const decoded = decodeSegment(uri, raw)
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
    segments.push(decoded.success)
  }
  // The first segment sits in the authority position (R98): "@" and ":" would read as userinfo or port.
  if (raws[0]!.includes("@") || raws[0]!.includes(":")) return invalid(uri, "the authority segment contains \"@\" or \":\"")
  if (isSkillMdVariant(segments[segments.length - 1]!)) return invalid(uri, `"${SkillFileName}" must be spelled exactly`)
  return Result.succeed({ scheme: scheme.toLowerCase(), segments })
}

/**
 * Whether a decoded path segment names a hidden entry: one starting with `.` (`.git`, `.env`). A
 * directory source serves none, and a pull writes none.
 *
 * @since 0.1.0
 * @category guards
 */
export const isHidden = (segment: string): boolean => segment.startsWith(".")

/**
 * Percent-encodes one decoded path segment the canonical way (`encodeURIComponent`, upper-case hex).
 * Fails for strings that cannot be UTF-8 encoded (lone surrogates).
 *
 * @since 0.1.0
 * @category codecs
 */
export const encodeSegment = (segment: string): Result.Result<string, InvalidSkillUri> => {
  try {
    return Result.succeed(encodeURIComponent(segment))
  } catch {
    return invalid(segment, "segment is not valid Unicode")
  }
}

/**
 * Checks one decoded path segment against the rules `parse` applies to every segment (not empty,
 * not `.` or `..`, no `/`, `\` or control character, valid Unicode) and returns its canonical
 * percent-encoding. What a server puts in a URI from a value it did not write (a parameter) goes
 * through here, so it can only ever be one segment.
 *
 * @since 0.1.0
 * @category uris
 */
export const segment = (decoded: string): Result.Result<string, InvalidSkillUri> => {
  if (decoded.length === 0) return invalid(decoded, "empty path segment")
  const encoded = encodeSegment(decoded)
  if (Result.isFailure(encoded)) return encoded
  // encodeURIComponent leaves "." alone and escapes the rest; decoding checks what it names.
  return Result.map(decodeSegment(decoded, encoded.success), () => encoded.success)
}

/**
 * The canonical spelling of parsed components. `format(parse(u)) === u` exactly when `u` is canonical.
 *
 * @since 0.1.0
 * @category uris
 */
export const format = (parsed: Parsed): string =>
  `${parsed.scheme}://${parsed.segments.map((segment) => encodeURIComponent(segment)).join("/")}`

/**
 * Whether a string is a skill URI in canonical form.
 *
 * @since 0.1.0
 * @category guards
 */
export const isCanonical = (uri: string): boolean => {
  const parsed = parse(uri)
  return Result.isSuccess(parsed) && format(parsed.success) === uri
}

const isSafe = (uri: string) => Result.isSuccess(parse(uri))

const isSkillMd = (uri: string) => {
  const parsed = parse(uri)
  return Result.isSuccess(parsed) && parsed.success.segments.length >= 2 &&
    parsed.success.segments[parsed.success.segments.length - 1] === SkillFileName && uri.endsWith(skillMdSuffix)
}

const segmentArbitrary = "(?:[a-z0-9][a-z0-9_~-]{0,7}|%C3%A9|caf%C3%A9)"

/**
 * A URI that passed `parse`: safe to compare as an exact string and to resolve against.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SkillUri = Schema.String.check(
  Schema.makeFilter(isSafe, {
    expected: "a skill URI (<scheme>://<skill-path>/<file-path>)",
    arbitraryConstraint: {
      patterns: [{ source: `^skill://${segmentArbitrary}(?:/${segmentArbitrary}){0,4}$`, flags: "" }]
    }
  })
).pipe(Schema.brand("SkillUri"))

/**
 * @since 0.1.0
 * @category models
 */
export type SkillUri = typeof SkillUri.Type

/**
 * The URI of a skill's `SKILL.md`: at least one skill-path segment, then `/SKILL.md` (R95).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SkillMdUri = Schema.String.check(
  // One check rather than `SkillUri.check(…)`: the generator would pick between the two patterns and
  // drop every plain file URI it built from the outer one.
  Schema.makeFilter(isSkillMd, {
    expected: "the URI of a SKILL.md (<scheme>://<skill-path>/SKILL.md)",
    arbitraryConstraint: {
      patterns: [{ source: `^skill://${segmentArbitrary}(?:/${segmentArbitrary}){0,3}/SKILL\\.md$`, flags: "" }]
    }
  })
).pipe(Schema.brand("SkillUri"), Schema.brand("SkillMdUri"))

/**
 * @since 0.1.0
 * @category models
 */
export type SkillMdUri = typeof SkillMdUri.Type

/**
 * Checks that a string is the URI of a `SKILL.md`.
 *
 * @since 0.1.0
 * @category codecs
 */
export const parseSkillMd = (uri: string): Result.Result<SkillMdUri, InvalidSkillUri> =>
  Result.flatMap(parse(uri), (parsed) => asSkillMd(uri, parsed))

// `uri`, parsed as `parsed`, as the URI of a `SKILL.md`.
const asSkillMd = (uri: string, parsed: Parsed): Result.Result<SkillMdUri, InvalidSkillUri> =>
  parsed.segments.length < 2 || !uri.endsWith(skillMdSuffix)
    ? invalid(uri, `not the URI of a ${SkillFileName} (expected <scheme>://<skill-path>/${SkillFileName})`)
    : Result.succeed(uri as SkillMdUri)

/**
 * The canonical `SKILL.md` URI of a skill from its scheme and decoded skill-path segments.
 *
 * @since 0.1.0
 * @category uris
 */
export const skillMd = (scheme: string, skillPath: ReadonlyArray<string>): Result.Result<SkillMdUri, InvalidSkillUri> => {
  const encoded: Array<string> = []
  for (const segment of skillPath) {
    const e = encodeSegment(segment)
    if (Result.isFailure(e)) return Result.fail(e.failure)
    encoded.push(e.success)
  }
  const uri = `${scheme.toLowerCase()}://${[...encoded, SkillFileName].join("/")}`
  // Parsed once: what it is checked as, and what its canonical form is made from.
  const parsed = parse(uri)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  if (format(parsed.success) !== uri) return invalid(uri, "the skill path is not canonical")
  return asSkillMd(uri, parsed.success)
}

/**
 * The skill root: the `SKILL.md` URI without `/SKILL.md`, no trailing slash (R95).
 *
 * @since 0.1.0
 * @category uris
 */
export const root = (skillMdUri: SkillMdUri): string => skillMdUri.slice(0, -skillMdSuffix.length)

/**
 * The decoded last skill-path segment, which must equal the frontmatter `name` (R4, R96).
 *
 * @since 0.1.0
 * @category uris
 */
export const skillName = (skillMdUri: SkillMdUri): string => {
  // A `SkillMdUri` was parsed when made: its segments are read off it, each decoded as `parse` does.
  const end = skillMdUri.length - skillMdSuffix.length
  return decodeURIComponent(skillMdUri.slice(skillMdUri.lastIndexOf("/", end - 1) + 1, end))
}

/**
 * The decoded skill-path segments (authority first), without `SKILL.md`.
 *
 * @since 0.1.0
 * @category uris
 */
export const skillPath = (skillMdUri: SkillMdUri): ReadonlyArray<string> =>
  skillMdUri.slice(skillMdUri.indexOf("://") + 3, -skillMdSuffix.length).split("/").map(decodeURIComponent)

/**
 * Whether `uri` is the skill's `SKILL.md` or lies under the skill root (R8).
 *
 * @since 0.1.0
 * @category uris
 */
export const contains = (skillMdUri: SkillMdUri, uri: string): boolean =>
  uri === skillMdUri || (uri.startsWith(root(skillMdUri) + "/") && isSafe(uri))

/**
 * The decoded `/`-separated path of `uri` relative to the skill root, or `undefined` when it is not
 * inside the skill.
 *
 * @since 0.1.0
 * @category uris
 */
export const relativePath = (skillMdUri: SkillMdUri, uri: string): string | undefined => {
  if (!contains(skillMdUri, uri)) return undefined
  const segments = Result.getOrThrow(parse(uri)).segments
  return segments.slice(Result.getOrThrow(parse(root(skillMdUri))).segments.length).join("/")
}

/**
 * The URI of a file of a skill from its decoded relative path (`references/my notes.md`), each
 * segment percent-encoded. Refuses paths that are empty, absolute or hold empty, `.` or `..`
 * segments, backslashes or control characters.
 *
 * @since 0.1.0
 * @category uris
 */
export const file = (skillMdUri: SkillMdUri, path: string): Result.Result<SkillUri, InvalidSkillUri> => {
  if (path.length === 0) return invalid(path, "empty file path")
  if (path.includes("\\")) return invalid(path, "backslashes are not allowed in file paths")
  if (controlCharacters.test(path)) return invalid(path, "control characters are not allowed in file paths")
  const segments = path.split("/")
  // A path whose `..` climb above the root is refused for leaving the skill, the problem a reader
  // must hear about, before any other dot segment is refused as mere syntax.
  let depth = 0
  for (const segment of segments) {
    if (segment === "..") depth--
    else if (segment !== ".") depth++
    if (depth < 0) return invalid(path, leavesSkill)
  }
  const encoded: Array<string> = []
  for (const decoded of segments) {
    const e = segment(decoded)
    if (Result.isFailure(e)) return invalid(path, e.failure.reason)
    encoded.push(e.success)
  }
  if (isSkillMdVariant(path.slice(path.lastIndexOf("/") + 1))) return invalid(path, `"${SkillFileName}" must be spelled exactly`)
  // The root is a parsed SKILL.md URI and each segment was checked above and encoded by
  // encodeURIComponent, so the result needs no second parse (this runs once per file served).
  // Joined rather than concatenated: `join` makes one flat string, where `+` makes a tree of
  // string pieces that is copied flat again when the URI is first hashed as a key, both kept.
  return Result.succeed([root(skillMdUri), ...encoded].join("/") as SkillUri)
}

/**
 * Resolves a reference found inside a skill (`references/GUIDE.md`, `./a/../b.md`, or an absolute URI)
 * against the skill root (R103), like a filesystem path. The result can never leave the skill: a `..`
 * that would climb above the root, a scheme-relative or absolute path, or an absolute URI outside
 * the skill fails. Segments are percent-decoded and re-encoded canonically; encoded dot segments,
 * query and fragment are refused.
 *
 * @example
 * ```ts
 * import { SkillUri } from "@mcp-skills/core"
 * import { Result } from "effect"
 *
 * const skill = Result.getOrThrow(SkillUri.skillMd("skill", ["acme", "billing", "refunds"]))
 * // skill://acme/billing/refunds/SKILL.md
 *
 * SkillUri.resolve(skill, "references/../policy.md") // Success: skill://acme/billing/refunds/policy.md
 * SkillUri.resolve(skill, "../../other/SKILL.md")    // Failure: InvalidSkillUri, ".." leaves the skill
 * ```
 *
 * @since 0.1.0
 * @category uris
 */
export const resolve = (skillMdUri: SkillMdUri, reference: string): Result.Result<SkillUri, InvalidSkillUri> => {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(reference)) {
    const parsed = parse(reference)
    if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
    return contains(skillMdUri, reference)
      ? Result.succeed(reference as SkillUri)
      : invalid(reference, `outside the skill ${root(skillMdUri)}`)
  }
  if (reference.length === 0) return invalid(reference, "empty reference")
  if (reference.startsWith("/")) return invalid(reference, "absolute paths leave the skill root")
  if (reference.includes("?")) return invalid(reference, "a query is not allowed")
  if (reference.includes("#")) return invalid(reference, "a fragment is not allowed")
  if (reference.includes("\\")) return invalid(reference, "backslashes are not allowed")
  const stack: Array<string> = []
  const raws = reference.split("/")
  for (let i = 0; i < raws.length; i++) {
    const raw = raws[i]!
    if (raw === ".") continue
    if (raw === "..") {
      if (stack.pop() === undefined) return invalid(reference, leavesSkill)
      continue
    }
    if (raw.length === 0) return invalid(reference, i === raws.length - 1 ? "names a directory" : "empty path segment")
    const decoded = decodeSegment(reference, raw)
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
    stack.push(decoded.success)
  }
  if (stack.length === 0) return invalid(reference, "names the skill root, not a file")
  if (isSkillMdVariant(stack[stack.length - 1]!)) return invalid(reference, `"${SkillFileName}" must be spelled exactly`)
  return file(skillMdUri, stack.join("/"))
}
