/**
 * A live upstream: it adds, changes and removes a skill, and a listener of the gateway hears each
 * change, with only notifications to go by (the ttl re-check is set far away), on both revisions
 * between gateway and upstream; an upstream that sends no notification for a changed body (the
 * official SDK) is caught up with by the `ttlMs` re-check.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Skill, UpstreamSource } from "../src/index.js"
import { eventually, folder, gateway, hearing, officialUpstream, ourUpstream, platform, sdkFixture, withClient } from "./support/gateway.js"
import { listenEvents } from "./support/session.js"
import * as TamperProxy from "./support/tamperProxy.js"

const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n`

const notes = (version: string) =>
  Skill.make({ path: "team/notes", files: { "SKILL.md": skillMd("notes", "Team notes"), "references/log.md": `# Log ${version}\n` } })

const base = Skill.make({ path: "base", files: { "SKILL.md": skillMd("base", "Always there") } })

const ListChanged = "notifications/resources/list_changed"

// The text of a file as the gateway serves it, verified by our client (undefined when not served).
const served = (url: string, skill: string, file: string) =>
  withClient(url, (client) =>
    Effect.gen(function*() {
      const listing = yield* client.listSkills()
      const entry = listing.skills.find((candidate) => candidate.uri === skill)
      if (entry === undefined) return undefined
      return new TextDecoder().decode((yield* client.readSkillResource(entry, file)).bytes)
    }), { protocolVersion: "2026-07-28" })

describe("UpstreamSource live", () => {
  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    it.live(`an upstream adds, changes and removes a skill and the gateway's listeners hear each (${revision} upstream notifications)`, () =>
      Effect.gen(function*() {
        const upstream = yield* ourUpstream([base])
        const { url, upstreams } = yield* gateway(
          [{ prefix: "up", transport: UpstreamSource.http(upstream.url), protocolVersion: revision }],
          { recheck: { min: "1 hour", max: "1 hour" } }
        )
        yield* hearing(upstreams)
        const events = yield* listenEvents(url, {}, { resourcesListChanged: true })
        const heard = (count: number) => eventually(`${count} list_changed`, Effect.sync(() =>
          events().filter((event) => event.method === ListChanged).length >= count ? true : undefined))
        const uri = "skill://up/team/notes/SKILL.md"
        const log = "skill://up/team/notes/references/log.md"

        yield* upstream.registry.upsert([notes("v1")])
        yield* heard(1)
        assert.strictEqual(yield* served(url, uri, log), "# Log v1\n")

        yield* upstream.registry.upsert([notes("v2")])
        yield* heard(2)
        assert.strictEqual(yield* served(url, uri, log), "# Log v2\n")

        yield* upstream.registry.remove(["skill://team/notes/SKILL.md"])
        yield* heard(3)
        assert.isUndefined(yield* served(url, uri, log))
        assert.strictEqual(yield* served(url, "skill://up/base/SKILL.md", "skill://up/base/SKILL.md"), skillMd("base", "Always there"))
      }).pipe(Effect.provide(platform)))
  }

  it.live("an upstream that does not answer at start-up does not hold the gateway's start, and joins when it answers", () =>
    Effect.gen(function*() {
      const upstream = yield* ourUpstream([base])
      const proxy = yield* TamperProxy.start(upstream.url)
      proxy.hold = true
      const { registry, upstreams } = yield* gateway([{ prefix: "late", transport: UpstreamSource.http(proxy.url) }], {
        startup: "300 millis",
        recheck: { min: "1 hour", max: "1 hour" }
      })
      assert.deepStrictEqual((yield* registry.snapshot).skills, [])
      assert.deepStrictEqual((yield* upstreams.status).map((status) => [status.reachable, status.skills]), [[false, 0]])
      proxy.release()
      yield* eventually("the late upstream's skill", Effect.map(registry.snapshot, (snapshot) =>
        snapshot.byUri.has("skill://late/base/SKILL.md") ? true : undefined))
    }).pipe(Effect.provide(platform)))

  it.live("an upstream still in its first look when the gateway starts says so, and says it looked once done", () =>
    Effect.gen(function*() {
      const upstream = yield* ourUpstream([base])
      const proxy = yield* TamperProxy.start(upstream.url)
      // It answers the handshake and its listing, and holds every file read.
      proxy.holdOnly = "resources/read"
      proxy.hold = true
      const { registry, upstreams } = yield* gateway([{ prefix: "slow", transport: UpstreamSource.http(proxy.url) }], {
        startup: "300 millis",
        recheck: { min: "1 hour", max: "1 hour" }
      })
      assert.deepStrictEqual((yield* upstreams.status).map((status) => [status.reachable, status.looked, status.skills]), [[true, false, 0]])
      proxy.release()
      yield* eventually("the first look done", Effect.map(upstreams.status, ([status]) => status!.looked ? status : undefined))
      assert.deepStrictEqual((yield* upstreams.status).map((status) => [status.reachable, status.looked, status.skills]), [[true, true, 1]])
      assert.isTrue((yield* registry.snapshot).byUri.has("skill://slow/base/SKILL.md"))
    }).pipe(Effect.provide(platform)))

  it.live("an upstream that does not say a body changed is caught up with by its ttlMs re-check", () =>
    Effect.gen(function*() {
      const dir = yield* folder(sdkFixture)
      const sdk = yield* officialUpstream(dir)
      const { url } = yield* gateway(
        [{ prefix: "sdk", transport: UpstreamSource.http(sdk.url) }],
        { recheck: { min: "200 millis", max: "200 millis" } }
      )
      const style = "skill://sdk/release-notes/guide/STYLE.md"
      assert.strictEqual(yield* served(url, "skill://sdk/release-notes/SKILL.md", style), "# Style\n")
      const { writeFileSync } = yield* Effect.promise(() => import("node:fs"))
      writeFileSync(`${dir}/release-notes/guide/STYLE.md`, "# Style, revised\n")
      // The SDK tells nobody of a changed body; its catalogue sees it once reloaded.
      yield* Effect.promise(() => sdk.reload())
      yield* eventually("the revised file", Effect.map(
        served(url, "skill://sdk/release-notes/SKILL.md", style),
        (text) => text === "# Style, revised\n" ? true : undefined
      ))
    }).pipe(Effect.provide(platform)))
})
