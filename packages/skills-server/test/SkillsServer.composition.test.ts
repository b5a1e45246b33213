/**
 * Two skills registries on one server fail loudly at start-up, naming both; code
 * skills and several folders compose into one registry with `SkillsServer.combine`.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { McpServer } from "effect/ai"
import { HttpRouter } from "effect/http"
import { DirectorySource, SkillsServer } from "../src/index.js"
import { simple, skillMd } from "./support/fixtures.js"
import { tree } from "./support/tree.js"
import { adapters, httpServer, legacyHttp, modernHttp, ServerUrl } from "./support/wire.js"

const code = simple("code/refunds")
const teamA = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/notes.md": "# Alpha notes\n" })
const teamB = tree({ "beta/SKILL.md": skillMd("beta") })

describe("two registries on one McpServer", () => {
  it.effect("fail at start-up with DuplicateRegistryError naming both", () =>
    Effect.gen(function*() {
      const both = Layer.mergeAll(
        SkillsServer.layer({ skills: [code], name: "the code skills" }),
        DirectorySource.layer(teamA)
      )
      const exit = yield* Effect.exit(
        Layer.build(both.pipe(Layer.provide([McpServer.McpServer.layer, NodeServices.layer]))).pipe(Effect.scoped)
      )
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
      const failure = error?._tag === "Fail" ? error.error : undefined
      assert.instanceOf(failure, SkillsServer.DuplicateRegistryError)
      const message = (failure as SkillsServer.DuplicateRegistryError).message
      expect(message).toContain("the code skills")
      expect(message).toContain("skill://alpha/SKILL.md")
      expect(message).toContain("SkillsServer.combine")
    }))

  it.effect("also when the second is provided on top of a server that already has one", () =>
    Effect.gen(function*() {
      const server = McpServer.layerHttp({
        name: "t",
        version: "1",
        path: "/mcp",
        protocols: adapters(),
        registrations: SkillsServer.layer({ skills: [code] })
      })
      const exit = yield* Effect.exit(
        Layer.build(
          DirectorySource.layer(teamB).pipe(Layer.provide(server), Layer.provide([HttpRouter.layer, NodeServices.layer]))
        ).pipe(Effect.scoped)
      )
      assert.isTrue(Exit.isFailure(exit))
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("DuplicateRegistryError")
    }))
})

layer(httpServer(SkillsServer.layer({
  skills: SkillsServer.combine(code, DirectorySource.definitions(teamA), DirectorySource.definitions(teamB))
}).pipe(Layer.provide(NodeServices.layer))))("code skills and two folders in one registry", (it) => {
  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    it.effect(`${revision}: every skill of every source is listed, got and read`, () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const client = revision === "2026-07-28" ? modernHttp(url) : yield* legacyHttp(url)
        const listing = yield* client.call("skills/list")
        expect(listing.skills.map((skill: any) => skill.uri)).toEqual([
          "skill://alpha/SKILL.md",
          "skill://beta/SKILL.md",
          "skill://code/refunds/SKILL.md"
        ])
        for (const uri of ["skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://code/refunds/SKILL.md"]) {
          expect((yield* client.call("skills/get", { uri })).skill.uri).toBe(uri)
        }
        const read = yield* client.call("resources/read", { uri: "skill://alpha/notes.md" })
        expect(read.contents[0].text).toBe("# Alpha notes\n")
      }))
  }

  it.effect("two sources publishing one URI fail registration naming it", () =>
    Effect.gen(function*() {
      const clash = tree({ "code/refunds/SKILL.md": skillMd("refunds") })
      const exit = yield* Effect.exit(
        Layer.build(
          SkillsServer.layer({ skills: SkillsServer.combine(code, DirectorySource.definitions(clash)) }).pipe(
            Layer.provide([McpServer.McpServer.layer, NodeServices.layer])
          )
        ).pipe(Effect.scoped)
      )
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("skill://code/refunds/SKILL.md: registered twice")
    }))
})
