/**
 * What an MCP HTTP server admits: on every route, requests whose `Host` and `Origin` it accepts
 * (`layerRouter`); on the MCP endpoint, request bodies up to a limit, and a JSON-RPC error body
 * on every refusal (`layer`).
 *
 * **The MCP endpoint (`layer`).** effect 4.1.0's `McpServer.layerHttp` reads a POST body whole,
 * with no limit (a 600 MB body ends in a 500), and answers 403, 404, 405, 406, 415 and refused
 * batches (400) with empty bodies. This route middleware, provided to `layerHttp`, puts a limit
 * in front of the endpoint and a body on each of those answers:
 *
 * - A body larger than `maxBodySize` (default `ServerLimits.MaxBodySize`, 4 MiB) gets `413` with a
 *   JSON-RPC error (`-32600`, `data.maxBodySize`). A declared `Content-Length` over the limit is
 *   refused before a byte is read; a chunked body is read up to the limit and refused at the first
 *   byte past it (the server then closes the connection rather than drain the rest).
 * - A message nesting arrays and objects more than `ServerLimits.MaxDepth` levels deep gets
 *   `-32600` with its id (HTTP 200, as effect answers other invalid messages) before anything
 *   decodes it: effect and the fast route would overflow the stack on it and answer an empty 500.
 * - Every other refusal without a body gets `{ jsonrpc: "2.0", id: null, error }`: `-32600`
 *   naming what was wrong (media type, `Accept`, origin, method, batch), `-32001` for an unknown
 *   session (the official TypeScript SDK's code), `-32603` for a failure of the server. Refusals
 *   that effect already answers with a JSON-RPC body keep it.
 *
 * It applies to the routes of the layer it is provided to, not to other routes of the same
 * router; `SkillsServer.layer` puts the same admission in front of its router where none is
 * provided (see {@link middleware}).
 *
 * **Every route: Host and Origin (`layerRouter`).** A global `HttpRouter` middleware: it sees
 * every request before the router looks for a route, so the MCP endpoint (and the fast route),
 * `/metrics`, an app's own routes and the 404 of an unknown path all refuse what it refuses, with
 * `403` and `-32600` naming the `Host` or `Origin`. `Host` is what stops DNS rebinding: a page
 * whose name an attacker points at 127.0.0.1 is same-origin with the server for the browser, and
 * its GET carries no `Origin`, only that name in `Host`. A loopback listener admits by default
 * only `localhost`, `127.0.0.1` and `[::1]` (any port); listening elsewhere it cannot know the
 * names it is reached by, and admits any `Host` unless `allowedHosts` names them. A skills layer
 * that does not see it puts the default `Host` check in front of its router itself.
 *
 * @since 0.1.0
 */
import * as ByteSize from "effect/ByteSize"
import type * as Layer from "effect/Layer"
import { HttpRouter } from "effect/http"
import * as Admission from "./internal/admission.js"
import * as RouterAdmission from "./internal/routerAdmission.js"
import * as ServerLimits from "./ServerLimits.js"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /** Largest request body accepted (`4194304`, `"4 MiB"`, ...); default `ServerLimits.MaxBodySize` (4 MiB). */
  readonly maxBodySize?: ByteSize.Input | undefined
}

/**
 * The route middleware: provide it to `McpServer.layerHttp` (it needs the `HttpRouter` only
 * through that layer).
 *
 * `SkillsServer.layer` needs no extra line: where it serves HTTP and sees no `HttpAdmission`
 * provided to its endpoint, it puts this admission, with the default limit, in front of its
 * router itself. A global router middleware runs before the route is known, so that guard admits
 * every POST an MCP endpoint of the router would read (JSON sent with `Accept` listing
 * `application/json` and `text/event-stream`), whatever its path. Provide this middleware to
 * choose the limit; a skills layer provided on top of the server (not as its `registrations`)
 * cannot see it and keeps its guard at the default limit in front.
 *
 * @since 0.1.0
 * @category middleware
 */
export const middleware = (options?: Options) =>
  HttpRouter.middleware(Admission.make(
    options?.maxBodySize === undefined ? ServerLimits.MaxBodySize : ByteSize.fromInputUnsafe(options.maxBodySize)
  ))

/**
 * {@link middleware} as a layer, to provide to `McpServer.layerHttp`.
 *
 * @example
 * ```ts
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { McpProtocol, McpServer } from "effect/ai"
 * import { HttpRouter } from "effect/http"
 * import { createServer } from "node:http"
 * import { HttpAdmission, Skill, SkillsServer } from "@mcp-skills/server"
 *
 * const Server = McpServer.layerHttp({
 *   name: "docs", version: "1.0.0", path: "/mcp",
 *   protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
 *   registrations: SkillsServer.layer({ skills: [] as Array<Skill.Definition> })
 * }).pipe(Layer.provide(HttpAdmission.layer({ maxBodySize: "1 MiB" })))
 *
 * HttpRouter.serve(Server).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port: 3000 })), Layer.launch)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<never> => middleware(options).layer as Layer.Layer<never>

/**
 * Options of {@link layerRouter}.
 *
 * @since 0.1.0
 * @category options
 */
export interface RouterOptions {
  /**
   * Host names (no port; an IPv6 address in brackets) requests may name in `Host`, besides
   * `localhost`, `127.0.0.1`, `[::1]` and the listening address; `"*"` admits any. Default: none
   * more on a loopback listener; any `Host` on another (or where the router has no `HttpServer`).
   */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  /**
   * Browser origins (exact, e.g. `https://app.example.com`) requests may come from; a request
   * without `Origin` passes. Give the list `McpServer.layerHttp` has as `allowedOrigins`. Default:
   * each route decides (effect's MCP endpoint refuses any `Origin` outside its own list).
   */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
}

/**
 * The `Host` and `Origin` check of every route of the app's `HttpRouter`, as a global middleware
 * (see the module's "Every route"). Provide it to the routes' layer (`Layer.provide`), so it is in
 * place before the skills layer adds its own middleware; an entry of `allowedHosts` that is no
 * host name is a defect when the layer is made.
 *
 * @example
 * ```ts
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { McpProtocol, McpServer } from "effect/ai"
 * import { HttpRouter } from "effect/http"
 * import { createServer } from "node:http"
 * import { HttpAdmission, Observability, Skill, SkillsServer } from "@mcp-skills/server"
 *
 * const allowedOrigins = ["https://app.example.com"]
 * const Routes = Layer.mergeAll(
 *   McpServer.layerHttp({
 *     name: "docs", version: "1.0.0", path: "/mcp", allowedOrigins,
 *     protocols: SkillsServer.protocols([McpProtocol.v2026_07_28]),
 *     registrations: SkillsServer.layer({ skills: [] as Array<Skill.Definition> })
 *   }),
 *   Observability.layerPrometheus()
 * ).pipe(Layer.provide(HttpAdmission.layerRouter({ allowedHosts: ["skills.example.com"], allowedOrigins })))
 *
 * HttpRouter.serve(Routes).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port: 3000 })), Layer.launch)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRouter = (options?: RouterOptions): Layer.Layer<never, never, HttpRouter.HttpRouter> => {
  const hosts = (options?.allowedHosts ?? []).map((name) => {
    const normalized = RouterAdmission.normalizeName(name)
    if (normalized === undefined) throw new RangeError(`HttpAdmission allowedHosts: ${JSON.stringify(name)} is not a host name`)
    return normalized
  })
  return RouterAdmission.layer(hosts, options?.allowedOrigins) as Layer.Layer<never, never, HttpRouter.HttpRouter>
}
