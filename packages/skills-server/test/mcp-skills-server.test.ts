/**
 * The `mcp-skills-server` command, run from `dist` as a user would run it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { exampleUris, examples, httpServer, spawnBin, stop, waitFor } from "./support/cli-server.js"
import { modernHttp } from "./support/wire.js"
import { tree, write } from "./support/tree.js"

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "cli-test", version: "0.0.0" }
}

// One 2026-07-28 request over HTTP; returns the status and the parsed JSON-RPC response.
const rpc = (url: string, method: string, params: Record<string, unknown> = {}) => modernHttp(url).send(method, params)

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`

const withBroken = () =>
  tree({
    "good/SKILL.md": skillMd("good"),
    "renamed/SKILL.md": skillMd("other-name"),
    "empty/SKILL.md": "no frontmatter\n"
  })


describe.concurrent("mcp-skills-server serve (HTTP)", () => {
  it.live("serves examples/skills, reports what it loaded, and exits 0 on SIGTERM", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serve", examples, "--port", "0"])
      const [, url] = yield* Effect.promise(() => waitFor(running, "stdout", /^listening (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m))
      expect(running.stdout()).toContain("loaded 6 skills from")
      for (const uri of exampleUris) expect(running.stdout()).toContain(uri)

      const discover = yield* rpc(url!, "server/discover")
      expect(discover.body.result.capabilities.extensions).toEqual({ "io.modelcontextprotocol/skills": { directoryRead: true } })
      const list = yield* rpc(url!, "skills/list")
      expect(list.body.result.skills.map((skill: { uri: string }) => skill.uri)).toEqual(exampleUris)

      expect(yield* Effect.promise(() => stop(running))).toBe(0)
      expect(running.stderr()).toBe("")
    }))

  it.live("skips invalid skill folders with one line each and serves the rest", () =>
    Effect.gen(function*() {
      const { url, running } = yield* httpServer(withBroken())
      const stderr = running.stderr()
      expect(stderr).toMatch(/^skipped renamed: SKILL\.md: frontmatter name "other-name" differs .*"renamed"/m)
      expect(stderr).toMatch(/^skipped empty: SKILL\.md/m)
      expect(running.stdout()).toContain("loaded 1 skill from")
      expect(running.stdout()).toContain("(2 skipped)")
      const list = yield* rpc(url, "skills/list")
      expect(list.body.result.skills.map((skill: { uri: string }) => skill.uri)).toEqual(["skill://good/SKILL.md"])
    }))

  it.live("--strict refuses to start when a skill folder is invalid", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serve", withBroken(), "--port", "0", "--strict"])
      expect(yield* Effect.promise(() => running.exited)).toBe(1)
      expect(running.stderr()).toMatch(/^mcp-skills-server: 2 invalid skill folder\(s\)/m)
      expect(running.stderr()).toMatch(/^ {2}renamed: /m)
      expect(running.stdout()).not.toContain("listening")
    }))

  it.live("a missing folder is one readable error and exit status 1", () =>
    Effect.gen(function*() {
      const missing = path.join(os.tmpdir(), "no-such-skills-dir-4c1e")
      const running = spawnBin("mcp-skills-server", ["serve", missing, "--port", "0"])
      expect(yield* Effect.promise(() => running.exited)).toBe(1)
      expect(running.stderr().trim()).toBe(`mcp-skills-server: cannot load skills from ${missing}: does not exist`)
    }))

  it.live("--prefix and --path shape the URIs and the endpoint; --protocol limits the revisions", () =>
    Effect.gen(function*() {
      const { url } = yield* httpServer(examples, ["--prefix", "acme.example/v1", "--path", "/skills", "--protocol", "2026-07-28"])
      expect(url).toMatch(/\/skills$/)
      const list = yield* rpc(url, "skills/list")
      expect(list.body.result.skills.map((skill: { uri: string }) => skill.uri)).toContain(
        "skill://acme.example/v1/pdf-processing/SKILL.md"
      )
      const legacy = yield* Effect.promise(async () => {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "cli-test", version: "0" } }
          })
        })
        return response.status
      })
      expect(legacy).toBeGreaterThanOrEqual(400)
    }))
})

describe("mcp-skills-server serve --watch", () => {
  // Polls skills/list until `ready` holds for its URIs-to-digests map (real time, bounded).
  const until = (url: string, ready: (skills: Map<string, string>) => boolean) =>
    Effect.gen(function*() {
      for (let attempt = 0; attempt < 100; attempt++) {
        const list = yield* rpc(url, "skills/list")
        const skills = new Map<string, string>(
          list.body.result.skills.map((skill: any) => [skill.uri, skill.resources[0].digest])
        )
        if (ready(skills)) return skills
        yield* Effect.sleep("100 millis")
      }
      throw new Error("the catalogue never reached the expected state")
    })

  it.live("picks up added and changed skills; a broken change under --strict keeps the previous catalogue", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha") })
      const { url, running } = yield* httpServer(root, ["--watch", "--strict"])
      const first = yield* until(url, (skills) => skills.size === 1)

      fs.mkdirSync(path.join(root, "beta"))
      write(root, "beta/SKILL.md", skillMd("beta"))
      yield* until(url, (skills) => skills.has("skill://beta/SKILL.md"))

      write(root, "alpha/SKILL.md", skillMd("alpha") + "\nMore instructions.\n")
      const changed = yield* until(url, (skills) => skills.get("skill://alpha/SKILL.md") !== first.get("skill://alpha/SKILL.md"))
      expect(changed.size).toBe(2)
      expect(running.stdout()).toMatch(/^reloaded 2 skills from /m)

      fs.mkdirSync(path.join(root, "gamma"))
      fs.writeFileSync(path.join(root, "gamma/SKILL.md"), skillMd("not-gamma"))
      yield* Effect.promise(() => waitFor(running, "stderr", /^reload failed, still serving the previous skills: /m))
      const after = yield* until(url, () => true)
      expect(after).toEqual(changed)
    }))
})

describe("mcp-skills-server serve --stdio", () => {
  it.live("speaks JSON-RPC on stdout only, on both revisions, and logs on stderr", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serve", examples, "--stdio"])
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(running)))
      yield* Effect.promise(() => waitFor(running, "stderr", /^serving on stdio$/m))
      const send = (message: unknown) => running.child.stdin!.write(JSON.stringify(message) + "\n")
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "cli-test", version: "0" } }
      })
      yield* Effect.promise(() => waitFor(running, "stdout", /"id":1/))
      send({ jsonrpc: "2.0", method: "notifications/initialized" })
      send({ jsonrpc: "2.0", id: 2, method: "skills/list", params: {} })
      send({ jsonrpc: "2.0", id: 3, method: "skills/list", params: { _meta: meta } })
      yield* Effect.promise(() => waitFor(running, "stdout", /"id":3/))
      yield* Effect.promise(() => waitFor(running, "stdout", /"id":2/))

      const messages = running.stdout().trim().split("\n").map((line) => JSON.parse(line))
      const byId = (id: number) => messages.find((message) => message.id === id)
      expect(byId(1).result.capabilities.extensions).toEqual({ "io.modelcontextprotocol/skills": { directoryRead: true } })
      expect(byId(2).result.skills.map((skill: { uri: string }) => skill.uri)).toEqual(exampleUris)
      expect(byId(2).result.ttlMs).toBeUndefined()
      expect(byId(3).result.skills.map((skill: { uri: string }) => skill.uri)).toEqual(exampleUris)
      expect(byId(3).result.resultType).toBe("complete")
      expect(running.stderr()).toContain("loaded 6 skills from")
    }))
})
