/**
 * Rendered skills (per-caller bytes, verifiable digests) and per-skill cache hints.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import { type Duration, Effect, Layer } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { Skill, SkillRegistry, SkillsServer } from "../src/index.js"
import { pdfProcessing, simple, skillMd } from "./support/fixtures.js"
import { httpServer, legacyHttp, modernHttp, ServerUrl, withHeaders } from "./support/wire.js"

let renders = 0
const greeting = Skill.rendered({
  path: "greeting",
  render: (request) =>
    Effect.sync(() => {
      renders++
      const user = String(request.headers["x-user"] ?? "you")
      return {
        "SKILL.md": `---\nname: greeting\ndescription: Greets ${user}\n---\n\n# Hello ${user}\n\nSee references/profile.md.\n`,
        "references/profile.md": `# Profile of ${user}\n`
      }
    })
})

const withClient = <A, E>(url: string, user: string, f: (client: SkillsClient.Service) => Effect.Effect<A, E>) =>
  SkillsClient.SkillsClient.use(f).pipe(
    Effect.provide(
      SkillsClient.layerHttp({ url, protocolVersion: "2026-07-28", headers: { "x-user": user } }).pipe(
        Layer.provide([FetchHttpClient.layer, SkillCache.layerMemory()])
      )
    )
  )

// Everything one caller sees of the rendered skill, each file verified against its entry.
const loadAll = (url: string, user: string) =>
  withClient(url, user, (client) =>
    Effect.gen(function*() {
      const listing = yield* client.listSkills()
      const listed = listing.skills.find((skill) => skill.uri === "skill://greeting/SKILL.md")!
      const { skill, cacheHint } = yield* client.getSkill("skill://greeting/SKILL.md")
      const loaded = yield* client.loadSkill(skill)
      const files: Record<string, string> = {}
      for (const resource of skill.resources === "dynamic" ? [] : skill.resources) {
        const file = yield* client.readSkillResource(skill, resource.uri)
        assert.isTrue(file.verified)
        files[resource.uri] = new TextDecoder().decode(file.bytes)
      }
      return { listed, skill, cacheHint, description: loaded.frontmatter.description, files }
    }))

layer(httpServer(SkillsServer.layer({ skills: [pdfProcessing, greeting], cacheHint: { ttl: "5 minutes", scope: "public" } })))(
  "rendered skills",
  (it) => {
    it.effect("two callers get different bytes, each verified against the entry rendered for them", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const ann = yield* loadAll(url, "ann")
        const bob = yield* loadAll(url, "bob")
        expect(ann.description).toBe("Greets ann")
        expect(bob.description).toBe("Greets bob")
        expect(ann.files["skill://greeting/references/profile.md"]).toBe("# Profile of ann\n")
        expect(bob.files["skill://greeting/references/profile.md"]).toBe("# Profile of bob\n")
        expect(ann.skill.resources).not.toEqual(bob.skill.resources)
        // skills/list shows each caller the entry rendered for them.
        expect(ann.listed).toEqual(ann.skill)
        expect(bob.listed).toEqual(bob.skill)
        // Per-caller results are private even though the server's hint is public.
        expect(ann.cacheHint.cacheScope).toBe("private")
      }))

    it.effect("a request renders the skill once; directory reads and resources/list use the rendered files", () =>
      Effect.gen(function*() {
        const client = withHeaders(modernHttp(yield* ServerUrl), { "x-user": "cy" })
        const before = renders
        const directory = yield* client.call("resources/directory/read", { uri: "skill://greeting/references" })
        expect(renders - before).toBe(1)
        expect(directory.resources).toEqual([{
          uri: "skill://greeting/references/profile.md",
          name: "profile.md",
          mimeType: "text/markdown",
          size: "# Profile of cy\n".length
        }])
        const resources = yield* client.call("resources/list")
        expect(renders - before).toBe(2)
        const greetingMd = resources.resources.find((resource: any) => resource.uri === "skill://greeting/SKILL.md")
        expect(greetingMd.description).toBe("Greets cy")
        expect(resources.cacheScope).toBe("private")
        // The static skill's own results keep the server's public hint.
        const pdf = yield* client.call("skills/get", { uri: "skill://pdf-processing/SKILL.md" })
        expect([pdf.ttlMs, pdf.cacheScope]).toEqual([300_000, "public"])
      }))

    it.effect("2025-11-25 sessions get the same rendering", () =>
      Effect.gen(function*() {
        const legacy = yield* legacyHttp(yield* ServerUrl, { "x-user": "dee" })
        const read = yield* legacy.call("resources/read", { uri: "skill://greeting/references/profile.md" })
        expect(read.contents[0].text).toBe("# Profile of dee\n")
      }))
  }
)

let tenantRenders = 0
const tenant = Skill.rendered({
  path: "tenant",
  shareKey: (request) => request.headers["x-tenant"],
  shareFor: "1 minute",
  render: (request) =>
    Effect.sync(() => {
      tenantRenders++
      return { "SKILL.md": `---\nname: tenant\ndescription: For ${String(request.headers["x-tenant"])}\n---\n` }
    })
})

layer(httpServer(SkillsServer.layer({ skills: [tenant] })))("shared renderings", (it) => {
  it.effect("requests with the same shareKey reuse one rendering for shareFor; other keys render their own", () =>
    Effect.gen(function*() {
      const url = yield* ServerUrl
      const acme = withHeaders(modernHttp(url), { "x-tenant": "acme" })
      const globex = withHeaders(modernHttp(url), { "x-tenant": "globex" })
      const first = yield* acme.call("skills/get", { uri: "skill://tenant/SKILL.md" })
      yield* acme.call("resources/read", { uri: "skill://tenant/SKILL.md" })
      expect(tenantRenders).toBe(1)
      const other = yield* globex.call("skills/get", { uri: "skill://tenant/SKILL.md" })
      expect(tenantRenders).toBe(2)
      expect(first.skill.frontmatter.description).toBe("For acme")
      expect(other.skill.frontmatter.description).toBe("For globex")
    }))
})

describe("per-skill cache hints", () => {
  const own = (path: string, ttl: Duration.Input, scope: "public" | "private") =>
    Skill.make({ path, files: { "SKILL.md": skillMd(path) }, cacheHint: { ttl, scope } })

  layer(httpServer(SkillsServer.layer({
    skills: [own("a", "1 minute", "public"), own("b", "10 minutes", "public"), simple("c")],
    cacheHint: { ttl: "5 minutes", scope: "private" },
    pageSize: 2
  })))("mixed", (it) => {
    it.effect("a skill's own hint applies to its results; a page carries its shortest ttl and the listing's scope (R36)", () =>
      Effect.gen(function*() {
        const client = modernHttp(yield* ServerUrl)
        const a = yield* client.call("skills/get", { uri: "skill://a/SKILL.md" })
        expect([a.ttlMs, a.cacheScope]).toEqual([60_000, "public"])
        const c = yield* client.call("skills/get", { uri: "skill://c/SKILL.md" })
        expect([c.ttlMs, c.cacheScope]).toEqual([300_000, "private"])
        const read = yield* client.call("resources/read", { uri: "skill://b/SKILL.md" })
        expect([read.ttlMs, read.cacheScope]).toEqual([600_000, "public"])
        const first = yield* client.call("skills/list")
        expect(first.skills.map((skill: any) => skill.uri)).toEqual(["skill://a/SKILL.md", "skill://b/SKILL.md"])
        // Every entry of page 1 is public, but c (private) is on page 2: one listing, one scope.
        expect([first.ttlMs, first.cacheScope]).toEqual([60_000, "private"])
        const second = yield* client.call("skills/list", { cursor: first.nextCursor })
        expect([second.ttlMs, second.cacheScope]).toEqual([300_000, "private"])
      }))
  })

  layer(httpServer(SkillsServer.layer({
    skills: [own("a", "1 minute", "public"), own("b", "10 minutes", "public")],
    pageSize: 1
  })))("all public", (it) => {
    it.effect("a listing whose every skill is public is public on every page", () =>
      Effect.gen(function*() {
        const client = modernHttp(yield* ServerUrl)
        const first = yield* client.call("skills/list")
        expect([first.ttlMs, first.cacheScope]).toEqual([60_000, "public"])
        const second = yield* client.call("skills/list", { cursor: first.nextCursor })
        expect([second.ttlMs, second.cacheScope]).toEqual([600_000, "public"])
      }))
  })

  it.effect("an invalid ttl is a registration problem naming the skill", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(SkillRegistry.build([own("bad", -1, "public")]))
      expect(error.problems).toEqual([{ skill: "skill://bad/SKILL.md", reason: "cacheHint.ttl must be finite and nonnegative, got -1" }])
    }))
})
