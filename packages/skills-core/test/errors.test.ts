import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { Manifest, Skill, SkillFrontmatter, SkillUri } from "../src/index.js"

const uri = Result.getOrThrow(SkillUri.parseSkillMd("skill://acme/refunds/SKILL.md"))
const bytes = (text: string) => new TextEncoder().encode(text)

const message = (result: Result.Result<unknown, { readonly message: string }>): string => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure.message
}

const occurrences = (text: string, part: string) => text.split(part).length - 1

describe("error messages say it once", () => {
  it("a path that climbs out of the skill is reported as leaving it, wherever it is met", () => {
    for (const failure of [SkillUri.file(uri, "../x.md"), SkillUri.file(uri, "a/../../x.md"), SkillUri.resolve(uri, "../../other/SKILL.md"), SkillUri.resolve(uri, "a/../../b.md")]) {
      const text = message(failure)
      expect(text).toContain(`".." leaves the skill`)
      expect(text).not.toMatch(/dot segment|unlisted/i)
    }
    expect(message(SkillUri.resolve(uri, "skill://other/x.md"))).toBe(`invalid skill URI "skill://other/x.md": outside the skill skill://acme/refunds`)
    // A `..` that stays inside is not a file path either, but it does not leave: the syntax is named.
    expect(message(SkillUri.file(uri, "a/../b.md"))).toBe(`invalid skill URI "a/../b.md": dot segment ".."`)
  })

  it("InvalidSkillUri names the URI once and the rule once", () => {
    const text = message(SkillUri.parseSkillMd("skill://acme/refunds/notes.md"))
    expect(occurrences(text, "skill://acme/refunds/notes.md")).toBe(1)
    expect(occurrences(text, "not the URI of a SKILL.md")).toBe(1)
  })

  it("InvalidSkillEntry names the entry's URI once", () => {
    const missing = message(Skill.decode({ uri, frontmatter: { name: "refunds", description: "d" }, resources: [] }))
    expect(missing).toBe("invalid skill entry skill://acme/refunds/SKILL.md: resources do not list the skill's SKILL.md (R7)")
    const several = message(Skill.decode({ uri, frontmatter: { name: "other", description: "d" }, resources: "dynamic" }))
    expect(occurrences(several, uri)).toBe(1)
    expect(several).toContain(`differs from frontmatter name "other" (R4)`)
  })

  it("FrontmatterError names the field once, without the schema's path", () => {
    expect(message(SkillFrontmatter.decode({ name: "refunds" }))).toBe("invalid SKILL.md frontmatter: description: missing (required)")
    const name = Result.getOrThrow(Result.flip(SkillFrontmatter.decode({ name: "Bad--Name", description: "d" })))
    expect(name.field).toBe("name")
    expect(name.message).toBe(`invalid SKILL.md frontmatter: name: Expected a skill name (1 to 64 of a-z, 0-9 and "-", no "-" at either end or twice in a row)`)
    const nested = Result.getOrThrow(Result.flip(SkillFrontmatter.decode({ name: "a", description: "d", metadata: { k: 1 } })))
    expect(nested.field).toBe("metadata")
    expect(occurrences(nested.message, "metadata")).toBe(1)
    expect(nested.message).toContain(`at ["k"]`)
    expect(message(SkillFrontmatter.parseSkillMd("---\nname: a\ndescription: &x b\n---\n"))).toBe("invalid SKILL.md frontmatter (line 3): anchor &x is not allowed")
  })

  it("InvalidSkill names the skill once and each problem once", () => {
    const text = message(Manifest.make({
      uri,
      files: [{ path: "SKILL.md", bytes: bytes("---\nname: Refunds\ndescription: d\n---\n") }, { path: "../x.md", bytes: bytes("x") }]
    }))
    expect(occurrences(text, uri)).toBe(1)
    expect(text).toBe(`invalid skill ${uri}: ../x.md: ".." leaves the skill; SKILL.md: name: Expected a skill name (1 to 64 of a-z, 0-9 and "-", no "-" at either end or twice in a row)`)
  })
})
