/**
 * What HTTP admission does to a request (see `HttpAdmission`): the body limit, the nesting bound
 * (`nesting.ts`) and a JSON-RPC error body on every refusal. One implementation, used by
 * `HttpAdmission`'s route middleware and by the guard `SkillsServer.layer` puts on its router
 * where no `HttpAdmission` is provided to its endpoint (`guard`).
 *
 * @internal
 */
import * as ByteSize from "effect/ByteSize"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { HttpIncomingMessage, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import type * as Types from "effect/Types"
import * as Port from "./effect/port.js"
import * as Nesting from "./nesting.js"

export const INVALID_REQUEST = -32600
const SESSION_NOT_FOUND = -32001
const INTERNAL_ERROR = -32603

/** A JSON-RPC error answered over HTTP with `status`. */
export const errorResponse = (
  status: number,
  id: string | number | null,
  error: { readonly code: number; readonly message: string; readonly data?: unknown },
  headers?: HttpServerResponse.Options.WithContentType["headers"]
) => HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id, error }, { status, headers })

/** What a refusal says of an `Origin` that is not allowed (effect's endpoint, the router's admission). */
export const originNotAllowed = (origin: string) => `Origin ${origin} is not allowed`

const refusal = (
  status: number,
  error: { readonly code: number; readonly message: string; readonly data?: unknown },
  headers?: HttpServerResponse.HttpServerResponse["headers"]
) => errorResponse(status, null, error, headers)

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
      return { code: INVALID_REQUEST, message: originNotAllowed(request.headers.origin ?? "(none)") }
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

const decoder = new TextDecoder()

// Parsed only to find the id: `JSON.parse` takes any depth.
const nestedTooDeep = (bytes: Uint8Array) => errorResponse(200, Nesting.idOfText(decoder.decode(bytes)), Nesting.error)

/** The admission of one endpoint, with its body limit: a route middleware function. */
export const make = (maxBodySize: ByteSize.ByteSize) => {
  if (maxBodySize === ByteSize.zero) throw new RangeError("HttpAdmission maxBodySize must be positive")
  const maxBytes = Number(maxBodySize)
  const tooLarge = refusal(413, {
    code: INVALID_REQUEST,
    message: `Request body is larger than ${maxBytes} bytes`,
    data: { maxBodySize: maxBytes }
  })
  return Port.markAdmission((httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      // Tells the skills fast route the limit it must honour on this endpoint.
      yield* Port.reportBodyLimit(maxBytes)
      let body: Result.Result<ArrayBuffer, unknown> | undefined
      if (request.method === "POST") {
        const declared = request.headers["content-length"]
        if (declared !== undefined && Number(declared) > maxBytes) return tooLarge
        // Read here, under the limit, so effect's endpoint finds the body already read (the
        // request caches it) and never reads past the limit itself.
        body = yield* Effect.result(Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, maxBodySize))
        if (Result.isFailure(body) && isBodyTooLarge(body.failure)) return tooLarge
        if (Result.isSuccess(body) && Nesting.tooDeep(new Uint8Array(body.success))) {
          return nestedTooDeep(new Uint8Array(body.success))
        }
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
}

/**
 * Whether an MCP endpoint of effect 4.1.0 would read this request's body: a POST whose
 * `Content-Type` names `application/json` and whose `Accept` names it and `text/event-stream`
 * (`McpServer.addMcpHttpRoutes` answers any other POST 415 or 406 unread). Looser than effect's
 * own test, so no body it reads escapes the guard.
 */
const isMcpPost = (request: HttpServerRequest.HttpServerRequest) => {
  if (request.method !== "POST") return false
  const accept = request.headers.accept?.toLowerCase()
  return request.headers["content-type"]?.toLowerCase().includes("application/json") === true &&
    accept !== undefined && accept.includes("application/json") && accept.includes("text/event-stream")
}

/**
 * A global router middleware: the admission of `make(maxBodySize)` for every request an MCP
 * endpoint would read, whatever its path (a global middleware runs before the router knows the
 * route); other requests pass untouched.
 */
export const guard = (maxBodySize: ByteSize.ByteSize) => {
  const admit = make(maxBodySize)
  return (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) => isMcpPost(request) ? admit(httpEffect) : httpEffect
    )
}
