/**
 * Without Redis installed, the command-line server logs its catalogue revision and keeps
 * serving when its change bus cannot be reached; `reload --redis` says so and exits 1. (With Redis,
 * `npm run test:cluster` covers the bus itself.) Also `--page-size`, which the cluster test uses.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as net from "node:net"
import { examples, exampleUris, spawnBin, stop, waitFor } from "./support/cli-server.js"
import { modernHttp } from "./support/wire.js"

// A loopback port nobody listens on: taken from the OS, then released.
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

describe("mcp-skills-server and the change bus", () => {
  it.live("serve --redis with the bus down: logs the revision, serves, and reports the bus once", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const running = spawnBin("mcp-skills-server", ["serve", examples, "--port", "0", "--redis", `redis://127.0.0.1:${port}`])
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(running)))
      const [, url] = yield* Effect.promise(() => waitFor(running, "stdout", /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m))
      const [, revision] = running.stdout().match(/^catalogue revision ([0-9a-f]{24}) \(6 skills\)$/m) ?? []
      expect(revision).toBeDefined()
      const list = yield* modernHttp(url!).call("skills/list")
      expect(list.skills.map((skill: { uri: string }) => skill.uri).sort()).toEqual([...exampleUris].sort())
      yield* Effect.promise(() =>
        waitFor(running, "stderr", new RegExp(`^change bus unavailable: .*ECONNREFUSED.*; still serving revision ${revision}`, "m"))
      )
      // Retried with backoff, reported once per outage; serving goes on meanwhile.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 1_000)))
      expect(running.stderr().match(/change bus unavailable/g)).toHaveLength(1)
      expect((yield* modernHttp(url!).call("skills/list")).skills).toHaveLength(list.skills.length)
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.live("reload --redis with nothing listening: one readable line, exit 1", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const running = spawnBin("mcp-skills-server", ["reload", "--redis", `redis://127.0.0.1:${port}`])
      expect(yield* Effect.promise(() => running.exited)).toBe(1)
      expect(running.stderr()).toMatch(
        new RegExp(`^mcp-skills-server: change bus unavailable: redis://127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`, "m")
      )
    }), { timeout: 60_000 })

  it.live("reload --redis never prints the URL's password", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(closedPort)
      const running = spawnBin("mcp-skills-server", ["reload", "--redis", `redis://:hunter2@127.0.0.1:${port}`])
      expect(yield* Effect.promise(() => running.exited)).toBe(1)
      expect(running.stderr()).toContain(`redis://:***@127.0.0.1:${port}`)
      expect(running.stderr() + running.stdout()).not.toContain("hunter2")
    }), { timeout: 60_000 })

  it.live("serve --page-size below 1 is refused before serving", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serve", examples, "--port", "0", "--page-size", "0"])
      expect(yield* Effect.promise(() => running.exited)).toBe(1)
      expect(running.stderr()).toBe(
        `mcp-skills-server: Invalid value for flag --page-size: "0". Expected: a positive integer; run 'mcp-skills-server serve --help'\n`
      )
      expect(running.stdout()).toBe("")
    }), { timeout: 60_000 })
})
