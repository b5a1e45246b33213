/**
 * Streams never go silent, and never grow without bound: a 2026-07-28 `subscriptions/listen`
 * stream told of a bulk change (more files than effect 4.1.0 keeps pending per stream) hears of
 * it, as one `list_changed`, and keeps hearing of later changes file by file; a 2025-11-25 session
 * stream whose reader stops reading is cut once its unread notifications pass `maxPendingBytes`,
 * while a stream read alongside it receives everything.
 */
import { assert, describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { McpServer } from "effect/ai"
import * as http from "node:http"
import { SkillRegistry, SkillsServer } from "../src/index.js"
import { attached } from "../src/internal/effect/port.js"
import type { State } from "../src/internal/surface/request.js"
import { simple } from "./support/fixtures.js"
import { listenEvents, open, poll, sessionEvents } from "./support/session.js"
import { adapters, serveApp, ServerUrl } from "./support/wire.js"

const captured: { registry?: SkillRegistry.SkillRegistry["Service"]; server?: object } = {}
const Capture = Layer.effectDiscard(Effect.gen(function*() {
  captured.registry = yield* SkillRegistry.SkillRegistry
  captured.server = yield* McpServer.McpServer
}))

// What the server logged, to see the line a cut stream leaves.
const logged: Array<string> = []
const Logged = Logger.layer([Logger.make(({ message }) => void logged.push(String(message)))])

const served = (skills: ReadonlyArray<ReturnType<typeof simple>>, sessions?: SkillsServer.SessionOptions) => {
  const registrations = SkillsServer.layer({ skills, sessions })
  return serveApp(McpServer.layerHttp({
    name: "stream-bounds",
    version: "1.0.0",
    path: "/mcp",
    protocols: adapters(),
    registrations: Layer.merge(registrations, Capture.pipe(Layer.provide(registrations)))
  })).pipe(Layer.provide(Logged))
}

const Files = 200
const names = Array.from({ length: Files }, (_, i) => `files/f${i}.md`)
const bulk = (version: (name: string) => string) =>
  [simple("bulk/tree", Object.fromEntries(names.map((name) => [name, `${version(name)}\n`])))]
const uris = names.map((name) => `skill://bulk/tree/${name}`)

/** How many messages `events` holds once none arrived for a while. */
const quiet = (events: () => ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    for (;;) {
      const seen = events().length
      yield* Effect.sleep("300 millis")
      if (events().length === seen) return seen
    }
  })

const ListChanged = "notifications/resources/list_changed"
const Updated = "notifications/resources/updated"

