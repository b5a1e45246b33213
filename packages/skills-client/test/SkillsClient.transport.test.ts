// The one 2026-07-28 HTTP sender (`HttpSend.make`), its bytes moved through HttpClient or over a
// node:http agent, must keep the wire behaviour and the errors of effect's `McpClient.http` it
// stands in for: headers, JSON and SSE answers, envelope checks, HTTP errors with their JSON-RPC
// code, the message size limit. Every case runs against both ways and against effect's own.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as McpClient from "effect/ai/McpClient"
import type { McpClientError } from "effect/ai/McpClientError"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpSend from "../src/internal/httpSend.js"
import * as Transport from "../src/internal/transport.js"
import { ClientLimits } from "@mcp-skills/client"
import { versions, withClient } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

interface Seen {
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Record<string, unknown>
}

type Answer = (request: Record<string, unknown>, res: Http.ServerResponse) => void

const server = (answer: Answer) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; seen: Array<Seen>; close: () => Promise<void> }>((resolve) => {
        const seen: Array<Seen> = []
        const http = Http.createServer((req, res) => {
          let text = ""
          req.on("data", (chunk: Buffer) => (text += chunk.toString()))
          req.on("end", () => {
            const body = JSON.parse(text) as Record<string, unknown>
            seen.push({ headers: req.headers, body })
            answer(body, res)
          })
        })
        http.listen(0, "127.0.0.1", () => {
          const { port } = http.address() as AddressInfo
          resolve({ url: `http://127.0.0.1:${port}/mcp`, seen, close: () => new Promise((done) => http.close(() => done())) })
        })
      })
    ),
    (s) => Effect.promise(() => s.close())
  )

const json = (res: Http.ServerResponse, value: unknown, status = 200) => {
  const body = typeof value === "string" ? value : JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

// An answer of any status, headers and body (made from the request's id).
const raw = (status: number, headers: Http.OutgoingHttpHeaders, body: (id: unknown) => string) =>
  server((request, res) => {
    res.writeHead(status, headers)
    res.end(body(request.id))
  })

const event = (message: unknown) => `data: ${JSON.stringify(message)}\n\n`

type Sender = "HttpClient" | "agent" | "McpClient.http"

const ours = (url: string, way: "HttpClient" | "agent", maxMessageBytes: number, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const post = way === "agent" ? yield* HttpSend.viaAgent(url, 2) : HttpSend.viaHttpClient(yield* HttpClient.HttpClient, url)
    return yield* HttpSend.make(post, { headers: Effect.succeed(headers), maxMessageBytes })
  })

// Every case runs against effect's own transport too, so the two cannot drift apart.
const sendWith = (sender: Sender) => (url: string, params: Record<string, unknown>, maxMessageBytes = 1024 * 1024) =>
  Effect.gen(function*() {
    const headers = { "x-extra": "1" }
    const send: Transport.Send = sender === "McpClient.http"
      ? (yield* McpClient.http({ url, headers, maxMessageBytes, protocol: McpProtocol.v2026_07_28 })).request
      : yield* ours(url, sender, maxMessageBytes, headers)
    return yield* send({ jsonrpc: "2.0", id: "skills:1", method: "resources/read", params })
  }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))

const reasonOf = (error: McpClientError) => error.reason as unknown as Record<string, unknown> & { readonly _tag: string }

