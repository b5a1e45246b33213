/**
 * Which requests the fast route (`fastRoute.ts`) may answer: a pure predicate over a request's
 * headers and its decoded JSON-RPC message, admitting only what effect 4.1.0's POST route
 * (`McpServer.addMcpHttpRoutes`, `mcpRuntime.admitHttp`) and `HttpAdmission` would admit and
 * dispatch to the skills handlers. Anything else falls through to effect, which answers or
 * refuses it: the fast route never refuses anything itself.
 *
 * @internal
 */
import * as Predicate from "effect/Predicate"

/** A request's headers, lower-cased names (as effect's `HttpServerRequest` has them). */
export type Headers = Readonly<Record<string, string | undefined>>

/** What the fast route learnt of one endpoint (`learning.ts`). */
export interface Endpoint {
  /** The stateless revision effect serves there. */
  readonly protocolVersion: string
  readonly directoryRead: boolean
  /** The smaller of `ServerLimits.FastRouteMaxBody` and `HttpAdmission`'s limit on the endpoint. */
  readonly maxBody: number
}

/** An admitted request: what the fast route answers, if the snapshot answers it statically. */
export type Admitted =
  & { readonly id: string | number; readonly meta: Readonly<Record<string, unknown>> }
  & (
    | { readonly method: "skills/list"; readonly cursor: string | undefined }
    | { readonly method: "skills/get"; readonly uri: string }
    | { readonly method: "resources/read"; readonly uri: string }
    | { readonly method: "resources/directory/read"; readonly uri: string; readonly cursor: string | undefined }
  )

const fastMethods: ReadonlySet<string> = new Set(["skills/list", "skills/get", "resources/read"])

const isJsonContentType = (header: string | undefined) => {
  if (header === undefined || header.includes(",")) return false
  const lower = header.toLowerCase()
  if (lower.includes("q=")) return false
  const semicolon = lower.indexOf(";")
  return (semicolon === -1 ? lower : lower.slice(0, semicolon)).trim() === "application/json"
}

// What clients send (the SDKs, effect's client): known without splitting the header.
const Both = "application/json, text/event-stream"

const acceptsBoth = (header: string | undefined) => {
  if (header === Both) return true
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

/**
 * Whether the headers alone admit the request (the body is read only then):
 *
 * 1. Origin: effect refuses an `Origin` outside `allowedOrigins`, which the skills layer cannot
 *    see, so any request with an `Origin` header falls through. effect applies no Host policy.
 * 2. Content type: effect wants `application/json` as the first media type (415 otherwise); the
 *    route wants exactly one media type, `application/json` (parameters allowed, no `q`).
 * 3. Accept: effect wants `application/json` and `text/event-stream` among the accepted types
 *    (406); the route wants both, listed without parameters.
 * 4. Session: a request with `Mcp-Session-Id` is effect's (session lookup, 404).
 * 5. Body size: only a declared `Content-Length` within `endpoint.maxBody` (never a chunked
 *    body), so no limit is bypassed.
 * 6. `MCP-Protocol-Version` must be the endpoint's stateless revision, and `Mcp-Method` one of the
 *    four skills reads (`resources/directory/read` only where it is served; 404 / -32601).
 */
export const admitsHeaders = (endpoint: Endpoint, headers: Headers): boolean => {
  const method = headers["mcp-method"]
  if (
    headers["mcp-protocol-version"] !== endpoint.protocolVersion || method === undefined || headers.origin !== undefined ||
    headers["mcp-session-id"] !== undefined || headers["transfer-encoding"] !== undefined ||
    !isJsonContentType(headers["content-type"]) || !acceptsBoth(headers.accept)
  ) return false
  if (method === "resources/directory/read" ? !endpoint.directoryRead : !fastMethods.has(method)) return false
  const length = headers["content-length"]
  return length !== undefined && /^[0-9]{1,9}$/.test(length) && Number(length) <= endpoint.maxBody
}

const ProtocolVersionKey = "io.modelcontextprotocol/protocolVersion"
const ClientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"

const optionalString = (value: unknown): value is string | undefined => value === undefined || typeof value === "string"

// effect also accepts a base64 form of `Mcp-Name`: that falls through.
const isPlainName = (header: string) => /^[\x20-\x7e]*$/.test(header) && !header.startsWith("=?base64?")

/**
 * The admitted request `message` (the parsed body, under headers `admitsHeaders` accepted) is, or
 * `undefined` to fall through:
 *
 * 1. JSON-RPC shape: a single object (batches are effect's), `jsonrpc: "2.0"`, a string or
 *    safe-integer `id` (notifications and null ids are effect's), `method` equal to `Mcp-Method`
 *    (400 / -32020), no `result`/`error`, object `params`.
 * 2. `_meta`: an object whose protocol version is the header's, carrying an object
 *    `clientCapabilities` (effect's own decoder of the request metadata must then accept it:
 *    the caller checks that).
 * 3. Params as effect's schemas decode them (string `uri`, string `cursor` when present); for
 *    `resources/read`, `Mcp-Name` must be the URI itself, in plain printable ASCII.
 */
export const admitsMessage = (
  headers: Headers,
  message: unknown
): Admitted | undefined => {
  const method = headers["mcp-method"]
  if (!Predicate.isObject(message) || message.jsonrpc !== "2.0" || message.method !== method) return undefined
  if ("result" in message || "error" in message) return undefined
  const id = message.id
  if (!(typeof id === "string" || Number.isSafeInteger(id))) return undefined
  const params = message.params
  if (!Predicate.isObject(params)) return undefined
  const meta = params._meta
  if (
    !Predicate.isObject(meta) || meta[ProtocolVersionKey] !== headers["mcp-protocol-version"] ||
    !Predicate.isObject(meta[ClientCapabilitiesKey])
  ) return undefined
  const common = { id: id as string | number, meta: meta as Readonly<Record<string, unknown>> }
  const { cursor, uri } = params
  switch (method) {
    case "skills/list":
      return optionalString(cursor) ? { ...common, method, cursor } : undefined
    case "skills/get":
      return typeof uri === "string" ? { ...common, method, uri } : undefined
    case "resources/read":
      return typeof uri === "string" && headers["mcp-name"] === uri && isPlainName(uri) ? { ...common, method, uri } : undefined
    case "resources/directory/read":
      return typeof uri === "string" && optionalString(cursor) ? { ...common, method, uri, cursor } : undefined
  }
  return undefined
}
