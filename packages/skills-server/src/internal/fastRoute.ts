/**
 * The fast route: a global `HttpRouter` middleware, installed by the skills layer, that answers
 * single stateless 2026-07-28 POSTs of `skills/list`, `skills/get`, `resources/read` of a static
 * skill file and `resources/directory/read` with the request id spliced into answers encoded once
 * per snapshot (`encoded.ts`), ahead of effect's generic dispatch (Schema decode, RPC, fibers,
 * stringify). Everything else goes to effect untouched, and so does every request the route is
 * not sure effect would admit and answer the same way: the route never refuses anything itself.
 *
 * **Learning the endpoint.** The layer cannot see `layerHttp`'s path, so a path is trusted only
 * after a 2026-07-28 request on it reached this server's skills handlers through effect's route
 * (`learning.ts`), with the same request object (a router that rewrites the request, e.g. a
 * prefix, keeps effect's path) and, when `HttpAdmission` guards it, its body limit.
 *
 * **Admission: what effect's POST route (`McpServer.addMcpHttpRoutes`, `mcpRuntime.admitHttp`,
 * effect 4.1.0) and `HttpAdmission` apply to such a request, and what this route requires before
 * answering** (anything else falls through, and effect answers or refuses it):
 *
 * 1. Origin: effect refuses an `Origin` outside `allowedOrigins`, which this layer cannot see, so
 *    any request with an `Origin` header falls through. Host: effect applies no Host policy.
 * 2. Content type: effect wants `application/json` as the first media type (415 otherwise); the
 *    route wants exactly one media type, `application/json` (parameters allowed, no `q`).
 * 3. Accept: effect wants `application/json` and `text/event-stream` among the accepted types
 *    (406); the route wants both, listed without parameters.
 * 4. Session: a request with `Mcp-Session-Id` is effect's (session lookup, 404).
 * 5. Body size: `HttpAdmission`'s limit (413) and the route's own 64 KiB bound: only a declared
 *    `Content-Length` within both is read (never a chunked body), so no limit is bypassed.
 * 6. JSON-RPC shape: nested no deeper than the admission's bound (`nesting.ts`), a single object
 *    (batches are effect's), `jsonrpc: "2.0"`, a string or
 *    safe-integer `id` (notifications and null ids are effect's), a string `method`, no
 *    `result`/`error`, and object `params`; a body that is not JSON is effect's (-32700).
 * 7. `MCP-Protocol-Version` vs `_meta`: the header must equal the learnt stateless revision and
 *    `_meta["io.modelcontextprotocol/protocolVersion"]`, `_meta` must carry an object
 *    `clientCapabilities`, and effect's own decoder of the request metadata must accept `_meta`
 *    (400 / -32602 / -32020 / -32022 otherwise).
 * 8. `Mcp-Method` must equal `method` (400 / -32020), and for `resources/read` `Mcp-Name` must
 *    be the URI itself, in plain printable ASCII (effect also accepts a base64 form: that falls
 *    through).
 * 9. Method: one of the four above, `resources/directory/read` only where the server serves it
 *    (404 / -32601 otherwise); params as effect's schemas decode them (string `uri`, string
 *    `cursor` when present).
 * 10. Visibility and middleware: the route runs the server's visibility check itself, with the
 *    services of this request's context (those `HttpRouter` middleware outside this one
 *    provides), only where effect runs no `McpServer` middleware around the check (probed once
 *    when learning the endpoint, `handlers.probeMiddleware`); a request it then leaves to effect
 *    (hidden or absent URI) carries the decision along, so the check runs once; a check that
 *    fails or dies leaves the request to effect, which runs it again and answers its error. A `layerHttp` route with
 *    `HttpRouter` middleware other than `HttpAdmission` gets no fast route at all (the layer sees
 *    that middleware in its context and does not install the route).
 * 11. The answer: only a static skill's (a page or URI touching any other kind falls through),
 *    and only a success: unknown, hidden or malformed URIs and cursors get their errors from
 *    effect.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import { McpSchema } from "effect/ai"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type * as SkillRegistry from "../SkillRegistry.js"
import * as Encoded from "./encoded.js"
import * as Handlers from "./handlers.js"
import * as Learning from "./learning.js"
import * as Nesting from "./nesting.js"
import * as Telemetry from "./telemetry.js"

/** Largest body the route reads itself; larger requests are never skills reads. */
export const MaxBody = 64 * 1024

