/**
 * One answerer over effect's own skills: an app that registers a skill with effect's
 * `McpServer.skill` (effect 4.1.1 and later) and serves others with `SkillsServer` answers for
 * both, over loopback HTTP and in-process stdio, on both revisions; a skill of one sharing a URI
 * or a folder with one of the other is refused, naming both; the layer's visibility check covers
 * effect's skills, and effect's own visibility of its skill still holds.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import type { Vitest } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { McpServer } from "effect/ai"
import { SkillsServer } from "../src/index.js"
import { sha256 } from "./support/catalogue.js"
import { simple } from "./support/fixtures.js"
import type { Client, Revision } from "./support/wire.js"
import { httpServer, legacyHttp, legacyStdio, modernHttp, modernStdio, ServerUrl, StdioPipe, stdioServer } from "./support/wire.js"

const alphaMd = "---\nname: alpha\ndescription: Registered with effect's McpServer.skill\n---\n# Alpha\n"
const alphaRef = "Alpha's reference.\n"

// A skill registered through effect's own API, with a file in a folder.
const Alpha = McpServer.skill({
  uri: "skill://alpha/SKILL.md",
  files: { "SKILL.md": alphaMd, "references/guide.md": alphaRef }
})

const Registrations = Layer.mergeAll(
  Alpha,
  SkillsServer.layer({ skills: [simple("beta", { "notes.md": "Beta's notes.\n" })] })
)

type It = Vitest.MethodsNonLive<any>
type GetClient = (revision: Revision) => Effect.Effect<Client, never, any>

const text = (result: any) => result.contents[0].text

const suite = (it: It, getClient: GetClient) => {
  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    describe(revision, () => {
      it.effect("skills/list lists effect's skill and the layer's, once each", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const result = yield* client.call("skills/list")
          assert.deepStrictEqual(result.skills.map((skill: any) => skill.uri).sort(), [
            "skill://alpha/SKILL.md",
            "skill://beta/SKILL.md"
          ])
          const alpha = result.skills.find((skill: any) => skill.uri === "skill://alpha/SKILL.md")
          assert.strictEqual(alpha.frontmatter.name, "alpha")
          assert.deepStrictEqual(
            alpha.resources.find((resource: any) => resource.uri === "skill://alpha/references/guide.md"),
            { uri: "skill://alpha/references/guide.md", digest: sha256(new TextEncoder().encode(alphaRef)), size: alphaRef.length }
          )
        }))

      it.effect("skills/get, resources/read and resources/directory/read answer for both", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const alpha = yield* client.call("skills/get", { uri: "skill://alpha/SKILL.md" })
          assert.strictEqual(alpha.skill.uri, "skill://alpha/SKILL.md")
          const beta = yield* client.call("skills/get", { uri: "skill://beta/SKILL.md" })
          assert.strictEqual(beta.skill.uri, "skill://beta/SKILL.md")
          assert.strictEqual(text(yield* client.call("resources/read", { uri: "skill://alpha/references/guide.md" })), alphaRef)
          assert.strictEqual(text(yield* client.call("resources/read", { uri: "skill://beta/notes.md" })), "Beta's notes.\n")
          const alphaRoot = yield* client.call("resources/directory/read", { uri: "skill://alpha" })
          assert.includeMembers(alphaRoot.resources.map((child: any) => child.uri), [
            "skill://alpha/SKILL.md",
            "skill://alpha/references"
          ])
          const betaRoot = yield* client.call("resources/directory/read", { uri: "skill://beta" })
          assert.includeMembers(betaRoot.resources.map((child: any) => child.uri), ["skill://beta/SKILL.md", "skill://beta/notes.md"])
          const missing = yield* client.fail("skills/get", { uri: "skill://gamma/SKILL.md" })
          assert.strictEqual(missing.code, -32602)
        }))

      it.effect("the capability declared is the layer's", () =>
        Effect.gen(function*() {
          const client: any = yield* getClient(revision)
          const capabilities = revision === "2026-07-28"
            ? (yield* client.call("server/discover")).capabilities
            : client.initialize.capabilities
          assert.deepStrictEqual(capabilities.extensions["io.modelcontextprotocol/skills"], { directoryRead: true })
        }))
    })
  }
}

describe("effect's McpServer.skill beside SkillsServer, over HTTP", () => {
  layer(httpServer(Registrations))((it) => {
    suite(it, (revision) =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        return revision === "2026-07-28" ? modernHttp(url) : yield* legacyHttp(url)
      }))
  })
})

describe("effect's McpServer.skill beside SkillsServer, over stdio", () => {
  layer(stdioServer(Registrations))((it) => {
    suite(it, (revision) =>
      Effect.gen(function*() {
        const pipe = yield* StdioPipe
        return revision === "2026-07-28" ? modernStdio(pipe) : yield* legacyStdio(pipe)
      }))
  })
})

// The layer's check hides effect's skills as it hides its own.
const Hidden = Layer.mergeAll(
  Alpha,
  McpServer.skill({ uri: "skill://delta/SKILL.md", files: { "SKILL.md": "---\nname: delta\ndescription: Kept\n---\n" } }),
  SkillsServer.layer({
    skills: [simple("beta"), simple("epsilon")],
    visibility: () => Effect.succeed((skill) => skill.name !== "alpha" && skill.name !== "epsilon")
  })
)

describe("the layer's visibility check covers effect's skills", () => {
  layer(httpServer(Hidden))((it) => {
    for (const revision of ["2026-07-28", "2025-11-25"] as const) {
      it.effect(`${revision}: a hidden skill of each source is absent from every surface`, () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const client = revision === "2026-07-28" ? modernHttp(url) : yield* legacyHttp(url)
          const listed = yield* client.call("skills/list")
          assert.deepStrictEqual(listed.skills.map((skill: any) => skill.uri).sort(), [
            "skill://beta/SKILL.md",
            "skill://delta/SKILL.md"
          ])
          for (const uri of ["skill://alpha/SKILL.md", "skill://epsilon/SKILL.md"]) {
            assert.strictEqual((yield* client.fail("skills/get", { uri })).code, -32602)
          }
          assert.strictEqual((yield* client.fail("resources/directory/read", { uri: "skill://alpha" })).code, -32602)
          assert.strictEqual((yield* client.fail("resources/directory/read", { uri: "skill://alpha/references" })).code, -32602)
          const delta = yield* client.call("skills/get", { uri: "skill://delta/SKILL.md" })
          assert.strictEqual(delta.skill.uri, "skill://delta/SKILL.md")
        }))
    }
  })
})

// effect's own visibility of its skill still decides it.
const EffectHides = McpServer.visibility(({ target }) => Effect.succeed(target !== "skill://alpha/SKILL.md"))

describe("effect's visibility of its own skill", () => {
  layer(httpServer(Layer.mergeAll(
    Alpha.pipe(Layer.provide(EffectHides.layer)),
    SkillsServer.layer({ skills: [simple("beta")] })
  )))((it) => {
    it.effect("hides effect's skill from skills/list and skills/get", () =>
      Effect.gen(function*() {
        const client = modernHttp(yield* ServerUrl)
        const listed = yield* client.call("skills/list")
        assert.deepStrictEqual(listed.skills.map((skill: any) => skill.uri), ["skill://beta/SKILL.md"])
        assert.strictEqual((yield* client.fail("skills/get", { uri: "skill://alpha/SKILL.md" })).code, -32602)
      }))
  })
})

// The refusal: the server's start stops with it, said in the log (effect runs the start in a
// fiber of its own, which reports no failure to the layer's builder).
const refusalOf = (registrations: Layer.Layer<any, any, any>) =>
  Effect.gen(function*() {
    const refused = yield* Deferred.make<string>()
    const logger = Logger.make(({ message }) => {
      const line = (Array.isArray(message) ? message : [message]).map(String).join(" ")
      if (line.includes("cannot register skills")) Deferred.doneUnsafe(refused, Exit.succeed(line))
    })
    return yield* Layer.build(httpServer(registrations)).pipe(
      Effect.andThen(Deferred.await(refused)),
      Effect.timeout("10 seconds"),
      Effect.scoped,
      Effect.provide(Logger.layer([logger]))
    )
  })

describe("a skill of effect's and one of the layer's in one place", () => {
  it.live("the same URI: the server does not start, naming both", () =>
    Effect.gen(function*() {
      const line = yield* refusalOf(Layer.mergeAll(
        McpServer.skill({ uri: "skill://beta/SKILL.md", files: { "SKILL.md": "---\nname: beta\ndescription: Theirs\n---\n" } }),
        SkillsServer.layer({ skills: [simple("beta")] })
      ))
      expect(line).toContain("skill://beta/SKILL.md: has the same skill URI as the skill skill://beta/SKILL.md")
      expect(line).toContain("McpServer.skill")
    }))

  it.live("one's folder inside the other's: the server does not start, naming both", () =>
    Effect.gen(function*() {
      const line = yield* refusalOf(Layer.mergeAll(
        SkillsServer.layer({ skills: [simple("beta")] }),
        McpServer.skill({ uri: "skill://beta/inner/SKILL.md", files: { "SKILL.md": "---\nname: inner\ndescription: Theirs\n---\n" } })
      ))
      expect(line).toContain("skill://beta/SKILL.md: has a folder that holds the skill skill://beta/inner/SKILL.md")
    }))
})

// One visibility written with effect's own API, provided to both sources, hides one skill of each.
const HideAlphaAndBeta = McpServer.visibility(({ target }) =>
  Effect.succeed(target !== "skill://alpha/SKILL.md" && target !== "skill://beta/SKILL.md")
)

describe("an McpServer.visibility provided to both sources", () => {
  layer(httpServer(Layer.mergeAll(
    Alpha,
    McpServer.skill({ uri: "skill://delta/SKILL.md", files: { "SKILL.md": "---\nname: delta\ndescription: Kept\n---\n" } }),
    SkillsServer.layer({ skills: [simple("beta", { "notes.md": "Beta's notes.\n" }), simple("gamma")] })
  ).pipe(Layer.provide(HideAlphaAndBeta.layer))))((it) => {
    for (const revision of ["2026-07-28", "2025-11-25"] as const) {
      it.effect(`${revision}: hides effect's alpha and the layer's beta on every surface`, () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const client = revision === "2026-07-28" ? modernHttp(url) : yield* legacyHttp(url)
          // Twice: the second request is one the fast route would answer, had it not stepped aside.
          for (let round = 0; round < 2; round++) {
            const listed = yield* client.call("skills/list")
            assert.deepStrictEqual(listed.skills.map((skill: any) => skill.uri).sort(), [
              "skill://delta/SKILL.md",
              "skill://gamma/SKILL.md"
            ])
            for (const uri of ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]) {
              assert.strictEqual((yield* client.fail("skills/get", { uri })).code, -32602)
              assert.isDefined((yield* client.send("resources/read", { uri })).body.error)
            }
            assert.isDefined((yield* client.send("resources/read", { uri: "skill://beta/notes.md" })).body.error)
            assert.strictEqual((yield* client.fail("resources/directory/read", { uri: "skill://beta" })).code, -32602)
            const resources = (yield* client.call("resources/list")).resources.map((resource: any) => resource.uri)
            assert.notInclude(resources, "skill://beta/SKILL.md")
            assert.notInclude(resources, "skill://beta/notes.md")
            assert.notInclude(resources, "skill://alpha/SKILL.md")
            assert.include(resources, "skill://gamma/SKILL.md")
            assert.strictEqual((yield* client.call("skills/get", { uri: "skill://gamma/SKILL.md" })).skill.uri, "skill://gamma/SKILL.md")
            assert.strictEqual((yield* client.call("skills/get", { uri: "skill://delta/SKILL.md" })).skill.uri, "skill://delta/SKILL.md")
          }
        }))
    }
  })
})
