import { describe, expect, it } from "@effect/vitest"
import { SkillUri } from "@mcp-skills/core"
import { Arbitrary, Result, Schema } from "effect"
import { PathTemplate, ServerLimits } from "../src/index.js"
import { constants, oneOf } from "./support/arbitraries.js"

const template = (path: string, scheme?: string) => Result.getOrThrow(PathTemplate.parse(path, scheme))

const onboarding = template("customers/{customer}/onboarding")
const runbook = template("services/{service}/{runbook}")

const templateReason = (path: string) => {
  const result = PathTemplate.parse(path)
  if (Result.isSuccess(result)) throw new Error(`expected ${path} to be refused`)
  expect(result.failure._tag).toBe("InvalidTemplate")
  expect(result.failure.template).toBe(path)
  return result.failure.reason
}

const instanceOf = (match: PathTemplate.Match) => {
  if (match._tag !== "Instance") throw new Error(`expected an instance, got ${JSON.stringify(match)}`)
  return match
}

const invalidOf = (match: PathTemplate.Match) => {
  if (match._tag !== "Invalid") throw new Error(`expected Invalid, got ${JSON.stringify(match)}`)
  return match.error
}

describe("PathTemplate.parse", () => {
  it("takes a template apart into fixed segments and parameters", () => {
    expect(onboarding.parameters).toEqual(["customer"])
    expect(onboarding.segments).toEqual([
      { _tag: "Literal", value: "customers", encoded: "customers" },
      { _tag: "Parameter", name: "customer" },
      { _tag: "Literal", value: "onboarding", encoded: "onboarding" }
    ])
    expect(onboarding.prefix).toBe("skill://customers/")
    expect(runbook.parameters).toEqual(["service", "runbook"])
    expect(template("{tenant}/guide").prefix).toBe("skill://")
    expect(template("équipe a/{x}/guide", "Acme").prefix).toBe("acme://%C3%A9quipe%20a/")
  })

  const refused: ReadonlyArray<[string, string]> = [
    ["", "empty"],
    ["customers/onboarding", "no parameter"],
    ["customers/{customer}/{customer}", "appears twice"],
    ["customers/pre-{customer}/onboarding", "whole segment"],
    ["customers/{customer}.md/onboarding", "whole segment"],
    ["customers/{cust-omer}/onboarding", "whole segment"],
    ["customers/{}/onboarding", "whole segment"],
    ["customers/{customer/onboarding", "whole segment"],
    ["customers//{customer}/onboarding", "empty path segment"],
    ["/customers/{customer}/onboarding", "empty path segment"],
    ["customers/{customer}/onboarding/", "empty path segment"],
    ["customers/../{customer}/onboarding", "dot segment"],
    ["customers/./{customer}/onboarding", "dot segment"],
    ["customers\\x/{customer}/onboarding", "slash or backslash"],
    ["customers/\u0001/{customer}/onboarding", "control character"],
    ["customers/{customer}/On Boarding", "valid skill name"],
    ["customers/{customer}/SKILL.md", "valid skill name"],
    [`${"long/".repeat(2)}{a}/{b}/{c}/{d}/name`, "over the limit"]
  ]
  for (const [path, why] of refused) {
    it(`refuses ${JSON.stringify(path)} (${why})`, () => {
      expect(templateReason(path)).toContain(why)
    })
  }

  it("refuses a scheme that is not a URI scheme", () => {
    const result = PathTemplate.parse("customers/{customer}/onboarding", "1bad")
    expect(Result.isFailure(result) && result.failure.reason).toContain("not a URI scheme")
  })
})

