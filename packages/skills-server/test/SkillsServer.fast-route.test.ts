/**
 * The fast route: a well-formed stateless 2026-07-28 read of a static skill is
 * answered without reaching effect's route, and every admission rule effect's route applies
 * (listed in `internal/fastRoute.ts`) still applies: a request breaking one gets exactly the
 * answer the server without the fast route gives, because it goes to effect.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpServer } from "effect/ai"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { SkillsServer, Visibility } from "../src/index.js"
import { simple } from "./support/fixtures.js"
import type { Counter } from "./support/twins.js"
import { counting, exchange, MaxBody, meta, Twins, twins, wellFormed } from "./support/twins.js"
import { adapters, serveApp, ServerUrl } from "./support/wire.js"

const both = (headers: Record<string, string>, body: string) =>
  Effect.gen(function*() {
    const { off, on, reached } = yield* Twins
    const before = reached.count
    const fast = yield* exchange(on, headers, body)
    const fell = reached.count > before
    const slow = yield* exchange(off, headers, body)
    return { fast, slow, fell }
  })

/** Same status, content type and JSON body on both servers, and whether effect's route answered. */
const same = (headers: Record<string, string>, body: string) =>
  Effect.gen(function*() {
    const { fast, fell, slow } = yield* both(headers, body)
    assert.deepStrictEqual(fast, slow)
    return { answer: fast, fell }
  })

const valid = {
  list: wellFormed("skills/list", {}),
  get: wellFormed("skills/get", { uri: "skill://pdf-processing/SKILL.md" }),
  read: wellFormed("resources/read", { uri: "skill://pdf-processing/templates/invoice.md" }),
  directory: wellFormed("resources/directory/read", { uri: "skill://acme/billing/refunds/references" })
}

