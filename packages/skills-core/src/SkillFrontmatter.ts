/**
 * `SKILL.md` frontmatter: the YAML block between the opening and closing `---` lines (spec §1.4).
 *
 * Parsing follows YAML 1.2 with the core schema and normalises to the JSON data model. Everything
 * that lets two honest parsers read one file differently is refused with the line it is on
 * (spec §7 item 6): anchors and aliases, tags outside the core schema, several documents,
 * keys that are not strings, duplicate keys, and numbers JSON cannot carry exactly.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Document as YamlDocument, isAlias, isMap, isPair, isScalar, LineCounter, parseAllDocuments, visit } from "yaml"
import { SkillName } from "./SkillName.js"

/**
 * Why a `SKILL.md` has no usable frontmatter. `line` is 1-based in the whole file; `field` names the
 * frontmatter key when one is to blame.
 *
 * @since 0.1.0
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

const Fields = Schema.StructWithRest(
  Schema.Struct({
    name: SkillName,
    description: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1024)),
    license: Schema.optionalKey(Schema.String),
    compatibility: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(500))),
    metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
    "allowed-tools": Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(Schema.String)]))
  }),
  [Schema.Record(Schema.String, Schema.Json)]
)

// The frontmatter's types go by name: written out in a declaration file, an object type with both
// optional keys and a JSON index signature fails a library check without
// `exactOptionalPropertyTypes` (TS2411); an interface extending it does not.

/**
 * @since 0.1.0
 */
export interface SkillFrontmatter extends Schema.Schema.Type<typeof Fields> {}

/**
 * The frontmatter as JSON, before its fields are checked.
 *
 * @since 0.1.0
 */
export interface Encoded extends Schema.Codec.Encoded<typeof Fields> {}

/**
 * The schema of {@link SkillFrontmatter}: a `StructWithRest` whose `Type` and `Encoded` are named.
 *
 * @since 0.1.0
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
 */
export const SkillFrontmatter: SkillFrontmatterSchema = Schema.Opaque<SkillFrontmatter>()(Fields)

/**
 * A frontmatter object as JSON, before or without the Agent Skills checks.
 *
 * @since 0.1.0
 */
export type JsonObject = { readonly [key: string]: Schema.Json }

/**
 * A `SKILL.md` split into its frontmatter (as JSON) and its Markdown body.
 *
 * @since 0.1.0
 */