describe("PathTemplate.expand and match", () => {
  it("spells an instance's URIs with canonical percent-encoding and reads them back", () => {
    const acme = Result.getOrThrow(PathTemplate.expand(onboarding, { customer: "Acme Corp é" }))
    expect(acme.uri).toBe("skill://customers/Acme%20Corp%20%C3%A9/onboarding/SKILL.md")
    expect(acme.root).toBe("skill://customers/Acme%20Corp%20%C3%A9/onboarding")
    expect(acme.path).toEqual(["customers", "Acme Corp é", "onboarding"])
    const file = instanceOf(PathTemplate.match(onboarding, `${acme.root}/references/first%20week.md`))
    expect(file.params).toEqual({ customer: "Acme Corp é" })
    expect(file.file).toEqual(["references", "first week.md"])
    expect(file.uri).toBe(acme.uri)
    expect(instanceOf(PathTemplate.match(onboarding, acme.root)).file).toEqual([])
    expect(instanceOf(PathTemplate.match(onboarding, acme.uri)).file).toEqual(["SKILL.md"])
  })

  it("a parameter in the last position names the skill (R96)", () => {
    expect(Result.getOrThrow(PathTemplate.expand(runbook, { service: "db", runbook: "failover" })).uri).toBe(
      "skill://services/db/failover/SKILL.md"
    )
    const refused = PathTemplate.expand(runbook, { service: "db", runbook: "Fail Over" })
    expect(Result.isFailure(refused) && refused.failure.reason).toContain("skill's name")
    expect(invalidOf(PathTemplate.match(runbook, "skill://services/db/Failover/SKILL.md"))).toMatchObject({
      _tag: "InvalidParameter",
      parameter: "runbook"
    })
  })

  it("expand wants every parameter and nothing else", () => {
    const missing = PathTemplate.expand(runbook, { service: "db" })
    expect(Result.isFailure(missing) && missing.failure).toMatchObject({ parameter: "runbook", reason: "missing" })
    const extra = PathTemplate.expand(onboarding, { customer: "acme", tenant: "x" })
    expect(Result.isFailure(extra) && extra.failure).toMatchObject({ parameter: "tenant", reason: "not a parameter of the template" })
    const unknown = PathTemplate.parameter(onboarding, "tenant", "x")
    expect(Result.isFailure(unknown) && unknown.failure.reason).toBe("not a parameter of the template")
  })

  const outside: ReadonlyArray<string> = [
    "skill://customers",
    "skill://customers/acme",
    "skill://customers/acme/offboarding/SKILL.md",
    "skill://customers/acme/b/onboarding/SKILL.md",
    "skill://partners/acme/onboarding/SKILL.md",
    "SKILL://customers/acme/onboarding/SKILL.md",
    "github://customers/acme/onboarding/SKILL.md",
    "skill://customers%2Facme/onboarding/SKILL.md"
  ]
  for (const uri of outside) {
    it(`${uri} is outside the template`, () => {
      expect(PathTemplate.match(onboarding, uri)._tag).toBe("Outside")
    })
  }

  const invalid: ReadonlyArray<[string, string, string]> = [
    ["skill://customers//onboarding/SKILL.md", "customer", "empty path segment"],
    ["skill://customers/../onboarding/SKILL.md", "customer", "dot segment"],
    ["skill://customers/./onboarding/SKILL.md", "customer", "dot segment"],
    ["skill://customers/%2E%2E/onboarding/SKILL.md", "customer", "dot segment"],
    ["skill://customers/a%2Fb/onboarding/SKILL.md", "customer", "slash"],
    ["skill://customers/a%5Cb/onboarding/SKILL.md", "customer", "slash or backslash"],
    ["skill://customers/a%00/onboarding/SKILL.md", "customer", "control character"],
    ["skill://customers/%ZZ/onboarding/SKILL.md", "customer", "malformed percent-encoding"],
    ["skill://customers/%C3/onboarding/SKILL.md", "customer", "malformed percent-encoding"],
    ["skill://customers/%61cme/onboarding/SKILL.md", "customer", "not canonically encoded"],
    ["skill://customers/caf%c3%a9/onboarding/SKILL.md", "customer", "not canonically encoded"],
    ["skill://customers/a b/onboarding/SKILL.md", "customer", "not canonically encoded"],
    ["skill://customers/a@b/onboarding/SKILL.md", "customer", "not canonically encoded"],
    [`skill://customers/${"a".repeat(256)}/onboarding/SKILL.md`, "customer", "longer than 255"]
  ]
  for (const [uri, parameter, why] of invalid) {
    it(`refuses ${uri.length > 80 ? uri.slice(0, 80) + "…" : uri} (${why})`, () => {
      const error = invalidOf(PathTemplate.match(onboarding, uri))
      expect(error).toMatchObject({ _tag: "InvalidParameter", parameter })
      expect(error.reason).toContain(why)
    })
  }

  it("a path below an instance's root must be a canonical skill URI", () => {
    for (const [uri, why] of [
      ["skill://customers/acme/onboarding/a/../b.md", "dot segment"],
      ["skill://customers/acme/onboarding/", "trailing slash"],
      ["skill://customers/acme/onboarding//x", "empty path segment"],
      ["skill://customers/acme/onboarding/skill.md", "spelled exactly"],
      ["skill://customers/acme/onboarding/%61.md", "canonical"],
      ["skill://customers/acme/onboarding/x?y", "query"]
    ] as const) {
      const error = invalidOf(PathTemplate.match(onboarding, uri))
      expect(error._tag).toBe("InvalidSkillUri")
      expect(error.reason).toContain(why)
    }
  })

  it("a value of exactly 255 characters is accepted, 256 is refused", () => {
    expect(Result.isSuccess(PathTemplate.expand(onboarding, { customer: "é".repeat(255) }))).toBe(true)
    expect(Result.isFailure(PathTemplate.expand(onboarding, { customer: "é".repeat(256) }))).toBe(true)
    const longest = Result.getOrThrow(PathTemplate.expand(onboarding, { customer: "é".repeat(255) }))
    expect(instanceOf(PathTemplate.match(onboarding, longest.uri)).params.customer).toBe("é".repeat(255))
  })
})

