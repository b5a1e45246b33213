import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { Limits, SkillUri } from "../src/index.js"

const skillMd = Result.getOrThrow(SkillUri.parseSkillMd("skill://acme/billing/refunds/SKILL.md"))

const reason = (result: Result.Result<unknown, SkillUri.InvalidSkillUri>) => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  expect(result.failure._tag).toBe("InvalidSkillUri")
  return result.failure.reason
}

describe("SkillUri.parse", () => {
  it("takes a URI apart into scheme and decoded segments (R92-R95)", () => {
    expect(Result.getOrThrow(SkillUri.parse("skill://acme/billing/refunds/SKILL.md"))).toEqual({
      scheme: "skill",
      segments: ["acme", "billing", "refunds", "SKILL.md"]
    })
    expect(Result.getOrThrow(SkillUri.parse("skill://caf%C3%A9/notes%20v2.md")).segments).toEqual(["café", "notes v2.md"])
    expect(Result.getOrThrow(SkillUri.parse("github://owner/repo/skills/refunds/SKILL.md")).scheme).toBe("github")
  })

  const rejected: ReadonlyArray<[string, string]> = [
    ["", "empty"],
    ["skill://", "no skill path"],
    ["skill:/a/SKILL.md", "expected"],
    ["skill:///a/SKILL.md", "empty path segment"],
    ["skill://a//SKILL.md", "empty path segment"],
    ["skill://a/./SKILL.md", "dot segment"],
    ["skill://a/../b/SKILL.md", "dot segment"],
    ["skill://a/%2e%2e/b/SKILL.md", "percent-encoded dot segment"],
    ["skill://a/%2E/SKILL.md", "percent-encoded dot segment"],
    ["skill://a/b%2Fc/SKILL.md", "encodes a slash"],
    ["skill://a/b%5Cc/SKILL.md", "encodes a slash or backslash"],
    ["skill://a\\b/SKILL.md", "backslashes"],
    ["skill://a/SKILL.md?x=1", "query"],
    ["skill://a/SKILL.md#top", "fragment"],
    ["skill://a/b/", "trailing slash"],
    ["skill://a/skill.md", "spelled exactly"],
    ["skill://a/Skill.MD", "spelled exactly"],
    ["skill://a/b%ZZ/SKILL.md", "malformed percent-escape"],
    ["skill://a/%C3/SKILL.md", "UTF-8"],
    ["skill://a/%00/SKILL.md", "control character"],
    ["skill://a b/SKILL.md", "percent-encoded"],
    ["skill://café/SKILL.md", "percent-encoded"],
    ["skill://user@host/SKILL.md", "authority"],
    ["skill://host:80/SKILL.md", "authority"],
    ["1skill://a/SKILL.md", "scheme"]
  ]
  for (const [uri, why] of rejected) {
    it(`refuses ${JSON.stringify(uri)} (${why})`, () => {
      expect(reason(SkillUri.parse(uri))).toContain(why)
    })
  }

  it(`accepts a URI of Limits.MaxUriLength characters and refuses one more`, () => {
    const ofLength = (n: number) => `skill://a/${"b".repeat(n - "skill://a/".length - "/SKILL.md".length)}/SKILL.md`
    expect(ofLength(Limits.MaxUriLength).length).toBe(Limits.MaxUriLength)
    expect(Result.isSuccess(SkillUri.parse(ofLength(Limits.MaxUriLength)))).toBe(true)
    expect(reason(SkillUri.parse(ofLength(Limits.MaxUriLength + 1)))).toContain(`longer than ${Limits.MaxUriLength} characters`)
  })

  it("canonical form: lower-case scheme, encodeURIComponent segments", () => {
    expect(SkillUri.isCanonical("skill://caf%C3%A9/SKILL.md")).toBe(true)
    expect(SkillUri.isCanonical("SKILL://a/SKILL.md")).toBe(false)
    expect(SkillUri.isCanonical("skill://caf%c3%a9/SKILL.md")).toBe(false)
    expect(SkillUri.isCanonical("skill://%61/SKILL.md")).toBe(false)
    expect(Result.isSuccess(SkillUri.parse("skill://caf%c3%a9/SKILL.md"))).toBe(true)
  })

  it.prop("canonical URIs are fixed points of parse then format", [SkillUri.SkillUri], ([uri]) => {
    const parsed = Result.getOrThrow(SkillUri.parse(uri))
    const canonical = SkillUri.format(parsed)
    expect(Result.getOrThrow(SkillUri.parse(canonical))).toEqual(parsed)
    expect(SkillUri.format(Result.getOrThrow(SkillUri.parse(canonical)))).toBe(canonical)
  })

  it.prop("format of arbitrary decoded segments parses back to the same segments, or names the rule it breaks", {
    segments: Arbitrary.array(Arbitrary.filter(Arbitrary.schema(Schema.String), (s) => s.isWellFormed()), { minLength: 1, maxLength: 5 })
  }, ({ segments }) => {
    const uri = SkillUri.format({ scheme: "skill", segments })
    const parsed = SkillUri.parse(uri)
    const last = segments[segments.length - 1]!
    const valid = segments.every((s) => s.length > 0 && s !== "." && s !== ".." && !/[\u0000-\u001f\u007f/\\]/.test(s)) &&
      !(last !== "SKILL.md" && last.toLowerCase() === "skill.md")
    expect(Result.isSuccess(parsed)).toBe(valid)
    if (Result.isSuccess(parsed)) {
      expect(parsed.success.segments).toEqual(segments)
      expect(SkillUri.isCanonical(uri)).toBe(true)
    }
  })

  it.prop("arbitrary strings never throw: they parse or fail with InvalidSkillUri", [Schema.String], ([s]) => {
    const result = SkillUri.parse(s)
    if (Result.isFailure(result)) expect(result.failure).toBeInstanceOf(SkillUri.InvalidSkillUri)
  })
})

