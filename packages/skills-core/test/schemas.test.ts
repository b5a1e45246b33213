import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { createHash } from "node:crypto"
import { Digest, Limits, Manifest, Skill, SkillFrontmatter, SkillUri } from "../src/index.js"

describe("untrusted entries", () => {
  it.prop("Skill.decode of arbitrary JSON is a Skill or a typed InvalidSkillEntry", [Schema.Json], ([json]) => {
    const result = Skill.decode(json)
    if (Result.isFailure(result)) {
      expect(result.failure._tag).toBe("InvalidSkillEntry")
      expect(result.failure.problems.length).toBeGreaterThan(0)
    }
  })

  it.prop("Skill.decode of mutated valid entries is a Skill or a typed InvalidSkillEntry", {
    skill: Skill.Skill,
    key: Arbitrary.schema(Schema.Literals(["uri", "frontmatter", "resources"])),
    value: Arbitrary.schema(Schema.Json)
  }, ({ skill, key, value }) => {
    const result = Skill.decode({ ...skill, [key]: value })
    if (Result.isFailure(result)) expect(result.failure._tag).toBe("InvalidSkillEntry")
  })
})

describe("Digest", () => {
  it.prop("equals node:crypto SHA-256 for arbitrary bytes, whole or in chunks", {
    bytes: Arbitrary.schema(Schema.Uint8Array),
    cut: Arbitrary.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)))
  }, ({ bytes, cut }) => {
    const expected = `sha256:${createHash("sha256").update(bytes).digest("hex")}`
    expect(Digest.make(bytes)).toBe(expected)
    const at = bytes.length === 0 ? 0 : cut % bytes.length
    const hasher = Digest.hasher().update(bytes.subarray(0, at)).update(bytes.subarray(at))
    expect(hasher.size()).toBe(bytes.length)
    expect(hasher.digest()).toBe(expected)
    expect(Digest.isDigest(expected)).toBe(true)
  })

  it("refuses upper-case hex and other algorithms (R14)", () => {
    expect(Digest.isDigest(`sha256:${"A".repeat(64)}`)).toBe(false)
    expect(Digest.isDigest(`sha512:${"a".repeat(64)}`)).toBe(false)
    expect(Digest.isDigest(`sha256:${"a".repeat(63)}`)).toBe(false)
  })
})

