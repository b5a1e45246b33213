/**
 * Bounds of 2025-11-25 HTTP sessions: a server-wide and a per-client cap on live sessions (an
 * `initialize` past either gets 503, `Retry-After` and a JSON-RPC error, while sessions already
 * open and 2026-07-28 requests keep being answered), and sessions that end (expiry or DELETE) end
 * effect's own record of them too, so open/expire cycles leave the state and the heap flat.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { McpServer } from "effect/ai"
import { HttpRouter } from "effect/http"
import { ServerLimits, SkillsServer } from "../src/index.js"
import { attached } from "../src/internal/effect/port.js"
import type { State } from "../src/internal/surface/request.js"
import * as Sessions from "../src/internal/sessions.js"
import { examples, httpServer as cliServer } from "./support/cli-server.js"
import { simple } from "./support/fixtures.js"
import { settledHeap } from "./support/heap.js"
import { open, post } from "./support/session.js"
import { adapters, modernHttp, serveApp, ServerUrl } from "./support/wire.js"

const skills = [simple("docs/guide", { "references/a.md": "# A\n" })]

// The defaults, as the layer fills them in.
const bounds: Sessions.Bounds = {
  idleTimeout: ServerLimits.SessionIdleTimeout,
  maxSubscriptions: ServerLimits.MaxSubscriptions,
  maxSessions: ServerLimits.MaxSessions,
  maxSessionsPerClient: ServerLimits.MaxSessionsPerClient,
  maxPendingBytes: ServerLimits.MaxPendingBytes
}

// The McpServer and effect's MCP runtime of the server under test, to count what each holds.
interface Runtime {
  readonly resolveRequest: (clientId: number, headers: Record<string, string>) => unknown
}
const captured: Array<{ readonly server: object; readonly runtime: Runtime }> = []
const Capture = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* McpServer.McpServer
  // effect 4.1.0 provides its MCP runtime to a server's registrations under this key.
  const runtime = (yield* Effect.context<never>()).mapUnsafe.get("effect/ai/McpRuntime/ServerRuntime") as Runtime
  captured.push({ server, runtime })
}))

const app = (sessions: SkillsServer.SessionOptions) =>
  McpServer.layerHttp({
    name: "session-bounds",
    version: "1.0.0",
    path: "/mcp",
    allowSessionTermination: true,
    protocols: adapters(),
    registrations: Layer.mergeAll(SkillsServer.layer({ skills, sessions }), Capture)
  })

const held = Effect.suspend(() => attached<State>(captured.at(-1)!.server)!.sessions.size)
const effectHolds = (id: string) => captured.at(-1)!.runtime.resolveRequest(-1, { "mcp-session-id": id }) !== undefined

const initialize = (url: string, id: number) =>
  post(url, {}, {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }
  })

describe("session bounds", () => {
  layer(serveApp(app({ maxSessions: 3, idleTimeout: "30 seconds" })))("the server's cap", (it) => {
    it.effect("past maxSessions: 503, Retry-After, a JSON-RPC error; open sessions and 2026-07-28 are still answered", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const sessions = yield* Effect.promise(() => Promise.all([open(url), open(url), open(url)]))
        const refused = yield* Effect.promise(() => initialize(url, 41))
        expect(refused.status).toBe(503)
        expect(refused.headers.get("retry-after")).toBe("30")
        expect(refused.headers.get("mcp-session-id")).toBeNull()
        expect(refused.body).toMatchObject({
          jsonrpc: "2.0",
          id: 41,
          error: { code: -32000, data: { limit: "maxSessions", max: 3, retryAfterSeconds: 30 } }
        })
        expect(refused.body.error.message).toContain("2026-07-28")
        expect(yield* held).toMatchObject({ sessions: 3 })
        // A session already open, and a sessionless 2026-07-28 client, are answered as before.
        const listed = yield* Effect.promise(() =>
          post(url, sessions[0]!.headers, { jsonrpc: "2.0", id: 7, method: "skills/list", params: {} })
        )
        expect(listed.body.result.skills.map((skill: any) => skill.uri)).toEqual(["skill://docs/guide/SKILL.md"])
        const modern = yield* modernHttp(url).call("skills/list", {})
        expect(modern.skills.map((skill: any) => skill.uri)).toEqual(["skill://docs/guide/SKILL.md"])
        // One session ends: a new one fits again.
        expect(yield* Effect.promise(() => sessions[0]!.close())).toBe(204)
        const again = yield* Effect.promise(() => initialize(url, 42))
        expect(again.status).toBe(200)
        assert.isTrue(effectHolds(again.headers.get("mcp-session-id")!))
        for (const session of sessions.slice(1)) yield* Effect.promise(() => session.close())
        yield* Effect.promise(() => fetch(url, { method: "DELETE", headers: { "mcp-session-id": again.headers.get("mcp-session-id")! } }))
        expect(yield* held).toMatchObject({ sessions: 0 })
      }))
  })

  layer(serveApp(app({ maxSessions: 10, maxSessionsPerClient: 2 })))("a client's cap", (it) => {
    it.effect("past maxSessionsPerClient the same address is refused, and effect keeps no session for it", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const sessions = yield* Effect.promise(() => Promise.all([open(url), open(url)]))
        const refused = yield* Effect.promise(() => initialize(url, "third" as unknown as number))
        expect(refused.status).toBe(503)
        expect(refused.body).toMatchObject({ id: "third", error: { code: -32000, data: { limit: "maxSessionsPerClient", max: 2 } } })
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
        expect(yield* held).toMatchObject({ sessions: 2 })
        for (const session of sessions) expect(yield* Effect.promise(() => session.close())).toBe(204)
        for (const session of sessions) assert.isFalse(effectHolds(session.id))
      }))
  })

  it.live("mcp-skills-server serve --max-sessions-per-client 1 refuses a second session from the same address", () =>
    Effect.gen(function*() {
      const { url } = yield* cliServer(examples, ["--max-sessions-per-client", "1", "--max-sessions", "5"])
      const first = yield* Effect.promise(() => open(url))
      const second = yield* Effect.promise(() => initialize(url, 2))
      expect(second.status).toBe(503)
      expect(second.body.error.data).toMatchObject({ limit: "maxSessionsPerClient", max: 1 })
      expect(yield* Effect.promise(() => first.close())).toBe(204)
      expect((yield* Effect.promise(() => initialize(url, 3))).status).toBe(200)
    }).pipe(Effect.scoped), { timeout: 30_000 })

  // Served in process (effect's web handler: the same router, middleware and MCP runtime as over
  // a socket, without the socket), so that thousands of initialize round trips stay within seconds.
  const Cycles = 5_000
  const Batch = 500
  it.live(`${Cycles} sessions opened over HTTP and expired leave neither the layer nor effect holding any`, () =>
    Effect.gen(function*() {
      const { dispose, handler } = HttpRouter.toWebHandler(
        app({ idleTimeout: "40 millis", maxSessions: Batch * 4, maxSessionsPerClient: Batch * 4 }) as unknown as Layer.Layer<never, never, HttpRouter.HttpRouter>,
        { disableLogger: true }
      )
      yield* Effect.addFinalizer(() => Effect.promise(dispose))
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }
      })
      const ids: Array<string> = []
      const batch = Effect.promise(async () => {
        await Promise.all(Array.from({ length: Batch }, async () => {
          const response = await (handler as (request: Request) => Promise<Response>)(new Request("http://127.0.0.1/mcp", {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body
          }))
          await response.text()
          const id = response.headers.get("mcp-session-id")
          if (id === null) throw new Error(`initialize answered ${response.status}`)
          ids.push(id)
        }))
        // Past the idle timeout: the next batch's requests sweep this one.
        await new Promise((resolve) => setTimeout(resolve, 60))
      })
      for (let done = 0; done < Cycles; done += Batch) yield* batch
      // One more request sweeps the last batch.
      yield* Effect.sleep("60 millis")
      expect(yield* held).toEqual({ sessions: 0, subscriptions: 0, streams: 0 })
      expect(ids.length).toBe(Cycles)
      expect(ids.filter(effectHolds).length).toBe(0)
    }).pipe(Effect.scoped), { timeout: 60_000 })

  it.effect("caps below one are refused when the layer is built", () =>
    Effect.gen(function*() {
      for (const options of [{ maxSessions: 0 }, { maxSessionsPerClient: 0 }, { maxSessions: 1.5 }]) {
        const built = Layer.build(SkillsServer.layer({ skills, sessions: options }).pipe(Layer.provide(McpServer.McpServer.layer)))
        const exit = yield* Effect.exit(Effect.scoped(built))
        assert.isTrue(exit._tag === "Failure" && String(exit.cause).includes("at least 1"), JSON.stringify(options))
      }
    }))

  // 100,000 cycles over HTTP would take minutes on a small machine, so they drive the layer's
  // session code directly: `open` as the middleware calls it when effect creates a session, expiry
  // by the sweep on the next request, and `endEffect` (what ends effect's session) counted; the
  // HTTP test above checks that the same path ends effect's sessions for real.
  it.effect("100,000 open/expire cycles: every session ends, effect's included, with the state and the heap flat", () =>
    Effect.gen(function*() {
      let ended = 0
      const sessions = yield* Sessions.make(
        { ...bounds, idleTimeout: Duration.seconds(1), maxSessions: 2_000, maxSessionsPerClient: 2_000 },
        () => Effect.sync(() => void ended++)
      )
      let next = 0
      const round = Effect.gen(function*() {
        for (let i = 0; i < 1_000; i++) {
          const refused = yield* sessions.open(`session-${next++}`, `10.0.0.${i % 7}`)
          if (refused !== undefined) return yield* Effect.die(new Error(`refused: ${refused}`))
        }
        yield* TestClock.adjust("2 seconds")
      })
      for (let i = 0; i < 5; i++) yield* round
      const before = yield* Effect.promise(settledHeap)
      for (let i = 5; i < 100; i++) yield* round
      expect(yield* sessions.size).toEqual({ sessions: 0, subscriptions: 0, streams: 0 })
      expect(next).toBe(100_000)
      expect(ended).toBe(100_000)
      const after = yield* Effect.promise(settledHeap)
      expect(after / before).toBeLessThan(1.1)
    }).pipe(Effect.scoped), { timeout: 60_000 })
})