describe.each(["HttpClient", "agent", "McpClient.http"] as const)("%s (2026-07-28 over HTTP)", (sender) => {
  const send = sendWith(sender)
  it.live("sends McpClient's headers and answers a JSON response", () =>
    Effect.gen(function*() {
      const s = yield* server((request, res) => json(res, { jsonrpc: "2.0", id: request.id, result: { contents: [] } }))
      const response = yield* send(s.url, { uri: "skill://caf\u00e9/SKILL.md" })
      assert.deepStrictEqual(response, { jsonrpc: "2.0", id: "skills:1", result: { contents: [] } })
      const headers = s.seen[0]!.headers
      assert.strictEqual(headers["mcp-method"], "resources/read")
      // Not plain ASCII: base64 in the sentinel, as McpClient sends it.
      assert.strictEqual(headers["mcp-name"], `=?base64?${Buffer.from("skill://caf\u00e9/SKILL.md").toString("base64")}?=`)
      assert.strictEqual(headers["mcp-protocol-version"], "2026-07-28")
      assert.strictEqual(headers["accept"], "application/json, text/event-stream")
      assert.strictEqual(headers["x-extra"], "1")
      assert.match(String(headers["content-type"]), /^application\/json/)
    }))

  it.live("takes the response from an SSE answer, skipping notifications", () =>
    Effect.gen(function*() {
      const s = yield* server((request, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: {} })}\n\n`)
        res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { ok: true } })}\n\n`)
      })
      const response = yield* send(s.url, { uri: "skill://a/SKILL.md" })
      assert.deepStrictEqual(response, { jsonrpc: "2.0", id: "skills:1", result: { ok: true } })
    }))

  it.live("an HTTP error status carries the JSON-RPC code of its body", () =>
    Effect.gen(function*() {
      const s = yield* server((request, res) =>
        json(res, { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "Method not found" } }, 404)
      )
      const error = yield* Effect.flip(send(s.url, { uri: "skill://a/SKILL.md" }))
      const reason = reasonOf(error)
      assert.strictEqual(reason._tag, "HttpError")
      assert.strictEqual(reason.status, 404)
      assert.strictEqual(reason.code, -32601)
      assert.strictEqual(Transport.errorCode(error), -32601)
    }))

  it.live("refuses what McpClient's envelope schema refuses", () =>
    Effect.gen(function*() {
      const answers: Array<[string, (id: unknown) => unknown]> = [
        ["Invalid MCP JSON", () => "{not json"],
        ["Invalid JSON-RPC message", (id) => ({ jsonrpc: "2.0", id, result: {}, extra: 1 })],
        ["Invalid JSON-RPC message", (id) => ({ jsonrpc: "1.0", id, result: {} })],
        ["Invalid JSON-RPC message", (id) => ({ jsonrpc: "2.0", id, error: { code: 1.5, message: "x" } })],
        ["HTTP MCP response id does not match its request", () => ({ jsonrpc: "2.0", id: "other", result: {} })]
      ]
      for (const [description, body] of answers) {
        const s = yield* server((request, res) => json(res, body(request.id)))
        const error = yield* Effect.flip(send(s.url, { uri: "skill://a/SKILL.md" }))
        assert.strictEqual(reasonOf(error)._tag, "ProtocolError", description)
        assert.strictEqual(reasonOf(error).description, description)
      }
    }))

  it.live("a JSON-RPC error without an id is the answer", () =>
    Effect.gen(function*() {
      const s = yield* server((_, res) => json(res, { jsonrpc: "2.0", id: null, error: { code: -32602, message: "bad" } }))
      const response = yield* send(s.url, { uri: "skill://a/SKILL.md" })
      assert.deepStrictEqual(response, { jsonrpc: "2.0", id: null, error: { code: -32602, message: "bad" } } as never)
    }))

  it.live("answers over maxMessageBytes fail with LimitError, declared or chunked", () =>
    Effect.gen(function*() {
      const big = (id: unknown) => JSON.stringify({ jsonrpc: "2.0", id, result: { text: "x".repeat(4096) } })
      const declared = yield* server((request, res) => json(res, big(request.id)))
      const chunked = yield* server((request, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(big(request.id))
      })
      for (const s of [declared, chunked]) {
        const error = yield* Effect.flip(send(s.url, { uri: "skill://a/SKILL.md" }, 1024))
        assert.strictEqual(reasonOf(error)._tag, "LimitError")
      }
      // Within the limit, the chunked answer is read in full.
      const response = yield* send(chunked.url, { uri: "skill://a/SKILL.md" }, 1024 * 1024)
      assert.strictEqual(((response as { result: { text: string } }).result.text).length, 4096)
    }))

  it.live("202 without a body is not an answer", () =>
    Effect.gen(function*() {
      const s = yield* server((_, res) => {
        res.writeHead(202)
        res.end()
      })
      const error = yield* Effect.flip(send(s.url, { uri: "skill://a/SKILL.md" }))
      assert.strictEqual(reasonOf(error)._tag, "ProtocolError")
      assert.strictEqual(reasonOf(error).description, "MCP request received no response")
    }))
})