describe("fast route", () => {
  layer(twins())((it) => {
    it.effect("answers well-formed reads of static skills itself, with effect's answer", () =>
      Effect.gen(function*() {
        // The first request on the endpoint teaches the route its path.
        yield* same(valid.list.headers, valid.list.body)
        for (const request of Object.values(valid)) {
          const { answer, fell } = yield* same(request.headers, request.body)
          assert.strictEqual(answer.status, 200)
          assert.isFalse(fell, `${request.body} reached effect's route`)
        }
      }))

    const fallsThrough = (what: string, headers: Record<string, string>, body: string, status?: number) =>
      it.effect(`${what}: effect's answer`, () =>
        Effect.gen(function*() {
          yield* same(valid.list.headers, valid.list.body)
          const { answer, fell } = yield* same(headers, body)
          assert.isTrue(fell, `${what} was answered by the fast route`)
          if (status !== undefined) assert.strictEqual(answer.status, status, JSON.stringify(answer.body))
        }))

    const h = valid.list.headers
    const without = (name: string) => Object.fromEntries(Object.entries(h).filter(([key]) => key !== name))
    const listBody = (message: Record<string, unknown>) =>
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: "skills/list", params: { _meta: meta }, ...message })

    // 1. Origin (allowedOrigins is effect's) and Host.
    fallsThrough("an Origin header", { ...h, origin: "https://evil.example" }, valid.list.body, 403)
    // 2. Content type.
    fallsThrough("a text/plain body", { ...h, "content-type": "text/plain" }, valid.list.body, 415)
    fallsThrough("a JSON type listed second", { ...h, "content-type": "text/plain, application/json" }, valid.list.body, 415)
    // 3. Accept.
    fallsThrough("Accept without text/event-stream", { ...h, accept: "application/json" }, valid.list.body, 406)
    fallsThrough("Accept with q=0", { ...h, accept: "application/json, text/event-stream;q=0" }, valid.list.body, 406)
    // 4. Sessions.
    fallsThrough("an Mcp-Session-Id", { ...h, "mcp-session-id": "nope" }, valid.list.body)
    // 5. Body size: HttpAdmission's limit, declared and within the route's own bound.
    fallsThrough(
      "a body over HttpAdmission's limit",
      h,
      listBody({ params: { _meta: { ...meta, pad: "x".repeat(MaxBody) } } }),
      413
    )
    // 6. JSON-RPC shape.
    fallsThrough("a body that is not JSON", h, "{\"jsonrpc\":", 200)
    fallsThrough("a batch", h, `[${valid.list.body}]`, 400)
    fallsThrough("a notification", h, listBody({ id: undefined }))
    fallsThrough("a null id", h, listBody({ id: null }))
    fallsThrough("jsonrpc 1.0", h, listBody({ jsonrpc: "1.0" }))
    fallsThrough("params that are not an object", h, listBody({ params: [meta] }))
    // 7. MCP-Protocol-Version vs _meta.
    fallsThrough("no MCP-Protocol-Version", without("mcp-protocol-version"), valid.list.body, 400)
    fallsThrough("MCP-Protocol-Version 2025-11-25", { ...h, "mcp-protocol-version": "2025-11-25" }, valid.list.body, 400)
    fallsThrough(
      "a _meta version other than the header's",
      h,
      listBody({ params: { _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "2025-11-25" } } }),
      400
    )
    fallsThrough(
      "_meta without clientCapabilities",
      h,
      listBody({ params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } }),
      400
    )
    fallsThrough(
      "_meta whose clientInfo effect cannot decode",
      h,
      listBody({ params: { _meta: { ...meta, "io.modelcontextprotocol/clientInfo": 5 } } })
    )
    // 8. Mcp-Method and Mcp-Name vs the body.
    fallsThrough("an Mcp-Method other than the method", { ...h, "mcp-method": "skills/get" }, valid.list.body, 400)
    fallsThrough(
      "an Mcp-Name other than the URI",
      { ...valid.read.headers, "mcp-name": "skill://pdf-processing/SKILL.md" },
      valid.read.body,
      400
    )
    fallsThrough("no Mcp-Name", Object.fromEntries(Object.entries(valid.read.headers).filter(([key]) => key !== "mcp-name")), valid.read.body, 400)
    // 9. Methods and params.
    fallsThrough("another method", { ...h, "mcp-method": "tools/list" }, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } }))
    fallsThrough("a uri that is not a string", valid.get.headers, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "skills/get", params: { uri: 5, _meta: meta } }))
    fallsThrough("a cursor that is not a string", h, listBody({ params: { cursor: 1, _meta: meta } }))
    // 11. Only successes about static skills.
    fallsThrough("an unknown skill", valid.get.headers, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "skills/get", params: { uri: "skill://nope/SKILL.md", _meta: meta } }))
    fallsThrough("a garbled cursor", h, listBody({ params: { cursor: "garbage", _meta: meta } }))
    fallsThrough("a dynamic skill", valid.get.headers, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "skills/get", params: { uri: "skill://reports/daily/SKILL.md", _meta: meta } }))
    fallsThrough("a rendered skill", valid.get.headers, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "skills/get", params: { uri: "skill://greeting/SKILL.md", _meta: meta } }))
  })

  // 10. Visibility: the route runs the check itself (with the services of the request's context)
  // unless effect runs McpServer middleware around it; other HttpRouter route middleware keeps
  // the route off.
  const byHeader: Visibility.Check<{ code: number; message: string }, never> = ({ headers }) =>
    headers["x-user"] === "mallory"
      ? Effect.fail({ code: -32001, message: "Unauthorized" })
      : Effect.succeed(headers["x-user"] === "root" ? true : (skill) => skill.name !== "pdf-processing")
  const requests = [valid.list, valid.get, valid.read, valid.directory]

  /** Every request as three callers; `fellWhen` says which ones effect must answer. */
  const acrossUsers = (fellWhen: (request: typeof valid.list, user: string | undefined) => boolean) =>
    Effect.gen(function*() {
      yield* same(valid.list.headers, valid.list.body)
      for (const request of requests) {
        for (const user of [undefined, "root", "mallory"]) {
          const headers = user === undefined ? request.headers : { ...request.headers, "x-user": user }
          const { fast, fell, slow } = yield* both(headers, request.body)
          assert.deepStrictEqual(fast, slow)
          assert.strictEqual(fell, fellWhen(request, user), `${request.body} as ${user}`)
        }
      }
    })

  layer(twins({ visibility: byHeader as Visibility.Check<never, never> }))((it) => {
    it.effect("a visibility check without McpServer middleware runs on the fast route", () =>
      // A failing check, and a hidden skill (pdf-processing, unless root), are effect's to answer.
      acrossUsers((request, user) =>
        user === "mallory" || user === undefined && request !== valid.list && request !== valid.directory
      ))
  })

  // The route keeps the decoded `_meta` of the last request to compare the next one with: clients
  // taking turns, and the same `_meta` in another key order, each get their own decision.
  const byClient: Visibility.Check<never, never> = ({ requestContext }) =>
    Effect.succeed(requestContext.clientInfo?.name === "root" ? true : (skill) => skill.name !== "pdf-processing")
  layer(twins({ visibility: byClient }))((it) => {
    it.effect("clients taking turns on the fast route each get their own decision", () =>
      Effect.gen(function*() {
        yield* same(valid.list.headers, valid.list.body)
        const as = (clientInfo: object, order: "meta first" | "meta last") => {
          const modern = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
          }
          const _meta = order === "meta first"
            ? { "io.modelcontextprotocol/clientInfo": clientInfo, ...modern }
            : { ...modern, "io.modelcontextprotocol/clientInfo": clientInfo }
          return JSON.stringify({ jsonrpc: "2.0", id: 3, method: "skills/get", params: { uri: "skill://pdf-processing/SKILL.md", _meta } })
        }
        const turns = [
          { body: as({ name: "root", version: "1" }, "meta first"), root: true },
          { body: as({ name: "guest", version: "1" }, "meta first"), root: false },
          { body: as({ version: "1", name: "root" }, "meta last"), root: true },
          { body: as({ name: "root", version: "1", title: "Root" }, "meta first"), root: true },
          { body: as({ name: "root", version: "1" }, "meta last"), root: true },
          { body: as({ name: "root", version: "2" }, "meta first"), root: true },
          { body: as({ name: "guest", version: "2" }, "meta first"), root: false },
          { body: as({ name: "guest", version: "1" }, "meta last"), root: false }
        ]
        for (const turn of turns) {
          const { fast, fell, slow } = yield* both(valid.get.headers, turn.body)
          assert.deepStrictEqual(fast, slow)
          // A hidden skill is effect's to answer (not found); a visible one the route's.
          assert.strictEqual(fell, !turn.root, turn.body)
        }
      }))
  })

  layer(twins({ visibility: byHeader as Visibility.Check<never, never>, mcpMiddleware: true }))((it) => {
    it.effect("with McpServer middleware around the check, effect answers", () => acrossUsers(() => true))
  })

  layer(twins({ routeMiddleware: true }))((it) => {
    it.effect("with other HttpRouter middleware on the endpoint, effect answers", () =>
      Effect.gen(function*() {
        for (const request of [valid.list, ...requests]) {
          const { fast, fell, slow } = yield* both(request.headers, request.body)
          assert.deepStrictEqual(fast, slow)
          assert.isTrue(fell)
        }
      }))
  })
})

