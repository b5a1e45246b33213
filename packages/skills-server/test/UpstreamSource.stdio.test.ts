/**
 * A stdio upstream (our CLI, `serve DIR --stdio --watch`, spawned by the gateway): its skills are
 * served verified, and its notifications are heard on the connection itself on both revisions
 * (2026-07-28 `subscriptions/listen` written on its input; 2025-11-25 the connection's own
 * notifications), with only them to go by.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { UpstreamSource } from "../src/index.js"
import { bin, examples, node } from "./support/cli-server.js"
import { eventually, gateway, hearing, platform } from "./support/gateway.js"

describe("UpstreamSource over stdio", () => {
  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    it.live(`serves a stdio upstream and hears its changes (${revision})`, () =>
      Effect.gen(function*() {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gateway-stdio-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
        Fs.cpSync(Path.join(examples, "pdf-processing"), Path.join(dir, "pdf-processing"), { recursive: true })
        const { registry, upstreams } = yield* gateway([{
          prefix: "local",
          transport: UpstreamSource.stdio(node, [bin("mcp-skills-server"), "serve", dir, "--stdio", "--watch"]),
          protocolVersion: revision
        }], { recheck: { min: "1 hour", max: "1 hour" } })
        const uris = Effect.map(registry.snapshot, (snapshot) => snapshot.skills.map((skill): string => skill.uri))
        assert.deepStrictEqual(yield* uris, ["skill://local/pdf-processing/SKILL.md"])
        yield* hearing(upstreams)
        Fs.mkdirSync(Path.join(dir, "added"))
        Fs.writeFileSync(Path.join(dir, "added/SKILL.md"), "---\nname: added\ndescription: Added while served\n---\n")
        yield* eventually("the added skill", Effect.map(uris, (now) => now.includes("skill://local/added/SKILL.md") ? true : undefined))
      }).pipe(Effect.provide(platform)), { timeout: 60_000 })
  }
})
