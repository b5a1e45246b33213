import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { createHash } from "node:crypto"
import { CacheHint, Digest, Manifest, Protocol, Skill, SkillUri } from "../src/index.js"

// Spec §8: the three example files with their real digests and sizes.
export const examples = {
  skillMd: {
    uri: "skill://pdf-processing/SKILL.md",
    text:
      "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n# PDF processing\n\nPick the matching template from `templates/`.\n",
    digest: "sha256:244a4672f7630fee6197bfcea1247d40e718645b4cbc9139bf2d20c9a3fac363",
    size: 149
  },
  invoice: {
    uri: "skill://pdf-processing/templates/invoice.md",
    text: "# Invoice template\n\nTotal: {{amount}}\n",
    digest: "sha256:fa1fecce55816f4feabbcba416b81ca1bba3a94010dbac4115cbbe5c7f0455aa",
    size: 38
  },
  logo: {
    uri: "skill://pdf-processing/assets/logo.png",
    bytes: Buffer.from("iVBORw0KGgo=", "base64"),
    digest: "sha256:4c4b6a3be1314ab86138bef4314dde022e600960d8689a2c8f8631802d20dab6",
    size: 8
  }
}

const encoder = new TextEncoder()
const skillMdUri = Result.getOrThrow(SkillUri.parseSkillMd(examples.skillMd.uri))

const listPage1 = {
  resultType: "complete",
  skills: [
    {
      uri: "skill://pdf-processing/SKILL.md",
      frontmatter: { name: "pdf-processing", description: "Extract, fill, and assemble PDF documents" },
      resources: [
        { uri: examples.skillMd.uri, digest: examples.skillMd.digest, size: 149 },
        { uri: examples.invoice.uri, digest: examples.invoice.digest, size: 38 },
        { uri: examples.logo.uri, digest: examples.logo.digest, size: 8 }
      ]
    }
  ],
  nextCursor: "opaque-page-2",
  ttlMs: 300000,
  cacheScope: "private"
}
const listPage2 = {
  resultType: "complete",
  skills: [
    {
      uri: "skill://reports/daily/SKILL.md",
      frontmatter: { name: "daily", description: "Build today's operations report from live data", metadata: { owner: "ops" } },
      resources: "dynamic"
    }
  ],
  ttlMs: 60000,
  cacheScope: "private"
}

