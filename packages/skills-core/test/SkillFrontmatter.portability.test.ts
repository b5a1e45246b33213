/**
 * `SkillFrontmatter.portability` held against the two readers it compares: YAML 1.2 (`parse`) and
 * effect's reader (`internal/effectFrontmatter.ts`), which effect's `McpClient` reads a `SKILL.md`
 * with before it compares the result with the listed frontmatter (`Equal.equals`). It finds
 * nothing exactly when both read the same, and each fix it gives makes the frontmatter portable.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Equal, Result, Schema } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { SkillFrontmatter } from "../src/index.js"
import * as EffectFrontmatter from "../src/internal/effectFrontmatter.js"

const index = (size: number) => Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: size - 1 })))
const pick = <A>(values: ReadonlyArray<A>) => Arbitrary.map(index(values.length), (i) => values[i]!)

// Scalars the two readers disagree on, and their near misses that both read alike.
const scalars = [
  "0755", "0644", "00", "09", "01.5", "1.", "0.", "1_000", "_1", "1_0.5", "0x1F", "0X1F", "-0x1F", "0o17", "0O17", "+0x1",
  "1", "-1", "+1", "1.5", ".5", "1e3", "1E3", "1.0", "yes", "no", "on", "off", "y", "n", "true", "True", "TRUE", "tRuE", "false",
  "null", "Null", "NULL", "nUlL", "~", "2024-01-01", "2024-01-01T10:00:00Z", "12:30", "1.0.0", "v1", "refunds", "Issue refunds"
]
const scalar = Arbitrary.flatMap(pick(scalars), (text) => pick([text, text, `'${text}'`, `"${text}"`]))
const blockLines = Arbitrary.array(pick(["Issue refunds", "within the policy", "  more indented", "0755", ""]), { minLength: 1, maxLength: 3 })
const block = Arbitrary.map(
  Arbitrary.all([pick(["|", ">", "|-", ">-", "|+", ">+"]), blockLines]),
  ([indicator, lines]) => [indicator, ...lines.map((line) => line === "" ? "" : `  ${line}`)].join("\n")
)
const description = Arbitrary.flatMap(index(3), (i) => i === 0 ? block : pick(["Issue refunds", "'Refunds: yes'", "\"Refunds\""]))
const extra = Arbitrary.map(
  Arbitrary.all([pick(["version", "mode", "flag", "since", "count", "license", "<<", "_1", "1_0"]), index(5), scalar, block]),
  ([key, shape, value, text]) =>
    shape === 0
      ? `metadata:\n  ${key}: ${value}`
      : shape === 1
      ? `${key}: [${value}, x]`
      : shape === 2
      ? `${key}: ${text}`
      : key === "<<"
      ? "<<: {since: 2024-01-01}"
      : `${key}: ${value}`
)
const name = pick(["refunds", "\"refunds\"", "'pdf-2'", "a1", "0755", "1_0", "yes", "2024-01-01"])
// `name` and `description` in either order, then a few other keys; the last may be a block scalar.
const Frontmatter = Arbitrary.map(
  Arbitrary.all([name, Arbitrary.schema(Schema.Boolean), description, Arbitrary.array(extra, { maxLength: 3 }), Arbitrary.schema(Schema.Boolean)]),
  ([named, nameFirst, text, extras, crlf]) => {
    const lines = nameFirst ? [`name: ${named}`, `description: ${text}`] : [`description: ${text}`, `name: ${named}`]
    const eol = crlf ? "\r\n" : "\n"
    return `---${eol}${[...lines, ...extras].join("\n").replaceAll("\n", eol)}${eol}---${eol}# Refunds${eol}`
  }
)

const ours = (text: string) => Result.getOrUndefined(Result.map(SkillFrontmatter.parse(text), (doc) => doc.frontmatter))

describe("SkillFrontmatter.portability", () => {
  it.prop("finds nothing exactly when effect's reader reads what YAML 1.2 reads (Equal.equals, as effect's McpClient)", [Frontmatter], ([text]) => {
    const listed = ours(text)
    if (listed === undefined) return
    const effect = EffectFrontmatter.read(text)
    const findings = SkillFrontmatter.portability(text, listed)
    expect(findings.length === 0).toBe(Result.isSuccess(effect) && Equal.equals(effect.success, listed))
    for (const finding of findings) {
      expect(finding.line).toBeGreaterThanOrEqual(2)
      expect(finding.reason.length * finding.fix.length).toBeGreaterThan(0)
    }
  }, { arbitrary: { runs: 2_000 } })

  it.effect("the generator above reaches both sides, often", () =>
    Effect.gen(function*() {
      const texts = yield* Arbitrary.sampleEffect(Frontmatter, { count: 1_000, seed: 7 })
      const read = texts.flatMap((text) => {
        const listed = ours(text)
        return listed === undefined ? [] : [SkillFrontmatter.portability(text, listed)]
      })
      expect(read.length).toBeGreaterThan(texts.length * 0.8)
      const portable = read.filter((findings) => findings.length === 0).length
      expect(portable).toBeGreaterThan(read.length / 5)
      expect(portable).toBeLessThan(read.length * 4 / 5)
    }))

  const cases: ReadonlyArray<{
    readonly title: string
    readonly lines: string
    readonly key: string
    readonly line: number
    readonly fix: RegExp
    readonly portable: string
  }> = [
    {
      title: "a literal block scalar as the last key",
      lines: "description: |\n  Issue refunds\n  within the policy",
      key: "description",
      line: 3,
      fix: /\|- or >-/,
      portable: "description: |-\n  Issue refunds\n  within the policy"
    },
    {
      title: "a folded block scalar as the last key, nested",
      lines: "description: d\nmetadata:\n  note: >\n    one\n    two",
      key: "metadata.note",
      line: 5,
      fix: /put another key after it/,
      portable: "metadata:\n  note: >\n    one\n    two\ndescription: d"
    },
    {
      title: "an octal-looking number",
      lines: "description: d\nmode: 0755",
      key: "mode",
      line: 4,
      fix: /quote it \("0755"\) for the string, or write 755 for the number/,
      portable: "description: d\nmode: \"0755\""
    },
    {
      title: "an octal-looking number in a flow sequence",
      lines: "description: d\nmodes: [0644, rw]",
      key: "modes[0]",
      line: 4,
      fix: /write 644/,
      portable: "description: d\nmodes: [\"0644\", rw]"
    },
    {
      title: "a number with underscores",
      lines: "description: d\ncount: 1_000",
      key: "count",
      line: 4,
      fix: /quote it: "1_000"/,
      portable: "description: d\ncount: \"1_000\""
    },
    {
      title: "a boolean in mixed case",
      lines: "description: d\nflag: tRuE",
      key: "flag",
      line: 4,
      fix: /quote it/,
      portable: "description: d\nflag: \"tRuE\""
    },
    {
      title: "a core tag",
      lines: "description: d\nversion: !!str 1",
      key: "version",
      line: 4,
      fix: /leave the tag out; write it as JSON, which both read alike: "1"/,
      portable: "description: d\nversion: \"1\""
    },
    {
      title: "a key effect's reader reads as a number",
      lines: "description: d\n_1: x",
      key: "_1",
      line: 4,
      fix: /quote the key: "_1":/,
      portable: "description: d\n\"_1\": x"
    },
    {
      title: "a << key, which effect's reader merges",
      lines: "description: d\n<<: {since: x}",
      key: "\"<<\"",
      line: 4,
      fix: /quote the key/,
      portable: "description: d\n\"<<\": {since: x}"
    },
    {
      title: "an explicit key, which effect's reader cannot read",
      lines: "description: d\n? since\n: x",
      key: "",
      line: 4,
      fix: /each key plainly/,
      portable: "description: d\nsince: x"
    }
  ]
  for (const { fix, key, line, lines, portable, title } of cases) {
    it(`finds ${title}, with its line and a fix that makes it portable`, () => {
      const text = `---\nname: refunds\n${lines}\n---\n# Refunds\n`
      const findings = SkillFrontmatter.portability(text, ours(text)!)
      expect(findings).toHaveLength(1)
      expect(findings[0]).toMatchObject({ key, line })
      expect(findings[0]!.fix).toMatch(fix)
      const fixed = `---\nname: refunds\n${portable}\n---\n# Refunds\n`
      expect(SkillFrontmatter.portability(fixed, ours(fixed)!)).toEqual([])
    })
  }

  it("says what each reader reads", () => {
    const text = "---\nname: refunds\ndescription: d\nmode: 0755\n---\n"
    expect(SkillFrontmatter.portability(text, ours(text)!)).toEqual([{
      key: "mode",
      line: 4,
      listed: 755,
      effect: "0755",
      reason: "effect's reader reads the string \"0755\", YAML 1.2 the number 755",
      fix: "quote it (\"0755\") for the string, or write 755 for the number"
    }])
  })

  it("finds nothing in frontmatter both read alike: yes/no, dates, quoted numbers, a block scalar before another key", () => {
    const text = "---\nname: refunds\ndescription: >\n  Issue refunds\nflag: yes\nsince: 2024-01-01\nversion: \"1.0\"\nmode: '0755'\n---\n"
    expect(SkillFrontmatter.portability(text, ours(text)!)).toEqual([])
  })

  it("compares with the frontmatter it is given, as effect's McpClient compares with the listed one", () => {
    const text = "---\nname: refunds\ndescription: d\n---\n"
    expect(SkillFrontmatter.portability(text, { name: "refunds", description: "other" })).toMatchObject([
      { key: "description", line: 3, listed: "other", effect: "d" }
    ])
  })
})

// effect's reader is internal to effect; the mirror is checked against effect's own source, so that
// an effect release that changes it fails here rather than making the findings wrong.
describe("the mirror of effect's frontmatter reader", () => {
  const effectSrc = path.join(path.dirname(createRequire(import.meta.url).resolve("effect/package.json")), "src", "ai")
  const skills = fs.readFileSync(path.join(effectSrc, "internal", "mcpSkills.ts"), "utf8")
  const client = fs.readFileSync(path.join(effectSrc, "McpClient.ts"), "utf8")
  const mirror = fs.readFileSync(path.join(import.meta.dirname, "..", "src", "internal", "effectFrontmatter.ts"), "utf8")

  it("uses effect's pattern, Yaml.parse and trip through JSON", () => {
    const pattern = /const FRONTMATTER = (\/.*\/)\n/.exec(skills)?.[1]
    expect(pattern).toBeDefined()
    expect(mirror).toContain(`const block = ${pattern}\n`)
    const reader = skills.slice(skills.indexOf("export const parseFrontmatter"), skills.indexOf("// The directory holding"))
    expect(reader).toContain("const parsed = Yaml.parse(block)")
    expect(reader).toContain("return Predicate.isObject(parsed) ? JSON.parse(JSON.stringify(parsed)) : undefined")
  })

  it("is what effect's McpClient compares with the listed frontmatter, with Equal.equals", () => {
    expect(client).toContain("const frontmatter = McpSkills.parseFrontmatter(\"text\" in content ? content.text : decoder.decode(bytes))")
    expect(client).toContain("return frontmatter !== undefined && Equal.equals(frontmatter, skill.frontmatter)")
  })
})
