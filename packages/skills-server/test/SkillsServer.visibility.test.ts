/**
 * One visibility decision per request governs all five surfaces, and it composes the way effect
 * users compose auth: an `HttpRouter.middleware` in front of `layerHttp`, an `McpServer.middleware`
 * provided to the skills layer (or globally), an `McpServer.visibility`, or just headers.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpProtocol, McpServer } from "effect/ai"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { SkillsServer, Visibility } from "../src/index.js"
import { sha256 } from "./support/catalogue.js"
import { simple } from "./support/fixtures.js"
import type { Observation, Probe } from "./support/surfaces.js"
import { observe } from "./support/surfaces.js"
import type { Client } from "./support/wire.js"
import {
  legacyHttp,
  legacyStdio,
  makeClient,
  modernHttp,
  modernStdio,
  serveApp,
  ServerUrl,
  StdioPipe,
  stdioServer,
  withHeaders
} from "./support/wire.js"

// --- The README example -----------------------------------------------------------------------

/** The caller, as the application's own auth middleware resolves it. */
class CurrentUser extends Context.Service<CurrentUser, { readonly name: string; readonly admin: boolean }>()(
  "example/CurrentUser"
) {}

const userFromHeaders = (headers: Readonly<Record<string, string | undefined>>) => ({
  name: headers["x-user"] ?? "anonymous",
  admin: headers["x-user"] === "root"
})

const skills = [
  simple("public/handbook", { "guide.md": "Welcome\n" }),
  simple("admin/ops", { "runbook.md": "ADMIN RUNBOOK\n" })
]

/** Admin skills only for admins: one decision per request, a predicate evaluated once per skill. */
const adminOnly = () =>
  Effect.gen(function*() {
    const user = yield* CurrentUser
    return (skill: Visibility.SkillInfo) => user.admin || skill.path[0] !== "admin"
  })

// (1) An HttpRouter middleware in front of layerHttp provides CurrentUser to every request.
const HttpAuth = HttpRouter.middleware<{ provides: CurrentUser }>()((effect) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* Effect.provideService(effect, CurrentUser, userFromHeaders(request.headers))
  })
)

const protocols = SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25])

const WithHttpRouterAuth = McpServer.layerHttp({
  name: "docs",
  version: "1.0.0",
  path: "/mcp",
  protocols,
  registrations: SkillsServer.layer({ skills, visibility: adminOnly, cacheHint: { ttl: "1 minute", scope: "public" } })
}).pipe(Layer.provide(HttpAuth.layer))

// (2) An McpServer.middleware provided to the skills layer: works on every transport, stdio included.
const McpAuth = McpServer.middleware<{ provides: CurrentUser }>()((effect, { headers, requestContext }) =>
  Effect.provideService(
    effect,
    CurrentUser,
    headers["x-user"] !== undefined
      ? userFromHeaders(headers)
      : { name: requestContext.clientInfo?.name ?? "anonymous", admin: requestContext.clientInfo?.name === "root" }
  )
)

const SkillsWithMcpAuth = SkillsServer.layer({ skills, visibility: adminOnly }).pipe(Layer.provide(McpAuth.layer))

const WithMcpAuth = McpServer.layerHttp({ name: "docs", version: "1.0.0", path: "/mcp", protocols, registrations: SkillsWithMcpAuth })

// (3) The same middleware installed globally.
const WithGlobalMcpAuth = McpServer.layerHttp({
  name: "docs",
  version: "1.0.0",
  path: "/mcp",
  protocols,
  registrations: SkillsServer.layer({ skills, visibility: adminOnly }).pipe(Layer.provide(McpAuth.layerGlobal))
})

// (4) Headers only, and an MCP error for a refused caller.
const WithHeaders = McpServer.layerHttp({
  name: "docs",
  version: "1.0.0",
  path: "/mcp",
  protocols,
  registrations: SkillsServer.layer({
    skills,
    visibility: ({ headers }) =>
      headers["x-user"] === "mallory"
        ? Effect.fail({ code: -32001, message: "Unauthorized" })
        : Effect.succeed(headers["x-user"] === "root" ? true : (skill) => skill.path[0] !== "admin")
  })
})

// (5) An McpServer.visibility provided to the skills layer hides the whole catalogue when false.
const WithMcpVisibility = McpServer.layerHttp({
  name: "docs",
  version: "1.0.0",
  path: "/mcp",
  protocols,
  registrations: SkillsServer.layer({ skills, visibility: () => Effect.succeed(true) }).pipe(
    Layer.provide(McpServer.visibility(({ headers }) => Effect.succeed(headers["x-user"] !== "blocked")).layer)
  )
})

