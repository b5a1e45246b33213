import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ServerLimits, SkillFamily } from "../src/index.js"

describe("SkillFamily.make", () => {
  it("takes its parameter names from the template and fills the defaults", () => {
    const family = SkillFamily.make({
      path: "services/{service}/{runbook}",
      list: () => Effect.succeed({ instances: [{ service: "db", runbook: "failover" }], nextCursor: "2" }),
      render: ({ runbook, service }) =>
        Effect.succeed({ "SKILL.md": `---\nname: ${runbook}\ndescription: ${service}\n---\n` })
    })
    expect(family).toMatchObject({ _tag: "Family", path: "services/{service}/{runbook}", scheme: "skill", cacheHint: undefined })
    expect(family.timeout).toBe(ServerLimits.FamilyTimeout)
    expect(SkillFamily.make({ path: "a/{b}/c", render: () => Effect.succeed({}), timeout: "1 second" }).list).toBe(undefined)
  })

  it("refuses at compile time a parameter the template does not have", () => {
    SkillFamily.make({
      path: "customers/{customer}/onboarding",
      // @ts-expect-error `tenant` is not a parameter of the template
      render: ({ tenant }: { readonly tenant: string }) => Effect.succeed({ "SKILL.md": tenant })
    })
    SkillFamily.make({
      path: "customers/{customer}/onboarding",
      // @ts-expect-error an instance must give every parameter
      list: () => Effect.succeed([{ tenant: "acme" }]),
      render: ({ customer }) => Effect.succeed({ "SKILL.md": customer })
    })
  })
})
