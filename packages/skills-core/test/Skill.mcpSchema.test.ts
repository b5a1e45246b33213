/**
 * One schema in an app that also uses effect's MCP modules: an entry converts to effect's
 * `McpSchema.Skill` and back in one call each. Ours is the stricter of the two, so the way to
 * effect's always succeeds, and the way back is a decode that names what effect's schema let by.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Equal, Result, Schema } from "effect"
import { McpSchema } from "effect/ai"
import { Skill } from "../src/index.js"

const isMcpSkill = Schema.is(McpSchema.Skill)
const decodeMcpSkill = Schema.decodeUnknownResult(McpSchema.Skill)

describe("Skill.toMcpSchema and Skill.fromMcpSchema", () => {
  it.prop("an entry goes to effect's McpSchema.Skill and back unchanged", [Skill.Skill], ([skill]) => {
    const theirs = Skill.toMcpSchema(skill)
    expect(isMcpSkill(theirs)).toBe(true)
    expect(Skill.fromMcpSchema(theirs)).toStrictEqual(Result.succeed(skill))
  })

  it.prop("effect's McpSchema.Skill comes back as itself, or as InvalidSkillEntry naming what is wrong", {
    skill: Skill.Skill,
    key: Arbitrary.schema(Schema.Literals(["uri", "frontmatter", "resources", "_meta"])),
    value: Arbitrary.schema(Schema.Json),
    mutate: Arbitrary.schema(Schema.Boolean)
  }, ({ key, mutate, skill, value }) => {
    // Any entry effect's schema takes: a valid one, or one with a field replaced.
    const decoded = decodeMcpSkill(mutate ? { ...JSON.parse(JSON.stringify(skill)), [key]: value } : skill)
    if (Result.isFailure(decoded)) return
    const theirs = decoded.success
    const ours = Skill.fromMcpSchema(theirs)
    if (Result.isSuccess(ours)) {
      expect(Equal.equals(Skill.toMcpSchema(ours.success), theirs)).toBe(true)
    } else {
      expect(ours.failure._tag).toBe("InvalidSkillEntry")
      expect(ours.failure.problems.length).toBeGreaterThan(0)
    }
  })

  it("names what effect's schema lets by: a URI that is no SKILL.md URI, a value that is no JSON, an unsafe number", () => {
    const theirs = new McpSchema.Skill({
      uri: "https://example.com/notes",
      frontmatter: { name: "notes", description: "Take notes", when: new Date(0), big: 2 ** 60 },
      resources: "dynamic"
    })
    const ours = Skill.fromMcpSchema(theirs)
    if (Result.isSuccess(ours)) throw new Error("decoded")
    expect(ours.failure.uri).toBe("https://example.com/notes")
    expect(ours.failure.problems).toEqual([
      "[\"uri\"]: Expected the URI of a SKILL.md (<scheme>://<skill-path>/SKILL.md)",
      "[\"frontmatter\"][\"when\"]: Expected JSON value",
      `["frontmatter"]["big"]: ${2 ** 60} is not a number within ±9007199254740991 (2^53−1), the range every JSON parser reads alike; write it as a string`
    ])
  })

  it("leaves out a _meta that effect's type lets be undefined, and keeps one that is there", () => {
    const entry = { uri: "skill://notes/SKILL.md", frontmatter: { name: "notes", description: "Take notes" }, resources: "dynamic" as const }
    expect(Skill.fromMcpSchema(new McpSchema.Skill({ ...entry, _meta: undefined }))).toStrictEqual(Result.succeed(entry))
    const meta = { "com.example/origin": "catalogue" }
    expect(Skill.fromMcpSchema(new McpSchema.Skill({ ...entry, _meta: meta }))).toStrictEqual(Result.succeed({ ...entry, _meta: meta }))
  })
})