// (6) The skills layer provided on top of the server instead of as `registrations`.
const OnTop = SkillsServer.layer({ skills, visibility: ({ headers }) => Effect.succeed(headers["x-user"] === "root" || ((skill: Visibility.SkillInfo) => skill.path[0] !== "admin")) }).pipe(
  Layer.provideMerge(McpServer.layerHttp({ name: "docs", version: "1.0.0", path: "/mcp", protocols }))
)

// (7) A check that records what it is asked: once per request, with the method and the request data.
const asked: Array<Visibility.VisibilityRequest> = []
let predicateCalls = 0
const Recording = McpServer.layerHttp({
  name: "docs",
  version: "1.0.0",
  path: "/mcp",
  protocols,
  registrations: SkillsServer.layer({
    skills,
    visibility: (request) =>
      Effect.sync(() => {
        asked.push(request)
        return (skill: Visibility.SkillInfo) => {
          predicateCalls++
          return skill.path[0] !== "admin"
        }
      })
  })
})

// --- Assertions -------------------------------------------------------------------------------

const probes: ReadonlyArray<Probe> = [
  {
    uri: "skill://public/handbook/SKILL.md",
    files: ["skill://public/handbook/SKILL.md", "skill://public/handbook/guide.md"],
    directories: ["skill://public/handbook"]
  },
  {
    uri: "skill://admin/ops/SKILL.md",
    files: ["skill://admin/ops/SKILL.md", "skill://admin/ops/runbook.md"],
    directories: ["skill://admin/ops"]
  }
]

const adminLeaks = ["admin/ops", "ADMIN RUNBOOK", sha256(new TextEncoder().encode("ADMIN RUNBOOK\n"))]

const assertSees = (observation: Observation, uri: string, visible: boolean) => {
  const answered = observation.answered.get(uri)!
  assert.strictEqual(observation.listed.has(uri), visible, `skills/list ${uri}`)
  assert.strictEqual(observation.resourcesList.has(uri), visible, `resources/list ${uri}`)
  assert.strictEqual(answered.get, visible, `skills/get ${uri}`)
  assert.deepStrictEqual(answered.reads, answered.reads.map(() => visible), `resources/read ${uri}`)
  assert.deepStrictEqual(answered.directories, answered.directories.map(() => visible), `directory ${uri}`)
}

const expectRoles = (anonymous: Client, root: Client) =>
  Effect.gen(function*() {
    const asAnonymous = yield* observe(anonymous, probes)
    assertSees(asAnonymous, "skill://public/handbook/SKILL.md", true)
    assertSees(asAnonymous, "skill://admin/ops/SKILL.md", false)
    for (const text of asAnonymous.texts) for (const leak of adminLeaks) assert.notInclude(text, leak)
    const asRoot = yield* observe(root, probes)
    assertSees(asRoot, "skill://public/handbook/SKILL.md", true)
    assertSees(asRoot, "skill://admin/ops/SKILL.md", true)
  })


const httpRoles = Effect.gen(function*() {
  const url = yield* ServerUrl
  return {
    modern: [modernHttp(url), withHeaders(modernHttp(url), { "x-user": "root" })] as const,
    legacy: [yield* legacyHttp(url), yield* legacyHttp(url, { "x-user": "root" })] as const
  }
})

const bothRevisions = Effect.gen(function*() {
  const { legacy, modern } = yield* httpRoles
  yield* expectRoles(...modern)
  yield* expectRoles(...legacy)
})

