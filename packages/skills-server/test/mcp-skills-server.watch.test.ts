/**
 * `mcp-skills-server serve --watch` (built `dist`, as users run it) while a verifying
 * client keeps reading. Skills are edited, added, removed and corrupted under the watched root; every
 * entry a client gets either verifies file by file or is followed by a newer entry that does, no
 * response mixes two versions of one file, each change is announced (a 2025-11-25 HTTP session's
 * stream; stdio with `resources/subscribe`), and a corrupted SKILL.md keeps its last good version
 * with one log line naming the file and the rule.
 */
import { describe, expect, it } from "@effect/vitest"
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import { Effect, Fiber, Layer } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as fs from "node:fs"
import * as path from "node:path"
import { httpServer, spawnBin, stop, waitFor } from "./support/cli-server.js"
import { listen, poll } from "./support/session.js"
import { tree, write } from "./support/tree.js"

const skillMd = (name: string, description = `The ${name} skill.`) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nSee references/guide.md.\n`

const guide = (version: number) => `# Guide\n\nversion ${version}\n${"x".repeat(version * 100)}\n`

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Polls `check` (real time, bounded) until it holds. */
const eventually = <A>(what: string, check: Effect.Effect<A | undefined>) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 150; attempt++) {
      const value = yield* check
      if (value !== undefined) return value
      yield* sleep(100)
    }
    throw new Error(`timed out waiting for ${what}`)
  })

/** A 2025-11-25 HTTP session and the notifications on its GET stream. */
const legacySession = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
      const init = await fetch(url, {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "watch-test", version: "0" } }
        })
      })
      await init.text()
      const session = init.headers.get("mcp-session-id")!
      const sessionHeaders = { ...headers, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }
      await (await fetch(url, {
        method: "POST",
        headers: sessionHeaders,
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
      })).text()
      const subscribed = await (await fetch(url, {
        method: "POST",
        headers: sessionHeaders,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "resources/subscribe",
          params: { uri: "skill://alpha/references/guide.md" }
        })
      })).text()
      expect(subscribed).toContain(`"result":{}`)
      const abort = new AbortController()
      const notifications: Array<any> = []
      const stream = await fetch(url, {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
        signal: abort.signal
      })
      expect(stream.status).toBe(200)
      expect(stream.headers.get("x-accel-buffering")).toBe("no")
      const reading = (async () => {
        const decoder = new TextDecoder()
        let buffer = ""
        for await (const chunk of stream.body!) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true })
          let newline = buffer.indexOf("\n")
          while (newline !== -1) {
            const line = buffer.slice(0, newline).trim()
            buffer = buffer.slice(newline + 1)
            if (line.startsWith("data:") && line.length > 5) notifications.push(JSON.parse(line.slice(5)))
            newline = buffer.indexOf("\n")
          }
        }
      })().catch(() => undefined)
      return { notifications, abort, reading }
    }),
    ({ abort, reading }) => Effect.promise(() => (abort.abort(), reading))
  )

interface Round {
  readonly uri: string
  /** The entry's resources, as a key: two rounds with the same key saw the same version. */
  readonly entry: string
  readonly verified: boolean
}

