/**
 * What an MCP HTTP endpoint admits: request bodies up to a limit, and a JSON-RPC error body on
 * every refusal.
 *
 * effect 4.1.0's `McpServer.layerHttp` reads a POST body whole, with no limit (a 600 MB body ends
 * in a 500), and answers 403, 404, 405, 406, 415 and refused batches (400) with empty bodies. This
 * route middleware, provided to `layerHttp`, puts a limit in front of the endpoint and a body on
 * each of those answers:
 *
 * - A body larger than `maxBodySize` (default 4 MiB) gets `413` with a JSON-RPC error (`-32600`,
 *   `data.maxBodySize`). A declared `Content-Length` over the limit is refused before a byte is
 *   read; a chunked body is read up to the limit and refused at the first byte past it (the
 *   server then closes the connection rather than drain the rest).
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
 * not to other routes of the same router.
 *
 * @since 0.1.0
 */
import * as ByteSize from "effect/ByteSize"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import {
  HttpIncomingMessage,
  HttpRouter,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "effect/http"
import type * as Types from "effect/Types"
import * as Learning from "./internal/learning.js"

/**
 * The body limit when none is given: 4 MiB, far above any MCP request a client sends to this
 * server and far below what a server can hold for many clients at once.
 *
 * @since 0.1.0
 */
export const defaultMaxBodySize: ByteSize.ByteSize = ByteSize.mebibytes(4)

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 */
export interface Options {
  /** Largest request body accepted (`4194304`, `"4 MiB"`, ...); default {@link defaultMaxBodySize}. */
  readonly maxBodySize?: ByteSize.Input | undefined
}

const INVALID_REQUEST = -32600
const SESSION_NOT_FOUND = -32001
const INTERNAL_ERROR = -32603

const refusal = (
  status: number,
  error: { readonly code: number; readonly message: string; readonly data?: unknown },
  headers?: HttpServerResponse.HttpServerResponse["headers"]
) => HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id: null, error }, { status, headers })

const isBodyTooLarge = (error: unknown) =>
  HttpServerError.isHttpServerError(error) && error.reason._tag === "RequestParseError" &&
  error.reason.reason === "BodyTooLarge"

const startsBatch = (body: Result.Result<ArrayBuffer, unknown>) => {
  if (Result.isFailure(body)) return false
  const bytes = new Uint8Array(body.success)
  // Skip JSON whitespace: space, tab, LF, CR.
  let i = 0
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++
  return bytes[i] === 0x5b
}

// What each empty refusal of effect's endpoint means, said once.
const describe = (
  request: HttpServerRequest.HttpServerRequest,
  status: number,
  body: Result.Result<ArrayBuffer, unknown> | undefined
): { readonly code: number; readonly message: string } => {
  switch (status) {
    case 400:
      return request.method === "DELETE"
        ? {
          code: INVALID_REQUEST,
          message: request.headers["mcp-session-id"] === undefined
            ? "DELETE needs an MCP-Session-Id header"
            : "MCP-Protocol-Version header does not match the session"
        }
        : body !== undefined && startsBatch(body)
        ? { code: INVALID_REQUEST, message: "JSON-RPC batches are not accepted here" }
        : { code: INVALID_REQUEST, message: "Bad request" }
    case 403:
      return { code: INVALID_REQUEST, message: `Origin ${request.headers.origin ?? "(none)"} is not allowed` }
    case 404:
      return request.headers["mcp-session-id"] !== undefined
        ? { code: SESSION_NOT_FOUND, message: "Session not found" }
        : { code: INVALID_REQUEST, message: "Not found" }
    case 405:
      return { code: INVALID_REQUEST, message: `Method ${request.method} is not allowed here` }
    case 406:
      return { code: INVALID_REQUEST, message: "Accept must list both application/json and text/event-stream" }
    case 415:
      return { code: INVALID_REQUEST, message: "Content-Type must be application/json" }
    default:
      return status >= 500
        ? { code: INTERNAL_ERROR, message: "Internal error" }
        : { code: INVALID_REQUEST, message: `Request refused (HTTP ${status})` }
  }
}

const withBody = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse,
  body: Result.Result<ArrayBuffer, unknown> | undefined
) =>
  response.status < 400 || response.body._tag !== "Empty"
    ? response
    : refusal(response.status, describe(request, response.status, body), response.headers)

/**
 * The route middleware: provide it to `McpServer.layerHttp` (it needs the `HttpRouter` only
 * through that layer).
 *
 * @since 0.1.0
 */
export const middleware = (options?: Options) => {
  const maxBodySize = options?.maxBodySize === undefined
    ? defaultMaxBodySize
    : ByteSize.fromInputUnsafe(options.maxBodySize)
  if (maxBodySize === ByteSize.zero) throw new RangeError("HttpAdmission maxBodySize must be positive")
  const maxBytes = Number(maxBodySize)
  const tooLarge = refusal(413, {
    code: INVALID_REQUEST,
    message: `Request body is larger than ${maxBytes} bytes`,
    data: { maxBodySize: maxBytes }
  })
  const admit = Learning.markAdmission((httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      // Tells the skills fast route the limit it must honour on this endpoint.
      const learning = yield* Learning.CurrentSlot
      if (learning !== undefined) learning.maxBodySize = Math.min(learning.maxBodySize ?? maxBytes, maxBytes)
      let body: Result.Result<ArrayBuffer, unknown> | undefined
      if (request.method === "POST") {
        const declared = request.headers["content-length"]
        if (declared !== undefined && Number(declared) > maxBytes) return tooLarge
        // Read here, under the limit, so effect's endpoint finds the body already read (the
        // request caches it) and never reads past the limit itself.
        body = yield* Effect.result(Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, maxBodySize))
        if (Result.isFailure(body) && isBodyTooLarge(body.failure)) return tooLarge
      }
      const response = yield* httpEffect.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBodySize),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.flatMap(HttpServerError.causeResponse(cause), ([response]) =>
              response.status >= 500
                ? Effect.as(Effect.logError("MCP HTTP request failed", cause), response)
                : Effect.succeed(response))
        )
      )
      return withBody(request, response, body)
    })
  )
  return HttpRouter.middleware(admit)
}

/**
 * {@link middleware} as a layer, to provide to `McpServer.layerHttp`.
 *
 * @since 0.1.0
 */
export const layer = (options?: Options): Layer.Layer<never> => middleware(options).layer as Layer.Layer<never>
