/**
 * Pagination (R31), cache hints (R32, SEP-2549, spec §7 item 1), `directoryRead: false` (R83) and
 * catalogue replacement, over loopback HTTP on both revisions.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpServer } from "effect/ai"
import { SkillRegistry, SkillsServer } from "../src/index.js"
import { simple } from "./support/fixtures.js"
import type { Client } from "./support/wire.js"
import { httpServer, legacyHttp, legacyStdio, modernHttp, ServerUrl, StdioPipe, stdioServer } from "./support/wire.js"

const expiredCursor = "Unknown or expired cursor: list again from the start, without a cursor"
const many = ["s1", "s2", "s3", "s4", "s5", "s6", "s7"].map((name) => simple(`p/${name}`))
const wide = simple("wide", { "a.md": "a", "b.md": "b", "c.md": "c", "d/e.md": "e" })

let registry: SkillRegistry.SkillRegistry["Service"] | undefined
const Paged = SkillsServer.layer({ skills: [...many, wide], pageSize: 3 })
const Capture = Layer.effectDiscard(Effect.gen(function*() {
  registry = yield* SkillRegistry.SkillRegistry
}))

const clients = Effect.gen(function*() {
  const url = yield* ServerUrl
  return [modernHttp(url), yield* legacyHttp(url)] as const
})

const listAll = (client: Client) =>
  Effect.gen(function*() {
    const pages: Array<Array<string>> = []
    let cursor: string | undefined
    do {
      const result = yield* client.call("skills/list", cursor === undefined ? {} : { cursor })
      pages.push(result.skills.map((skill: any) => skill.uri))
      cursor = result.nextCursor
    } while (cursor !== undefined)
    return pages
  })

describe("options", () => {
  layer(httpServer(Layer.merge(Paged, Capture.pipe(Layer.provide(Paged)))))("pagination", (it) => {
    it.effect("skills/list pages by keyset; entries never split; last page has no nextCursor (R31)", () =>
      Effect.gen(function*() {
        for (const client of yield* clients) {
          const pages = yield* listAll(client)
          assert.deepStrictEqual(pages, [
            ["skill://p/s1/SKILL.md", "skill://p/s2/SKILL.md", "skill://p/s3/SKILL.md"],
            ["skill://p/s4/SKILL.md", "skill://p/s5/SKILL.md", "skill://p/s6/SKILL.md"],
            ["skill://p/s7/SKILL.md", "skill://wide/SKILL.md"]
          ])
        }
      }))

    it.effect("resources/directory/read paginates the same way; a cursor belongs to its directory", () =>
      Effect.gen(function*() {
        for (const client of yield* clients) {
          const first = yield* client.call("resources/directory/read", { uri: "skill://wide" })
          assert.deepStrictEqual(first.resources.map((r: any) => r.name), ["SKILL.md", "a.md", "b.md"])
          assert.isString(first.nextCursor)
          const second = yield* client.call("resources/directory/read", { uri: "skill://wide", cursor: first.nextCursor })
          assert.deepStrictEqual(second.resources.map((r: any) => r.name), ["c.md", "d"])
          assert.isUndefined(second.nextCursor)
          const foreign = yield* client.fail("resources/directory/read", { uri: "skill://p/s1", cursor: first.nextCursor })
          assert.deepStrictEqual([foreign.code, foreign.message], [-32602, expiredCursor])
          const crossed = yield* client.fail("skills/list", { cursor: first.nextCursor })
          assert.strictEqual(crossed.code, -32602)
        }
      }))

    it.effect("a cursor stays valid when the catalogue is replaced between pages", () =>
      Effect.gen(function*() {
        const [client] = yield* clients
        const first = yield* client.call("skills/list")
        assert.deepStrictEqual(first.skills.map((s: any) => s.uri).at(-1), "skill://p/s3/SKILL.md")
        // s2 (already seen) disappears, s35 appears after the cursor.
        yield* registry!.replace([...many.filter((_, i) => i !== 1), simple("p/s35"), wide])
        const second = yield* client.call("skills/list", { cursor: first.nextCursor })
        assert.deepStrictEqual(second.skills.map((s: any) => s.uri), [
          "skill://p/s35/SKILL.md",
          "skill://p/s4/SKILL.md",
          "skill://p/s5/SKILL.md"
        ])
        const removed = yield* client.fail("skills/get", { uri: "skill://p/s2/SKILL.md" })
        assert.strictEqual(removed.code, -32602)
        const replacedBadly = yield* Effect.flip(registry!.replace([simple("p/s1"), simple("p/s1")]))
        assert.strictEqual(replacedBadly._tag, "RegistrationError")
        // A failed replace keeps the previous snapshot.
        assert.strictEqual((yield* client.call("skills/get", { uri: "skill://p/s35/SKILL.md" })).skill.frontmatter.name, "s35")
        yield* registry!.replace([...many, wide])
      }))
  })

  let stdioRegistry: SkillRegistry.SkillRegistry["Service"] | undefined
  const Notified = SkillsServer.layer({ skills: [simple("v1")] })
  const CaptureNotified = Layer.effectDiscard(Effect.gen(function*() {
    stdioRegistry = yield* SkillRegistry.SkillRegistry
  }))
  layer(stdioServer(Layer.merge(Notified, CaptureNotified.pipe(Layer.provide(Notified)))))("replace", (it) => {
    it.effect("replacing the catalogue emits notifications/resources/list_changed (2025-11-25 stdio)", () =>
      Effect.gen(function*() {
        const pipe = yield* StdioPipe
        const client = yield* legacyStdio(pipe)
        assert.isTrue(client.initialize.capabilities.resources.listChanged)
        const before = pipe.notifications.length
        yield* stdioRegistry!.replace([simple("v2")])
        const list = yield* client.call("skills/list")
        assert.deepStrictEqual(list.skills.map((skill: any) => skill.uri), ["skill://v2/SKILL.md"])
        // effect delivers list changes from a background queue: wait (real time) for it to arrive.
        for (let i = 0; i < 100 && pipe.notifications.length === before; i++) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
          yield* client.call("ping")
        }
        assert.isTrue(
          pipe.notifications.slice(before).some((message) => message.method === "notifications/resources/list_changed"),
          JSON.stringify(pipe.notifications)
        )
      }))
  })

  const UserResource = McpServer.resource({ uri: "file:///a.txt", name: "a", content: Effect.succeed("a") })

  layer(httpServer(SkillsServer.layer({ skills: [simple("cached")], cacheHint: { ttl: "5 minutes", scope: "public" } })))(
    "cache hint",
    (it) => {
      it.effect("2026-07-28 results carry the configured ttlMs and public scope; 2025-11-25 none (R32, R67)", () =>
        Effect.gen(function*() {
          const [modern, legacy] = yield* clients
          for (
            const [method, params] of [
              ["skills/list", {}],
              ["skills/get", { uri: "skill://cached/SKILL.md" }],
              ["resources/read", { uri: "skill://cached/SKILL.md" }],
              ["resources/list", {}]
            ] as const
          ) {
            const result = yield* modern.call(method, params)
            assert.deepStrictEqual([result.resultType, result.ttlMs, result.cacheScope], ["complete", 300000, "public"], method)
            const old = yield* legacy.call(method, params)
            assert.deepStrictEqual([old.resultType, old.ttlMs, old.cacheScope], [undefined, undefined, undefined], method)
          }
          // Not cacheable per spec §1.7, but the official SDK client requires the fields on 2026-07-28.
          const dir = yield* modern.call("resources/directory/read", { uri: "skill://cached" })
          assert.deepStrictEqual([dir.resultType, dir.ttlMs, dir.cacheScope], ["complete", 300000, "public"])
          const oldDir = yield* legacy.call("resources/directory/read", { uri: "skill://cached" })
          assert.deepStrictEqual([oldDir.resultType, oldDir.ttlMs, oldDir.cacheScope], [undefined, undefined, undefined])
        }))
    }
  )

  layer(
    httpServer(
      Layer.merge(
        SkillsServer.layer({ skills: [simple("cached")], cacheHint: { ttl: "5 minutes", scope: "public" } }),
        UserResource
      ),
      { cacheHints: { resources: { ttl: "1 minute", cacheScope: "private" } } }
    )
  )("cache hint with effect resources", (it) => {
    it.effect("resources/list mixing effect resources and skills takes the stricter hint", () =>
      Effect.gen(function*() {
        const [modern] = yield* clients
        const result = yield* modern.call("resources/list")
        assert.deepStrictEqual([result.ttlMs, result.cacheScope], [60000, "private"])
        assert.deepStrictEqual(result.resources.map((r: any) => r.uri), ["file:///a.txt", "skill://cached/SKILL.md"])
      }))
  })

  layer(httpServer(SkillsServer.layer({ skills: [simple("plain")] }), { directoryRead: false }))("directoryRead: false", (it) => {
    it.effect("declares {} and resources/directory/read is Method not found (HTTP 404 on 2026-07-28) (R49, R83)", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const modern = modernHttp(url)
        const discover = yield* modern.call("server/discover")
        assert.deepStrictEqual(discover.capabilities.extensions["io.modelcontextprotocol/skills"], {})
        const response = yield* modern.send("resources/directory/read", { uri: "skill://plain" })
        assert.strictEqual(response.status, 404)
        assert.strictEqual(response.body.error.code, -32601)
        const legacy = yield* legacyHttp(url)
        assert.deepStrictEqual(legacy.initialize.capabilities.extensions["io.modelcontextprotocol/skills"], {})
        const error = yield* legacy.fail("resources/directory/read", { uri: "skill://plain" })
        assert.strictEqual(error.code, -32601)
        assert.strictEqual((yield* legacy.call("skills/list")).skills.length, 1)
      }))
  })
})