describe("SkillUri of a skill", () => {
  it("root, name and path (R95, R96)", () => {
    expect(SkillUri.root(skillMd)).toBe("skill://acme/billing/refunds")
    expect(SkillUri.skillName(skillMd)).toBe("refunds")
    expect(SkillUri.skillPath(skillMd)).toEqual(["acme", "billing", "refunds"])
  })

  it("skillMd builds the canonical SKILL.md URI, encoding segments", () => {
    expect(Result.getOrThrow(SkillUri.skillMd("skill", ["acme", "billing", "refunds"]))).toBe(skillMd)
    expect(Result.getOrThrow(SkillUri.skillMd("skill", ["a b"]))).toBe("skill://a%20b/SKILL.md")
    expect(Result.isFailure(SkillUri.skillMd("skill", []))).toBe(true)
    expect(Result.isFailure(SkillUri.skillMd("skill", [".."]))).toBe(true)
  })

  it("file percent-encodes each segment and refuses escapes", () => {
    expect(Result.getOrThrow(SkillUri.file(skillMd, "references/my notes.md"))).toBe(
      "skill://acme/billing/refunds/references/my%20notes.md"
    )
    expect(Result.getOrThrow(SkillUri.file(skillMd, "a/100%.md"))).toBe("skill://acme/billing/refunds/a/100%25.md")
    for (const bad of ["", "../x", "a//b", "/etc/passwd", "a\\b", "./a", "a/"]) {
      expect(Result.isFailure(SkillUri.file(skillMd, bad))).toBe(true)
    }
  })

  it.prop("file of an arbitrary path is a parseable URI inside the skill, or a typed refusal", [Schema.String], ([path]) => {
    const result = SkillUri.file(skillMd, path)
    if (Result.isSuccess(result)) {
      expect(Result.isSuccess(SkillUri.parse(result.success))).toBe(true)
      expect(SkillUri.contains(skillMd, result.success)).toBe(true)
      expect(SkillUri.relativePath(skillMd, result.success)).toBe(path)
    } else {
      expect(result.failure._tag).toBe("InvalidSkillUri")
    }
  }, { arbitrary: { runs: 500 } })

  it("contains and relativePath (R8)", () => {
    expect(SkillUri.contains(skillMd, skillMd)).toBe(true)
    expect(SkillUri.contains(skillMd, "skill://acme/billing/refunds/references/a.md")).toBe(true)
    expect(SkillUri.contains(skillMd, "skill://acme/billing/refunds-old/a.md")).toBe(false)
    expect(SkillUri.contains(skillMd, "skill://acme/billing/refunds/../x.md")).toBe(false)
    expect(SkillUri.relativePath(skillMd, "skill://acme/billing/refunds/a/b%20c.md")).toBe("a/b c.md")
    expect(SkillUri.relativePath(skillMd, "skill://acme/other/a.md")).toBeUndefined()
  })
})

describe("SkillUri.resolve (R103)", () => {
  it("resolves like a filesystem path against the skill root", () => {
    expect(Result.getOrThrow(SkillUri.resolve(skillMd, "references/GUIDE.md"))).toBe(
      "skill://acme/billing/refunds/references/GUIDE.md"
    )
    expect(Result.getOrThrow(SkillUri.resolve(skillMd, "./a/../b.md"))).toBe("skill://acme/billing/refunds/b.md")
    expect(Result.getOrThrow(SkillUri.resolve(skillMd, "my%20notes.md"))).toBe("skill://acme/billing/refunds/my%20notes.md")
    expect(Result.getOrThrow(SkillUri.resolve(skillMd, "my notes.md"))).toBe("skill://acme/billing/refunds/my%20notes.md")
    expect(Result.getOrThrow(SkillUri.resolve(skillMd, "skill://acme/billing/refunds/x.md"))).toBe("skill://acme/billing/refunds/x.md")
  })

  const escapes = [
    "../other/SKILL.md",
    "a/../../x.md",
    "%2e%2e/x.md",
    "/etc/passwd",
    "//evil/x",
    "skill://acme/billing/other/x.md",
    "file:///etc/passwd",
    "a\\..\\..\\x",
    ".",
    "a/",
    "x.md?q",
    "x.md#f",
    "skill.md",
    ""
  ]
  for (const reference of escapes) {
    it(`refuses ${JSON.stringify(reference)}`, () => {
      reason(SkillUri.resolve(skillMd, reference))
    })
  }

  const refChars = Arbitrary.schema(Schema.Literals(["a", "b", ".", "..", "%2e", "%2F", "/", "\\", "x.md", "%20", "?", "#", ":", "SKILL.md", "skill.md"]))
  it.prop("a resolved reference never leaves the skill root", {
    parts: Arbitrary.array(refChars, { maxLength: 12 }),
    noise: Arbitrary.schema(Schema.String)
  }, ({ parts, noise }) => {
    for (const reference of [parts.join(""), parts.join("/"), noise, `${parts.join("/")}${noise}`]) {
      const result = SkillUri.resolve(skillMd, reference)
      if (Result.isSuccess(result)) {
        expect(result.success.startsWith(`${SkillUri.root(skillMd)}/`)).toBe(true)
        expect(SkillUri.contains(skillMd, result.success)).toBe(true)
        expect(Result.isSuccess(SkillUri.parse(result.success))).toBe(true)
      }
    }
  })
})
