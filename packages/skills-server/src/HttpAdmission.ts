/**
 * What an MCP HTTP endpoint admits: request bodies up to a limit, and a JSON-RPC error body on
 * every refusal.
 *
 * effect 4.1.0's `McpServer.layerHttp` reads a POST body whole, with no limit (a 600 MB body ends
 * in a 500), and answers 403, 404, 405, 406, 415 and refused batches (400) with empty bodies. This
 * route middleware, provided to `layerHttp`, puts a limit in front of the endpoint and a body on
 * each of those answers:
 *
 * - A body larger than `maxBodySize` (default `ServerLimits.MaxBodySize`, 4 MiB) gets `413` with a
 *   JSON-RPC error (`-32600`, `data.maxBodySize`). A declared `Content-Length` over the limit is
 *   refused before a byte is read; a chunked body is read up to the limit and refused at the first
 *   byte past it (the server then closes the connection rather than drain the rest).
 * - A message nesting arrays and objects more than 128 levels deep gets `-32600` with its id
 *   (HTTP 200, as effect answers other invalid messages) before anything decodes it: effect and
 *   the fast route would overflow the stack on it and answer an empty 500.
 * - Every other refusal without a body gets `{ jsonrpc: "2.0", id: null, error }`: `-32600`
 *   naming what was wrong (media type, `Accept`, origin, method, batch), `-32001` for an unknown
 *   session (the official TypeScript SDK's code), `-32603` for a failure of the server. Refusals
 *   that effect already answers with a JSON-RPC body keep it.
 *
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
 * The middleware applies to the routes of the layer it is provided to (`layerHttp`'s endpoint),
 * not to other routes of the same router. `SkillsServer.layer` needs no extra line: it puts the
 * same admission in front of its router where none is provided (see {@link middleware}).
 *
 * @since 0.1.0
 */
import * as ByteSize from "effect/ByteSize"
import type * as Layer from "effect/Layer"
import { HttpRouter } from "effect/http"
import * as Admission from "./internal/admission.js"
import * as ServerLimits from "./ServerLimits.js"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
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
 */
export const middleware = (options?: Options) =>
  HttpRouter.middleware(Admission.make(
    options?.maxBodySize === undefined ? ServerLimits.MaxBodySize : ByteSize.fromInputUnsafe(options.maxBodySize)
  ))

/**
 * {@link middleware} as a layer, to provide to `McpServer.layerHttp`.
 *
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<never> => middleware(options).layer as Layer.Layer<never>
