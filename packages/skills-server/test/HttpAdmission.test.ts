/**
 * HTTP admission over loopback: the request body limit (declared and chunked bodies, both sides of
 * the limit, a 100 MB upload while other clients keep being answered) and a JSON-RPC error body on
 * every refusal of the endpoint.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpServer } from "effect/ai"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpAdmission, ServerLimits, SkillsServer } from "../src/index.js"
import { examples, httpServer as cliServer } from "./support/cli-server.js"
import { catalogue } from "./support/catalogue.js"
import { errorOf, upload } from "./support/upload.js"
import { adapters, legacyHttp, modernHttp, serveApp, ServerUrl } from "./support/wire.js"

const endpoint = McpServer.layerHttp({
  name: "admission-test",
  version: "1.0.0",
  path: "/mcp",
  protocols: adapters(),
  allowSessionTermination: true,
  registrations: SkillsServer.layer({ skills: catalogue })
})

const server = (options?: HttpAdmission.Options) => serveApp(endpoint.pipe(Layer.provide(HttpAdmission.layer(options))))

const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })

/** A valid 2026-07-28 request padded with JSON whitespace to exactly `size` bytes. */
const paddedDiscover = (size: number) => {
  const message = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "server/discover",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" }
      }
    }
  })
  return new TextEncoder().encode(message + " ".repeat(size - message.length))
}