/** Whether a string has no lone surrogates, so it can be written as UTF-8. */
const isWellFormed = (s: string) => {
  try {
    encodeURIComponent(s)
    return true
  } catch {
    return false
  }
}

/** An independent statement of which values a parameter takes (the module description). */
const acceptable = (value: string, isName: boolean) =>
  value.length > 0 && value.length <= ServerLimits.MaxParameterLength && value !== "." && value !== ".." &&
  !/[\u0000-\u001f\u007f/\\]/.test(value) && isWellFormed(value) &&
  (!isName || /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/.test(value))

const anyString = Arbitrary.schema(Schema.String)
const wellFormed = Arbitrary.filter(anyString, isWellFormed)
const tricky = Arbitrary.map(
  Arbitrary.array(
    oneOf(
      anyString,
      constants(["%", "%2F", "%25", " ", "é", "🎉", "/", "\\", ".", "..", "@", ":", "?", "#", "+", "a", "-"])
    ),
    { maxLength: 4 }
  ),
  (parts) => parts.join("")
)
const value = oneOf(tricky, anyString)
// Folded rather than filtered: most generated strings hold some character a segment refuses.
const validValue = Arbitrary.map(value, (s) => {
  const folded = s.replace(/[\u0000-\u001f\u007f/\\]/g, "").slice(0, ServerLimits.MaxParameterLength)
  return acceptable(folded, false) ? folded : acceptable(`v${folded}`, false) ? `v${folded}` : "v"
})
const skillName = Arbitrary.map(anyString, (s) => {
  const folded = s.toLowerCase().replace(/[^a-z0-9-]/g, "").replace(/-+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64)
    .replace(/-+$/, "")
  return folded.length > 0 ? folded : "runbook"
})

