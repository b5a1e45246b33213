/**
 * `SKILL.md` frontmatter: the YAML block between the opening and closing `---` lines (spec §1.4).
 *
 * Parsing follows YAML 1.2 with the core schema and normalises to the JSON data model. Everything
 * that lets two honest parsers read one file differently is refused with the line it is on
 * (spec §7 item 6): anchors and aliases, tags outside the core schema, several documents,
 * keys that are not strings, duplicate keys, and numbers JSON parsers do not all read alike.
 * What is left is read as YAML 1.2 reads it, which effect's own reader (the one effect's `McpClient`
 * checks a `SKILL.md` with) does not always do: `portability` says where, and how to write it.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import { Document as YamlDocument, isMap, isNode, isScalar, isSeq, LineCounter, type Node as YamlNode, parseDocument } from "yaml"
import * as EffectFrontmatter from "./internal/effectFrontmatter.js"
import * as PlainFrontmatter from "./internal/plainFrontmatter.js"
import * as YamlFrontmatter from "./internal/yamlFrontmatter.js"
import { MaxFrontmatterBytes } from "./Limits.js"
import { SkillName } from "./SkillName.js"

/**
 * Why a `SKILL.md` has no usable frontmatter. `line` is 1-based in the whole file; `field` names the
 * frontmatter key when one is to blame.
 *
 * @since 0.1.0
 * @category errors
 */
export class FrontmatterError extends Schema.TaggedError<FrontmatterError>()("FrontmatterError", {
  reason: Schema.String,
  line: Schema.optionalKey(Schema.Int),
  field: Schema.optionalKey(Schema.String)
}) {
  override get message(): string {
    const where = this.line === undefined ? "" : ` (line ${this.line})`
    const field = this.field === undefined ? "" : `${this.field}: `
    return `invalid SKILL.md frontmatter${where}: ${field}${this.reason}`
  }
}

const firstInexact = (value: Schema.Json): number | undefined => {
  const stack: Array<Schema.Json> = [value]
  while (stack.length > 0) {
    const next = stack.pop()!
    if (typeof next === "number") {
      if (!YamlFrontmatter.isExactNumber(next)) return next
    } else if (typeof next === "object" && next !== null) {
      for (const item of Array.isArray(next) ? next : Object.values(next)) stack.push(item)
    }
  }
  return undefined
}

const generatedValue: Schema.Codec<Schema.Json> = Schema.Union([
  Schema.Null,
  Schema.Finite.check(Schema.isBetween({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })),
  Schema.Boolean,
  Schema.String,
  Schema.Array(Schema.suspend(() => generatedValue)),
  Schema.Record(Schema.String, Schema.suspend(() => generatedValue))
])

/**
 * A frontmatter value beyond the Agent Skills fields: any JSON whose numbers lie within
 * ±(2^53−1), the one rule `parse` applies to YAML numbers too.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Value: Schema.Codec<Schema.Json> = Schema.Json.annotate({
  toCodecArbitrary: () => Schema.link<Schema.Json>()(generatedValue, { decode: SchemaGetter.passthrough(), encode: SchemaGetter.passthrough() })
}).check(Schema.makeFilter((value) => {
  const number = firstInexact(value)
  return number === undefined || `${number} ${YamlFrontmatter.inexact}; write it as a string`
}))

const Fields = Schema.StructWithRest(
  Schema.Struct({
    name: SkillName,
    description: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1024)),
    license: Schema.optionalKey(Schema.String),
    compatibility: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(500))),
    metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
    "allowed-tools": Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(Schema.String)]))
  }),
  [Schema.Record(Schema.String, Value)]
)

// The frontmatter's types go by name: written out in a declaration file, an object type with both
// optional keys and a JSON index signature fails a library check without
// `exactOptionalPropertyTypes` (TS2411); an interface extending it does not.

/**
 * @since 0.1.0
 * @category models
 */
export interface SkillFrontmatter extends Schema.Schema.Type<typeof Fields> {}

/**
 * The frontmatter as JSON, before its fields are checked.
 *
 * @since 0.1.0
 * @category models
 */
export interface Encoded extends Schema.Codec.Encoded<typeof Fields> {}

/**
 * The schema of {@link SkillFrontmatter}: a `StructWithRest` whose `Type` and `Encoded` are named.
 *
 * @since 0.1.0
 * @category models
 */