describe.each(["HttpClient", "agent"] as const)("the one sender, bytes through %s", (way) => {
  const send = (url: string, maxMessageBytes = 1024 * 1024) =>
    Effect.gen(function*() {
      const sender = yield* ours(url, way, maxMessageBytes)
      return yield* sender({ jsonrpc: "2.0", id: "skills:1", method: "resources/read", params: { uri: "skill://a/SKILL.md" } })
    }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))

  it.live("an SSE stream left open after its response is answered, not waited on", () =>
    Effect.gen(function*() {
      const open: Array<Http.ServerResponse> = []
      const s = yield* server((request, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { ok: true } })}\n\n`)
        open.push(res)
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => open.forEach((res) => res.destroy())))
      const response = yield* send(s.url).pipe(Effect.timeout("10 seconds"))
      assert.deepStrictEqual(response, { jsonrpc: "2.0", id: "skills:1", result: { ok: true } })
    }).pipe(Effect.scoped))

  it.live("an SSE body that ends without a response is a TransportError", () =>
    Effect.gen(function*() {
      const s = yield* raw(200, { "content-type": "text/event-stream" }, () => event({ jsonrpc: "2.0", method: "notifications/progress", params: {} }))
      const error = yield* Effect.flip(send(s.url))
      assert.strictEqual(reasonOf(error)._tag, "TransportError")
      assert.strictEqual(reasonOf(error).description, "MCP response ended before the terminal response")
    }))

  it.live("an SSE event over maxMessageBytes is a LimitError", () =>
    Effect.gen(function*() {
      const s = yield* raw(200, { "content-type": "text/event-stream" }, (id) => event({ jsonrpc: "2.0", id, result: { text: "x".repeat(4096) } }))
      const error = yield* Effect.flip(send(s.url, 1024))
      assert.strictEqual(reasonOf(error)._tag, "LimitError")
    }))

  it.live("an answer of another content type is refused unread", () =>
    Effect.gen(function*() {
      const s = yield* raw(200, { "content-type": "text/html" }, () => "<html></html>")
      const error = yield* Effect.flip(send(s.url))
      assert.strictEqual(reasonOf(error)._tag, "ProtocolError")
      assert.strictEqual(reasonOf(error).description, "Unsupported MCP response Content-Type")
    }))

  it.live("an HTTP error without a JSON body, or with one over the limit, is an HttpError without a code", () =>
    Effect.gen(function*() {
      const plain = yield* raw(503, { "content-type": "text/plain", "retry-after": "7" }, () => "busy")
      const huge = yield* server((request, res) =>
        json(res, { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "x".repeat(4096) } }, 404)
      )
      const busy = reasonOf(yield* Effect.flip(send(plain.url)))
      assert.strictEqual(busy._tag, "HttpError")
      assert.strictEqual(busy.status, 503)
      assert.strictEqual(busy.code, undefined)
      assert.strictEqual(busy.retryAfter, "7")
      const large = reasonOf(yield* Effect.flip(send(huge.url, 1024)))
      assert.strictEqual(large._tag, "HttpError")
      assert.strictEqual(large.status, 404)
      assert.strictEqual(large.code, undefined)
    }))
})

describe("the node:http agent", () => {
  it.live("never has more requests in flight than its agent's sockets; the rest wait and are answered", () =>
    Effect.gen(function*() {
      let inFlight = 0
      let most = 0
      const held: Array<() => void> = []
      let quiet: ReturnType<typeof setTimeout> | undefined
      const s = yield* server((request, res) => {
        inFlight++
        most = Math.max(most, inFlight)
        // Held until 50 ms pass without a new request, so a sender over its bound shows in `most`
        // (a correct one can never exceed it, however slow the machine).
        held.push(() => {
          inFlight--
          json(res, { jsonrpc: "2.0", id: request.id, result: { contents: [] } })
        })
        clearTimeout(quiet)
        quiet = setTimeout(() => held.splice(0).forEach((answer) => answer()), 50)
      })
      const send = yield* HttpSend.make(yield* HttpSend.viaAgent(s.url, 2), { headers: Effect.succeed({}), maxMessageBytes: 1024 })
      const answers = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) => send({ jsonrpc: "2.0", id: `skills:${i}`, method: "resources/read", params: { uri: `skill://a/${i}.md` } }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(answers.length, 8)
      assert.strictEqual(most, 2)
    }).pipe(Effect.scoped))
})

describe("the largest message follows the per-skill byte limit (ClientLimits.maxMessageBytes)", () => {
  // An answer past the bound is refused as it arrives; within it, it is read whole and checked.
  const limits = { maxResources: 512, maxTotalBytes: 1024 }
  const padding = { uri: Tamper.InvoiceUri, bytes: ClientLimits.maxMessageBytes(limits) }
  const read = (url: string, options: Parameters<typeof withClient>[2]) =>
    Effect.flip(withClient(url, (c) =>
      Effect.gen(function*() {
        const { skill } = yield* c.getSkill(Tamper.SkillUri)
        return yield* c.readSkillResource(skill, "templates/invoice.md")
      }), options))

  for (const protocolVersion of versions) {
    for (const readTransport of ["HttpClient", "lean"] as const) {
      it.live(`a file's answer past it is a LimitError; the same under the default limits is read and refused by size (${protocolVersion}, ${readTransport})`, () =>
        Effect.gen(function*() {
          const s = yield* Effect.acquireRelease(Effect.promise(() => Tamper.start({ padding })), (s) => Effect.promise(s.close))
          const bounded = yield* read(s.url, { protocolVersion, readTransport, limits })
          assert.strictEqual(bounded._tag, "McpClientError")
          assert.strictEqual(reasonOf(bounded as McpClientError)._tag, "LimitError")
          const unbounded = yield* read(s.url, { protocolVersion, readTransport })
          assert.strictEqual(unbounded._tag, "SizeMismatch")
        }).pipe(Effect.scoped))
    }
  }
})
