/**
 * Sessions and subscriptions: `resources/subscribe` only
 * for existing, visible resources, with a bounded URI and a per-session cap; a session's
 * subscriptions and streams end with the session (DELETE or idle expiry); unknown session ids get
 * 404 and open no stream; 5,000 sessions that subscribe and disconnect leave nothing behind.
 */
import { assert, describe, expect, layer } from "@effect/vitest"
import { Limits } from "@mcp-skills/core"
import { Effect, Layer } from "effect"
import { McpServer } from "effect/ai"
import { SkillRegistry, SkillsServer } from "../src/index.js"
import { attached } from "../src/internal/effect/port.js"
import type { State } from "../src/internal/surface/request.js"
import { simple } from "./support/fixtures.js"
import { settledHeap } from "./support/heap.js"
import { drained, getStream, open, poll, sessionEvents } from "./support/session.js"
import { adapters, legacyStdio, serveApp, ServerUrl, StdioPipe, stdioServer } from "./support/wire.js"

const skills = [simple("docs/guide", { "references/a.md": "# A\n" }), simple("admin/keys", { "secret.md": "# S\n" })]

// The McpServer the layer attached its state to, so the test can count what the server holds.
const servers: Array<object> = []
const Capture = Layer.effectDiscard(Effect.map(McpServer.McpServer, (server) => void servers.push(server)))

const app = (sessions: SkillsServer.SessionOptions) =>
  serveApp(McpServer.layerHttp({
    name: "sessions-test",
    version: "1.0.0",
    path: "/mcp",
    allowSessionTermination: true,
    protocols: adapters(),
    registrations: Layer.mergeAll(
      SkillsServer.layer({
        skills,
        sessions,
        visibility: ({ headers }) => Effect.succeed(headers["x-user"] === "root" || ((skill) => skill.path[0] !== "admin"))
      }),
      Capture
    )
  }))

const held = Effect.suspend(() => attached<State>(servers.at(-1)!)!.sessions.size)