export interface SkillFrontmatterSchema
  extends Schema.Opaque<SkillFrontmatter, typeof Fields, {}>, Omit<typeof Fields, keyof Schema.Top>
{
  readonly Encoded: Encoded
}

/**
 * The frontmatter of an Agent Skill: `name` and `description` required, the other Agent Skills
 * fields typed, and every other key kept verbatim as JSON (R3).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SkillFrontmatter: SkillFrontmatterSchema = Schema.Opaque<SkillFrontmatter>()(Fields)

/**
 * A `SKILL.md` split into its frontmatter (a JSON object, before or without the Agent Skills
 * checks) and its Markdown body.
 *
 * @since 0.1.0
 * @category models
 */
export interface Document {
  readonly frontmatter: Schema.JsonObject
  readonly body: string
}

const fail = (reason: string, line?: number, field?: string) =>
  Result.fail(
    new FrontmatterError({
      reason,
      ...(line === undefined ? {} : { line }),
      ...(field === undefined ? {} : { field })
    })
  )

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const utf8Encoder = new TextEncoder()
const delimiter = /^---[ \t]*\r?$/

/**
 * Splits a `SKILL.md` into frontmatter and body. A leading BOM and CRLF line ends are tolerated; the
 * body is returned exactly as it follows the closing `---` line. A frontmatter over
 * `Limits.MaxFrontmatterBytes` is refused before any YAML is parsed, one nested deeper than
 * `Limits.MaxFrontmatterDepth` as soon as the depth is reached.
 *
 * @example
 * ```ts
 * import { SkillFrontmatter } from "@mcp-skills/core"
 * import { Result } from "effect"
 *
 * const document = Result.getOrThrow(SkillFrontmatter.parse("---\nname: refunds\ndescription: Refunds\n---\n# Refunds\n"))
 * document.frontmatter // { name: "refunds", description: "Refunds" }
 * SkillFrontmatter.parse("---\nname: a\ndescription: &x b\n---\n") // Failure: "anchor &x is not allowed" (line 3)
 * ```
 *
 * @since 0.1.0
 * @category codecs
 */
export const parse = (input: Uint8Array | string): Result.Result<Document, FrontmatterError> => {
  let text: string
  if (typeof input === "string") {
    text = input
  } else {
    try {
      text = utf8.decode(input)
    } catch {
      return fail("SKILL.md is not valid UTF-8")
    }
  }
  return Result.flatMap(split(text), ({ source, body }) => {
    // Most frontmatter is a few plain `key: value` lines, which yaml's general machinery takes tens
    // of microseconds to read: at catalogue scale that is most of start-up. The fast path reads
    // exactly those and gives up on anything else, which yaml then reads or refuses as before.
    const plain = PlainFrontmatter.parse(source)
    const frontmatter = plain === undefined
      ? Result.mapError(YamlFrontmatter.parse(source, 1), (problem) => new FrontmatterError(problem))
      : Result.succeed(plain)
    return Result.map(frontmatter, (frontmatter) => ({ frontmatter, body }))
  })
}

// The frontmatter's YAML with LF line ends (its first line is line 2 of the file), and the body.
const split = (input: string): Result.Result<{ readonly source: string; readonly body: string }, FrontmatterError> => {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input
  const lineEnd = (from: number) => {
    const at = text.indexOf("\n", from)
    return at === -1 ? text.length : at
  }
  const firstEnd = lineEnd(0)
  if (!delimiter.test(text.slice(0, firstEnd))) return fail("SKILL.md must start with a --- line opening the YAML frontmatter", 1)
  const start = firstEnd + 1
  // The closing line is looked for only as far as the limit allows (a UTF-16 unit is at least one
  // UTF-8 byte), so neither the search nor the YAML parser ever sees more than the limit.
  let close = text.indexOf("\n---", firstEnd)
  let closeEnd = text.length
  while (close !== -1 && close - start <= MaxFrontmatterBytes) {
    closeEnd = lineEnd(close + 1)
    if (delimiter.test(text.slice(close + 1, closeEnd))) break
    close = text.indexOf("\n---", closeEnd)
  }
  if (close === -1 || close - start > MaxFrontmatterBytes) {
    return text.length - start <= MaxFrontmatterBytes
      ? fail("the frontmatter is not closed by a --- line", text.split("\n").length)
      : fail(`the frontmatter is over ${MaxFrontmatterBytes} bytes (Limits.MaxFrontmatterBytes): no --- line closes it sooner`, 1)
  }
  const raw = text.slice(start, Math.max(start, close))
  const bytes = utf8Encoder.encode(raw).byteLength
  if (bytes > MaxFrontmatterBytes) {
    return fail(`the frontmatter is ${bytes} bytes, over the limit of ${MaxFrontmatterBytes} (Limits.MaxFrontmatterBytes)`, 1)
  }
  const lf = raw.replaceAll("\r\n", "\n")
  return Result.succeed({ source: lf.endsWith("\r") ? lf.slice(0, -1) : lf, body: text.slice(closeEnd + 1) })
}

