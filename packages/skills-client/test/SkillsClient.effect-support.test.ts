/**
 * The guard against an effect whose McpClient is not what the client relies on: connecting fails
 * at once with `UnsupportedEffect`, naming the hook, the effect in use and the supported range,
 * and sends nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { EffectSupport } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Version from "effect/Version"
import { McpProtocol } from "effect/ai"
import type * as McpClient from "effect/ai/McpClient"
import { SkillsClient } from "../src/index.js"

describe("effect support", () => {
  it.effect("a transport without the protocol version effect's transports carry fails with UnsupportedEffect", () =>
    Effect.gen(function*() {
      let sent = 0
      const { protocolVersion: _, ...protocol } = McpProtocol.v2026_07_28
      const transport = {
        protocol,
        request: () => {
          sent++
          return Effect.die("not reached")
        },
        notify: () => Effect.void,
        isCallable: () => false
      } as unknown as McpClient.Transport
      const error = yield* SkillsClient.make(transport, { server: "test" }).pipe(Effect.scoped, Effect.flip)
      assert.instanceOf(error, EffectSupport.UnsupportedEffect)
      if (!(error instanceof EffectSupport.UnsupportedEffect)) return
      assert.strictEqual(error.package, "@mcp-skills/client")
      assert.strictEqual(error.installed, Version.getCurrentVersion())
      assert.strictEqual(error.supported, EffectSupport.range)
      assert.deepStrictEqual(error.missing, ["McpClient.Transport.protocol.protocolVersion"])
      assert.strictEqual(sent, 0)
    }))
})
