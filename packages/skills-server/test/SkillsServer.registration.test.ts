/**
 * Registration leaves no silent shadow: a plain effect resource at a URI a skill serves is refused
 * with the `RegistrationError` whichever is registered first, and at run time; and a server whose
 * adapters are wrapped by `SkillsServer.protocols` but that has no `SkillsServer.layer` does not
 * declare the extension it cannot serve (R82), answering its methods as unknown.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Context from "effect/Context"
import { McpSchema, McpServer } from "effect/ai"
import { Skill, SkillRegistry, SkillsServer } from "../src/index.js"
import { simple, skillMd } from "./support/fixtures.js"
import { httpServer, legacyHttp, modernHttp, ServerUrl } from "./support/wire.js"

const refunds = simple("billing/refunds", { "policy.md": "# Policy\n" })
const plain = (uri: string) => McpServer.resource({ uri, name: "plain", content: Effect.succeed("plain bytes") })

// The registration error a layer failed with, typed or carried by a defect (effect's
// `addResource` has no error channel).
const registrationErrorOf = (registrations: Layer.Layer<any, any, any>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(
      Layer.build(registrations.pipe(Layer.provide([McpServer.McpServer.layer, NodeServices.layer]))).pipe(Effect.scoped)
    )
    assert.isTrue(Exit.isFailure(exit), "the layer was built")
    const cause = Exit.isFailure(exit) ? exit.cause : Cause.empty
    const error = [...cause.reasons].map((reason) => reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined)
      .find((error) => error instanceof SkillRegistry.RegistrationError)
    assert.instanceOf(error, SkillRegistry.RegistrationError, String(cause))
    return (error as SkillRegistry.RegistrationError).message
  })

describe("a plain effect resource at a skill's URI", () => {
  for (const uri of ["skill://billing/refunds/SKILL.md", "skill://billing/refunds/policy.md"]) {
    it.effect(`is refused when registered before the skills layer (${uri})`, () =>
      Effect.gen(function*() {
        const message = yield* registrationErrorOf(SkillsServer.layer({ skills: [refunds] }).pipe(Layer.provideMerge(plain(uri))))
        assert.include(message, uri)
      }))

    it.effect(`is refused when registered after the skills layer (${uri})`, () =>
      Effect.gen(function*() {
        const message = yield* registrationErrorOf(plain(uri).pipe(Layer.provideMerge(SkillsServer.layer({ skills: [refunds] }))))
        assert.include(message, uri)
      }))
  }

  it.effect("is refused inside a rendered skill's folder and as a family instance", () =>
    Effect.gen(function*() {
      const rendered = Skill.rendered({ path: "hello", render: () => Effect.succeed({ "SKILL.md": skillMd("hello") }) })
      const family = Skill.family({ path: "customers/{customer}/onboarding", render: () => Effect.succeed({}) })
      assert.include(yield* registrationErrorOf(SkillsServer.layer({ skills: [rendered] }).pipe(Layer.provideMerge(plain("skill://hello/x.md")))), "skill://hello/x.md")
      assert.include(
        yield* registrationErrorOf(SkillsServer.layer({ skills: [family] }).pipe(Layer.provideMerge(plain("skill://customers/acme/onboarding/SKILL.md")))),
        "skill://customers/acme/onboarding/SKILL.md"
      )
    }))

  it.effect("at run time: an upsert of a skill serving a resource's URI fails with RegistrationError and changes nothing", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        SkillsServer.layer({ skills: [] }).pipe(
          Layer.provideMerge(plain("skill://billing/refunds/policy.md")),
          Layer.provideMerge(McpServer.McpServer.layer),
          Layer.provide(NodeServices.layer)
        )
      )
      const registry = Layer.succeedContext(context)
      yield* Effect.gen(function*() {
        const skills = yield* SkillRegistry.SkillRegistry
        const before = yield* skills.snapshot
        const error = yield* Effect.flip(skills.upsert([refunds]))
        assert.strictEqual(error._tag, "RegistrationError")
        assert.include(error.message, "skill://billing/refunds/policy.md")
        assert.strictEqual(yield* skills.snapshot, before)
        // And a resource added at run time at a skill's URI is refused too.
        yield* skills.upsert([simple("other")])
        const server = yield* McpServer.McpServer
        const exit = yield* Effect.exit(server.addResource({
          resource: new McpSchema.Resource({ uri: "skill://other/SKILL.md", name: "plain" }),
          annotations: Context.empty(),
          handle: Effect.die("never read")
        }))
        const defect = Exit.isFailure(exit) ? [...exit.cause.reasons].find((reason) => reason._tag === "Die") : undefined
        assert.instanceOf(defect?._tag === "Die" ? defect.defect : undefined, SkillRegistry.RegistrationError)
        assert.isFalse(server.resources.some((entry) => entry.resource.uri === "skill://other/SKILL.md"))
      }).pipe(Effect.provide(registry))
    }).pipe(Effect.scoped))
})

// effect's adapters wrapped for skills, and no skills layer on the server.
layer(httpServer(Layer.empty as Layer.Layer<unknown>))("SkillsServer.protocols without SkillsServer.layer", (it) => {
  it.effect("declares no extension on either revision and answers the skills methods -32601", () =>
    Effect.gen(function*() {
      const url = yield* ServerUrl
      const modern = modernHttp(url)
      const discovered = yield* modern.call("server/discover", {})
      assert.isUndefined(discovered.capabilities.extensions?.["io.modelcontextprotocol/skills"], JSON.stringify(discovered))
      const legacy = yield* legacyHttp(url)
      assert.isUndefined(legacy.initialize.capabilities.extensions?.["io.modelcontextprotocol/skills"])
      for (const client of [modern, legacy]) {
        for (const method of ["skills/list", "skills/get"]) {
          const error = yield* client.fail(method, method === "skills/get" ? { uri: "skill://a/SKILL.md" } : {})
          assert.strictEqual(error.code, -32601, `${client.revision} ${method}`)
        }
      }
    }))
})
