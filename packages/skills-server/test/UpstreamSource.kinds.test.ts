/**
 * Every kind of upstream skill through the gateway: a dynamic skill stays dynamic, each read
 * fetched from the upstream and checked on request; a get-only (unlisted) skill is fetched and
 * verified on `skills/get`, looked at again with the others, and held within `maxUnlisted`; a
 * private upstream answer keeps the gateway's answers about it private.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Skill, UpstreamSource } from "../src/index.js"
import { eventually, gateway, ourUpstream, platform, withClient } from "./support/gateway.js"
import { modernHttp } from "./support/wire.js"

const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n`

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

describe("UpstreamSource kinds", () => {
  it.live("a dynamic upstream skill is served as dynamic: each read is fetched and checked on request", () =>
    Effect.gen(function*() {
      let reads = 0
      let description = "Live report"
      const report = Skill.dynamic({
        path: "live/report",
        frontmatter: { name: "report", description: "Live report" },
        read: (path) =>
          Effect.sync(() =>
            path === "SKILL.md" ? skillMd("report", description) : path === "data.txt" ? `reading ${++reads}\n` : undefined
          ),
        list: Effect.succeed(["SKILL.md", "data.txt"])
      })
      const upstream = yield* ourUpstream([report])
      const { url } = yield* gateway([{ prefix: "up", transport: UpstreamSource.http(upstream.url) }])
      const uri = "skill://up/live/report/SKILL.md"
      yield* withClient(url, (client) =>
        Effect.gen(function*() {
          const entry = (yield* client.getSkill(uri)).skill
          assert.strictEqual(entry.resources, "dynamic")
          const first = text((yield* client.readSkillResource(entry, "data.txt")).bytes)
          const second = text((yield* client.readSkillResource(entry, "data.txt")).bytes)
          assert.notStrictEqual(first, second)
          assert.strictEqual((yield* client.loadSkill(entry)).frontmatter.description, "Live report")
          assert.deepStrictEqual((yield* client.readResourceDirectory("skill://up/live/report")).map((child) => child.uri), [
            "skill://up/live/report/SKILL.md",
            "skill://up/live/report/data.txt"
          ])
          // A SKILL.md that no longer agrees with its entry is never passed on.
          description = "Something else"
          const refused = yield* Effect.flip(client.loadSkill(entry))
          assert.strictEqual(refused._tag, "McpClientError")
        }), { allowDynamic: true, protocolVersion: "2026-07-28" })
    }).pipe(Effect.provide(platform)))

  it.live("a get-only upstream skill is fetched and verified on skills/get, followed, and held within maxUnlisted", () =>
    Effect.gen(function*() {
      const hidden = (name: string, body: string) =>
        Skill.make({ path: `hidden/${name}`, listed: false, files: { "SKILL.md": skillMd(name, `The ${name} tool`), "notes.md": body } })
      const upstream = yield* ourUpstream([hidden("tool", "v1\n"), hidden("other", "other\n")])
      const { url, registry } = yield* gateway([{ prefix: "up", transport: UpstreamSource.http(upstream.url) }], {
        maxUnlisted: 1,
        // Nothing is listed, so nothing says a get-only skill changed: its ttl is what brings it back.
        recheck: { min: "200 millis", max: "200 millis" }
      })
      const uri = "skill://up/hidden/tool/SKILL.md"
      const notes = (client: Parameters<Parameters<typeof withClient>[1]>[0]) =>
        Effect.gen(function*() {
          const entry = (yield* client.getSkill(uri)).skill
          return text((yield* client.readSkillResource(entry, "notes.md")).bytes)
        })
      yield* withClient(url, (client) =>
        Effect.gen(function*() {
          assert.deepStrictEqual((yield* client.listSkills()).skills, [])
          assert.strictEqual(yield* notes(client), "v1\n")
          const missing = yield* Effect.flip(client.getSkill("skill://up/hidden/nothing/SKILL.md"))
          assert.strictEqual(missing._tag, "SkillNotFound")
        }))

      // Changed upstream: asked for again at the next look, verified anew.
      yield* upstream.registry.upsert([hidden("tool", "v2\n")])
      yield* eventually("v2", Effect.map(withClient(url, notes), (body) => (body === "v2\n" ? true : undefined)))

      // A second get-only skill pushes the least recently asked one out of the catalogue; asking
      // for it again brings it back.
      yield* withClient(url, (client) => client.getSkill("skill://up/hidden/other/SKILL.md"))
      const held = (yield* registry.snapshot).skills.map((skill) => skill.uri)
      assert.deepStrictEqual(held, ["skill://up/hidden/other/SKILL.md"])
      assert.strictEqual(yield* withClient(url, notes), "v2\n")

      // Removed upstream: gone from the gateway at its next look.
      yield* upstream.registry.remove(["skill://hidden/tool/SKILL.md"])
      yield* eventually("removal", Effect.map(registry.snapshot, (snapshot) => snapshot.byUri.has(uri) ? undefined : true))
    }).pipe(Effect.provide(platform)))

  it.live("a private upstream answer keeps the gateway's answers private; a public one stays public", () =>
    Effect.gen(function*() {
      const open = yield* ourUpstream([Skill.make({ path: "open", files: { "SKILL.md": skillMd("open", "Public") } })], {
        cacheHint: { ttl: "1 minute", scope: "public" }
      })
      const closed = yield* ourUpstream([Skill.make({ path: "closed", files: { "SKILL.md": skillMd("closed", "Private") } })], {
        cacheHint: { ttl: "1 minute", scope: "private" }
      })
      const { url } = yield* gateway([
        { prefix: "public", transport: UpstreamSource.http(open.url) },
        { prefix: "private", transport: UpstreamSource.http(closed.url) }
      ])
      const client = modernHttp(url)
      const hintOf = (result: any) => [result.ttlMs, result.cacheScope]
      assert.deepStrictEqual(hintOf(yield* client.call("skills/get", { uri: "skill://public/open/SKILL.md" })), [60000, "public"])
      assert.deepStrictEqual(hintOf(yield* client.call("skills/get", { uri: "skill://private/closed/SKILL.md" })), [60000, "private"])
      assert.deepStrictEqual(hintOf(yield* client.call("resources/read", { uri: "skill://private/closed/SKILL.md" })), [60000, "private"])
      assert.strictEqual((yield* client.call("skills/list", {})).cacheScope, "private")
    }).pipe(Effect.provide(platform)))
})