describe("mcp-skills-server serve --watch", () => {
  it.live("edits, additions, removals and a corrupted SKILL.md, while a verifying client keeps reading (HTTP)", () =>
    Effect.gen(function*() {
      const root = tree({
        "alpha/SKILL.md": skillMd("alpha"),
        "alpha/references/guide.md": guide(1),
        "beta/SKILL.md": skillMd("beta")
      })
      // Every version of every file ever written: a read must return exactly one of them.
      const versions = new Map<string, Set<string>>([
        ["skill://alpha/SKILL.md", new Set([skillMd("alpha")])],
        ["skill://alpha/references/guide.md", new Set([guide(1)])],
        ["skill://beta/SKILL.md", new Set([skillMd("beta")])]
      ])
      const record = (uri: string, content: string) => {
        if (!versions.has(uri)) versions.set(uri, new Set())
        versions.get(uri)!.add(content)
      }
      const { running, url } = yield* httpServer(root, ["--watch"])
      const session = yield* legacySession(url)

      const client = yield* Layer.build(
        SkillsClient.layerHttp({ url, protocolVersion: "2026-07-28" }).pipe(
          Layer.provide([FetchHttpClient.layer, SkillCache.layerMemory()])
        )
      ).pipe(Effect.map((context) => context.mapUnsafe.get(SkillsClient.SkillsClient.key) as SkillsClient.Service))

      const rounds: Array<Round> = []
      const mixed: Array<string> = []
      let reading = true
      const uris = ["skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://gamma/SKILL.md"]
      const reader = yield* Effect.gen(function*() {
        while (reading) {
          for (const uri of uris) {
            const fetched = yield* Effect.result(client.getSkill(uri))
            if (fetched._tag === "Failure") continue
            const skill = fetched.success.skill
            let verified = true
            for (const resource of skill.resources === "dynamic" ? [] : skill.resources) {
              const read = yield* Effect.result(client.readSkillResource(skill, resource.uri))
              if (read._tag === "Failure") {
                verified = false
                continue
              }
              const text = new TextDecoder().decode(read.success.bytes)
              if (!versions.get(resource.uri)?.has(text)) mixed.push(`${resource.uri}: ${JSON.stringify(text)}`)
            }
            rounds.push({ uri, entry: JSON.stringify(skill.resources), verified })
          }
        }
      }).pipe(Effect.forkChild)

      const listChanges = () =>
        session.notifications.filter((message) => message.method === "notifications/resources/list_changed").length
      const digestOf = (uri: string) =>
        Effect.map(Effect.result(client.getSkill(uri)), (result) =>
          result._tag === "Success" && result.success.skill.resources !== "dynamic"
            ? result.success.skill.resources[0]!.digest
            : undefined)
      // One change, then its notification on the session stream and the new catalogue.
      const change = (what: string, apply: () => void, done: Effect.Effect<boolean>) =>
        Effect.gen(function*() {
          const before = listChanges()
          apply()
          yield* eventually(`${what}: list_changed`, Effect.sync(() => listChanges() > before ? true : undefined))
          yield* eventually(`${what}: served`, Effect.map(done, (ok) => ok ? true : undefined))
          yield* sleep(300)
        })

      yield* eventually("first rounds", Effect.sync(() => rounds.length > 3 ? true : undefined))
      const alphaV1 = yield* digestOf("skill://alpha/SKILL.md")

      for (const version of [2, 3]) {
        record("skill://alpha/references/guide.md", guide(version))
        yield* change(`edit guide v${version}`, () => write(root, "alpha/references/guide.md", guide(version)), Effect.map(
          Effect.result(Effect.flatMap(client.getSkill("skill://alpha/SKILL.md"), (got) =>
            client.readSkillResource(got.skill, "skill://alpha/references/guide.md"))),
          (read) => read._tag === "Success" && new TextDecoder().decode(read.success.bytes) === guide(version)
        ))
      }
      // The session subscribed to the guide: one resources/updated per edit of it.
      expect(
        session.notifications.filter((message) => message.method === "notifications/resources/updated")
          .map((message) => message.params.uri)
      ).toEqual(["skill://alpha/references/guide.md", "skill://alpha/references/guide.md"])
      record("skill://gamma/SKILL.md", skillMd("gamma"))
      yield* change("add gamma", () => write(root, "gamma/SKILL.md", skillMd("gamma")), Effect.map(
        digestOf("skill://gamma/SKILL.md"),
        (digest) => digest !== undefined
      ))
      yield* change("remove beta", () => fs.rmSync(path.join(root, "beta"), { recursive: true }), Effect.map(
        digestOf("skill://beta/SKILL.md"),
        (digest) => digest === undefined
      ))

      // A corrupted SKILL.md: the last good version stays, with one line naming the file and the rule.
      const corrupt = "---\nname: alpha\ndescription: &x anchored\n---\n\n# alpha\n"
      write(root, "alpha/SKILL.md", corrupt)
      yield* Effect.promise(() =>
        waitFor(running, "stderr", /^alpha\/SKILL\.md:3: anchor &x is not allowed; still serving the last good version$/m)
      )
      // Another event under the root triggers another reload: the line is not repeated.
      write(root, "gamma/notes.md", "notes\n")
      record("skill://gamma/notes.md", "notes\n")
      yield* eventually("gamma notes", Effect.map(Effect.result(client.getSkill("skill://gamma/SKILL.md")), (got) =>
        got._tag === "Success" && got.success.skill.resources !== "dynamic" && got.success.skill.resources.length === 2
          ? true
          : undefined))
      expect(yield* digestOf("skill://alpha/SKILL.md")).toBe(alphaV1)
      expect(running.stderr().match(/anchor &x is not allowed/g)).toHaveLength(1)

      const fixed = skillMd("alpha", "The alpha skill, fixed.")
      record("skill://alpha/SKILL.md", fixed)
      yield* change("fix alpha", () => write(root, "alpha/SKILL.md", fixed), Effect.map(
        digestOf("skill://alpha/SKILL.md"),
        (digest) => digest !== undefined && digest !== alphaV1
      ))
      expect(running.stderr()).toMatch(/^alpha: valid again, serving the new version$/m)

      reading = false
      yield* Fiber.join(reader)
      expect(mixed).toEqual([])
      // Every round that did not verify is followed by a newer entry of the same skill that does.
      for (const [i, round] of rounds.entries()) {
        if (round.verified) continue
        const later = rounds.slice(i + 1).find((next) => next.uri === round.uri && next.verified && next.entry !== round.entry)
        expect(later, `${round.uri} round ${i} never verified again`).toBeDefined()
      }
      expect(rounds.filter((round) => round.verified).length).toBeGreaterThan(5)
      expect(yield* Effect.promise(() => stop(running))).toBe(0)
    }), { timeout: 120_000 })

  it.live("stdio: list_changed and resources/updated for a subscribed file, and exit 0 when stdin closes", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/references/guide.md": guide(1) })
      const running = spawnBin("mcp-skills-server", ["serve", root, "--stdio", "--watch"])
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(running)))
      yield* Effect.promise(() => waitFor(running, "stderr", /^serving on stdio$/m))
      const send = (message: unknown) => running.child.stdin!.write(JSON.stringify(message) + "\n")
      const messages = () => running.stdout().trim().split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line))
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "watch-test", version: "0" } }
      })
      yield* Effect.promise(() => waitFor(running, "stdout", /"id":1/))
      const init = messages().find((message) => message.id === 1)
      expect(init.result.capabilities.resources).toMatchObject({ listChanged: true, subscribe: true })
      send({ jsonrpc: "2.0", method: "notifications/initialized" })
      send({ jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "skill://alpha/references/guide.md" } })
      yield* Effect.promise(() => waitFor(running, "stdout", /"id":2/))

      write(root, "alpha/references/guide.md", guide(2))
      yield* Effect.promise(() => waitFor(running, "stdout", /"notifications\/resources\/updated"/))
      yield* Effect.promise(() => waitFor(running, "stdout", /"notifications\/resources\/list_changed"/))
      const updated = messages().filter((message) => message.method === "notifications/resources/updated")
      expect(updated.map((message) => message.params.uri)).toEqual(["skill://alpha/references/guide.md"])

      const before = messages().filter((message) => message.method === "notifications/resources/list_changed").length
      write(root, "beta/SKILL.md", skillMd("beta"))
      yield* eventually("list_changed for beta", Effect.sync(() =>
        messages().filter((message) => message.method === "notifications/resources/list_changed").length > before
          ? true
          : undefined))
      // Not subscribed to beta's files: no resources/updated for them.
      expect(messages().filter((message) => message.method === "notifications/resources/updated")).toHaveLength(1)

      running.child.stdin!.end()
      expect(yield* Effect.promise(() => running.exited)).toBe(0)
    }), { timeout: 60_000 })

  it.live("2026-07-28: a subscriptions/listen stream gets list_changed and resources/updated for its files", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/references/guide.md": guide(1) })
      const { running, url } = yield* httpServer(root, ["--watch"])
      const stream = yield* listen(url, {}, {
        resourcesListChanged: true,
        resourceSubscriptions: ["skill://alpha/references/guide.md"]
      })
      expect(stream.headers.get("x-accel-buffering")).toBe("no")
      write(root, "alpha/references/guide.md", guide(2))
      const methods = () => stream.events().map((message) => message.method)
      yield* poll("updated and list_changed", Effect.sync(() =>
        methods().includes("notifications/resources/updated") && methods().includes("notifications/resources/list_changed")
          ? true
          : undefined
      ))
      const updated = stream.events().find((message) => message.method === "notifications/resources/updated")
      expect(updated.params.uri).toBe("skill://alpha/references/guide.md")
      expect(yield* Effect.promise(() => stop(running))).toBe(0)
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