// The README's way to keep the fast route with a check that reads a service: the service comes
// from a global HttpRouter middleware built before the server (so it wraps the fast route).
class CurrentUser extends Context.Service<CurrentUser, { readonly admin: boolean }>()("test/CurrentUser") {}

const GlobalAuth = HttpRouter.middleware<{ provides: CurrentUser }>()(
  (effect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      return yield* Effect.provideService(effect, CurrentUser, { admin: request.headers["x-user"] === "root" })
    }),
  { global: true }
)

const readme = (counter: Counter) =>
  serveApp<never>(counting(counter).pipe(
    Layer.provide(
      McpServer.layerHttp({
        name: "docs",
        version: "1.0.0",
        path: "/mcp",
        protocols: adapters(),
        registrations: SkillsServer.layer({
          skills: [simple("docs/handbook"), simple("admin/ops")],
          visibility: () =>
            Effect.gen(function*() {
              const user = yield* CurrentUser
              return (skill: Visibility.SkillInfo) => user.admin || skill.path[0] !== "admin"
            })
        })
      })
    ),
    Layer.provide(GlobalAuth)
  ) as any)

describe("fast route with a global HttpRouter middleware", () => {
  const counter: Counter = { count: 0 }
  layer(readme(counter))((it) => {
    it.effect("serves the check the services that middleware provides", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const list = wellFormed("skills/list", {})
        yield* exchange(url, list.headers, list.body)
        for (const [user, admin] of [["root", true], ["ann", false]] as const) {
          const before = counter.count
          const answer = yield* exchange(url, { ...list.headers, "x-user": user }, list.body)
          assert.strictEqual(counter.count, before, "answered by the fast route")
          const uris = (answer.body as any).result.skills.map((skill: { uri: string }) => skill.uri)
          assert.deepStrictEqual(uris, admin ? ["skill://admin/ops/SKILL.md", "skill://docs/handbook/SKILL.md"] : ["skill://docs/handbook/SKILL.md"])
        }
      }))
  })
})

// A skills layer provided on top of the server cannot see the server's route middleware: no fast route.
describe("fast route of a skills layer provided on top of the server", () => {
  const counter: Counter = { count: 0 }
  const onTop = SkillsServer.layer({ skills: [simple("docs/handbook")] }).pipe(
    Layer.provideMerge(McpServer.layerHttp({ name: "docs", version: "1.0.0", path: "/mcp", protocols: adapters() }))
  )
  layer(serveApp<never>(counting(counter).pipe(Layer.provide(onTop)) as any))((it) => {
    it.effect("is not installed", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const list = wellFormed("skills/list", {})
        for (let i = 0; i < 3; i++) {
          const before = counter.count
          const answer = yield* exchange(url, list.headers, list.body)
          assert.strictEqual(answer.status, 200)
          assert.strictEqual(counter.count, before + 1)
        }
      }))
  })
})