describe("visibility", () => {
  layer(serveApp(WithHttpRouterAuth))("HttpRouter middleware", (it) => {
    it.effect("governs all five surfaces on both revisions; hidden looks absent", () => bothRevisions)
    it.effect("results under a check are cacheScope private even when public is configured", () =>
      Effect.gen(function*() {
        const { modern } = yield* httpRoles
        for (const method of ["skills/list", "resources/list"]) {
          const result = yield* modern[0].call(method)
          assert.deepStrictEqual([result.ttlMs, result.cacheScope], [60000, "private"])
        }
      }))
    it.effect("a hidden skill's errors are identical to an absent skill's", () =>
      Effect.gen(function*() {
        const { modern } = yield* httpRoles
        const hidden = yield* modern[0].fail("skills/get", { uri: "skill://admin/ops/SKILL.md" })
        const absent = yield* modern[0].fail("skills/get", { uri: "skill://admin/opz/SKILL.md" })
        assert.deepStrictEqual(hidden, { ...absent, message: absent.message.replace("opz", "ops"), data: { uri: "skill://admin/ops/SKILL.md" } })
        const hiddenRead = yield* modern[0].fail("resources/read", { uri: "skill://admin/ops/runbook.md" })
        const absentRead = yield* modern[0].fail("resources/read", { uri: "skill://admin/ops/runbooc.md" })
        assert.deepStrictEqual(hiddenRead, { ...absentRead, data: { uri: "skill://admin/ops/runbook.md" } })
      }))
  })

  layer(serveApp(WithMcpAuth))("McpServer.middleware provided to the skills layer", (it) => {
    it.effect("governs all five surfaces on both revisions", () => bothRevisions)
  })

  layer(serveApp(WithGlobalMcpAuth))("McpServer.middleware installed globally", (it) => {
    it.effect("governs all five surfaces on both revisions", () => bothRevisions)
  })

  layer(stdioServer(SkillsWithMcpAuth))("McpServer.middleware over stdio", (it) => {
    it.effect("2026-07-28: the per-request clientInfo decides", () =>
      Effect.gen(function*() {
        const pipe = yield* StdioPipe
        const anonymous = modernStdio(pipe)
        const root = makeClient("2026-07-28", "stdio", (method, params = {}) =>
          anonymous.send(method, { ...params, _meta: { "io.modelcontextprotocol/clientInfo": { name: "root", version: "1" } } }))
        yield* expectRoles(anonymous, root)
      }))
    it.effect("2025-11-25: the session's clientInfo decides", () =>
      Effect.gen(function*() {
        const legacy = yield* legacyStdio(yield* StdioPipe)
        const observation = yield* observe(legacy, probes)
        assertSees(observation, "skill://public/handbook/SKILL.md", true)
        assertSees(observation, "skill://admin/ops/SKILL.md", false)
      }))
  })

  layer(serveApp(WithHeaders))("headers only", (it) => {
    it.effect("governs all five surfaces on both revisions", () => bothRevisions)
    it.effect("a check failing with an MCP error fails every surface with that error", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const mallory = withHeaders(modernHttp(url), { "x-user": "mallory" })
        for (
          const [method, params] of [
            ["skills/list", {}],
            ["skills/get", { uri: "skill://public/handbook/SKILL.md" }],
            ["resources/read", { uri: "skill://public/handbook/guide.md" }],
            ["resources/list", {}],
            ["resources/directory/read", { uri: "skill://public/handbook" }],
            // A refused caller learns nothing about what exists: absent URIs get the same error.
            ["skills/get", { uri: "skill://nowhere/SKILL.md" }],
            ["resources/read", { uri: "skill://nowhere/SKILL.md" }],
            ["resources/directory/read", { uri: "skill://nowhere" }]
          ] as const
        ) {
          const error = yield* mallory.fail(method, params)
          assert.deepStrictEqual([error.code, error.message], [-32001, "Unauthorized"], method)
        }
      }))
  })

  layer(serveApp(WithMcpVisibility))("McpServer.visibility", (it) => {
    it.effect("hiding the skills layer hides every skill", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const blocked = yield* observe(withHeaders(modernHttp(url), { "x-user": "blocked" }), probes)
        assertSees(blocked, "skill://public/handbook/SKILL.md", false)
        assertSees(blocked, "skill://admin/ops/SKILL.md", false)
        const allowed = yield* observe(modernHttp(url), probes)
        assertSees(allowed, "skill://admin/ops/SKILL.md", true)
      }))
  })

  layer(serveApp(Recording))("the check itself", (it) => {
    it.effect("runs once per request, sees the method, headers, session and request context", () =>
      Effect.gen(function*() {
        const { legacy, modern } = yield* httpRoles
        const calls = [
          ["skills/list", {}],
          ["skills/get", { uri: "skill://admin/ops/SKILL.md" }],
          ["resources/read", { uri: "skill://public/handbook/guide.md" }],
          ["resources/list", {}],
          ["resources/directory/read", { uri: "skill://public/handbook" }]
        ] as const
        for (const client of [modern[1], legacy[1]]) {
          asked.length = 0
          predicateCalls = 0
          for (const [method, params] of calls) {
            if (method === "skills/get") yield* client.fail(method, params)
            else yield* client.call(method, params)
          }
          assert.deepStrictEqual(asked.map((request) => request.method), calls.map(([method]) => method))
          for (const request of asked) {
            assert.strictEqual(request.headers["x-user"], "root")
            assert.strictEqual(request.protocolVersion, client.revision)
            assert.strictEqual(request.requestContext.clientInfo?.name, "skills-test")
            assert.strictEqual(request.sessionId === undefined, client.revision === "2026-07-28")
          }
          // At most one predicate call per skill per request (two skills, five requests).
          assert.isAtMost(predicateCalls, 2 * calls.length)
        }
      }))
  })

  layer(serveApp(OnTop))("skills layer provided on top of the server", (it) => {
    it.effect("works the same", () => bothRevisions)
  })
})
