/**
 * The plain-frontmatter fast path (`internal/plainFrontmatter.ts`) held against the yaml path
 * (`internal/yamlFrontmatter.ts`): wherever it reads a frontmatter it returns what yaml returns,
 * key order included, and it gives up on everything it is not meant to read.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Result, Schema } from "effect"
import { SkillFrontmatter } from "../src/index.js"
import * as PlainFrontmatter from "../src/internal/plainFrontmatter.js"
import * as YamlFrontmatter from "../src/internal/yamlFrontmatter.js"

const index = (size: number) => Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: size - 1 })))
const pick = (values: ReadonlyArray<string>) => Arbitrary.map(index(values.length), (i) => values[i]!)
/** Each arbitrary as often as its weight. */
const weighted = (...choices: ReadonlyArray<readonly [number, Arbitrary.Arbitrary<string>]>): Arbitrary.Arbitrary<string> => {
  const slots = choices.flatMap(([weight, arbitrary]) => Array.from({ length: weight }, () => arbitrary))
  return Arbitrary.flatMap(index(slots.length), (i) => slots[i]!)
}
const joined = (parts: Arbitrary.Arbitrary<string>, minLength: number, maxLength: number) =>
  Arbitrary.map(Arbitrary.array(parts, { minLength, maxLength }), (items) => items.join(""))

// Words the core schema reads as null, booleans or numbers, words YAML 1.1 did, and near misses.
const words = ["true", "True", "TRUE", "tRue", "false", "FALSE", "null", "Null", "NULL", "nuLL", "~", "yes", "no", "on", "off", "y", "n", "Yes", "NO"]
const numbers = ["1", "0", "-1", "+1", "1.5", ".5", "1.", "1e3", "1E3", "e", "E", "0x1F", "0o17", "0b1", ".inf", "-.inf", ".nan", ".NaN", "inf", "nan", "1_000", "2024-01-01"]
const keyParts = ["name", "description", "license", "metadata", "team", "version", "allowed-tools", "a", "b", "x_y", "_k", "k1", "constructor", "toString"]
const oddKeyParts = [...words, ...numbers, "-", "_", "__proto__", ":", "#", " ", "  ", "\t", "'", "\"", "?", "? ", "- ", ".", "é", "日本", "!", "&", "*", "[", "{", "<<", "%", "@", "`", "x".repeat(200)]
const startParts = ["pdf", "Work with", "MIT", "a", "x y", "é", "日本語", "😀", "/", "(", "$", "_", "Bash(git:*)", "http://x.io/a?b=c", "it's", "C-3PO"]
const valueParts = ["pdf", "tools", "Work with", "MIT", "forms", "a", " ", "x y", "é", "日本語", "😀", "/", "(", ")", "$", ",", "'", "\"", "-", "_", "=", "<", "\\", "a:b", "http://x.io/a?b=c", "Bash(git:*)"]
const oddValueParts = [
  ...words,
  ...numbers,
  "", ":", ": ", " :", "::", "#", " #", "# ", "\t", "  ", "-", "- ", "--", "---", "...", "?", "? ", "[", "]", "{", "}", "[a, b]", "{a: b}",
  "&a", "*a", "!tag", "!!str", "|", ">", "|-", "%", "@", "`", "<<", "''", "\"\"", "\\n", "\\\"", "\\", "\r", "\u0000", "\u0002", "\u001f",
  "\u007f", "\u0085", "\u00a0", "\u2028", "\u2029", "\ufeff", "\ufffe", "\ud800", "\udc00", "\ud83d\ude00"
]

