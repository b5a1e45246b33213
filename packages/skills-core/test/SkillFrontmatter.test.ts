import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { SkillFrontmatter } from "../src/index.js"

const failure = (input: string) => {
  const result = SkillFrontmatter.parse(input)
  if (Result.isSuccess(result)) throw new Error(`parsed: ${JSON.stringify(result.success)}`)
  expect(result.failure._tag).toBe("FrontmatterError")
  return result.failure
}

describe("SkillFrontmatter.parse", () => {
  it("splits frontmatter and body; YAML 1.2 core typing (spec §7 item 6)", () => {
    const doc = Result.getOrThrow(SkillFrontmatter.parse(
      "---\nname: demo\ndescription: Does things\nflag: yes\nversion: 1.0\ndate: 2024-01-01\ncount: 0o17\nnothing: ~\nlist: [a, 1]\n---\n# Body\n"
    ))
    expect(doc.frontmatter).toEqual({
      name: "demo",
      description: "Does things",
      flag: "yes",
      version: 1,
      date: "2024-01-01",
      count: 15,
      nothing: null,
      list: ["a", 1]
    })
    expect(doc.body).toBe("# Body\n")
  })

  it("tolerates a BOM and CRLF line ends, keeping the body as written", () => {
    const doc = Result.getOrThrow(SkillFrontmatter.parse(new TextEncoder().encode("\uFEFF---\r\nname: demo\r\ndescription: d\r\n---\r\nbody\r\n")))
    expect(doc.frontmatter).toEqual({ name: "demo", description: "d" })
    expect(doc.body).toBe("body\r\n")
  })

  it("keeps __proto__ as a plain key", () => {
    const doc = Result.getOrThrow(SkillFrontmatter.parse("---\nname: a\ndescription: b\n__proto__: {x: 1}\n---\n"))
    expect(Object.getPrototypeOf(doc.frontmatter)).toBe(Object.prototype)
    expect(Object.hasOwn(doc.frontmatter, "__proto__")).toBe(true)
  })

  const refused: ReadonlyArray<[string, string, string, number | undefined]> = [
    ["no opening line", "name: a\n", "must start with", 1],
    ["no closing line", "---\nname: a\n", "not closed", undefined],
    ["an anchor", "---\nname: a\ndescription: &d x\nother: 1\n---\n", "anchor", 3],
    ["an alias", "---\nname: &n a\ndescription: *n\n---\n", "anchor", 2],
    ["a custom tag", "---\nname: a\ndescription: !shout x\n---\n", "tag", 3],
    ["a duplicate key", "---\nname: a\ndescription: x\nname: b\n---\n", "unique", 4],
    ["a number key", "---\nname: a\ndescription: x\n1: one\n---\n", "not a string", 4],
    ["a null key", "---\nname: a\ndescription: x\n~: none\n---\n", "not a string", 4],
    ["a complex key", "---\nname: a\ndescription: x\n? [a]\n: v\n---\n", "not a string", 4],
    ["infinity", "---\nname: a\ndescription: x\nn: .inf\n---\n", "JSON", 4],
    ["a huge integer", "---\nname: a\ndescription: x\nn: 12345678901234567890\n---\n", "JSON", 4],
    ["a sequence at the top", "---\n- a\n---\n", "mapping", 2],
    ["an empty block", "---\n---\n", "empty", 2],
    ["a second document", "---\nname: a\n...\nname: b\n---\n", "several", undefined]
  ]
  for (const [title, input, mentions, line] of refused) {
    it(`refuses ${title}, naming the problem and its line`, () => {
      const error = failure(input)
      expect(error.message).toContain(mentions)
      if (line !== undefined) expect(error.line).toBe(line)
    })
  }

  it("refuses bytes that are not UTF-8", () => {
    const result = SkillFrontmatter.parse(new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0x0a]))
    expect(Result.isFailure(result) && result.failure.reason).toContain("UTF-8")
  })
})