/** Most distinct request metadata whose decoding one layer keeps. */
const MaxProfiles = 256

/** Most endpoint paths one layer learns (a router with path parameters could offer many). */
const MaxRoutes = 64

interface Route {
  /** effect runs `McpServer` middleware around the visibility check: requests under it are effect's. */
  readonly middleware: boolean
  readonly protocolVersion: string
  readonly profile: (metadata: unknown) => Effect.Effect<unknown, unknown>
  readonly directoryRead: boolean
  readonly maxBody: number
  readonly encoded: Encoded.Encoded
}

/** The path of a request URL (its query left out). */
export const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

const isJsonContentType = (header: string | undefined) => {
  if (header === undefined || header.includes(",")) return false
  const lower = header.toLowerCase()
  if (lower.includes("q=")) return false
  const semicolon = lower.indexOf(";")
  return (semicolon === -1 ? lower : lower.slice(0, semicolon)).trim() === "application/json"
}

const acceptsBoth = (header: string | undefined) => {
  if (header === undefined || header.includes(";")) return false
  let json = false
  let events = false
  for (const part of header.split(",")) {
    const type = part.trim().toLowerCase()
    if (type === "application/json") json = true
    else if (type === "text/event-stream") events = true
  }
  return json && events
}

const isPlainName = (header: string) => /^[\x20-\x7e]*$/.test(header) && !header.startsWith("=?base64?")

const ProtocolVersionKey = "io.modelcontextprotocol/protocolVersion"
const ClientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const head = encoder.encode(`{"jsonrpc":"2.0","id":`)
const middle = encoder.encode(`,"result":`)
// effect's HTTP serialization ends every message with a newline.
const tail = encoder.encode("}\n")

const respond = (id: string | number, result: Uint8Array) =>
  HttpServerResponse.uint8Array(Buffer.concat([head, encoder.encode(JSON.stringify(id)), middle, result, tail]), {
    contentType: "application/json"
  })

const optionalString = (value: unknown): value is string | undefined => value === undefined || typeof value === "string"

/**
 * The middleware of one skills layer, for the server `server`. `state` is the layer's; the route
 * reads the current snapshot once per request.
 */