// Keys repeat now and then, as they should: a duplicate is for yaml to refuse.
const key = weighted(
  [15, Arbitrary.map(Arbitrary.all([pick(keyParts), pick(["", "", "2", "-x", "_y", "-", "_"])]), (parts) => parts.join(""))],
  [1, joined(pick([...keyParts, ...oddKeyParts]), 1, 3)]
)
const body = Arbitrary.map(
  Arbitrary.all([
    weighted([15, pick(startParts)], [1, pick([...valueParts, ...oddValueParts])]),
    joined(weighted([15, pick(valueParts)], [1, pick(oddValueParts)]), 0, 4)
  ]),
  (parts) => parts.join("")
)
const value = weighted(
  [10, body],
  [4, Arbitrary.map(body, (text) => `'${text}'`)],
  [4, Arbitrary.map(body, (text) => `"${text}"`)],
  [1, Arbitrary.schema(Schema.String)],
  [1, pick(oddValueParts)]
)
// What follows a key: mostly `: `, and the spacing mistakes next to it.
const separator = weighted([20, Arbitrary.Constant(": ")], [1, pick([":", " : ", ":  ", ": \t", ":\t", " :", "::", ": : "])])
const scalarLine = Arbitrary.map(Arbitrary.all([key, separator, value]), (parts) => parts.join(""))
// A `key:` line and the lines under it, mostly at one indentation of 1 to 4 spaces, sometimes at
// another one, a tab, or none.
const block = Arbitrary.flatMap(Arbitrary.all([key, pick([" ", "  ", "   ", "    "])]), ([head, indent]) =>
  Arbitrary.map(
    Arbitrary.array(
      Arbitrary.all([weighted([15, Arbitrary.Constant(indent)], [1, pick(["", " ", "  ", "   ", "    ", "      ", "\t", " \t", "\t "])]), scalarLine]),
      { maxLength: 4 }
    ),
    (lines) => [`${head}:`, ...lines.map(([at, line]) => at + line)].join("\n")
  ))
const oddLine = pick([
  "", " ", "  ", "\t", "---", "...", "--- x", "# comment", "#", "- a", "-", "? a", "?", ": a", "  continued", "   more", "  - item",
  "%YAML 1.2", "&a x: y", "!t x: y", "x: [a, b]", "x: {a: b}", "x: |", "x: >-", "x: a #c", "x: *a", "x: &a b", "x: !!str b", "[a]: b",
  "\"q\": v", "'q': v", "x:", "x: ", "<<: {a: b}", "\ufeffx: y", "x: y\r"
])
const Frontmatter = Arbitrary.map(
  Arbitrary.all([
    Arbitrary.array(weighted([14, scalarLine], [6, block], [1, oddLine]), { minLength: 1, maxLength: 5 }),
    weighted([12, Arbitrary.Constant("")], [1, pick(["\n", "\n\n", " ", "\n  "])])
  ]),
  ([lines, end]) => lines.join("\n") + end
)

const viaYaml = (source: string) => {
  const result = YamlFrontmatter.parse(source, 1)
  if (Result.isFailure(result)) throw new Error(`the fast path read what yaml refuses: ${result.failure.reason}`)
  return result.success
}

/**
 * The same JSON values, with the same keys in the same order as the same kind of property of the
 * same kind of object. (`toStrictEqual` cannot say it: it takes a `constructor` key for the class.)
 */
const expectSame = (actual: Schema.Json, expected: Schema.Json) => {
  if (typeof expected !== "object" || expected === null) return expect(actual).toBe(expected)
  expect(typeof actual === "object" && actual !== null && Object.getPrototypeOf(actual)).toBe(Object.getPrototypeOf(expected))
  const properties = Object.getOwnPropertyDescriptors(actual)
  const expectedProperties = Object.getOwnPropertyDescriptors(expected)
  expect(Reflect.ownKeys(properties)).toEqual(Reflect.ownKeys(expectedProperties))
  for (const [key, property] of Object.entries(expectedProperties)) {
    const { value, ...flags } = properties[key]!
    const { value: expectedValue, ...expectedFlags } = property
    expect(flags).toEqual(expectedFlags)
    expectSame(value, expectedValue)
  }
}

