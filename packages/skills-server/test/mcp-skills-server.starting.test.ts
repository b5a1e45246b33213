/**
 * The command line's HTTP listener between listening and serving. Effect's Node server listens
 * before the routes exist (they need its address), and building them takes the registry's first
 * snapshot, the watcher, the bus: a request accepted meanwhile reached no handler and was held for
 * good (a sync reconnecting to a restarted server waited out its timeout). Here the first snapshot
 * is held open on purpose: every request in that window, /metrics included, is answered 503 with
 * Retry-After at once, and served once the server is ready.
 */
import { assert, describe, it } from "@effect/vitest"
import { NodeServices } from "@effect/platform-node"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Net from "node:net"
import * as Serve from "../src/bin/serve.js"
import * as DirectorySource from "../src/DirectorySource.js"
import { examples } from "./support/cli-server.js"

// A loopback port nothing listens on (found by listening on port 0, then closing).
const freePort = Effect.callback<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const port = (probe.address() as Net.AddressInfo).port
    probe.close(() => resume(Effect.succeed(port)))
  })
})

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "starting-test", version: "1" } }
})

// One request, answered within 5 s or failed: a held request is the defect under test.
const ask = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(5_000) })
    const body = await response.text()
    return { status: response.status, retryAfter: response.headers.get("retry-after"), body }
  })

const post = (url: string) =>
  ask(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: initialize
  })

// Waits until the port accepts connections (refused until the server listens).
const untilOpen = (url: string) =>
  Effect.promise(async () => {
    for (let tries = 0; tries < 500; tries++) {
      const connected = await new Promise<boolean>((resolve) => {
        const socket = Net.connect(Number(new URL(url).port), "127.0.0.1")
        socket.once("connect", () => (socket.destroy(), resolve(true)))
        socket.once("error", () => resolve(false))
      })
      if (connected) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    throw new Error(`${url} never opened`)
  })

describe("mcp-skills-server serve: between listening and serving", () => {
  it.live("every request is answered 503 with Retry-After at once, /metrics too; then served", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      const url = `http://127.0.0.1:${port}/mcp`
      const gate = yield* Deferred.make<void>()
      const listening = yield* Deferred.make<string>()
      const source = yield* DirectorySource.make([{ path: examples, prefix: [] }], { log: () => Effect.void })
      // The registry's first snapshot waits for the gate: the server listens, and is not ready.
      const held = { ...source, definitions: Effect.andThen(Deferred.await(gate), source.definitions) }
      const server = yield* Layer.build(Serve.http(held, {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        protocols: [],
        allowedOrigins: [],
        metrics: true,
        onListening: (announced) => Deferred.succeed(listening, announced).pipe(Effect.asVoid)
      })).pipe(Effect.forkScoped)

      yield* untilOpen(url)
      for (let i = 0; i < 3; i++) {
        const answer = yield* post(url)
        assert.strictEqual(answer.status, 503)
        assert.strictEqual(answer.retryAfter, "1")
      }
      const metrics = yield* ask(url.replace(/\/mcp$/, "/metrics"))
      assert.deepStrictEqual([metrics.status, metrics.retryAfter], [503, "1"])
      assert.isFalse(yield* Deferred.isDone(listening), "not announced while not serving")

      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Deferred.await(listening), url)
      const served = yield* post(url)
      assert.strictEqual(served.status, 200)
      assert.include(served.body, "io.modelcontextprotocol/skills")
      assert.strictEqual((yield* ask(url.replace(/\/mcp$/, "/metrics"))).status, 200)
      yield* Fiber.join(server)
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)), 30_000)
})
