/**
 * Runs the app: the server and a client on both revisions, a property test with the published
 * schemas, and each package's index against its subpath modules (`modules.ts`, written by
 * scripts/consumer-test.sh from the installed package.json files).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Skill as Entry } from "@mcp-skills/core"
import { Effect } from "effect"
import { roundTrips, Served, session } from "./app.ts"
import { modules } from "./modules.ts"

layer(Served)("a server and a client", (it) => {
  for (const protocolVersion of ["2026-07-28", "2025-11-25"] as const) {
    it.effect(`lists, loads and reads a skill over ${protocolVersion}`, () =>
      Effect.gen(function*() {
        const { uris, body, hello } = yield* session(protocolVersion)
        assert.deepStrictEqual(uris, ["skill://greet/SKILL.md"])
        assert.include(body, "# Greet")
        assert.strictEqual(hello, "Hello!\n")
      }))
  }
})

describe("schemas", () => {
  it.prop("skill entries survive their wire form", [Entry.Skill], ([entry]) => roundTrips(entry))
})

describe("exports", () => {
  for (const [name, index, subpaths] of modules) {
    it(`${name} names exactly its subpath modules, the same modules`, () => {
      assert.deepStrictEqual(Object.keys(index).sort(), Object.keys(subpaths).sort())
      for (const [key, module] of Object.entries(subpaths)) assert.strictEqual((index as any)[key], module, key)
    })
  }
})