describe("Manifest.make", () => {
  const uri = Result.getOrThrow(SkillUri.skillMd("skill", ["acme", "refunds"]))
  const skillMd = (name: string) => new TextEncoder().encode(`---\nname: ${name}\ndescription: Handles refunds\n---\nBody\n`)

  it("lists every problem at once, not only the first", () => {
    const result = Manifest.make({
      uri,
      files: [
        { path: "SKILL.md", bytes: skillMd("other-name") },
        { path: "../escape.md", bytes: new Uint8Array(1) },
        { path: "a//b.md", bytes: new Uint8Array(1) },
        { path: "skill.md", bytes: new Uint8Array(1) }
      ]
    })
    if (Result.isSuccess(result)) throw new Error("built")
    expect(result.failure._tag).toBe("InvalidSkill")
    expect(result.failure.uri).toBe(uri)
    const reasons = result.failure.problems.map(Manifest.describe)
    expect(reasons).toHaveLength(4)
    expect(reasons.join("\n")).toMatch(/\.\.\/escape\.md: "\.\." leaves the skill/)
    expect(reasons.join("\n")).toMatch(/a\/\/b\.md: empty path segment/)
    expect(reasons.join("\n")).toMatch(/skill\.md: "SKILL\.md" must be spelled exactly/)
    expect(reasons.join("\n")).toMatch(/SKILL\.md: frontmatter name "other-name" differs .* "refunds" \(R4\)/)
  })

  it("reports a missing SKILL.md and frontmatter errors with their line", () => {
    const missing = Manifest.make({ uri, files: [{ path: "README.md", bytes: new Uint8Array(1) }] })
    expect(Result.isFailure(missing) && missing.failure.problems[0]!.reason).toContain("no SKILL.md")
    const broken = Manifest.make({ uri, files: [{ path: "SKILL.md", bytes: new TextEncoder().encode("---\nname: refunds\ndescription: &a x\n---\n") }] })
    expect(Result.isFailure(broken) && broken.failure.problems[0]).toMatchObject({ path: "SKILL.md", line: 3 })
  })

  it("takes a digest the caller already has instead of hashing again", () => {
    const bytes = skillMd("refunds")
    const known = Digest.make(bytes)
    const manifest = Result.getOrThrow(Manifest.make({ uri, files: [{ path: "SKILL.md", bytes, digest: known }] }))
    expect(manifest.files.digest(0)).toBe(known)
    const trusted = `sha256:${"0".repeat(64)}` as Digest.Digest
    expect(Result.getOrThrow(Manifest.make({ uri, files: [{ path: "SKILL.md", bytes, digest: trusted }] })).files.digest(0)).toBe(trusted)
  })

  it("enforces the limits of R15/R16 at registration, raisable only explicitly", () => {
    const files = [{ path: "SKILL.md", bytes: skillMd("refunds") }, ...Array.from({ length: Limits.MaxResources }, (_, i) => ({ path: `f/${i}.txt`, bytes: new Uint8Array(1) }))]
    const tooMany = Manifest.make({ uri, files })
    expect(Result.isFailure(tooMany) && Manifest.describe(tooMany.failure.problems[0]!)).toContain("513 files exceed the limit of 512")
    expect(Result.isSuccess(Manifest.make({ uri, files, limits: { ...Limits.defaults, maxResources: 600 } }))).toBe(true)
    const big = Manifest.make({ uri, files: [{ path: "SKILL.md", bytes: skillMd("refunds") }, { path: "big.bin", bytes: new Uint8Array(Limits.MaxTotalBytes) }] })
    expect(Result.isFailure(big) && Manifest.describe(big.failure.problems[0]!)).toContain("exceed the limit of 16777216")
    const entry = Manifest.entry(Result.getOrThrow(Manifest.make({ uri, files, limits: { ...Limits.defaults, maxResources: 600 } })))
    expect(Skill.limitViolations(entry)).toEqual([{ limit: "resources", actual: 513, max: 512 }])
  })

  it("caps any raised byte limit at what a manifest can address (32 bits)", () => {
    const raised = { maxResources: 1, maxTotalBytes: 2 ** 40 }
    expect(Limits.violations(1, Limits.MaxSkillBytes, raised)).toEqual([])
    expect(Limits.violations(1, Limits.MaxSkillBytes + 1, raised)).toEqual([{ limit: "bytes", actual: 2 ** 32, max: Limits.MaxSkillBytes }])
  })

  // The manifest copies its frontmatter out of the decoded SKILL.md, so as not to keep the text alive.
  it.prop("its body and frontmatter are parseSkillMd's, with a BOM, CRLF and any Unicode", {
    description: Arbitrary.schema(Schema.NonEmptyString),
    body: Arbitrary.schema(Schema.String),
    bom: Arbitrary.schema(Schema.Boolean),
    crlf: Arbitrary.schema(Schema.Boolean)
  }, ({ description, body, bom, crlf }) => {
    const uri = Result.getOrThrow(SkillUri.skillMd("skill", ["refunds"]))
    const head = `---\nname: refunds\ndescription: ${JSON.stringify(description)}\n---\n`
    const text = `${bom ? "\uFEFF" : ""}${crlf ? head.replaceAll("\n", "\r\n") : head}${body}`
    const bytes = new TextEncoder().encode(text)
    const parsed = SkillFrontmatter.parseSkillMd(bytes)
    const manifest = Manifest.make({ uri, files: [{ path: "SKILL.md", bytes }] })
    expect(Result.isSuccess(manifest)).toBe(Result.isSuccess(parsed))
    if (Result.isFailure(parsed) || Result.isFailure(manifest)) return
    expect(manifest.success.body).toBe(parsed.success.body)
    expect(manifest.success.frontmatter).toEqual(parsed.success.frontmatter)
    expect(Manifest.entry(manifest.success).frontmatter).toBe(manifest.success.frontmatter)
  }, { arbitrary: { runs: 300 } })
})
