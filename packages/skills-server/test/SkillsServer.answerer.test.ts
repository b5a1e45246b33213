/**
 * One answerer of the Skills extension per server: when an adapter other than effect's own already
 * answers the skills methods, building the skills layer fails with `AnswererConflictError` naming
 * it, and a server that could not be refused then does not start. effect's own adapters answer
 * from effect's skills, which the layer takes over (`SkillsServer.effect-skills.test.ts`).
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Schema from "effect/Schema"
import { McpProtocol, McpServer } from "effect/ai"
import { HttpRouter } from "effect/http"
import * as Rpc from "effect/rpc/Rpc"
import * as RpcGroup from "effect/rpc/RpcGroup"
import { SkillsServer } from "../src/index.js"
import { simple } from "./support/fixtures.js"
import { failureOf } from "./support/exit.js"

// An adapter that answers `skills/list` itself, as one of an effect with native skills would.
const answering = RpcGroup.make(Rpc.make("skills/list", {
  payload: Schema.UndefinedOr(Schema.Struct({ _meta: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)) })),
  success: Schema.Unknown,
  error: Schema.Struct({ code: Schema.Int, message: Schema.String })
}))
const base = McpProtocol.v2026_07_28 as any
const standIn = {
  ...base,
  clientRpcs: base.clientRpcs.merge(answering),
  handlerRpcs: base.handlerRpcs.merge(answering),
  installHandlers: (core: unknown, lifecycle: unknown, target: any) =>
    Effect.andThen(
      base.installHandlers(core, lifecycle, target),
      target.install(base, answering, { "skills/list": () => Effect.succeed({ skills: [], resultType: "complete" }) })
    )
} as typeof McpProtocol.v2026_07_28

const skills = SkillsServer.layer({ skills: [simple("a")] })

const server = (registrations?: Layer.Layer<any, any, any>) =>
  McpServer.layerHttp({
    name: "t",
    version: "1",
    path: "/mcp",
    protocols: SkillsServer.protocols([standIn, McpProtocol.v2025_11_25]),
    ...(registrations === undefined ? {} : { registrations })
  })

describe("one answerer of the skills methods", () => {
  it.effect("an adapter that answers skills/list itself: the skills layer fails with AnswererConflictError", () =>
    Effect.gen(function*() {
      const exit = yield* Layer.build(server(skills).pipe(Layer.provide([HttpRouter.layer, NodeServices.layer]))).pipe(
        Effect.scoped,
        Effect.exit
      )
      const error = failureOf(exit)
      assert.instanceOf(error, SkillsServer.AnswererConflictError)
      if (!(error instanceof SkillsServer.AnswererConflictError)) return
      // A copy of effect's adapter, which carries all three (effect answers them from its skills).
      assert.deepStrictEqual(error.methods, ["skills/list", "skills/get", "resources/directory/read"])
      expect(error.answerer).toContain("2026-07-28")
      // What to do, named.
      expect(error.message).toContain("skills/list, skills/get, resources/directory/read are already answered")
      expect(error.message).toContain("SkillsServer.protocols")
    }))

  it.effect("a skills layer provided on top cannot see the adapters: the server logs the conflict and does not start", () =>
    Effect.gen(function*() {
      const refused = yield* Deferred.make<string>()
      const logger = Logger.make(({ message }) => {
        const line = (message as ReadonlyArray<unknown>).map(String).join(" ")
        if (line.includes("already answered")) Deferred.doneUnsafe(refused, Exit.succeed(line))
      })
      const line = yield* Layer.build(
        skills.pipe(Layer.provide(server()), Layer.provide([HttpRouter.layer, NodeServices.layer]))
      ).pipe(
        // The run fails as it installs the handlers: the line is the sentinel.
        Effect.andThen(Deferred.await(refused)),
        Effect.scoped,
        Effect.provide(Logger.layer([logger]))
      )
      expect(line).toContain("skills/list, skills/get, resources/directory/read are already answered")
      expect(line).toContain("2026-07-28")
    }))

  it.effect("effect's own adapters, which answer from effect's skills: the layer takes them over and builds", () =>
    Effect.gen(function*() {
      const exit = yield* Layer.build(
        McpServer.layerHttp({
          name: "t",
          version: "1",
          path: "/mcp",
          protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
          registrations: skills
        }).pipe(Layer.provide([HttpRouter.layer, NodeServices.layer]))
      ).pipe(Effect.scoped, Effect.exit)
      assert.isTrue(Exit.isSuccess(exit))
    }))
})
