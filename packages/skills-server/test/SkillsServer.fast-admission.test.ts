/**
 * The fast route's admission (`internal/fastAdmission.ts`) as a pure predicate, checked against
 * effect's own answers: every request it admits, effect's route (the server without the fast
 * route) admits and dispatches to the skills handlers too (HTTP 200 with a JSON-RPC result or
 * handler error for that id), across generated mutations of well-formed requests. Whether each
 * refused one gets effect's answer is `SkillsServer.fast-route.test.ts`'s job, rule by rule.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Net from "node:net"
import * as FastAdmission from "../src/internal/fastAdmission.js"
import { exchange, MaxBody, meta, Twins, twins, wellFormed } from "./support/twins.js"

const endpoint: FastAdmission.Endpoint = { protocolVersion: "2026-07-28", directoryRead: true, maxBody: MaxBody }

const requests = [
  wellFormed("skills/list", {}),
  wellFormed("skills/list", { cursor: "garbage" }),
  wellFormed("skills/get", { uri: "skill://pdf-processing/SKILL.md" }),
  wellFormed("skills/get", { uri: "skill://nope/SKILL.md" }, "an-id"),
  wellFormed("resources/read", { uri: "skill://pdf-processing/templates/invoice.md" }),
  wellFormed("resources/directory/read", { uri: "skill://acme/billing/refunds/references" })
]

// Each mutation changes one thing effect's admission looks at (or something it ignores).
const headerMutations: ReadonlyArray<(headers: Record<string, string>) => Record<string, string>> = [
  (h) => h,
  (h) => ({ ...h, origin: "https://evil.example" }),
  (h) => ({ ...h, "content-type": "application/json; charset=utf-8" }),
  (h) => ({ ...h, "content-type": "application/json;q=1" }),
  (h) => ({ ...h, "content-type": "text/plain, application/json" }),
  (h) => ({ ...h, accept: "application/json" }),
  (h) => ({ ...h, accept: "text/event-stream, application/json" }),
  (h) => ({ ...h, accept: "application/json, text/event-stream;q=0" }),
  (h) => ({ ...h, "mcp-session-id": "nope" }),
  (h) => ({ ...h, "mcp-protocol-version": "2025-11-25" }),
  (h) => ({ ...h, "mcp-method": "tools/list" }),
  (h) => ({ ...h, "mcp-method": "skills/get" }),
  (h) => ({ ...h, "mcp-name": "skill://pdf-processing/SKILL.md" }),
  (h) => ({ ...h, "x-unrelated": "1" })
]

const bodyMutations: ReadonlyArray<(message: Record<string, any>) => unknown> = [
  (m) => m,
  (m) => ({ ...m, id: null }),
  (m) => ({ ...m, id: 1.5 }),
  (m) => ({ ...m, id: undefined }),
  (m) => ({ ...m, jsonrpc: "1.0" }),
  (m) => ({ ...m, result: {} }),
  (m) => ({ ...m, params: [m.params] }),
  (m) => ({ ...m, params: { ...m.params, _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "2025-11-25" } } }),
  (m) => ({ ...m, params: { ...m.params, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } }),
  (m) => ({ ...m, params: { ...m.params, uri: 5 } }),
  (m) => ({ ...m, params: { ...m.params, cursor: 1 } }),
  (m) => [m]
]

const lengthOf = (body: string) => String(Buffer.byteLength(body))

describe("fast route admission", () => {
  layer(twins())((it) => {
    it.effect("admits only what effect's route admits and dispatches", () =>
      Effect.gen(function*() {
        const { off } = yield* Twins
        let admitted = 0
        for (const request of requests) {
          for (const headersOf of headerMutations) {
            for (const bodyOf of bodyMutations) {
              const message = bodyOf(JSON.parse(request.body))
              const body = JSON.stringify(message)
              const headers = headersOf(request.headers)
              const admits = FastAdmission.admitsHeaders(endpoint, { ...headers, "content-length": lengthOf(body) }) &&
                FastAdmission.admitsMessage(headers, message) !== undefined
              if (!admits) continue
              admitted++
              const answer = yield* exchange(off, headers, body)
              const reply = answer.body as { readonly id?: unknown; readonly result?: unknown; readonly error?: { code: number } }
              assert.strictEqual(answer.status, 200, `${body} with ${JSON.stringify(headers)}`)
              assert.strictEqual(reply.id, (message as { id: unknown }).id)
              // effect's admission refusals are -32600/-32020/-32022/-32601/-32700; a handler's are -32602.
              assert.isTrue(reply.result !== undefined || reply.error?.code === -32602, JSON.stringify(reply))
            }
          }
        }
        // The well-formed requests (and the harmless mutations) are admitted.
        assert.isAtLeast(admitted, requests.length * 3)
      }))
  })

  layer(twins())((it) => {
    it.effect("a body read by the route and then left to effect is effect's to read again; a body cut short leaves the server answering", () =>
      Effect.gen(function*() {
        const { on, reached } = yield* Twins
        const request = requests[2]!
        // Twice: the first teaches the route the endpoint through effect.
        yield* exchange(on, request.headers, request.body)
        const before = reached.count
        assert.strictEqual((yield* exchange(on, request.headers, request.body)).status, 200)
        // Admitted by its headers, read, then refused by what it says (a batch): effect reads the
        // same body from its cache and answers it.
        const batch = `[${request.body}]`
        const left = yield* exchange(on, { ...request.headers, "content-length": lengthOf(batch) }, batch)
        assert.notStrictEqual(left.status, 500)
        assert.isAbove(reached.count, before)
        // Headers saying 100 bytes, 10 sent, then the connection closed.
        const url = new URL(on)
        yield* Effect.promise(() =>
          new Promise<void>((resolve) => {
            const socket = Net.connect(Number(url.port), url.hostname, () => {
              const head = Object.entries({ ...request.headers, host: url.host, "content-length": "100" })
                .map(([name, value]) => `${name}: ${value}`).join("\r\n")
              socket.end(`POST ${url.pathname} HTTP/1.1\r\n${head}\r\n\r\n${request.body.slice(0, 10)}`)
            })
            socket.on("close", () => resolve())
            socket.on("error", () => resolve())
            socket.resume()
          })
        )
        const after = yield* exchange(on, request.headers, request.body)
        assert.strictEqual(after.status, 200)
        assert.deepStrictEqual((after.body as { result?: unknown }).result !== undefined, true)
      }))
  })

  describe("refuses without reading the body", () => {
    const h = requests[0]!.headers
    const length = { "content-length": "100" }
    for (
      const [what, headers] of [
        ["a chunked body", { ...h, "transfer-encoding": "chunked" }],
        ["no Content-Length", h],
        ["a body over the bound", { ...h, "content-length": String(MaxBody + 1) }],
        ["resources/directory/read where it is not served", { ...h, ...length, "mcp-method": "resources/directory/read" }]
      ] as const
    ) {
      it(what, () => {
        const served = what.startsWith("resources/directory") ? { ...endpoint, directoryRead: false } : endpoint
        assert.isFalse(FastAdmission.admitsHeaders(served, headers as Record<string, string>))
      })
    }
  })
})