describe("SkillFrontmatter plain fast path", () => {
  it.prop("wherever the fast path reads a frontmatter, it returns what the yaml path returns", [Frontmatter], ([source]) => {
    const fast = PlainFrontmatter.parse(source)
    if (fast !== undefined) expectSame(fast, viaYaml(source))
  }, { arbitrary: { runs: 5_000 } })

  it.effect("the generator above reaches both sides of the fast path, often", () =>
    Effect.gen(function*() {
      const sources = yield* Arbitrary.sampleEffect(Frontmatter, { count: 2_000, seed: 23 })
      const read = sources.filter((source) => PlainFrontmatter.parse(source) !== undefined)
      expect(read.length).toBeGreaterThan(sources.length / 5)
      expect(read.length).toBeLessThan(sources.length * 4 / 5)
      // Accepted inputs with a nested map, a quoted value and a non-ASCII one are among them.
      expect(read.some((source) => /^ +\S/m.test(source))).toBe(true)
      expect(read.some((source) => /: ['"]/.test(source))).toBe(true)
      expect(read.some((source) => /[^\x00-\x7f]/.test(source))).toBe(true)
    }))

  it.prop(
    "parse and parseSkillMd give what they gave through yaml alone, with LF or CRLF line ends, decoded as before",
    [Frontmatter, Arbitrary.schema(Schema.Boolean)],
    ([source, crlf]) => {
      const yaml = YamlFrontmatter.parse(source, 1)
      if (PlainFrontmatter.parse(source) === undefined || Result.isFailure(yaml)) return
      const eol = crlf ? "\r\n" : "\n"
      const file = `---${eol}${source.replaceAll("\n", eol)}${eol}---${eol}# Body${eol}`
      const parsed = Result.getOrThrow(SkillFrontmatter.parse(file))
      expectSame(parsed.frontmatter, yaml.success)
      expect(parsed.body).toBe(`# Body${eol}`)
      const decoded = SkillFrontmatter.parseSkillMd(file)
      const before = SkillFrontmatter.decode(yaml.success)
      if (Result.isSuccess(before)) {
        expect(Result.getOrThrow(decoded).frontmatter).toStrictEqual(before.success)
      } else {
        if (Result.isSuccess(decoded)) throw new Error("decoded what decode refuses")
        expect(decoded.failure).toStrictEqual(before.failure)
      }
    },
    { arbitrary: { runs: 1_000 } }
  )

  const read: ReadonlyArray<[string, string]> = [
    ["the benchmark's frontmatter", "name: data-report-00042\ndescription: Work with data report 00042\nlicense: MIT\nmetadata:\n  team: bench"],
    [
      "typical frontmatter with quoted metadata",
      "name: pdf-tools\ndescription: Work with pdf tools and forms\nlicense: MIT\nmetadata:\n  team: bench\n  version: \"1.2\""
    ],
    [
      "a description with punctuation, a URL and non-ASCII text",
      "name: pdf\ndescription: Fill PDF forms (AcroForm), e.g. https://example.com/a?b=c; handles \"quotes\", it's fine — 日本語 😀\nallowed-tools: Bash(git:*) Read"
    ],
    ["single quotes around what plain text cannot say", "name: a\ndescription: 'Use when: the user asks, or - [maybe] - not'\ncompatibility: ' node >= 22 '"],
    ["one-space and four-space nested maps", "name: a\ndescription: b\nmetadata:\n    owner: ops\n    tier: gold\nextra:\n a: yes"],
    ["YAML 1.1 booleans, strings in YAML 1.2", "name: a\ndescription: b\nflag: yes\nother: off\ny: n"]
  ]
  for (const [title, source] of read) {
    it(`reads ${title}, as yaml does`, () => {
      const fast = PlainFrontmatter.parse(source)
      if (fast === undefined) throw new Error("declined")
      expectSame(fast, viaYaml(source))
    })
  }

  it("reads the benchmark's SKILL.md through parseSkillMd, decoded as before", () => {
    const file = "---\nname: data-report-00042\ndescription: Work with data report 00042\nlicense: MIT\nmetadata:\n  team: bench\n---\n\n# Body\n"
    expect(PlainFrontmatter.parse(file.split("\n").slice(1, 6).join("\n"))).toBeDefined()
    expect(Result.getOrThrow(SkillFrontmatter.parseSkillMd(file))).toStrictEqual({
      frontmatter: { name: "data-report-00042", description: "Work with data report 00042", license: "MIT", metadata: { team: "bench" } },
      body: "\n# Body\n"
    })
    // A field the fast path reads but the Agent Skills rules refuse is refused by decode, as before.
    const upper = SkillFrontmatter.parseSkillMd("---\nname: Data\ndescription: d\n---\n")
    expect(Result.isFailure(upper) && upper.failure.field).toBe("name")
  })

  const declined: ReadonlyArray<[string, string]> = [
    ["an empty frontmatter", ""],
    ["a blank line", "name: a\n\ndescription: b"],
    ["a comment line", "name: a\n# note\ndescription: b"],
    ["a comment after a value", "name: a #note"],
    ["# inside quotes", "name: \"C#\""],
    ["a number", "n: 1"],
    ["a float", "n: 1.5"],
    ["a hexadecimal integer", "n: 0x1F"],
    ["infinity", "n: .inf"],
    ["a date-like string", "d: 2024-01-01"],
    ["a boolean", "b: true"],
    ["a capitalised boolean", "b: False"],
    ["null", "v: null"],
    ["~", "v: ~"],
    ["an empty value", "v:"],
    ["a value of one space", "v: "],
    ["a key with nothing under it before the next key", "v:\nw: x"],
    ["a flow sequence", "v: [a, b]"],
    ["a flow map", "v: {a: b}"],
    ["a block sequence", "v:\n  - a"],
    ["a literal block scalar", "v: |\n  text"],
    ["a folded block scalar", "v: >\n  text"],
    ["an anchor", "v: &a x"],
    ["an alias", "v: *a"],
    ["a tag", "v: !!str x"],
    ["a continuation line", "description: one\n  two"],
    ["a continuation line in a nested map", "m:\n  a: one\n   two"],
    ["mixed indentation in a nested map", "m:\n  a: x\n    b: y"],
    ["a map nested two levels", "m:\n  a:\n    b: c"],
    ["a tab", "name:\ta"],
    ["a tab in a value", "name: a\tb"],
    ["a tab as indentation", "m:\n\ta: b"],
    ["two spaces after the colon", "name:  a"],
    ["a space before the colon", "name : a"],
    ["no space after the colon", "name:a"],
    ["a trailing space", "name: a "],
    ["a mapping inside a value", "description: Use when: asked"],
    ["a trailing colon", "description: ask:"],
    ["a duplicate key", "name: a\nname: b"],
    ["a duplicate nested key", "m:\n  a: x\n  a: y"],
    ["a key that is a number", "1: a"],
    ["a key that is a boolean", "true: a"],
    ["a key that is null", "null: a"],
    ["a quoted key", "\"name\": a"],
    ["a __proto__ key", "__proto__: a"],
    ["a key over 128 characters", `${"k".repeat(129)}: a`],
    ["a document start", "---\nname: a"],
    ["a document end", "name: a\n..."],
    ["a directive", "%YAML 1.2\n---\nname: a"],
    ["a complex key", "? a\n: b"],
    ["a sequence at the top", "- a"],
    ["an escape in double quotes", "name: \"a\\nb\""],
    ["an escaped single quote", "name: 'it''s'"],
    ["text after a closing quote", "name: 'a' b"],
    ["an unclosed quote", "name: 'a"],
    ["a value starting with a quote in plain text", "name: \"a\" and b"],
    ["a carriage return", "name: a\rb"],
    ["a control character", "name: a\u0001b"],
    ["a BOM", "name: \ufeffa"],
    ["C1 control characters", "name: a\u0085b"],
    ["an indented first line", "  name: a"],
    ["a trailing newline", "name: a\n"]
  ]
  for (const [title, source] of declined) {
    it(`declines ${title}`, () => {
      expect(PlainFrontmatter.parse(source)).toBeUndefined()
    })
  }
})
