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
import { examples, httpServer, repoRoot, spawnBin, stop, waitFor } from "./support/cli-server.js"
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

  it.live("checks its options before anything starts", () =>
    Effect.gen(function*() {
      const run = (args: ReadonlyArray<string>) =>
        Effect.promise(async () => {
          const running = spawnBin("mcp-skills-server", ["serve", ...args, "--port", "0"])
          const code = await running.exited
          return { code, stderr: running.stderr() }
        })
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
        [["--upstream", "nourl"], /--upstream nourl: expected PREFIX=URL/],
        [["--upstream", "a=ftp://x"], /upstream a: ftp:\/\/x is not an http\(s\) URL/],
        [["--upstream", "a=http://127.0.0.1:1/mcp", "--upstream", "a=http://127.0.0.1:2/mcp"], /upstream a: two upstreams have this prefix/],
        [["--upstream", "a=http://127.0.0.1:1/mcp", "--upstream-header", "b:x=1"], /no --upstream b=URL/],
        [["--upstream", ".git=http://127.0.0.1:1/mcp"], /hidden/],
        [[examples, "--trust", Path.join(repoRoot, "package.json")], /--trust applies to upstream skills|not an ed25519 public key/],
        [["--upstream-stdio", "a="], /expected PREFIX=COMMAND/]
      ]
      for (const [args, error] of cases) {
        const { code, stderr } = yield* run(args)
        assert.strictEqual(code, 1, stderr)
        assert.match(stderr, error)
        assert.strictEqual(stderr.trim().split("\n").length, 1, stderr)
      }
    }), { timeout: 120_000 })
})
