/**
 * The gateway over the wire: two upstreams behind it (our own server serving examples/skills, and
 * a server built with the official MCP TypeScript SDK 2.4 `ext/skills`), each reached on both
 * revisions; every file read through the gateway is the upstream's bytes under the upstream's
 * digest, and each entry says where it came from.
 */
import { assert, describe, it } from "@effect/vitest"
import { Signing, Skill as CoreSkill } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import { Skill } from "../src/index.js"
import { UpstreamSource } from "../src/index.js"
import { examples, exampleUris } from "./support/cli-server.js"
import { folder, gateway, officialUpstream, ourUpstream, platform, sdkFixture, withClient } from "./support/gateway.js"
import * as Serve from "../src/bin/serve.js"

const revisions = ["2026-07-28", "2025-11-25"] as const

// Every file of every skill `url` lists, read and verified by our client: digest and bytes by URI.
const everyFile = (url: string) =>
  withClient(url, (client) =>
    Effect.gen(function*() {
      const listing = yield* client.listSkills({ invalid: "fail" })
      const files = new Map<string, { readonly digest: string | undefined; readonly bytes: Uint8Array }>()
      const entries = new Map<string, CoreSkill.Skill>()
      for (const skill of listing.skills) {
        entries.set(skill.uri, skill)
        if (skill.resources === "dynamic") continue
        for (const resource of skill.resources) {
          const file = yield* client.readSkillResource(skill, resource.uri)
          files.set(resource.uri, { digest: file.digest, bytes: file.bytes })
        }
      }
      return { entries, files }
    }), { protocolVersion: "2026-07-28" })

const under = (prefix: string, uri: string) => uri.replace(/^[a-z]+:\/\//, `skill://${prefix}/`)

describe("UpstreamSource over the wire", () => {
  for (const revision of revisions) {
    it.live(`serves both upstreams byte for byte, with their digests (upstreams spoken to on ${revision})`, () =>
      Effect.gen(function*() {
        const { definitions } = yield* Serve.loadReported(examples, { strict: true, log: () => Effect.void })
        const ours = yield* ourUpstream(definitions)
        const sdk = yield* officialUpstream(yield* folder(sdkFixture))
        const { url, upstreams } = yield* gateway([
          { prefix: "ours", transport: UpstreamSource.http(ours.url), protocolVersion: revision },
          { prefix: "vendor/sdk", transport: UpstreamSource.http(sdk.url), protocolVersion: revision }
        ])
        const direct = {
          ours: yield* everyFile(ours.url),
          sdk: yield* everyFile(sdk.url)
        }
        const through = yield* everyFile(url)
        assert.deepStrictEqual(
          [...through.entries.keys()].sort(),
          [...exampleUris.map((uri) => under("ours", uri)), ...[...direct.sdk.entries.keys()].map((uri) => under("vendor/sdk", uri))].sort()
        )
        let files = 0
        for (const [prefix, side] of [["ours", direct.ours], ["vendor/sdk", direct.sdk]] as const) {
          for (const [uri, file] of side.files) {
            const served = through.files.get(under(prefix, uri))
            assert.isDefined(served, uri)
            assert.strictEqual(served!.digest, file.digest, uri)
            assert.isTrue(Buffer.from(served!.bytes).equals(Buffer.from(file.bytes)), uri)
            files++
          }
          for (const [uri, entry] of side.entries) {
            const served = through.entries.get(under(prefix, uri))!
            assert.deepStrictEqual(served.frontmatter, entry.frontmatter)
            const provenance = served._meta?.[Skill.ProvenanceMetaKey] as Record<string, unknown>
            assert.strictEqual(provenance.source, prefix)
            assert.strictEqual(provenance.uri, uri)
            assert.match(String(provenance.verifiedAt), /^\d{4}-\d\d-\d\dT/)
            assert.isUndefined(served._meta?.[Signing.MetaKey])
          }
        }
        assert.isAbove(files, 25)
        const status = yield* upstreams.status
        assert.deepStrictEqual(status.map((s) => [s.name, s.reachable, s.skills]), [["ours", true, 6], ["vendor/sdk", true, 2]])
      }).pipe(Effect.provide(platform)))
  }
})