describe("sessions", () => {
  layer(app({ maxSubscriptions: 3 }))("subscribe", (it) => {
    it.effect("refuses a 1 MB URI, absent and hidden files; keeps visible ones up to the cap", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const session = yield* Effect.promise(() => open(url))
        const huge = `skill://docs/guide/${"a".repeat(1024 * 1024)}.md`
        const long = yield* Effect.promise(() => session.subscribe(huge))
        expect(long.body.error.code).toBe(-32602)
        expect(long.body.error.message).toContain(String(Limits.MaxUriLength))
        expect(JSON.stringify(long.body).length).toBeLessThan(2048)
        const absent = yield* Effect.promise(() => session.subscribe("skill://docs/guide/missing.md"))
        const hidden = yield* Effect.promise(() => session.subscribe("skill://admin/keys/secret.md"))
        expect(absent.body.error).toEqual({ code: -32602, message: "Resource not found", data: { uri: "skill://docs/guide/missing.md" } })
        expect(hidden.body.error).toEqual({ code: -32602, message: "Resource not found", data: { uri: "skill://admin/keys/secret.md" } })
        expect((yield* held).subscriptions).toBe(0)
        // The same file is visible to root.
        expect((yield* Effect.promise(() => session.subscribe("skill://admin/keys/secret.md", { "x-user": "root" }))).body.result).toEqual({})
        for (const uri of ["skill://docs/guide/SKILL.md", "skill://docs/guide/references/a.md"]) {
          expect((yield* Effect.promise(() => session.subscribe(uri))).body.result).toEqual({})
        }
        // Again: not a new subscription, so not over the cap.
        expect((yield* Effect.promise(() => session.subscribe("skill://docs/guide/SKILL.md"))).body.result).toEqual({})
        const over = yield* Effect.promise(() => session.subscribe("skill://admin/keys/SKILL.md", { "x-user": "root" }))
        expect(over.body.error.code).toBe(-32602)
        expect(over.body.error.message).toContain("3 subscriptions")
        expect((yield* held).subscriptions).toBe(3)
        expect(yield* Effect.promise(() => session.close())).toBe(204)
        expect(yield* held).toEqual({ sessions: 0, subscriptions: 0, streams: 0 })
      }))

    it.effect("after DELETE the GET stream closes and the id gets 404; made-up ids open no stream", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const session = yield* Effect.promise(() => open(url))
        const stream = yield* Effect.promise(() => getStream(url, session.id))
        expect(stream.status).toBe(200)
        expect((yield* held).streams).toBe(1)
        expect(yield* Effect.promise(() => session.close())).toBe(204)
        assert.isTrue(yield* drained(stream))
        expect((yield* Effect.promise(() => getStream(url, session.id))).status).toBe(404)
        expect((yield* Effect.promise(() => session.subscribe("skill://docs/guide/SKILL.md"))).status).toBe(404)
        const madeUp = yield* Effect.promise(() => getStream(url, "00000000-0000-4000-8000-000000000000"))
        expect(madeUp.status).toBe(404)
        yield* Effect.promise(() => madeUp.body?.cancel() ?? Promise.resolve())
        yield* poll("the stream to be released", Effect.map(held, (size) => size.streams === 0 ? true : undefined))
        expect(yield* held).toEqual({ sessions: 0, subscriptions: 0, streams: 0 })
      }))
  })

  // A live clock: the idle sweep runs on real time here.
  layer(app({ idleTimeout: "400 millis" }), { excludeTestServices: true })("idle expiry", (it) => {
    it.effect("an idle session ends: its subscriptions go, its id gets 404; an open stream keeps it alive", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const idle = yield* Effect.promise(() => open(url))
        const streaming = yield* Effect.promise(() => open(url))
        expect((yield* Effect.promise(() => idle.subscribe("skill://docs/guide/SKILL.md"))).body.result).toEqual({})
        const abort = new AbortController()
        const stream = yield* Effect.promise(() => getStream(url, streaming.id, abort.signal))
        expect(stream.status).toBe(200)
        yield* poll("the idle session to expire", Effect.map(held, (size) => size.sessions === 1 ? true : undefined))
        expect(yield* held).toEqual({ sessions: 1, subscriptions: 0, streams: 1 })
        expect((yield* Effect.promise(() => idle.subscribe("skill://docs/guide/SKILL.md"))).status).toBe(404)
        abort.abort()
        yield* poll("the streaming session to expire once its stream closed", Effect.map(held, (size) => size.sessions === 0 ? true : undefined))
      }))
  })

  layer(stdioServer(SkillsServer.layer({ skills })))("stdio", (it) => {
    it.effect("2025-11-25 stdio: absent files and over-long URIs are refused, existing files are subscribed", () =>
      Effect.gen(function*() {
        const client = yield* legacyStdio(yield* StdioPipe)
        expect(yield* client.fail("resources/subscribe", { uri: "skill://docs/guide/missing.md" })).toEqual({
          code: -32602,
          message: "Resource not found",
          data: { uri: "skill://docs/guide/missing.md" }
        })
        expect((yield* client.fail("resources/subscribe", { uri: `skill://docs/${"a".repeat(Limits.MaxUriLength)}` })).code)
          .toBe(-32602)
        expect(yield* client.call("resources/subscribe", { uri: "skill://docs/guide/references/a.md" })).toEqual({})
      }))
  })

  const registries: Array<SkillRegistry.SkillRegistry["Service"]> = []
  const watched = SkillsServer.layer({
    skills,
    visibility: ({ headers }) => Effect.succeed(headers["x-user"] === "root" || ((skill) => skill.path[0] !== "admin"))
  })
  const WithRegistry = Layer.effectDiscard(Effect.map(SkillRegistry.SkillRegistry, (registry) => void registries.push(registry)))
    .pipe(Layer.provideMerge(watched))
  layer(serveApp(McpServer.layerHttp({ name: "t", version: "1", path: "/mcp", protocols: adapters(), registrations: WithRegistry })))(
    "visibility of notifications",
    (it) => {
      it.effect("a session stream tells nothing about a skill its session cannot see", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const listen = (user: string) =>
            Effect.gen(function*() {
              const session = yield* Effect.promise(() => open(url))
              const subscribed = yield* Effect.promise(() => session.subscribe("skill://docs/guide/references/a.md", { "x-user": user }))
              expect(subscribed.body.result).toEqual({})
              return yield* sessionEvents(url, session.id)
            })
          const guest = yield* listen("guest")
          const root = yield* listen("root")
          const registry = registries.at(-1)!
          // Only the hidden skill changes: root hears of it, the guest hears nothing.
          yield* registry.replace([skills[0]!, simple("admin/keys", { "secret.md": "# S2\n" })])
          // Then a visible file changes: both hear of it, and it is the guest's first event.
          yield* registry.replace([simple("docs/guide", { "references/a.md": "# A2\n" }), simple("admin/keys", { "secret.md": "# S2\n" })])
          yield* poll("root's three events", Effect.sync(() => root.length >= 3 ? true : undefined))
          yield* poll("the guest's two events", Effect.sync(() => guest.length >= 2 ? true : undefined))
          expect(root.map((event) => event.method)).toEqual([
            "notifications/resources/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/updated"
          ])
          expect(guest).toEqual([
            { jsonrpc: "2.0", method: "notifications/resources/list_changed", params: {} },
            { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "skill://docs/guide/references/a.md" } }
          ])
        }).pipe(Effect.scoped))
    }
  )

  const Sessions = 5_000
  const Concurrency = 16
  layer(app({}))("many sessions", (it) => {
    it.effect(`${Sessions} sessions that subscribe and disconnect leave no per-session state and a flat heap`, () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const cycle = (n: number) =>
          Effect.promise(async () => {
            const session = await open(url)
            const subscribed = await session.subscribe(n % 2 === 0 ? "skill://docs/guide/SKILL.md" : "skill://docs/guide/references/a.md")
            if (subscribed.body?.result === undefined) throw new Error(`subscribe failed: ${JSON.stringify(subscribed.body)}`)
            const status = await session.close()
            if (status !== 204) throw new Error(`DELETE answered ${status}`)
          })
        // Warm up (code paths, connection pool) before the heap is measured.
        yield* Effect.forEach(Array.from({ length: 200 }, (_, i) => i), cycle, { concurrency: Concurrency, discard: true })
        const before = yield* Effect.promise(settledHeap)
        yield* Effect.forEach(Array.from({ length: Sessions }, (_, i) => i), cycle, { concurrency: Concurrency, discard: true })
        expect(yield* held).toEqual({ sessions: 0, subscriptions: 0, streams: 0 })
        const after = yield* Effect.promise(settledHeap)
        expect(after / before).toBeLessThan(1.1)
      }), { timeout: 240_000 })
  })
})
