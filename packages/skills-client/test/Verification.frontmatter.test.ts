/**
 * A server can put any frontmatter in a `SKILL.md`: the client parses it with the core parser,
 * under the same limit and the same number rule as the server, and answers in bounded time.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Digest, Skill } from "@mcp-skills/core"
import { Verification } from "@mcp-skills/client"
import { versions, withClient } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

const server = (tamper: Tamper.Tamper) =>
  Effect.acquireRelease(Effect.promise(() => Tamper.start(tamper)), (s) => Effect.promise(() => s.close()))

describe.each(versions)("hostile frontmatter over HTTP %s", (protocolVersion) => {
  it.live("a 32,000-key SKILL.md whose entry agrees is refused by the frontmatter limit within 5 s", () =>
    Effect.gen(function*() {
      const s = yield* server({ metadataKeys: 32_000 })
      const started = performance.now()
      const error = yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          const { skills } = yield* c.listSkills()
          return yield* c.loadSkill(skills[0]!)
        }), { protocolVersion }).pipe(Effect.flip)
      assert.isBelow(performance.now() - started, 5_000)
      assert.strictEqual(error._tag, "FrontmatterMismatch")
      assert.include(error.message, "Limits.MaxFrontmatterBytes")
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri])
    }))
})

describe("the number rule on the client", () => {
  const enc = new TextEncoder()
  const entry = (frontmatter: Record<string, unknown>, skillMd: string) => ({
    uri: "skill://big/SKILL.md",
    frontmatter: { name: "big", description: "d", ...frontmatter },
    resources: [{ uri: "skill://big/SKILL.md", digest: Digest.make(enc.encode(skillMd)), size: enc.encode(skillMd).byteLength }]
  })

  it("an entry listing 2^64 is invalid, and so is a SKILL.md holding it: no mismatch between two readings", () => {
    const skillMd = "---\nname: big\ndescription: d\nx: 18446744073709551616\n---\n"
    assert.isTrue(Result.isFailure(Skill.decode(entry({ x: 2 ** 64 }, skillMd))))
    const listed = Result.getOrThrow(Skill.decode(entry({}, skillMd)))
    const checked = Verification.checkFrontmatter(listed, enc.encode(skillMd))
    if (Result.isSuccess(checked)) throw new Error("accepted")
    assert.include(checked.failure.message, "2^53")
  })
})
