/**
 * Strict conformance run (scripts/conformance.sh, both revisions) still passes with
 * `--watch` on, and with a rendered skill in the catalogue, which our client then verifies for two
 * callers that get different bytes. And with a skill family and skills added at run time
 * (a `SkillsServer.skill` layer, and `upsert` once the server is up).
 */
import { describe, expect, it } from "@effect/vitest"
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import { NodeServices } from "@effect/platform-node"
import { Context, Deferred, Effect, Layer } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Serve from "../src/bin/serve.js"
import { Skill, SkillRegistry, SkillsServer } from "../src/index.js"
import { examples, httpServer, serveExamples } from "./support/cli-server.js"
import { skillMd } from "./support/fixtures.js"
import { conformance, expectStrictPass } from "./support/conformance.js"
import * as Wire from "./support/wire.js"

const greeting = Skill.rendered({
  path: "greeting",
  render: (request) =>
    Effect.sync(() => {
      const user = String(request.headers["x-user"] ?? "you")
      return {
        "SKILL.md": `---\nname: greeting\ndescription: Greets ${user} by name.\n---\n\n# Hello ${user}\n`,
        "references/profile.md": `# Profile of ${user}\n`
      }
    })
})


const profileFor = (url: string, user: string) =>
  SkillsClient.SkillsClient.use((client) =>
    Effect.gen(function*() {
      const { skill } = yield* client.getSkill("skill://greeting/SKILL.md")
      const loaded = yield* client.loadSkill(skill)
      const profile = yield* client.readSkillResource(skill, "references/profile.md")
      return { skill, description: loaded.frontmatter.description, profile: new TextDecoder().decode(profile.bytes) }
    })
  ).pipe(
    Effect.provide(
      SkillsClient.layerHttp({ url, headers: { "x-user": user } }).pipe(
        Layer.provide([FetchHttpClient.layer, SkillCache.layerMemory()])
      )
    )
  )

describe("conformance (live catalogue)", () => {
  it.live("passes strictly on both revisions with --watch on", () =>
    Effect.gen(function*() {
      const { url } = yield* httpServer(examples, ["--watch"])
      expectStrictPass(yield* conformance([url]))
    }), { timeout: 300_000 })

  it.live("passes strictly with a rendered skill, which our client verifies for two callers with different bytes", () =>
    Effect.gen(function*() {
      const url = yield* serveExamples([greeting])
      expectStrictPass(yield* conformance([url]))
      const ann = yield* profileFor(url, "ann")
      const bob = yield* profileFor(url, "bob")
      expect([ann.description, ann.profile]).toEqual(["Greets ann by name.", "# Profile of ann\n"])
      expect([bob.description, bob.profile]).toEqual(["Greets bob by name.", "# Profile of bob\n"])
      expect(ann.skill.resources).not.toEqual(bob.skill.resources)
    }), { timeout: 300_000 })

  it.live("passes strictly with a skill family and skills added at run time", () =>
    Effect.gen(function*() {
      const { definitions } = yield* Serve.loadReported(examples, { strict: true, log: () => Effect.void }).pipe(
        Effect.provide(NodeServices.layer)
      )
      // The parameter names the skill: instances listed together should have distinct names
      // (the suite warns on repeats, sep-2640-names-should-be-unique).
      const onboarding = Skill.family({
        path: "onboarding/{customer}",
        list: ({ cursor }) =>
          Effect.succeed(cursor === undefined
            ? { instances: [{ customer: "acme" }, { customer: "globex" }], nextCursor: "2" }
            : { instances: [{ customer: "initech" }] }),
        render: ({ customer }) =>
          Effect.succeed({
            "SKILL.md": `---\nname: ${customer}\ndescription: Onboard ${customer}.\n---\n\n# ${customer}\n`,
            "references/checklist.md": `# Checklist for ${customer}\n`
          })
      })
      const Skills = SkillsServer.layer({ skills: [...definitions, onboarding], pageSize: 3 })
      const registry = yield* Deferred.make<SkillRegistry.SkillRegistry["Service"]>()
      const Added = Layer.mergeAll(
        SkillsServer.skill(Skill.make({ path: "runtime/layered", files: { "SKILL.md": skillMd("layered"), "notes.md": "# Notes\n" } })),
        Layer.effectDiscard(Effect.gen(function*() {
          yield* Deferred.succeed(registry, yield* SkillRegistry.SkillRegistry)
        }))
      ).pipe(Layer.provide(Skills))
      const url = Context.get(yield* Layer.build(Wire.httpServer(Layer.mergeAll(Skills, Added))), Wire.ServerUrl)
      const changes = yield* (yield* Deferred.await(registry)).upsert([
        Skill.make({ path: "runtime/upserted", files: { "SKILL.md": skillMd("upserted"), "references/a.md": "# A\n" } })
      ])
      expect(changes.added).toEqual(["skill://runtime/upserted/SKILL.md"])
      const listed = yield* Wire.modernHttp(url).call("skills/list", {})
      expect(listed.nextCursor).toBeDefined()
      expectStrictPass(yield* conformance([url]))
    }), { timeout: 300_000 })
})