const discoverHeaders = { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" }

describe("HttpAdmission", () => {
  const limit = 64 * 1024

  layer(server({ maxBodySize: limit }))("a 64 KiB limit", (it) => {
    it.effect("a body of exactly the limit is served, one byte more gets 413 with a JSON-RPC error", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        for (const declareLength of [true, false]) {
          const at = yield* upload(url, { headers: discoverHeaders, chunk: paddedDiscover(limit), count: 1, declareLength })
          assert.strictEqual(at.status, 200, at.text)
          const over = yield* upload(url, { headers: discoverHeaders, chunk: paddedDiscover(limit + 1), count: 1, declareLength })
          assert.strictEqual(over.status, 413)
          const error = errorOf(over)
          assert.strictEqual(error.code, -32600)
          assert.strictEqual(error.data.maxBodySize, limit)
          assert.include(error.message, `${limit} bytes`)
        }
      }))

    it.effect("a declared length over the limit is refused without reading the body", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        // 64 MiB declared; the answer comes while the client is still writing.
        const raw = yield* upload(url, { chunk: new Uint8Array(1024 * 1024), count: 64, declareLength: true })
        assert.strictEqual(raw.status, 413)
        assert.strictEqual(errorOf(raw).code, -32600)
        assert.isBelow(raw.sent, 64 * 1024 * 1024)
      }))

    it.effect("every refusal of the endpoint carries a JSON-RPC error body", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const send = (options: { method?: string; headers?: Record<string, string>; body?: string }) =>
          upload(url, {
            method: options.method,
            headers: options.headers,
            chunk: new TextEncoder().encode(options.body ?? ping(1)),
            count: 1,
            declareLength: true
          })

        const media = yield* send({ headers: { "content-type": "text/plain" } })
        assert.strictEqual(media.status, 415)
        assert.include(errorOf(media).message, "Content-Type must be application/json")

        const accept = yield* send({ headers: { accept: "application/json" } })
        assert.strictEqual(accept.status, 406)
        assert.include(errorOf(accept).message, "Accept must list both application/json and text/event-stream")

        const session = yield* send({ headers: { "mcp-session-id": "made-up", "mcp-protocol-version": "2025-11-25" } })
        assert.strictEqual(session.status, 404)
        assert.deepStrictEqual(errorOf(session), { code: -32001, message: "Session not found" })

        const put = yield* send({ method: "PUT" })
        assert.strictEqual(put.status, 405)
        assert.include(errorOf(put).message, "PUT")
        assert.isDefined(put.headers.allow)

        const origin = yield* send({ headers: { origin: "https://evil.example" } })
        assert.strictEqual(origin.status, 403)
        assert.include(errorOf(origin).message, "https://evil.example")

        const legacy = yield* legacyHttp(url)
        const sessionId = (yield* send({
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
          })
        })).headers["mcp-session-id"] as string
        const batch = yield* send({
          headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
          body: `[${ping(2)},${ping(3)}]`
        })
        assert.strictEqual(batch.status, 400)
        assert.deepStrictEqual(errorOf(batch), { code: -32600, message: "JSON-RPC batches are not accepted here" })

        const deleteWithout = yield* send({ method: "DELETE", body: "" })
        assert.strictEqual(deleteWithout.status, 400)
        assert.include(errorOf(deleteWithout).message, "needs an MCP-Session-Id")
        const deleteMismatch = yield* send({
          method: "DELETE",
          headers: { "mcp-session-id": sessionId, "mcp-protocol-version": "2026-07-28" },
          body: ""
        })
        assert.strictEqual(deleteMismatch.status, 400)
        assert.include(errorOf(deleteMismatch).message, "MCP-Protocol-Version")
        const deleted = yield* send({ method: "DELETE", headers: { "mcp-session-id": sessionId }, body: "" })
        assert.strictEqual(deleted.status, 204)
        assert.strictEqual(deleted.text, "")

        // Answers that were already JSON-RPC keep their own error, and successes are untouched.
        const parse = yield* send({ body: "{not json" })
        assert.strictEqual(errorOf(parse).code, -32700)
        assert.isArray((yield* legacy.call("skills/list")).skills)
        assert.isArray((yield* modernHttp(url).call("skills/list")).skills)
      }))
  })

  layer(server())("the default limit", (it) => {
    it.effect("a 100 MB streamed body gets 413 while other clients keep being answered", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        assert.strictEqual(Number(ServerLimits.MaxBodySize), 4 * 1024 * 1024)
        assert.throws(() => HttpAdmission.layer({ maxBodySize: 0 }), /must be positive/)
        const modern = modernHttp(url)
        const legacy = yield* legacyHttp(url)
        const before = process.memoryUsage()
        const chunk = new Uint8Array(1024 * 1024).fill(0x20)
        const [chunked, declared, answers] = yield* Effect.all([
          upload(url, { chunk, count: 100 }),
          upload(url, { chunk, count: 100, declareLength: true }),
          Effect.forEach(
            Array.from({ length: 20 }, (_, i) => i),
            (i) => Effect.map((i % 2 === 0 ? modern : legacy).call("skills/list"), (result) => result.skills.length),
            { concurrency: 4 }
          )
        ], { concurrency: "unbounded" })
        for (const raw of [chunked, declared]) {
          assert.strictEqual(raw.status, 413)
          assert.strictEqual(errorOf(raw).data.maxBodySize, 4 * 1024 * 1024)
          assert.isBelow(raw.sent, 100 * 1024 * 1024)
        }
        assert.strictEqual(answers.length, 20)
        for (const count of answers) assert.isAbove(count, 0)
        // The server held at most the limit of each body, never the 100 MB.
        const after = process.memoryUsage()
        assert.isBelow(after.arrayBuffers + after.heapUsed - before.arrayBuffers - before.heapUsed, 64 * 1024 * 1024)
        assert.isArray((yield* modern.call("skills/list")).skills)
      }))
  })

  // SkillsServer.layer with no HttpAdmission: its own guard, on every MCP POST of the router only.
  const upload5MiB = HttpRouter.add("POST", "/upload", (request) =>
    Effect.map(Effect.orDie(request.arrayBuffer), (body) => HttpServerResponse.text(String(body.byteLength))))
  const bare = (admission: Layer.Layer<never> | undefined) =>
    serveApp(Layer.mergeAll(admission === undefined ? endpoint : endpoint.pipe(Layer.provide(admission)), upload5MiB))
  const fiveMiB = { chunk: new Uint8Array(1024 * 1024).fill(0x20), count: 5 }
  layer(bare(undefined))("SkillsServer.layer alone", (it) => {
    it.effect("guards MCP POSTs of the router at the default limit, and leaves other POSTs alone", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        for (const declareLength of [true, false]) {
          const mcp = yield* upload(url, { ...fiveMiB, declareLength })
          assert.strictEqual(mcp.status, 413)
          assert.strictEqual(errorOf(mcp).data.maxBodySize, 4 * 1024 * 1024)
          // What an MCP endpoint would read is guarded whatever its path (the guard cannot know the route).
          const shaped = yield* upload(url.replace("/mcp", "/upload"), { ...fiveMiB, declareLength })
          assert.strictEqual(shaped.status, 413)
          const plain = yield* upload(url.replace("/mcp", "/upload"), {
            ...fiveMiB,
            declareLength,
            headers: { accept: "application/json" }
          })
          assert.strictEqual(plain.status, 200)
          assert.strictEqual(plain.text, String(5 * 1024 * 1024))
        }
        assert.isArray((yield* modernHttp(url).call("skills/list")).skills)
      }))
  })
  layer(bare(HttpAdmission.layer({ maxBodySize: "8 MiB" })))("SkillsServer.layer with HttpAdmission", (it) => {
    it.effect("HttpAdmission's limit governs its endpoint: the skills layer adds no guard of its own", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const read = yield* upload(url, { ...fiveMiB, declareLength: true })
        // Read whole (5 MiB of spaces is no JSON): effect's own answer, not a 413.
        assert.strictEqual(read.status, 200, read.text)
        assert.strictEqual(errorOf(read).code, -32700)
        const over = yield* upload(url, { chunk: fiveMiB.chunk, count: 9, declareLength: true })
        assert.strictEqual(over.status, 413)
        assert.strictEqual(errorOf(over).data.maxBodySize, 8 * 1024 * 1024)
      }))
  })

  // effect's endpoint dies when a request ends without a response; whatever fails, the client
  // gets a JSON-RPC body, not an empty 500.
  const failing = HttpRouter.add("POST", "/mcp", Effect.die("endpoint bug")).pipe(
    Layer.provide(HttpAdmission.layer())
  ) as Layer.Layer<unknown, never, unknown>
  layer(serveApp(failing))(
    "a failing endpoint",
    (it) => {
      it.effect("a 500 carries a -32603 JSON-RPC error", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const raw = yield* upload(url, { chunk: new TextEncoder().encode(ping(1)), count: 1, declareLength: true })
          assert.strictEqual(raw.status, 500)
          assert.deepStrictEqual(errorOf(raw), { code: -32603, message: "Internal error" })
        }))
    }
  )

  it.live("serve --max-body-size sets the limit of the command-line server", () =>
    Effect.gen(function*() {
      const { url } = yield* cliServer(examples, ["--max-body-size", "1KiB"])
      const at = yield* upload(url, { headers: discoverHeaders, chunk: paddedDiscover(1024), count: 1, declareLength: true })
      assert.strictEqual(at.status, 200, at.text)
      const over = yield* upload(url, { headers: discoverHeaders, chunk: paddedDiscover(1025), count: 1 })
      assert.strictEqual(over.status, 413)
      assert.strictEqual(errorOf(over).data.maxBodySize, 1024)
    }))
})
