/**
 * `mcp-skills-server` as a new user meets it when something is wrong, run from `dist`: every
 * mistake is one line on stderr naming the cause, exit status 1 and no stack trace; an option
 * error is found before the catalogue loads; a listener that cannot listen is named with its
 * address and errno. And both HTTP listeners admit only the Host and Origin the MCP endpoint does,
 * as the official conformance suite's DNS-rebinding scenario wants.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as NodeNet from "node:net"
import * as path from "node:path"
import { examples, httpServer, node, repoRoot, spawnBin, stop, waitFor } from "./support/cli-server.js"
import { rawRequest, refusalOf } from "./support/raw.js"
import { modernRequest } from "./support/wire.js"

/** Runs `serve ...args` to its end; its exit code and what it printed. */
const serveFails = (args: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const running = spawnBin("mcp-skills-server", ["serve", ...args], {})
    running.child.stdin!.end()
    const code = await running.exited
    return { code, stdout: running.stdout(), stderr: running.stderr() }
  })

/**
 * Exactly one line of error, this one, on stderr (after the start-up report, which goes to stderr
 * over stdio); exit status 1; nothing that looks like a stack trace.
 */
const oneLine = (run: { readonly code: number | string; readonly stderr: string }, line: string, report = "") => {
  assert.strictEqual(run.stderr, `${report}${line}\n`)
  assert.notMatch(run.stderr, /^\s+at /m)
  assert.strictEqual(run.code, 1)
}

/** A port of 127.0.0.1 held by another listener for the length of the test. */
const portInUse = Effect.acquireRelease(
  Effect.callback<NodeNet.Server>((resume) => {
    const server = NodeNet.createServer()
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
).pipe(Effect.map((server) => (server.address() as NodeNet.AddressInfo).port))

describe.concurrent("mcp-skills-server serve: an option error is one line, before anything loads", () => {
  const hint = "; run 'mcp-skills-server serve --help'"
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string]> = [
    ["a port out of range", ["--port", "99999"], `Invalid value for flag --port: "99999". Expected: a TCP port from 0 to 65535`],
    ["a metrics port out of range", ["--metrics-port", "-1"], `Invalid value for flag --metrics-port: "-1". Expected: a TCP port from 0 to 65535`],
    ["a bus that is no redis URL", ["--redis", "notaurl"], `Invalid value for flag --redis: "notaurl". Expected: a redis:// or rediss:// URL`],
    ["a negative --watch-check", ["--watch", "--watch-check", "-1"], `Invalid value for flag --watch-check: "-1". Expected: a number of seconds, 0 or more`],
    ["--watch-check without --watch", ["--watch-check", "3"], "--watch-check needs --watch"],
    ["--metrics with --stdio", ["--metrics", "--stdio"], "--metrics needs the HTTP listener; with --stdio use --metrics-port"],
    ["a host name with a port", ["--allow-host", "skills.example.com:443"], `Invalid value for flag --allow-host: "skills.example.com:443". Expected: a host name without a port (an IPv6 address in brackets), or '*'`],
    ["an unknown flag", ["--bogus"], "unknown flag --bogus"],
    ["a page size of 0", ["--page-size", "0"], `Invalid value for flag --page-size: "0". Expected: a positive integer`]
  ]
  for (const [what, args, message] of cases) {
    it.live(what, () =>
      Effect.gen(function*() {
        const run = yield* serveFails([examples, ...args])
        oneLine(run, `mcp-skills-server: ${message}${hint}`)
        // The catalogue was not loaded: loading prints "loaded N skills" first.
        assert.strictEqual(run.stdout, "")
      }))
  }

  it.live("no folder at all", () =>
    Effect.gen(function*() {
      const run = yield* serveFails([])
      oneLine(run, `mcp-skills-server: give at least one skills folder (DIRECTORY or --root DIR=PREFIX) or upstream (--upstream PREFIX=URL)${hint}`)
    }))

  it.live("reload with a bus that is no redis URL", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["reload", "--redis", "notaurl"])
      const code = yield* Effect.promise(() => running.exited)
      oneLine(
        { code, stderr: running.stderr() },
        `mcp-skills-server: Invalid value for flag --redis: "notaurl". Expected: a redis:// or rediss:// URL; run 'mcp-skills-server reload --help'`
      )
    }))

  it.live("an unknown command", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serv", examples])
      const code = yield* Effect.promise(() => running.exited)
      oneLine({ code, stderr: running.stderr() }, `mcp-skills-server: unknown command "serv" (did you mean serve?); run 'mcp-skills-server --help'`)
    }))
})

