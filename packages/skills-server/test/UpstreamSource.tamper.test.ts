/**
 * A tampering proxy in front of one upstream never gets a tampered skill served, and the other
 * upstream is not affected: bytes changed under the listed digest are caught by verification (a
 * new version keeps the previous verified one served); bytes changed with the listing's digest and
 * size recomputed to match are caught only by signatures, with the gateway trusting the author's
 * key and requiring signatures. `pull --trust` through the gateway verifies against the author's key.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Skill, UpstreamSource } from "../src/index.js"
import { node, repoRoot } from "./support/cli-server.js"
import { eventually, folder, gateway, hearing, officialUpstream, ourUpstream, platform, sdkFixture, withClient } from "./support/gateway.js"
import { makeKey, signed } from "./support/signing.js"
import * as TamperProxy from "./support/tamperProxy.js"

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill\n---\n\n# ${name}\n`

const skill = (name: string, guide: string) =>
  Skill.make({ path: name, files: { "SKILL.md": skillMd(name), "guide.md": guide } })

// Every file the gateway serves, verified by our client: text by URI.
const servedFiles = (url: string) =>
  withClient(url, (client) =>
    Effect.gen(function*() {
      const texts = new Map<string, string>()
      for (const entry of (yield* client.listSkills()).skills) {
        if (entry.resources === "dynamic") continue
        for (const resource of entry.resources) {
          texts.set(resource.uri, new TextDecoder().decode((yield* client.readSkillResource(entry, resource.uri)).bytes))
        }
      }
      return texts
    }), { protocolVersion: "2026-07-28" })

const logged = (lines: Array<string>, pattern: RegExp) =>
  eventually(`a line matching ${pattern}`, Effect.sync(() => lines.some((line) => pattern.test(line)) ? true : undefined))

describe("UpstreamSource against a tampering proxy", () => {
  it.live("bytes changed under the listed digest are never served; a new version keeps the previous one; the other upstream is unaffected", () =>
    Effect.gen(function*() {
      const upstream = yield* ourUpstream([skill("alpha", "alpha v1\n"), skill("beta", "beta v1\n")])
      const proxy = yield* TamperProxy.start(upstream.url)
      proxy.tamper = { _tag: "Bytes", uri: "skill://beta/guide.md" }
      const sdk = yield* officialUpstream(yield* folder(sdkFixture))
      const lines: Array<string> = []
      const { url, upstreams } = yield* gateway(
        [
          { prefix: "team", transport: UpstreamSource.http(proxy.url) },
          { prefix: "sdk", transport: UpstreamSource.http(sdk.url) }
        ],
        { recheck: { min: "1 hour", max: "1 hour" }, log: (line) => Effect.sync(() => lines.push(line)) }
      )
      const first = yield* servedFiles(url)
      assert.isFalse([...first.keys()].some((uri) => uri.startsWith("skill://team/beta/")), "the tampered skill is not served")
      assert.strictEqual(first.get("skill://team/alpha/guide.md"), "alpha v1\n")
      assert.strictEqual([...first.keys()].filter((uri) => uri.startsWith("skill://sdk/")).length, sdkFixture.length)
      assert.isTrue(lines.some((line) => /not serving skill:\/\/beta\/SKILL\.md: .*digest/i.test(line)), lines.join("\n"))

      // A new version of alpha, tampered on its way: the verified v1 stays served.
      yield* hearing(upstreams)
      proxy.tamper = { _tag: "Bytes", uri: "skill://alpha/guide.md" }
      yield* upstream.registry.upsert([skill("alpha", "alpha v2\n")])
      yield* logged(lines, /not serving skill:\/\/alpha\/SKILL\.md: .*still serving its previous verified version/)
      const second = yield* servedFiles(url)
      assert.strictEqual(second.get("skill://team/alpha/guide.md"), "alpha v1\n")
      assert.strictEqual([...second.keys()].filter((uri) => uri.startsWith("skill://sdk/")).length, sdkFixture.length)

      // Once the way is honest again, the next change is verified and served.
      proxy.tamper = { _tag: "Honest" }
      yield* upstream.registry.upsert([skill("alpha", "alpha v3\n")])
      yield* eventually("alpha v3", Effect.map(servedFiles(url), (files) => files.get("skill://team/alpha/guide.md") === "alpha v3\n" ? true : undefined))
      assert.deepStrictEqual((yield* upstreams.status).map((status) => status.reachable), [true, true])
    }).pipe(Effect.provide(platform)))

  it.live("bytes changed with digest and size recomputed are caught by signatures (--trust, --require-signed); pull --trust through the gateway", () =>
    Effect.gen(function*() {
      const author = makeKey()
      const stranger = makeKey()
      const upstream = yield* ourUpstream([
        signed(skill("alpha", "alpha v1\n"), author.key),
        signed(skill("beta", "beta v1\n"), author.key),
        signed(skill("gamma", "gamma v1\n"), stranger.key),
        skill("delta", "delta v1\n")
      ])
      const proxy = yield* TamperProxy.start(upstream.url)
      proxy.honest.set("skill://beta/guide.md", "beta v1\n")
      proxy.tamper = { _tag: "Listing", uri: "skill://beta/guide.md" }
      const docs = yield* ourUpstream([signed(skill("manual", "manual v1\n"), author.key)])
      const lines: Array<string> = []
      const trust = { keys: [author.publicKey], mode: "required" as const }
      const { url } = yield* gateway(
        [
          { prefix: "team", transport: UpstreamSource.http(proxy.url), trust },
          { prefix: "docs", transport: UpstreamSource.http(docs.url), trust }
        ],
        { requireSigned: true, log: (line) => Effect.sync(() => lines.push(line)), recheck: { min: "1 hour", max: "1 hour" } }
      )
      const files = yield* servedFiles(url)
      assert.deepStrictEqual([...files.keys()].filter((uri) => uri.startsWith("skill://team/")).sort(), [
        "skill://team/alpha/SKILL.md",
        "skill://team/alpha/guide.md"
      ])
      assert.isTrue(lines.some((line) => /not serving skill:\/\/beta\/SKILL\.md: .*signature/i.test(line)), lines.join("\n"))
      assert.isTrue(lines.some((line) => /not serving skill:\/\/gamma\/SKILL\.md: .*(trust|signer)/i.test(line)), lines.join("\n"))
      assert.isTrue(lines.some((line) => /not serving skill:\/\/delta\/SKILL\.md: .*sign/i.test(line)), lines.join("\n"))
      assert.strictEqual(files.get("skill://docs/manual/guide.md"), "manual v1\n")

      // pull --trust through the gateway: the author's signature verifies under the gateway's URIs.
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gateway-pull-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      const keyFile = Path.join(dir, "author.public.pem")
      Fs.writeFileSync(keyFile, author.publicKey)
      const pulled = yield* Effect.promise(() =>
        new Promise<{ code: number | null; out: string }>((resolve) =>
          execFile(
            node,
            [Path.join(repoRoot, "packages/skills-client/dist/src/bin/mcp-skills.js"), "pull", url, "--all", "--trust", keyFile, "--into", Path.join(dir, "skills")],
            { timeout: 60_000 },
            (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number), out: stdout + stderr })
          )
        )
      )
      assert.strictEqual(pulled.code, 0, pulled.out)
      assert.strictEqual(Fs.readFileSync(Path.join(dir, "skills/team/alpha/guide.md"), "utf8"), "alpha v1\n")
      assert.strictEqual(Fs.readFileSync(Path.join(dir, "skills/docs/manual/guide.md"), "utf8"), "manual v1\n")
      const lock = JSON.parse(Fs.readFileSync(Path.join(dir, "skills/mcp-skills.lock.json"), "utf8"))
      assert.include(JSON.stringify(lock), author.keyId)
    }).pipe(Effect.provide(platform)))
})