describe("stream bounds", () => {
  layer(served(bulk(() => "v0")), { excludeTestServices: true })("listen", (it) => {
    it.effect(`${Files} files changed at once reach a listen stream; a later change of three arrives file by file`, () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const events = yield* listenEvents(url, {}, { resourcesListChanged: true, resourceSubscriptions: uris })
        yield* captured.registry!.replace(bulk(() => "v1"))
        yield* poll("a list_changed for the bulk change", Effect.sync(() => events().some((event) => event.method === ListChanged) ? true : undefined))
        const afterBulk = yield* quiet(events)
        // Fewer messages than files, none of them a cancellation or the end.
        expect(afterBulk).toBeLessThan(Files)
        yield* captured.registry!.replace(bulk((name) => ["files/f3.md", "files/f7.md", "files/f9.md"].includes(name) ? "v2" : "v1"))
        yield* poll("three updates", Effect.sync(() => events().length >= afterBulk + 4 ? true : undefined))
        const later = events().slice(afterBulk)
        expect(later.filter((event) => event.method === Updated).map((event) => event.params.uri).sort()).toEqual(
          ["skill://bulk/tree/files/f3.md", "skill://bulk/tree/files/f7.md", "skill://bulk/tree/files/f9.md"]
        )
        expect(later.filter((event) => event.method === ListChanged)).toHaveLength(1)
        assert.isFalse(events().some((event) => event.method === "notifications/cancelled" || "result" in event))
      }).pipe(Effect.scoped))

    it.effect(`a listen that did not ask for list_changed gets an update for each of ${Files} files changed at once`, () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const events = yield* listenEvents(url, {}, { resourceSubscriptions: uris })
        yield* captured.registry!.replace(bulk(() => "v3"))
        yield* poll(`${Files} updates`, Effect.sync(() => events().length >= Files ? true : undefined))
        expect(events().map((event) => event.params.uri).sort()).toEqual([...uris].sort())
      }).pipe(Effect.scoped))
  })

  // Long file names make each notification about 1 KB, so a few megabytes of changes fill the
  // socket buffers of the stream nobody reads and then its bound.
  const Long = 100
  const longNames = Array.from({ length: Long }, (_, i) => `${"d".repeat(200)}/${"e".repeat(200)}/${"f".repeat(200)}/${"g".repeat(200)}/n${i}.md`)
  const long = (version: number) => [simple("wide/tree", Object.fromEntries(longNames.map((name) => [name, `${version}\n`])))]
  const longUris = longNames.map((name) => `skill://wide/tree/${name}`)
  const MaxPendingBytes = 256 * 1024
  const Changes = 80

  layer(served(long(0), { maxPendingBytes: MaxPendingBytes }), { excludeTestServices: true })("session streams", (it) => {
    it.effect("a reader that stops reading is cut past maxPendingBytes; a reader alongside it gets every notification", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const subscribed = () =>
          Effect.gen(function*() {
            const session = yield* Effect.promise(() => open(url))
            for (const uri of longUris) {
              const answer = yield* Effect.promise(() => session.subscribe(uri))
              if (answer.body?.result === undefined) return yield* Effect.die(new Error(JSON.stringify(answer.body)))
            }
            return session
          })
        const reading = yield* subscribed()
        const stalled = yield* subscribed()
        const events = yield* sessionEvents(url, reading.id)
        // Held open and never read: the response is paused as soon as its headers arrive.
        const response = yield* Effect.promise(() =>
          new Promise<http.IncomingMessage>((resolve) => {
            http.get(url, {
              headers: { accept: "text/event-stream", "mcp-session-id": stalled.id, "mcp-protocol-version": "2025-11-25" }
            }, (response) => resolve(response.pause()))
          })
        )
        const state = attached<State>(captured.server!)!
        yield* poll("both streams", Effect.map(state.sessions.size, (size) => size.streams === 2 ? true : undefined))
        // The reading client keeps up: each change is read before the next one is made.
        for (let version = 1; version <= Changes; version++) {
          yield* captured.registry!.replace(long(version))
          yield* poll(`change ${version} read`, Effect.sync(() => events.length >= version * (Long + 1) ? true : undefined))
        }
        expect(events.filter((event) => event.method === Updated)).toHaveLength(Changes * Long)
        yield* poll("the stalled stream to be released", Effect.map(state.sessions.size, (size) => size.streams === 1 ? true : undefined))
        expect(logged.filter((line) => line.includes("session stream was cut"))).toHaveLength(1)
        // Read now, the stalled response ends after what the sockets held: the server cut it.
        const received = yield* Effect.promise(() =>
          new Promise<number>((resolve) => {
            let bytes = 0
            response.on("data", (chunk: Buffer) => void (bytes += chunk.length))
            response.on("close", () => resolve(bytes))
            response.resume()
          })
        ).pipe(Effect.timeout("20 seconds"))
        // Each notification is over 1 KB: far less than what the reading stream carried.
        expect(received).toBeLessThan(events.length * 1_000)
        // The stalled session is still a session: it may open its stream again.
        expect((yield* state.sessions.size).sessions).toBe(2)
      }).pipe(Effect.scoped), { timeout: 60_000 })
  })
})