describe.concurrent("mcp-skills-server serve: a listener that cannot listen is named", () => {
  it.live("the MCP endpoint's port in use", () =>
    Effect.gen(function*() {
      const port = yield* portInUse
      const run = yield* serveFails([examples, "--port", String(port)])
      oneLine(run, `mcp-skills-server: cannot listen for the MCP endpoint on 127.0.0.1:${port}: address already in use (EADDRINUSE)`)
    }))

  for (const transport of [["--port", "0"], ["--stdio"]]) {
    it.live(`the metrics port in use (${transport[0]})`, () =>
      Effect.gen(function*() {
        const port = yield* portInUse
        const run = yield* serveFails([examples, ...transport, "--metrics-port", String(port)])
        const line = `mcp-skills-server: cannot listen for the metrics endpoint on 127.0.0.1:${port}: address already in use (EADDRINUSE)`
        const report = transport[0] === "--stdio" ? run.stderr.slice(0, run.stderr.indexOf(line)) : ""
        assert.notInclude(report, "mcp-skills-server:")
        oneLine(run, line, report)
        assert.match(transport[0] === "--stdio" ? run.stderr : run.stdout, /^loaded 6 skills from /)
      }))
  }

  it.live("a host that does not resolve", () =>
    Effect.gen(function*() {
      oneLine(
        yield* serveFails([examples, "--host", "bad..host", "--port", "0"]),
        "mcp-skills-server: cannot listen for the MCP endpoint on bad..host:0: no such host (ENOTFOUND)"
      )
    }))

  it.live("an address of no interface here", () =>
    Effect.gen(function*() {
      // 192.0.2.0/24 is TEST-NET-1: documentation only, never an address of this machine.
      oneLine(
        yield* serveFails([examples, "--host", "192.0.2.1", "--port", "0"]),
        "mcp-skills-server: cannot listen for the MCP endpoint on 192.0.2.1:0: address not available (EADDRNOTAVAIL)"
      )
    }))
})

const conformance = path.join(repoRoot, "node_modules/@modelcontextprotocol/conformance/dist/index.js")

describe.concurrent("mcp-skills-server serve: every HTTP listener admits what the MCP endpoint admits", () => {
  it.live("the official conformance suite's DNS-rebinding scenario passes on both revisions", () =>
    Effect.gen(function*() {
      const { url } = yield* httpServer(examples)
      for (const revision of ["2026-07-28", "2025-11-25"]) {
        const run = yield* Effect.promise(() =>
          new Promise<{ readonly code: number; readonly out: string }>((resolve) =>
            execFile(
              node,
              [conformance, "server", "--url", url, "--scenario", "dns-rebinding-protection", "--spec-version", revision, "--force"],
              { cwd: repoRoot, timeout: 120_000 },
              (error, stdout, stderr) => resolve({ code: error === null ? 0 : 1, out: `${stdout}${stderr}` })
            )
          )
        )
        assert.match(run.out, /Passed: 2\/2, 0 failed, 0 warnings/, run.out)
        assert.strictEqual(run.code, 0, run.out)
      }
    }), { timeout: 300_000 })

  it.live("/metrics on the MCP port and on its own port refuse a foreign Host and Origin, as /mcp does", () =>
    Effect.gen(function*() {
      const { running, url } = yield* httpServer(examples, [
        "--metrics",
        "--metrics-port",
        "0",
        "--allow-origin",
        "https://app.example",
        "--allow-host",
        "skills.example.com"
      ])
      const [, metricsPort] = yield* Effect.promise(() => waitFor(running, "stdout", /^metrics at (http:\/\/\S+)$/m))
      const list = modernRequest("skills/list", {})
      const routes = [
        { url, method: "POST", headers: list.headers, body: list.body },
        { url: url.replace(/\/mcp$/, "/metrics"), method: "GET", headers: {}, body: undefined },
        { url: metricsPort!, method: "GET", headers: {}, body: undefined }
      ]
      for (const route of routes) {
        const ask = (headers: Record<string, string>) => rawRequest(route.url, { ...route, headers: { ...route.headers, ...headers } })
        const rebound = yield* ask({ host: "rebound.example" })
        assert.strictEqual(rebound.status, 403, route.url)
        assert.deepStrictEqual(refusalOf(rebound), { code: -32600, message: "Host rebound.example is not allowed" })
        const foreign = yield* ask({ origin: "https://evil.example" })
        assert.strictEqual(foreign.status, 403, route.url)
        assert.strictEqual(refusalOf(foreign).message, "Origin https://evil.example is not allowed")
        for (const admitted of [{}, { host: "skills.example.com" }, { host: "localhost" }, { origin: "https://app.example" }]) {
          assert.strictEqual((yield* ask(admitted)).status, 200, `${route.url} ${JSON.stringify(admitted)}`)
        }
      }
      assert.strictEqual(yield* Effect.promise(() => stop(running)), 0)
    }))
})

describe.concurrent("mcp-skills-server --help", () => {
  const commands = { serve: "[<directory...>]", sign: "<directory>", reload: "", keygen: "" }
  for (const [command, args] of Object.entries(commands)) {
    it.live(`${command} names its arguments and shows an example`, () =>
      Effect.gen(function*() {
        const running = spawnBin("mcp-skills-server", [command, "--help"])
        assert.strictEqual(yield* Effect.promise(() => running.exited), 0)
        const help = running.stdout()
        assert.include(help, `USAGE\n  mcp-skills-server ${command} [flags]${args === "" ? "" : ` ${args}`}\n`)
        if (args !== "") assert.match(help, /ARGUMENTS\n {2}directory\S* string +\S/)
        assert.match(help, new RegExp(`EXAMPLES\\n(.*\\n)*? {2}mcp-skills-server ${command} `))
      }))
  }
})