describe("PathTemplate properties", () => {
  it.prop("expand then match gives back the parameters, for the skill, its root and its files", {
    customer: validValue,
    service: validValue,
    name: skillName
  }, ({ customer, name, service }) => {
    for (const [t, params] of [[onboarding, { customer }], [runbook, { service, runbook: name }]] as const) {
      const instance = Result.getOrThrow(PathTemplate.expand(t, params))
      expect(SkillUri.isCanonical(instance.uri)).toBe(true)
      expect(Result.isSuccess(SkillUri.parseSkillMd(instance.uri))).toBe(true)
      expect(SkillUri.skillPath(instance.uri as SkillUri.SkillMdUri)).toEqual(instance.path)
      const skill = instanceOf(PathTemplate.match(t, instance.uri))
      expect(skill.params).toEqual(params)
      expect(skill.uri).toBe(instance.uri)
      expect(skill.file).toEqual(["SKILL.md"])
      expect(instanceOf(PathTemplate.match(t, instance.root)).params).toEqual(params)
      const file = Result.getOrThrow(SkillUri.file(instance.uri, "references/notes v2.md"))
      expect(instanceOf(PathTemplate.match(t, file)).file).toEqual(["references", "notes v2.md"])
    }
  })

  it.prop("a value is accepted exactly when it is one valid segment; a refusal names the parameter", {
    customer: value,
    runbook: value
  }, ({ customer, runbook: name }) => {
    const first = PathTemplate.expand(onboarding, { customer })
    expect(Result.isSuccess(first)).toBe(acceptable(customer, false))
    if (Result.isFailure(first)) expect(first.failure).toMatchObject({ _tag: "InvalidParameter", parameter: "customer" })
    const second = PathTemplate.expand(runbook, { service: "db", runbook: name })
    expect(Result.isSuccess(second)).toBe(acceptable(name, true))
    if (Result.isFailure(second)) expect(second.failure).toMatchObject({ _tag: "InvalidParameter", parameter: "runbook" })
  })

  // Each class of invalid value: expand refuses it, and a URI carrying it in the parameter's place,
  // percent-encoded as a client would send it, is Invalid (never an instance, never another skill).
  const classes: ReadonlyArray<[string, Arbitrary.Arbitrary<string>]> = [
    ["empty", Arbitrary.Constant("")],
    ["dot segments", constants([".", ".."])],
    ["a slash", Arbitrary.map(Arbitrary.all([wellFormed, wellFormed]), ([a, b]) => `${a}/${b}`)],
    ["a backslash", Arbitrary.map(Arbitrary.all([wellFormed, wellFormed]), ([a, b]) => `${a}\\${b}`)],
    [
      "a control character",
      Arbitrary.map(Arbitrary.all([wellFormed, Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 31 })))]), ([a, c]) =>
        a + String.fromCharCode(c))
    ],
    ["over-long", Arbitrary.map(wellFormed, (s) => s + "x".repeat(ServerLimits.MaxParameterLength + 1 - Math.min(s.length, 1)))]
  ]
  for (const [name, arbitrary] of classes) {
    it.prop(`values with ${name} are refused by expand and match`, [arbitrary], ([bad]) => {
      const expanded = PathTemplate.expand(onboarding, { customer: bad })
      expect(Result.isFailure(expanded) && expanded.failure.parameter).toBe("customer")
      const uri = `skill://customers/${encodeURIComponent(bad)}/onboarding/SKILL.md`
      const match = PathTemplate.match(onboarding, uri)
      expect(match._tag).toBe("Invalid")
    })
  }

  it.prop("a lone surrogate is refused (it has no UTF-8 spelling)", [anyString], ([s]) => {
    const expanded = PathTemplate.expand(onboarding, { customer: s + "\ud800" })
    expect(Result.isFailure(expanded) && expanded.failure.parameter).toBe("customer")
  })

  it.prop("match never throws and never answers an instance for a URI expand cannot produce", [oneOf(
    Arbitrary.map(value, (v) => `skill://customers/${v}/onboarding/SKILL.md`),
    Arbitrary.map(value, (v) => `skill://customers/${v}/onboarding`),
    anyString
  )], ([uri]) => {
    const match = PathTemplate.match(onboarding, uri)
    if (match._tag !== "Instance") return
    const again = Result.getOrThrow(PathTemplate.expand(onboarding, match.params))
    expect(uri === again.root || uri.startsWith(again.root + "/")).toBe(true)
  })
})

describe("PathTemplate.relation", () => {
  it("finds templates and skill paths that could name or nest in one another", () => {
    expect(PathTemplate.relation(onboarding, { scheme: "skill", path: ["customers", "acme", "onboarding"] })).toBe("same")
    expect(PathTemplate.relation(onboarding, { scheme: "skill", path: ["customers", "acme"] })).toBe("inside")
    expect(PathTemplate.relation(onboarding, { scheme: "skill", path: ["customers", "acme", "onboarding", "faq"] })).toBe(
      "encloses"
    )
    expect(PathTemplate.relation(onboarding, { scheme: "skill", path: ["customers", "acme", "offboarding"] })).toBe(undefined)
    expect(PathTemplate.relation(onboarding, { scheme: "other", path: ["customers", "acme", "onboarding"] })).toBe(undefined)
    // "..": no parameter value could be it.
    expect(PathTemplate.relation(onboarding, { scheme: "skill", path: ["customers", "..", "onboarding"] })).toBe(undefined)
    // The instance's name position takes skill names only.
    expect(PathTemplate.relation(runbook, { scheme: "skill", path: ["services", "db", "Failover"] })).toBe(undefined)
    expect(PathTemplate.relation(runbook, { scheme: "skill", path: ["services", "db", "failover"] })).toBe("same")
    expect(PathTemplate.relation(runbook, template("services/{a}/{b}"))).toBe("same")
    expect(PathTemplate.relation(runbook, template("services/db/{b}"))).toBe("same")
    expect(PathTemplate.relation(runbook, template("services/{x}"))).toBe("inside")
    expect(PathTemplate.relation(template("services/{x}"), runbook)).toBe("encloses")
    expect(PathTemplate.relation(runbook, onboarding)).toBe(undefined)
  })

  it.prop("relation agrees with match on expanded instances", { customer: validValue }, ({ customer }) => {
    const instance = Result.getOrThrow(PathTemplate.expand(onboarding, { customer }))
    expect(PathTemplate.relation(onboarding, { scheme: "skill", path: instance.path })).toBe("same")
    expect(PathTemplate.relation(onboarding, { scheme: "skill", path: [...instance.path, "nested"] })).toBe("encloses")
  })
})