const decodeFrontmatter = Schema.decodeUnknownResult(SkillFrontmatter)

/**
 * Checks a JSON frontmatter object against the Agent Skills rules.
 *
 * @since 0.1.0
 * @category codecs
 */
export const decode = (frontmatter: Schema.JsonObject): Result.Result<SkillFrontmatter, FrontmatterError> => {
  for (const field of ["name", "description"] as const) {
    if (!Object.hasOwn(frontmatter, field)) return fail("missing (required)", undefined, field)
  }
  return Result.mapError(decodeFrontmatter(frontmatter), (error) => {
    // The formatter writes the issue, then `at ["field"]…`: the field goes to `field`, so that the
    // message names it once, and a deeper path stays with the reason.
    const [issue, at] = error.message.split(/\n\s*at /)
    const path = /^\["((?:[^"\\]|\\.)*)"\](.*)$/.exec(at?.trim() ?? "")
    const reason = issue!.replace(/\s+/g, " ").trim() + (path?.[2] ? ` at ${path[2]}` : "")
    return new FrontmatterError({ reason, ...(path === null ? {} : { field: JSON.parse(`"${path[1]}"`) as string }) })
  })
}

/**
 * Parses a `SKILL.md` and checks its frontmatter.
 *
 * @since 0.1.0
 * @category codecs
 */
export const parseSkillMd = (
  input: Uint8Array | string
): Result.Result<{ readonly frontmatter: SkillFrontmatter; readonly body: string }, FrontmatterError> =>
  Result.flatMap(parse(input), (doc) => Result.map(decode(doc.frontmatter), (frontmatter) => ({ frontmatter, body: doc.body })))

/**
 * Writes frontmatter and body back into a `SKILL.md` that `parse` reads as the same value.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (frontmatter: Schema.JsonObject, body: string): string => {
  const doc = new YamlDocument(frontmatter, { version: "1.2", schema: "core", aliasDuplicateObjects: false })
  return `---\n${doc.toString({ lineWidth: 0 })}---\n${body}`
}

/**
 * One frontmatter key whose values differ; a missing side is `undefined`.
 *
 * @since 0.1.0
 * @category models
 */
export interface FieldDifference {
  readonly field: string
  readonly expected: Schema.Json | undefined
  readonly actual: Schema.Json | undefined
}

/**
 * Compares two frontmatter objects key by key (R126) and reports every key whose JSON values differ,
 * in sorted key order. Empty means identical.
 *
 * @since 0.1.0
 * @category utils
 */
export const diff = (expected: Schema.JsonObject, actual: Schema.JsonObject): ReadonlyArray<FieldDifference> => {
  const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort()
  const out: Array<FieldDifference> = []
  for (const field of keys) {
    const e = Object.hasOwn(expected, field) ? expected[field] : undefined
    const a = Object.hasOwn(actual, field) ? actual[field] : undefined
    if (e === undefined || a === undefined ? e !== a : !jsonEquals(e, a)) out.push({ field, expected: e, actual: a })
  }
  return out
}

/**
 * Deep equality of two JSON values (object key order ignored).
 *
 * @since 0.1.0
 * @category utils
 */
export const jsonEquals = (a: Schema.Json, b: Schema.Json): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEquals(x, b[i]!))
  }
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  const ob = b as Schema.JsonObject
  const oa = a as Schema.JsonObject
  return ka.every((k) => Object.hasOwn(ob, k) && jsonEquals(oa[k]!, ob[k]!))
}