describe("spec §8 examples", () => {
  it("reproduce the listed digests and sizes (R9, R14)", () => {
    for (const file of [examples.skillMd, examples.invoice]) {
      const bytes = encoder.encode(file.text)
      expect(bytes.byteLength).toBe(file.size)
      expect(Digest.make(bytes)).toBe(file.digest)
    }
    expect(examples.logo.bytes.byteLength).toBe(8)
    expect(Digest.make(examples.logo.bytes)).toBe(examples.logo.digest)
  })

  it("Manifest.make builds the §8.3 entry exactly, SKILL.md first", () => {
    const manifest = Result.getOrThrow(Manifest.make({
      uri: skillMdUri,
      files: [
        { path: "templates/invoice.md", bytes: encoder.encode(examples.invoice.text) },
        { path: "assets/logo.png", bytes: examples.logo.bytes },
        { path: "SKILL.md", bytes: encoder.encode(examples.skillMd.text) }
      ]
    }))
    expect(Manifest.entry(manifest).resources).toEqual([
      { uri: examples.skillMd.uri, digest: examples.skillMd.digest, size: 149 },
      { uri: examples.logo.uri, digest: examples.logo.digest, size: 8 },
      { uri: examples.invoice.uri, digest: examples.invoice.digest, size: 38 }
    ])
    expect(Manifest.entry(manifest).frontmatter).toEqual(listPage1.skills[0]!.frontmatter)
    expect(manifest.body).toBe("\n# PDF processing\n\nPick the matching template from `templates/`.\n")
  })

  it("the listing pages and the skills/get result decode", () => {
    const page1 = Schema.decodeUnknownSync(Protocol.ListSkillsResult)(listPage1)
    expect(page1.skills[0]!.uri).toBe(examples.skillMd.uri)
    expect(page1.nextCursor).toBe("opaque-page-2")
    const page2 = Schema.decodeUnknownSync(Protocol.ListSkillsResult)(listPage2)
    expect(page2.skills[0]!.resources).toBe("dynamic")
    const get = Schema.decodeUnknownSync(Protocol.GetSkillResult)({
      resultType: "complete",
      skill: listPage1.skills[0],
      ttlMs: 300000,
      cacheScope: "private"
    })
    expect(get.skill.frontmatter.name).toBe("pdf-processing")
    const dir = Schema.decodeUnknownSync(Protocol.ReadResourceDirectoryResult)({
      resultType: "complete",
      resources: [
        { uri: "skill://pdf-processing/SKILL.md", name: "SKILL.md", mimeType: "text/markdown" },
        { uri: "skill://pdf-processing/templates", name: "templates", mimeType: "inode/directory" }
      ]
    })
    expect(dir.resources).toHaveLength(2)
  })

  it("a legacy (2025-11-25) result without resultType and cache fields decodes", () => {
    const { resultType: _r, ttlMs: _t, cacheScope: _c, ...legacy } = listPage1
    expect(Schema.decodeUnknownSync(Protocol.ListSkillsResult)(legacy).skills).toHaveLength(1)
  })

  const entry = listPage1.skills[0]!
  const invalid: ReadonlyArray<[string, unknown, string]> = [
    ["resources missing (R5, R6)", { uri: entry.uri, frontmatter: entry.frontmatter }, "resources"],
    ["resources null (R6)", { ...entry, resources: null }, "resources"],
    ["resources another string (R6)", { ...entry, resources: "static" }, "resources"],
    ["an upper-case digest (R14)", { ...entry, resources: [{ ...entry.resources[0]!, digest: entry.resources[0]!.digest.toUpperCase().replace("SHA256", "sha256") }] }, "sha256"],
    ["a digest of the wrong length", { ...entry, resources: [{ ...entry.resources[0]!, digest: "sha256:abc" }] }, "sha256"],
    ["a negative size", { ...entry, resources: [{ ...entry.resources[0]!, size: -1 }] }, "size"],
    ["a fractional size", { ...entry, resources: [{ ...entry.resources[0]!, size: 1.5 }] }, "size"],
    ["a name that differs from the URI (R4)", { ...entry, frontmatter: { ...entry.frontmatter, name: "pdf" } }, "R4"],
    ["no SKILL.md item (R7)", { ...entry, resources: entry.resources.slice(1) }, "R7"],
    ["a duplicate item (R7)", { ...entry, resources: [...entry.resources, entry.resources[1]] }, "twice"],
    ["an item outside the skill (R8)", { ...entry, resources: [...entry.resources, { ...entry.resources[1]!, uri: "skill://other/x.md" }] }, "outside"],
    ["a non-SKILL.md uri", { ...entry, uri: "skill://pdf-processing/README.md" }, "SKILL.md"],
    ["a missing description", { ...entry, frontmatter: { name: "pdf-processing" } }, "description"],
    ["a name breaking the naming rules", { ...entry, uri: "skill://Pdf--X/SKILL.md", frontmatter: { ...entry.frontmatter, name: "Pdf--X" } }, "name"]
  ]
  for (const [title, input, mentions] of invalid) {
    it(`an entry with ${title} fails with a typed InvalidSkillEntry`, () => {
      const result = Skill.decode(input)
      if (Result.isSuccess(result)) throw new Error("decoded")
      const error = result.failure
      expect(error._tag).toBe("InvalidSkillEntry")
      expect(error.uri).toBe((input as { uri: string }).uri)
      expect(error.problems.join("\n")).toContain(mentions)
    })
  }

  it("a listing page with one invalid entry fails to decode strictly but is kept by ListSkillsPage", () => {
    const page = { ...listPage1, skills: [...listPage1.skills, { uri: "skill://x/SKILL.md", frontmatter: {} }] }
    expect(Result.isFailure(Schema.decodeUnknownResult(Protocol.ListSkillsResult)(page))).toBe(true)
    const lenient = Schema.decodeUnknownSync(Protocol.ListSkillsPage)(page)
    expect(lenient.skills.map((s) => Result.isSuccess(Skill.decode(s)))).toEqual([true, false])
  })

  it("native node:crypto agrees with Digest.make on the examples", () => {
    expect(Digest.make(examples.logo.bytes)).toBe(`sha256:${createHash("sha256").update(examples.logo.bytes).digest("hex")}`)
  })
})

describe("received cache hints (R107)", () => {
  it("a bad hint never drops a page: it reads as stale and private", () => {
    const page = Schema.decodeUnknownSync(Protocol.ListSkillsPage)({ skills: [], ttlMs: -5.5, cacheScope: "shared" })
    expect(CacheHint.fromResult(page)).toEqual({ ttlMs: 0, cacheScope: "private" })
    expect(CacheHint.fromResult({ ttlMs: 1500.7, cacheScope: "public" })).toEqual({ ttlMs: 1500, cacheScope: "public" })
    expect(CacheHint.fromResult({})).toEqual(CacheHint.none)
  })
})