export interface Document {
  readonly frontmatter: JsonObject
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
const coreTags = new Set(
  ["str", "int", "float", "bool", "null", "map", "seq"].map((name) => `tag:yaml.org,2002:${name}`)
)
const delimiter = /^---[ \t]*$/

/**
 * Splits a `SKILL.md` into frontmatter and body. A leading BOM and CRLF line ends are tolerated; the
 * body is returned exactly as it follows the closing `---` line.
 *
 * @since 0.1.0
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
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  const lines = text.split("\n")
  if (!delimiter.test(stripCr(lines[0]!))) return fail("SKILL.md must start with a --- line opening the YAML frontmatter", 1)
  let close = -1
  for (let i = 1; i < lines.length; i++) {
    if (delimiter.test(stripCr(lines[i]!))) {
      close = i
      break
    }
  }
  if (close === -1) return fail("the frontmatter is not closed by a --- line", lines.length)
  const yaml = lines.slice(1, close).map(stripCr).join("\n")
  const body = lines.slice(close + 1).join("\n")
  const frontmatter = parseYaml(yaml, 1)
  return Result.map(frontmatter, (frontmatter) => ({ frontmatter, body }))
}

const stripCr = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line)

const parseYaml = (source: string, lineOffset: number): Result.Result<JsonObject, FrontmatterError> => {
  const lineCounter = new LineCounter()
  const docs = parseAllDocuments(source, {
    version: "1.2",
    schema: "core",
    uniqueKeys: true,
    merge: false,
    strict: true,
    prettyErrors: true,
    lineCounter
  })
  const lineAt = (offset: number | undefined) => (offset === undefined ? undefined : lineCounter.linePos(offset).line + lineOffset)
  if (!Array.isArray(docs) || docs.length === 0 || docs[0]!.contents === null) {
    return fail("the frontmatter is empty; it must be a mapping with name and description", lineOffset + 1)
  }
  if (docs.length > 1) return fail("the frontmatter holds several YAML documents", lineAt(docs[1]!.range[0]))
  const doc = docs[0]!
  const problem = doc.errors[0] ?? doc.warnings[0]
  if (problem !== undefined) {
    return fail(problem.message.split("\n")[0]!, problem.linePos?.[0].line === undefined ? undefined : problem.linePos[0].line + lineOffset)
  }
  if (!isMap(doc.contents)) return fail("the frontmatter must be a mapping", lineAt(doc.contents?.range?.[0]))
  let refusal: FrontmatterError | undefined
  const refuse = (reason: string, offset: number | undefined) => {
    refusal = new FrontmatterError({ reason, ...(lineAt(offset) === undefined ? {} : { line: lineAt(offset)! }) })
    return visit.BREAK
  }
  visit(doc, {
    Alias: (_, node) => refuse("aliases are not allowed (the JSON mapping would be ambiguous)", node.range?.[0]),
    Node: (_, node) => {
      if (node.anchor !== undefined) return refuse(`anchor &${node.anchor} is not allowed`, node.range?.[0])
      if (node.tag !== undefined && !coreTags.has(node.tag)) return refuse(`tag ${node.tag} is not allowed`, node.range?.[0])
      if (isScalar(node) && typeof node.value === "number" && !isJsonExact(node.value, node.source)) {
        return refuse(`${String(node.source ?? node.value)} cannot be represented exactly in JSON; quote it`, node.range?.[0])
      }
      return undefined
    },
    Pair: (_, pair) => {
      if (!isPair(pair) || !isScalar(pair.key) || typeof pair.key.value !== "string") {
        const key = isScalar(pair.key) ? String(pair.key.value) : "a complex key"
        return refuse(`key ${key} is not a string; quote it`, isAlias(pair.key) ? pair.key.range?.[0] : (pair.key as { range?: [number] } | null)?.range?.[0])
      }
      return undefined
    }
  })
  if (refusal !== undefined) return Result.fail(refusal)
  return Result.succeed(doc.toJS() as JsonObject)
}

// An integer literal beyond 2^53 silently becomes another number; floats are approximate by nature.
const isJsonExact = (n: number, source: unknown) => {
  if (!Number.isFinite(n)) return false
  if (Number.isSafeInteger(n) || typeof source !== "string" || !/^[-+]?(?:[0-9]+|0x[0-9a-fA-F]+|0o[0-7]+)$/.test(source)) return true
  const negative = source.startsWith("-")
  const magnitude = BigInt(source.replace(/^[-+]/, ""))
  return (negative ? -magnitude : magnitude) === BigInt(n)
}

const decodeFrontmatter = Schema.decodeUnknownResult(SkillFrontmatter)

/**
 * Checks a JSON frontmatter object against the Agent Skills rules.
 *
 * @since 0.1.0
 */
export const decode = (frontmatter: JsonObject): Result.Result<SkillFrontmatter, FrontmatterError> => {
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
 */
export const parseSkillMd = (
  input: Uint8Array | string
): Result.Result<{ readonly frontmatter: SkillFrontmatter; readonly body: string }, FrontmatterError> =>
  Result.flatMap(parse(input), (doc) => Result.map(decode(doc.frontmatter), (frontmatter) => ({ frontmatter, body: doc.body })))

/**
 * Writes frontmatter and body back into a `SKILL.md` that `parse` reads as the same value.
 *
 * @since 0.1.0
 */
export const render = (frontmatter: JsonObject, body: string): string => {
  const doc = new YamlDocument(frontmatter, { version: "1.2", schema: "core", aliasDuplicateObjects: false })
  // `parse` refuses integer literals beyond 2^53; such numbers are written in exponent form instead.
  visit(doc, {
    Scalar: (_, node) => {
      if (typeof node.value === "number" && Number.isInteger(node.value) && !Number.isSafeInteger(node.value)) node.format = "EXP"
    }
  })
  return `---\n${doc.toString({ lineWidth: 0 })}---\n${body}`
}

/**
 * One frontmatter key whose values differ; a missing side is `undefined`.
 *
 * @since 0.1.0
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
 */
export const diff = (expected: JsonObject, actual: JsonObject): ReadonlyArray<FieldDifference> => {
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
 */
export const jsonEquals = (a: Schema.Json, b: Schema.Json): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEquals(x, b[i]!))
  }
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  const ob = b as { readonly [key: string]: Schema.Json }
  const oa = a as { readonly [key: string]: Schema.Json }
  return ka.every((k) => Object.hasOwn(ob, k) && jsonEquals(oa[k]!, ob[k]!))
}
