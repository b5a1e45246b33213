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
import { HttpAdmission, Skill, SkillsServer } from "../../src/index.js"
import { catalogue } from "./catalogue.js"
import { simple, skillMd } from "./fixtures.js"
import { adapters, serveApp, ServerUrl } from "./wire.js"

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

/** The shared catalogue plus a rendered skill and enough plain skills for several pages. */
export const skills: ReadonlyArray<Skill.Definition> = [
  ...catalogue,
  greeting,
  ...["alpha", "beta", "gamma", "delta"].map((name) => simple(`pages/${name}`, { "ref/one.md": `# ${name}\n`, "two.txt": name })),
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

const counting = (counter: Counter) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    yield* router.addGlobalMiddleware((effect) =>
      Effect.suspend(() => {
        counter.count++
        return effect
      })
    )
  }))

const server = (options: {
  readonly fastRoute: boolean
  readonly counter: Counter
  readonly visibility?: SkillsServer.Visibility<never, never> | undefined
}) => {
  const mcp = McpServer.layerHttp({
    name: "twin",
    version: "1.0.0",
    path: "/mcp",
    protocols: adapters(),
    registrations: SkillsServer.layer({
      skills,
      pageSize: 2,
      fastRoute: options.fastRoute,
      visibility: options.visibility
    })
  }).pipe(Layer.provide(HttpAdmission.layer({ maxBodySize: MaxBody })))
  // Built after the server, so its middleware sits inside the skills layer's.
  // Registration errors fail the test at start-up.
  return serveApp<never>(counting(options.counter).pipe(Layer.provide(mcp)) as any)
}

const urlOf = (layer: Layer.Layer<ServerUrl>) =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, ServerUrl))

/** Both servers, on free loopback ports, for the scope of the test layer. */
export const twins = (visibility?: SkillsServer.Visibility<never, never>) =>
  Layer.effect(Twins)(Effect.gen(function*() {
    const reached: Counter = { count: 0 }
    const on = yield* urlOf(server({ fastRoute: true, counter: reached, visibility }))
    const off = yield* urlOf(server({ fastRoute: false, counter: { count: 0 }, visibility }))
    return { on, off, reached }
  }))

/** One HTTP exchange as the equivalence compares it. */
export interface Exchange {
  readonly status: number
  readonly contentType: string
  readonly body: unknown
}

/** Posts raw bytes with exactly `headers` (nothing added but what fetch itself sends). */
export const exchange = (url: string, headers: Record<string, string>, body: string): Effect.Effect<Exchange> =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", headers, body })
    const text = await response.text()
    const contentType = response.headers.get("content-type") ?? ""
    let parsed: unknown = text
    if (contentType.includes("application/json") && text.length > 0) parsed = JSON.parse(text)
    return { status: response.status, contentType, body: parsed }
  })

export const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "twins", version: "0.0.0" }
}

/** The headers and body of a well-formed 2026-07-28 request. */
export const wellFormed = (method: string, params: Record<string, unknown>, id: string | number = 1) => ({
  headers: {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...(method === "resources/read" && typeof params.uri === "string" ? { "mcp-name": params.uri } : {})
  } as Record<string, string>,
  body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } })
})