describe("SkillFrontmatter.decode", () => {
  it("types the Agent Skills fields and keeps every other key (R3)", () => {
    const fm = Result.getOrThrow(SkillFrontmatter.decode({
      name: "demo",
      description: "d",
      license: "MIT",
      compatibility: "node >= 22",
      metadata: { owner: "ops" },
      "allowed-tools": ["Read", "Bash(git:*)"],
      custom: { nested: [1, true, null] }
    }))
    expect(fm.custom).toEqual({ nested: [1, true, null] })
    expect(fm["allowed-tools"]).toEqual(["Read", "Bash(git:*)"])
  })

  const invalid: ReadonlyArray<[string, SkillFrontmatter.JsonObject, string]> = [
    ["missing name", { description: "d" }, "name"],
    ["missing description", { name: "a" }, "description"],
    ["an upper-case name", { name: "Demo", description: "d" }, "name"],
    ["a name with --", { name: "a--b", description: "d" }, "name"],
    ["an empty description", { name: "a", description: "" }, "description"],
    ["a description over 1024 characters", { name: "a", description: "x".repeat(1025) }, "description"],
    ["non-string metadata values", { name: "a", description: "d", metadata: { n: 1 } }, "metadata"],
    ["allowed-tools of numbers", { name: "a", description: "d", "allowed-tools": [1] }, "allowed-tools"],
    ["an empty compatibility", { name: "a", description: "d", compatibility: "" }, "compatibility"]
  ]
  for (const [title, input, field] of invalid) {
    it(`refuses ${title}, naming the field`, () => {
      const result = SkillFrontmatter.decode(input)
      if (Result.isSuccess(result)) throw new Error("decoded")
      expect(result.failure.field).toBe(field)
    })
  }

  it.prop("any JSON in any field is accepted or refused with the field named once, never thrown", {
    valid: SkillFrontmatter.SkillFrontmatter,
    field: Schema.Literals(["name", "description", "license", "compatibility", "metadata", "allowed-tools"]),
    value: Schema.Json
  }, ({ valid, field, value }) => {
    const result = SkillFrontmatter.decode({ ...valid, [field]: value })
    if (Result.isSuccess(result)) return
    expect(result.failure.field).toBe(field)
    expect(result.failure.reason).not.toContain(`["${field}"]`)
  })
})

describe("SkillFrontmatter.render and diff", () => {
  const JsonObject = Schema.Record(Schema.String, Schema.Json)
  it.prop("render then parse round-trips arbitrary JSON frontmatter and body", {
    frontmatter: JsonObject,
    body: Arbitrary.schema(Schema.String)
  }, ({ frontmatter, body }) => {
    const normalised = JSON.parse(JSON.stringify(frontmatter)) as SkillFrontmatter.JsonObject
    const rendered = SkillFrontmatter.render(normalised, body)
    const doc = Result.getOrThrow(SkillFrontmatter.parse(rendered))
    expect(SkillFrontmatter.diff(normalised, doc.frontmatter)).toEqual([])
    expect(doc.body).toBe(body)
  }, { arbitrary: { runs: 300 } })

  it.prop("render then parseSkillMd round-trips valid frontmatter", [SkillFrontmatter.SkillFrontmatter], ([frontmatter]) => {
    const rendered = SkillFrontmatter.render(frontmatter, "# Body\n")
    const parsed = Result.getOrThrow(SkillFrontmatter.parseSkillMd(rendered))
    expect(SkillFrontmatter.diff(frontmatter, parsed.frontmatter)).toEqual([])
  })

  it("diff reports every differing field", () => {
    expect(SkillFrontmatter.diff(
      { name: "a", description: "one", metadata: { k: "v" }, gone: 1 },
      { name: "a", description: "two", metadata: { k: "v" }, added: [1] }
    )).toEqual([
      { field: "added", expected: undefined, actual: [1] },
      { field: "description", expected: "one", actual: "two" },
      { field: "gone", expected: 1, actual: undefined }
    ])
    expect(SkillFrontmatter.diff({ a: { x: 1, y: [1, 2] } }, { a: { y: [1, 2], x: 1 } })).toEqual([])
    expect(SkillFrontmatter.diff({ a: 1 }, { a: "1" })).toHaveLength(1)
  })

  it.prop("parse never throws on arbitrary text", [Schema.String], ([s]) => {
    for (const input of [s, `---\n${s}\n---\n`, `---\nname: a\ndescription: b\n${s}\n---\n`]) {
      const result = SkillFrontmatter.parseSkillMd(input)
      if (Result.isFailure(result)) expect(result.failure._tag).toBe("FrontmatterError")
    }
  })
})