/**
 * One place where effect's reader of `SKILL.md` frontmatter reads other JSON than `parse` (YAML 1.2,
 * core schema), with how to write it so that both read it alike.
 *
 * @since 0.2.0
 * @category models
 */
export interface PortabilityFinding {
  /** The key concerned: `description`, `metadata.version`, `tags[1]`; empty for the whole frontmatter. */
  readonly key: string
  /** 1-based in the whole file, when known. */
  readonly line?: number
  /** What `parse` reads there, and so what a listing carries; `undefined`: nothing. */
  readonly listed: Schema.Json | undefined
  /** What effect's reader reads there; `undefined`: nothing. */
  readonly effect: Schema.Json | undefined
  /** What differs. */
  readonly reason: string
  /** How to write it portably. */
  readonly fix: string
}

type Path = ReadonlyArray<string | number>
type Found = Omit<PortabilityFinding, "key" | "line"> & { readonly path: Path }

const isRecord = (value: Schema.Json | undefined): value is Schema.JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// JSON is YAML 1.2, and effect's reader reads JSON scalars and flow collections as JSON does.
const asJson = (value: Schema.Json) => {
  const json = JSON.stringify(value)
  return json.length <= 60 ? `write it as JSON, which both read alike: ${json}` : "write it as JSON (\"...\", [...] or {...}), which both read alike"
}

const show = (value: Schema.Json | undefined) => {
  const json = value === undefined ? "nothing" : JSON.stringify(value)
  return json.length <= 60 ? json : `${json.slice(0, 57)}...`
}

const explain = (listed: Schema.Json, effect: Schema.Json): Pick<Found, "reason" | "fix"> => {
  if (typeof listed === "string" && typeof effect === "string" && listed.startsWith(effect) && /^\n+$/.test(listed.slice(effect.length))) {
    return {
      reason: "effect's reader drops the final line break of this block scalar, the frontmatter's last value",
      fix: "end it with |- or >- (no final line break for either reader), or put another key after it"
    }
  }
  // effect's reader takes no tags: `!!str 1` is that text to it.
  if (typeof effect === "string" && effect.startsWith("!!")) {
    return { reason: `effect's reader keeps the tag as text, ${show(effect)}`, fix: `leave the tag out; ${asJson(listed)}` }
  }
  if (typeof listed === "number" && typeof effect === "string") {
    return {
      reason: `effect's reader reads the string ${show(effect)}, YAML 1.2 the number ${listed}`,
      fix: `quote it (${JSON.stringify(effect)}) for the string, or write ${listed} for the number`
    }
  }
  if (typeof listed === "string" && typeof effect !== "string" && !isRecord(effect) && !Array.isArray(effect)) {
    return { reason: `effect's reader reads ${show(effect)}, YAML 1.2 the string ${show(listed)}`, fix: `quote it: ${show(listed)}` }
  }
  return { reason: `effect's reader reads ${show(effect)}, YAML 1.2 ${show(listed)}`, fix: asJson(listed) }
}

// Every place below `path` where the two readings differ, at least one wherever they are not equal.
// On JSON, `jsonEquals` is effect's `Equal.equals` (what effect's client compares with), without
// the hashing that makes it cost more than a small frontmatter's whole check.
const differences = (listed: Schema.Json, effect: Schema.Json, path: Path, out: Array<Found>): void => {
  if (jsonEquals(listed, effect)) return
  if (isRecord(listed) && isRecord(effect)) {
    const missing = Object.keys(listed).filter((key) => !Object.hasOwn(effect, key))
    for (const key of missing) {
      out.push({
        path: [...path, key],
        listed: listed[key],
        effect: undefined,
        reason: key === "<<"
          ? "effect's reader takes << for a merge key, and merges the mapping under it into this one"
          : "effect's reader reads this key as another, as it reads keys like values (`_1` as 1)",
        fix: `quote the key: ${JSON.stringify(key)}:`
      })
    }
    for (const key of Object.keys(listed)) {
      if (Object.hasOwn(effect, key)) differences(listed[key]!, effect[key]!, [...path, key], out)
    }
    // Keys only effect's reader has, where it has every key YAML 1.2 has: reported on their mapping.
    if (missing.length === 0 && Object.keys(effect).length > Object.keys(listed).length) {
      out.push({ path, listed, effect, ...explain(listed, effect) })
    }
    return
  }
  if (Array.isArray(listed) && Array.isArray(effect) && listed.length === effect.length) {
    listed.forEach((item, index) => differences(item, effect[index]!, [...path, index], out))
    return
  }
  out.push({ path, listed, effect, ...explain(listed, effect) })
}

