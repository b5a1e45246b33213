/**
 * `mcp-skills-server serve --upstream ...` as a user runs it (the built CLI): the official
 * conformance suite passes strictly against the gateway on both revisions, with our own server and
 * the official SDK behind it; an upstream killed and restarted is served from its last verified
 * skills meanwhile (a log line, the `mcp_skills_upstream_up` metric at 0) and followed again once
 * back; the options are checked before anything starts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Upstreams from "../src/bin/upstreams.js"
import { examples, exampleUris, httpServer, repoRoot, spawnBin, stop, waitFor } from "./support/cli-server.js"
import { conformance, expectStrictPass } from "./support/conformance.js"
import { eventually, folder, officialUpstream, platform, sdkFixture, withClient } from "./support/gateway.js"

// `mcp-skills-server serve ARGS` on a free loopback port for the scope: the running process and its URL.
const serve = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const running = spawnBin("mcp-skills-server", ["serve", ...args, "--host", "127.0.0.1", "--port", "0"])
      const [, url] = await waitFor(running, "stdout", /^listening (http:\/\/\S+)$/m)
      return { running, url: url as string }
    }),
    ({ running }) => Effect.promise(() => stop(running))
  )

const listed = (url: string) =>
  withClient(url, (client) => Effect.map(client.listSkills(), (listing) => listing.skills.map((skill) => skill.uri)))

const metric = (url: string, line: RegExp) =>
  Effect.promise(async () => {
    const text = await fetch(url.replace(/\/mcp$/, "/metrics")).then((response) => response.text())
    return line.test(text) ? true : undefined
  })

describe("mcp-skills-server serve --upstream", () => {
  it.live("passes the conformance suite strictly on 2026-07-28 and 2025-11-25 with two upstreams behind it", () =>
    Effect.gen(function*() {
      const ours = yield* httpServer(examples)
      const sdk = yield* officialUpstream(yield* folder(sdkFixture))
      const gateway = yield* serve(["--upstream", `ours=${ours.url}`, "--upstream", `vendor/sdk=${sdk.url}`])
      expectStrictPass(yield* conformance([gateway.url]))
      assert.strictEqual((yield* listed(gateway.url)).length, 8)
    }).pipe(Effect.provide(platform)), { timeout: 300_000 })

  it.live("an upstream killed and restarted: its last verified skills stay served, then it is followed again", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gateway-restart-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      Fs.cpSync(examples, dir, { recursive: true })
      const first = spawnBin("mcp-skills-server", ["serve", dir, "--host", "127.0.0.1", "--port", "0"])
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(first)))
      const [, upstreamUrl] = yield* Effect.promise(() => waitFor(first, "stdout", /^listening (http:\/\/\S+)$/m))
      const { running: gateway, url } = yield* serve(["--upstream", `team=${upstreamUrl}`, "--metrics"])
      assert.match(gateway.stdout(), /^following upstream team: 6 verified skills$/m)
      assert.strictEqual((yield* listed(url)).length, 6)

      yield* Effect.promise(() => stop(first))
      yield* Effect.promise(() => waitFor(gateway, "stderr", /upstream team is unreachable: .*; still serving its 6 verified skills, reconnecting with backoff/))
      yield* eventually("up 0", metric(url, /^mcp_skills_upstream_up\{[^}]*upstream="team"[^}]*\} 0$/m))
      assert.strictEqual((yield* listed(url)).length, 6)

      Fs.mkdirSync(Path.join(dir, "added"))
      Fs.writeFileSync(Path.join(dir, "added/SKILL.md"), "---\nname: added\ndescription: Added while the upstream was down\n---\n")
      const port = new URL(upstreamUrl!).port
      const second = spawnBin("mcp-skills-server", ["serve", dir, "--host", "127.0.0.1", "--port", port])
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(second)))
      yield* Effect.promise(() => waitFor(second, "stdout", /^listening /m))
      yield* Effect.promise(() => waitFor(gateway, "stderr", /upstream team is back; serving its 7 verified skills/))
      assert.include((yield* listed(url)) as ReadonlyArray<string>, "skill://team/added/SKILL.md")
      yield* eventually("up 1", metric(url, /^mcp_skills_upstream_up\{[^}]*upstream="team"[^}]*\} 1$/m))
    }).pipe(Effect.provide(platform)), { timeout: 120_000 })

  it.live("inventory writes an admit list that serve --admit FILE --admit-mode admit follows", () =>
    Effect.gen(function*() {
      const ours = yield* httpServer(examples)
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gateway-inventory-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      const file = Path.join(dir, "admit.json")
      const taken = spawnBin("mcp-skills-server", ["inventory", "--upstream", `team=${ours.url}`, "--out", file])
      assert.strictEqual(yield* Effect.promise(() => taken.exited), 0, taken.stderr())
      const list = JSON.parse(Fs.readFileSync(file, "utf8"))
      assert.strictEqual(list.version, 1)
      assert.deepStrictEqual(list.skills.map((entry: any) => entry.uri), exampleUris)
      // Admit all but one: that one is not served.
      Fs.writeFileSync(file, JSON.stringify({ version: 1, skills: list.skills.slice(1) }))
      const { running, url } = yield* serve(["--upstream", `team=${ours.url}`, "--admit", file, "--admit-mode", "admit"])
      assert.match(running.stdout(), /^following upstream team: 5 verified skills, 1 not in the admit list$/m)
      assert.strictEqual((yield* listed(url)).length, 5)
    }).pipe(Effect.provide(platform)), { timeout: 120_000 })

  it("checks its options before anything starts, one line per mistake", () => {
    const none = { upstream: [], upstreamHeader: [], upstreamStdio: [], trust: [], admit: Option.none(), admitMode: Option.none() }
    const cases: ReadonlyArray<readonly [Partial<Upstreams.Input>, RegExp]> = [
      [{ upstream: ["nourl"] }, /^--upstream nourl: expected PREFIX=URL$/],
      [{ upstream: ["a=ftp://x"] }, /^upstream a: ftp:\/\/x is not an http\(s\) URL$/],
      [{ upstream: ["a=http://127.0.0.1:1/mcp", "a=http://127.0.0.1:2/mcp"] }, /^upstream a: two upstreams have this prefix$/],
      [{ upstream: ["a=http://127.0.0.1:1/mcp"], upstreamHeader: ["b:x=1"] }, /no --upstream b=URL/],
      [{ upstream: ["a=http://127.0.0.1:1/mcp"], upstreamHeader: ["a-no-header"] }, /expected PREFIX:NAME=VALUE/],
      [{ upstream: [".git=http://127.0.0.1:1/mcp"] }, /hidden/],
      [{ trust: [Path.join(repoRoot, "package.json")] }, /--trust .*package\.json: not an ed25519 public key/],
      [{ upstreamStdio: ["a="] }, /expected PREFIX=COMMAND/],
      [{ admitMode: Option.some("admit") }, /^--admit-mode needs --admit FILE$/],
      [{ admit: Option.some("admit.json") }, /^--admit applies to upstream skills/]
    ]
    for (const [input, error] of cases) {
      const parsed = Upstreams.parse({ ...none, ...input })
      assert.isTrue(Result.isFailure(parsed), String(error))
      assert.match(Result.isFailure(parsed) ? parsed.failure : "", error)
    }
    const ok = Upstreams.parse({ ...none, upstream: ["a=http://127.0.0.1:1/mcp"], upstreamHeader: ["a:Authorization=Bearer x=y"] })
    assert.deepStrictEqual(Result.isSuccess(ok) && ok.success.upstreams[0]!.transport, {
      _tag: "Http",
      url: "http://127.0.0.1:1/mcp",
      headers: { authorization: "Bearer x=y" }
    })
  })

  it.live("a mistake in the options is one line and exit status 1, before anything loads", () =>
    Effect.gen(function*() {
      for (const [args, error] of [
        [["--upstream", "a=ftp://x"], /^mcp-skills-server: upstream a: ftp:\/\/x is not an http\(s\) URL$/],
        [[examples, "--admit-mode", "admit"], /^mcp-skills-server: --admit-mode needs --admit FILE$/]
      ] as const) {
        const running = spawnBin("mcp-skills-server", ["serve", ...args, "--port", "0"])
        assert.strictEqual(yield* Effect.promise(() => running.exited), 1)
        assert.match(running.stderr().trim(), error)
        assert.strictEqual(running.stdout(), "")
      }
    }), { timeout: 120_000 })
})
