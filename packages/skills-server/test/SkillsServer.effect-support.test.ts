/**
 * The guard against an effect whose undocumented hooks differ from those the server relies on:
 * building the skills layer fails at once with `UnsupportedEffect`, naming the hook, the effect in
 * use and the supported range, instead of a server that answers -32603 later.
 */
import { assert, describe, it } from "@effect/vitest"
import { EffectSupport } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Version from "effect/Version"
import { McpProtocol } from "effect/ai"
import * as fs from "node:fs"
import * as path from "node:path"
import { SkillsServer } from "../src/index.js"
import { simple } from "./support/fixtures.js"
import { httpServer } from "./support/wire.js"
import { failureOf } from "./support/exit.js"

const build = Layer.build(httpServer(SkillsServer.layer({ skills: [simple("a")] }))).pipe(Effect.scoped, Effect.exit)

describe("effect support", () => {
  it.effect("the server layer builds on the installed effect", () =>
    Effect.gen(function*() {
      assert.isTrue(Exit.isSuccess(yield* build))
    }))

  it.effect("an effect without a hook the server relies on fails the layer with UnsupportedEffect", () =>
    Effect.gen(function*() {
      const adapter = McpProtocol.v2026_07_28 as { projectNotification?: unknown }
      const original = adapter.projectNotification
      const exit = yield* Effect.suspend(() => {
        delete adapter.projectNotification
        return build
      }).pipe(Effect.ensuring(Effect.sync(() => {
        adapter.projectNotification = original
      })))
      const error = failureOf(exit)
      assert.instanceOf(error, EffectSupport.UnsupportedEffect)
      if (!(error instanceof EffectSupport.UnsupportedEffect)) return
      assert.strictEqual(error.package, "@mcp-skills/server")
      assert.strictEqual(error.installed, Version.getCurrentVersion())
      assert.strictEqual(error.supported, EffectSupport.range)
      assert.deepStrictEqual(error.missing, ["McpProtocol.v2026_07_28.projectNotification"])
      assert.include(error.message, `effect ${Version.getCurrentVersion()}`)
      assert.include(error.message, EffectSupport.range)
    }))

  it("the supported range is the effect and @effect/platform-node peer range of every package", () => {
    const packages = path.resolve(import.meta.dirname, "../..")
    for (const name of ["skills-core", "skills-server", "skills-client"]) {
      const manifest = JSON.parse(fs.readFileSync(path.join(packages, name, "package.json"), "utf8"))
      assert.strictEqual(manifest.peerDependencies.effect, EffectSupport.range, name)
      if (name !== "skills-core") assert.strictEqual(manifest.peerDependencies["@effect/platform-node"], EffectSupport.range, name)
      assert.isUndefined(manifest.dependencies?.effect, name)
    }
  })
})
