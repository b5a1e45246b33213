/**
 * Two servers publishing the same skills, one with the fast route (the default) and one without
 * (`fastRoute: false`), each behind `HttpAdmission` with an 8 KiB body limit, and a global
 * `HttpRouter` middleware installed after the skills layer that counts the requests reaching
 * effect's route: a request the fast route answered never reaches it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpServer } from "effect/ai"
import { HttpRouter } from "effect/http"
import { HttpAdmission, Skill, SkillsServer, Visibility } from "../../src/index.js"
import { catalogue, daily, dailyMd } from "./catalogue.js"
import { simple, skillMd } from "./fixtures.js"
import { makeKey, signed } from "./signing.js"
import { adapters, modernRequest, serveApp, ServerUrl } from "./wire.js"

/** Body limit of both servers: below the fast route's own 64 KiB, so crossing it is testable. */
export const MaxBody = 8 * 1024

const greeting = Skill.rendered({
  path: "greeting",
  render: (request) =>
    Effect.succeed({
      "SKILL.md": skillMd("greeting", `Greets ${String(request.headers["x-user"] ?? "you")}`),
      "notes/hello.md": `# Hello ${String(request.headers["x-user"] ?? "you")}\n`
    })
})

// The shared catalogue's dynamic skill counts its reads in its content: both twins must read alike.
const steadyDaily = Skill.dynamic({
  path: "reports/daily",
  frontmatter: { name: "daily", description: "Build today's operations report from live data", metadata: { owner: "ops" } },
  read: (path) => Effect.succeed(path === "SKILL.md" ? dailyMd : path === "data/today.json" ? `{"day":1}` : undefined),
  list: Effect.succeed(["SKILL.md", "data/today.json"])
})

// Unlisted: its instances answer by URI only, so skills/list pages stay static.
const teams = Skill.family({
  path: "teams/{team}",
  render: ({ team }) => Effect.succeed({ "SKILL.md": skillMd(String(team)), "notes.md": `# Team ${String(team)}\n` })
})

/** The shared catalogue plus a rendered skill, a skill family and enough plain skills for several pages. */
export const skills: ReadonlyArray<Skill.Definition> = [
  ...catalogue.filter((skill) => skill !== daily),
  steadyDaily,
  greeting,
  teams,
  // Signed by two keys, so entries relay `_meta` signatures on both paths.
  ...["alpha", "beta", "gamma", "delta"].map((name) => {
    const skill = simple(`pages/${name}`, { "ref/one.md": `# ${name}\n`, "two.txt": name })
    return name === "alpha" ? signed(skill, makeKey().key, makeKey().key) : skill
  }),
  simple("big", { "large.md": "x".repeat(100_000) })
]

/** Counts requests that reached effect's route (through the middleware inside the fast route). */
export interface Counter {
  count: number
}

export class Twins extends Context.Service<Twins, {
  readonly on: string
  readonly off: string
  readonly reached: Counter
}>()("test/Twins") {}

/** A global middleware counting requests; built after a server, it sits inside its fast route. */
export const counting = (counter: Counter) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    yield* router.addGlobalMiddleware((effect) =>
      Effect.suspend(() => {
        counter.count++
        return effect
      })
    )
  }))

/** How the twins are composed besides the fast route. */
export interface TwinOptions {
  readonly visibility?: Visibility.Check<never, never> | undefined
  /** An `McpServer.middleware` provided to the skills layer (it runs around the check). */
  readonly mcpMiddleware?: boolean | undefined
  /** An `HttpRouter` route middleware besides `HttpAdmission` provided to `layerHttp`. */
  readonly routeMiddleware?: boolean | undefined
}

// Middleware that lets everything through: only its presence matters.
const PassMcp = McpServer.middleware()((effect) => effect)
const PassRoute = HttpRouter.middleware((effect) => effect)

const server = (options: TwinOptions & { readonly fastRoute: boolean; readonly counter: Counter }) => {
  const registrations = SkillsServer.layer({
    skills,
    pageSize: 2,
    fastRoute: options.fastRoute,
    visibility: options.visibility
  })
  const mcp = McpServer.layerHttp({
    name: "twin",
    version: "1.0.0",
    path: "/mcp",
    protocols: adapters(),
    registrations: options.mcpMiddleware === true ? registrations.pipe(Layer.provide(PassMcp.layer)) : registrations
  }).pipe(
    Layer.provide(HttpAdmission.layer({ maxBodySize: MaxBody })),
    Layer.provide(options.routeMiddleware === true ? PassRoute.layer : Layer.empty)
  )
  // Built after the server, so its middleware sits inside the skills layer's.
  // Registration errors fail the test at start-up.
  return serveApp<never>(counting(options.counter).pipe(Layer.provide(mcp)) as any)
}

const urlOf = (layer: Layer.Layer<ServerUrl>) =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, ServerUrl))

/** Both servers, on free loopback ports, for the scope of the test layer. */
export const twins = (options: TwinOptions = {}) =>
  Layer.effect(Twins)(Effect.gen(function*() {
    const reached: Counter = { count: 0 }
    const on = yield* urlOf(server({ ...options, fastRoute: true, counter: reached }))
    const off = yield* urlOf(server({ ...options, fastRoute: false, counter: { count: 0 } }))
    return { on, off, reached }
  }))

/** One HTTP exchange as the equivalence compares it. */
export interface Exchange {
  readonly status: number
  readonly contentType: string
  readonly body: unknown
  /** The body as sent: both paths send the same bytes, not merely equal JSON. */
  readonly text: string
}

/** Posts raw bytes with exactly `headers` (nothing added but what fetch itself sends). */
export const exchange = (url: string, headers: Record<string, string>, body: string): Effect.Effect<Exchange> =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", headers, body })
    const text = await response.text()
    const contentType = response.headers.get("content-type") ?? ""
    let parsed: unknown = text
    if (contentType.includes("application/json") && text.length > 0) parsed = JSON.parse(text)
    return { status: response.status, contentType, body: parsed, text }
  })

export const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "twins", version: "0.0.0" }
}

/** The headers and body of a well-formed 2026-07-28 request, with this module's `_meta`. */
export const wellFormed = (method: string, params: Record<string, unknown>, id: string | number = 1) =>
  modernRequest(method, { ...params, _meta: meta }, { id })

