/**
 * Namespaces: each upstream's skills appear under its prefix, never renamed; a collision between
 * two origins (the same URI, or one skill inside another) is refused at start-up, and reported
 * and not served twice when it comes with a change.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Skill, UpstreamSource } from "../src/index.js"
import { eventually, gateway, hearing, ourUpstream, platform, withClient } from "./support/gateway.js"

const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n`

const skill = (path: string, description: string) => {
  const name = path.split("/").at(-1)!
  return Skill.make({ path, files: { "SKILL.md": skillMd(name, description) } })
}

describe("UpstreamSource namespaces", () => {
  it.live("a collision with a local skill or between upstreams is refused at start-up", () =>
    Effect.gen(function*() {
      const a = yield* ourUpstream([skill("notes", "From A")])
      const b = yield* ourUpstream([skill("b/notes", "From B")])
      const sameUri = (yield* Effect.flip(gateway([{ prefix: "team", transport: UpstreamSource.http(a.url) }], {
        local: [skill("team/notes", "Local")]
      }))) as Error
      assert.strictEqual((sameUri as { readonly _tag?: string })._tag, "RegistrationError")
      assert.match(sameUri.message, /skill:\/\/team\/notes\/SKILL\.md: .*same URI/)
      const enclosing = (yield* Effect.flip(gateway([{ prefix: "team", transport: UpstreamSource.http(a.url) }], {
        local: [skill("team", "A local skill enclosing the upstream's")]
      }))) as Error
      assert.match(enclosing.message, /lies inside skill:\/\/team\/SKILL\.md, a local skill/)
      const between = (yield* Effect.flip(gateway([
        { prefix: "team", transport: UpstreamSource.http(b.url) },
        { prefix: "team/b", transport: UpstreamSource.http(a.url) }
      ]))) as Error
      assert.match(between.message, /skill:\/\/team\/b\/notes\/SKILL\.md: a skill of the upstream team(\/b)? is served at the same URI/)
    }).pipe(Effect.provide(platform)))

  it.live("a collision that comes with a change is reported and not served twice", () =>
    Effect.gen(function*() {
      const upstream = yield* ourUpstream([skill("notes", "From the upstream")])
      const lines: Array<string> = []
      const { url, registry, upstreams } = yield* gateway([{ prefix: "team", transport: UpstreamSource.http(upstream.url) }], {
        local: [skill("team/late", "Local")],
        recheck: { min: "1 hour", max: "1 hour" },
        log: (line) => Effect.sync(() => lines.push(line))
      })
      yield* hearing(upstreams)
      yield* upstream.registry.upsert([skill("late", "From the upstream, late"), skill("fresh", "New")])
      yield* eventually("fresh", Effect.map(registry.snapshot, (snapshot) => snapshot.byUri.has("skill://team/fresh/SKILL.md") ? true : undefined))
      assert.isTrue(lines.some((line) => /not serving skill:\/\/late\/SKILL\.md: a local skill is served at the same URI/.test(line)), lines.join("\n"))
      const listed = yield* withClient(url, (client) => client.listSkills())
      const late = listed.skills.filter((entry) => entry.uri === "skill://team/late/SKILL.md")
      assert.strictEqual(late.length, 1)
      assert.strictEqual(late[0]!.frontmatter.description, "Local")
      assert.deepStrictEqual(listed.skills.map((entry) => entry.uri).sort(), [
        "skill://team/fresh/SKILL.md",
        "skill://team/late/SKILL.md",
        "skill://team/notes/SKILL.md"
      ])
    }).pipe(Effect.provide(platform)))
})