export const make = <E, R>(server: object, state: Handlers.State, check: Check<E, R> | undefined) => {
  const routes = new Map<string, Route | null>()

  const learn = (
    request: HttpServerRequest.HttpServerRequest,
    path: string,
    httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
  ) => {
    const slot: Learning.Slot = {}
    return Effect.tap(Effect.provideService(httpEffect, Learning.CurrentSlot, slot), (response) =>
      Effect.sync(() => {
        if (slot.server !== server || response.status !== 200 || routes.size >= MaxRoutes) return
        // Not yet probed (the request reached no skills handler that decides visibility).
        if (check !== undefined && slot.middleware === undefined) return
        if (slot.request !== request) {
          routes.set(path, null)
          return
        }
        routes.set(path, {
          middleware: slot.middleware === true,
          protocolVersion: slot.protocolVersion!,
          profile: slot.profile as Route["profile"],
          directoryRead: slot.directoryRead === true,
          maxBody: Math.min(MaxBody, slot.maxBodySize ?? MaxBody),
          encoded: Encoded.make(state, slot.serverInfo ?? {})
        })
      }))
  }

  // Clients send the same `_meta` on every request: effect's decoding of it is kept (successes
  // only, up to `MaxProfiles` distinct ones), keyed by its JSON.
  const profiles = new Map<string, unknown>()
  const decodedProfile = (route: Route, meta: object) => {
    const key = JSON.stringify(meta)
    const known = profiles.get(key)
    if (known !== undefined) return Effect.succeed(known)
    return Effect.map(Effect.exit(route.profile(meta)), (profile) => {
      if (Exit.isFailure(profile)) return undefined
      if (profiles.size < MaxProfiles) profiles.set(key, profile.value)
      return profile.value
    })
  }

  const answer = Effect.fnUntraced(function*(route: Route, request: HttpServerRequest.HttpServerRequest) {
    const headers = request.headers
    const version = headers["mcp-protocol-version"]
    const method = headers["mcp-method"]
    if (
      version !== route.protocolVersion || method === undefined || headers.origin !== undefined ||
      headers["mcp-session-id"] !== undefined || headers["transfer-encoding"] !== undefined ||
      !isJsonContentType(headers["content-type"]) || !acceptsBoth(headers.accept)
    ) return undefined
    if (method === "resources/directory/read" ? !route.directoryRead : !fastMethods.has(method)) return undefined
    const length = headers["content-length"]
    if (length === undefined || !/^[0-9]{1,9}$/.test(length) || Number(length) > route.maxBody) return undefined
    const body = yield* Effect.exit(request.arrayBuffer)
    if (Exit.isFailure(body)) return undefined
    const bytes = new Uint8Array(body.value)
    // Keying `_meta` by its JSON recurses: a message nested that deep is the admission's to refuse.
    if (Nesting.tooDeep(bytes)) return undefined
    let message: unknown
    try {
      message = JSON.parse(decoder.decode(bytes))
    } catch {
      return undefined
    }
    if (!Predicate.isObject(message) || message.jsonrpc !== "2.0" || message.method !== method) return undefined
    if ("result" in message || "error" in message) return undefined
    const id = message.id
    if (!(typeof id === "string" || Number.isSafeInteger(id))) return undefined
    const params = message.params
    if (!Predicate.isObject(params)) return undefined
    const meta = params._meta
    if (
      !Predicate.isObject(meta) || meta[ProtocolVersionKey] !== version || !Predicate.isObject(meta[ClientCapabilitiesKey])
    ) return undefined
    const profile = yield* decodedProfile(route, meta)
    if (profile === undefined) return undefined
    let decision: Handlers.Decision | undefined
    if (check !== undefined) {
      if (route.middleware) return undefined
      const decided = yield* Effect.exit(check({
        method: method as Handlers.Method,
        protocolVersion: version,
        headers,
        sessionId: undefined,
        requestContext: McpSchema.McpRequestContext.of({
          ...(profile as Omit<McpSchema.McpRequestContext["Service"], "clientId">),
          clientId: FastClientId
        })
      }) as Effect.Effect<Handlers.Decision, E>)
      if (Exit.isFailure(decided)) return undefined
      decision = decided.value
    }
    const snapshot: SkillRegistry.Snapshot = yield* state.registry.snapshot
    const visible = decision === undefined ? Encoded.everyone : Handlers.visibleFor(snapshot, decision, true)
    const uri = params.uri
    const cursor = params.cursor
    let result: Uint8Array | undefined
    switch (method) {
      case "skills/list":
        result = optionalString(cursor) ? route.encoded.listSkills(snapshot, cursor, visible) : undefined
        break
      case "skills/get":
        result = typeof uri === "string" ? route.encoded.getSkill(snapshot, uri, visible) : undefined
        break
      case "resources/read":
        result = typeof uri === "string" && headers["mcp-name"] === uri && isPlainName(uri)
          ? route.encoded.readResource(snapshot, uri, visible)
          : undefined
        break
      case "resources/directory/read":
        result = typeof uri === "string" && optionalString(cursor)
          ? route.encoded.readDirectory(snapshot, uri, cursor, visible)
          : undefined
        break
    }
    if (result !== undefined) return respond(id as string | number, result)
    // effect answers, with the decision made here: the check runs once per request.
    return decision === undefined ? undefined : { method, decision }
  })

  return (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request: HttpServerRequest.HttpServerRequest) => {
      if (request.method !== "POST") return httpEffect
      const path = pathOf(request.url)
      const route = routes.get(path)
      if (route === undefined) return learn(request, path, httpEffect)
      if (route === null) return httpEffect
      return Effect.flatMap(Telemetry.fastRoute(request, answer(route, request), HttpServerResponse.isHttpServerResponse), (answered) =>
        answered === undefined
          ? httpEffect
          : HttpServerResponse.isHttpServerResponse(answered)
          ? Effect.succeed(answered)
          : Effect.provideService(httpEffect, Learning.Decided, answered))
    })
}

/** The visibility check of the layer, as `SkillsServer.Visibility` types it. */
export type Check<E, R> = (request: Handlers.VisibilityRequest) => Effect.Effect<Handlers.Decision, E, R>

// effect numbers its clients per connection; a request the fast route answers never becomes one.
const FastClientId = -1

const fastMethods: ReadonlySet<string> = new Set(["skills/list", "skills/get", "resources/read"])