const keyOf = (path: Path) =>
  path.map((segment, index) =>
    typeof segment === "number"
      ? `[${segment}]`
      : `${index === 0 ? "" : "."}${/^[\w-]+$/.test(segment) ? segment : JSON.stringify(segment)}`
  ).join("")

// The line of each path's last key or item, looked for only once a difference is found.
const lines = (text: string): (path: Path) => number | undefined => {
  const located = split(text)
  if (Result.isFailure(located)) return () => undefined
  const lineCounter = new LineCounter()
  const doc = parseDocument(located.success.source, { version: "1.2", schema: "core", merge: false, uniqueKeys: false, lineCounter })
  // The frontmatter's first line is the file's second.
  const lineAt = (node: YamlNode) => node.range == null ? undefined : lineCounter.linePos(node.range[0]).line + 1
  return (path) => {
    let node: unknown = doc.contents
    let line: number | undefined
    for (const segment of path) {
      if (isMap(node)) {
        const pair = node.items.find((item) => isScalar(item.key) && item.key.value === segment)
        if (!isScalar(pair?.key)) break
        line = lineAt(pair.key)
        node = pair.value
      } else if (isSeq(node) && typeof segment === "number") {
        const item = node.items[segment]
        if (!isNode(item)) break
        line = lineAt(item) ?? line
        node = item
      } else {
        break
      }
    }
    return line
  }
}

/**
 * Where effect's `McpClient` reads `text`, a `SKILL.md`, as other frontmatter than `frontmatter`
 * (what `parse` reads from it, and a listing carries): effect's client refuses such a skill, since
 * its two descriptions differ. Empty when effect reads exactly `frontmatter`, equal as effect's
 * client compares (`Equal.equals`). The two readers differ on a block scalar (`|`, `>`) that is the last
 * value (effect's drops its final line break), on numbers with leading zeros (`0755`: the number
 * 755 in YAML 1.2, the string "0755" to effect), on `_` in numbers, on case in `TRUE`-like words,
 * hexadecimal and octal, on tags, and on `<<`.
 *
 * @example
 * ```ts
 * import { SkillFrontmatter } from "@mcp-skills/core"
 * import { Result } from "effect"
 *
 * const text = "---\nname: deploy\ndescription: >\n  Deploy the app\nmode: 0755\n---\n"
 * const { frontmatter } = Result.getOrThrow(SkillFrontmatter.parse(text))
 * SkillFrontmatter.portability(text, frontmatter)
 * // [{ key: "mode", line: 5, listed: 755, effect: "0755", reason: "effect's reader reads the string \"0755\", …",
 * //    fix: "quote it (\"0755\") for the string, or write 755 for the number" }]
 * ```
 *
 * @since 0.2.0
 * @category utils
 */
export const portability = (text: string, frontmatter: Schema.JsonObject): ReadonlyArray<PortabilityFinding> => {
  const effect = EffectFrontmatter.read(text)
  if (Result.isFailure(effect)) {
    return [{
      key: "",
      ...(effect.failure.line === undefined ? {} : { line: effect.failure.line }),
      listed: frontmatter,
      effect: undefined,
      reason: `effect's reader cannot read the frontmatter: ${effect.failure.reason}`,
      // effect's reader merges under every unquoted `<<`, whatever the value.
      fix: /merge key/i.test(effect.failure.reason)
        ? "quote the key: \"<<\":"
        : "write each key plainly, and its value as JSON (\"...\", [...] or {...}) on the key's line"
    }]
  }
  const found: Array<Found> = []
  differences(frontmatter, effect.success, [], found)
  if (found.length === 0) return []
  const lineOf = lines(text)
  return found.map(({ path, ...rest }) => {
    const line = lineOf(path)
    return { key: keyOf(path), ...(line === undefined ? {} : { line }), ...rest }
  })
}
