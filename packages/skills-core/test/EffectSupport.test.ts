import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema, Version } from "effect"
import { EffectSupport } from "../src/index.js"

describe("EffectSupport.verify", () => {
  it.prop("fails exactly when a hook is absent, naming every absent one and the effect in use", {
    hooks: Schema.Record(Schema.String, Schema.Boolean)
  }, ({ hooks }) => {
    const exit = Effect.runSyncExit(EffectSupport.verify("@mcp-skills/test", hooks))
    const absent = Object.keys(hooks).filter((hook) => !hooks[hook])
    if (absent.length === 0) return Exit.isSuccess(exit)
    const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error : undefined
    return error instanceof EffectSupport.UnsupportedEffect && error.package === "@mcp-skills/test" &&
      error.installed === Version.getCurrentVersion() && error.supported === EffectSupport.range &&
      JSON.stringify(error.missing) === JSON.stringify(absent) &&
      absent.every((hook) => error.message.includes(hook))
  })

  it("says what to install", () => {
    const error = new EffectSupport.UnsupportedEffect({ package: "@mcp-skills/server", installed: "4.2.0", supported: "~4.1.0", missing: ["a", "b"] })
    assert.strictEqual(
      error.message,
      "@mcp-skills/server supports effect ~4.1.0, but runs on effect 4.2.0, which lacks a, b; install an effect in ~4.1.0"
    )
  })
})
