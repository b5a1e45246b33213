/**
 * Test harness: a real effect McpServer with the skills adapters, reached over loopback HTTP (raw
 * fetch of JSON-RPC, both revisions) or over an in-process stdio pipe (NDJSON, both revisions).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { McpProtocol, McpServer } from "effect/ai"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import { SkillsServer } from "../../src/index.js"

export type Revision = "2026-07-28" | "2025-11-25"

export interface Response {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: any
}

/** A JSON-RPC client bound to one server and one protocol revision. */
export interface Client {
  readonly revision: Revision
  readonly transport: "http" | "stdio"
  /** Sends a request and returns the raw response (HTTP status 200 for stdio). */
  readonly send: (method: string, params?: Record<string, unknown>, headers?: Record<string, string>) => Effect.Effect<Response>
  /** The `result` of a successful request; fails the test otherwise. */
  readonly call: (method: string, params?: Record<string, unknown>) => Effect.Effect<any>
  /** The `error` of a failed request; fails the test otherwise. */
  readonly fail: (method: string, params?: Record<string, unknown>) => Effect.Effect<{ code: number; message: string; data?: any }>
}

export const clientInfo = { name: "skills-test", version: "0.0.0" }

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": clientInfo
}

let nextId = 1

const namedMethods: Record<string, string> = { "resources/read": "uri", "tools/call": "name", "prompts/get": "name" }

/** `Mcp-Name` as the 2026-07-28 transport expects it: plain when it is visible ASCII, else base64. */
const headerValue = (value: string) =>
  /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The headers and body of a 2026-07-28 request as a client sends it over HTTP: the routing headers
 * (`Mcp-Name` for the named methods) and `_meta` merged into params that are an object (any other
 * params, for tests that send garbage, go as they are).
 */
export const modernRequest = (
  method: string,
  params: unknown = {},
  options: { readonly id?: string | number; readonly headers?: Record<string, string> } = {}
): { readonly headers: Record<string, string>; readonly body: string } => {
  const nameKey = namedMethods[method]
  const name = nameKey === undefined || !isRecord(params) ? undefined : params[nameKey]
  return {
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": headerValue(name) } : {}),
      ...options.headers
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: options.id ?? nextId++,
      method,
      params: isRecord(params) ? { ...params, _meta: { ...meta, ...(params._meta as object) } } : params
    })
  }
}

const parseBody = (contentType: string, text: string): any => {
  if (text.length === 0) return undefined
  if (contentType.includes("text/event-stream")) {
    const data = text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim())
    const messages = data.filter((line) => line.length > 0).map((line) => JSON.parse(line))
    return messages.find((message) => "id" in message && ("result" in message || "error" in message)) ?? messages[0]
  }
  return JSON.parse(text)
}

/** POSTs `body` with `headers` (JSON content type and both accepts unless given); the answer as text. */
export const postText = (
  url: string,
  headers: Record<string, string>,
  body: string
): Effect.Effect<{ readonly status: number; readonly headers: Record<string, string>; readonly text: string }> =>
  Effect.promise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body
    })
    const text = await response.text()
    const out: Record<string, string> = {}
    response.headers.forEach((value, key) => {
      out[key] = value
    })
    return { status: response.status, headers: out, text }
  })

const parsed = (answer: Effect.Success<ReturnType<typeof postText>>): Response => ({
  status: answer.status,
  headers: answer.headers,
  body: parseBody(answer.headers["content-type"] ?? "", answer.text)
})

const post = (url: string, headers: Record<string, string>, message: unknown): Effect.Effect<Response> =>
  Effect.map(postText(url, headers, JSON.stringify(message)), parsed)

const expectResult = (method: string, response: Response) =>
  response.body?.result !== undefined
    ? Effect.succeed(response.body.result)
    : Effect.die(new Error(`${method} failed: ${response.status} ${JSON.stringify(response.body)}`))

const expectError = (method: string, response: Response) =>
  response.body?.error !== undefined
    ? Effect.succeed(response.body.error)
    : Effect.die(new Error(`${method} unexpectedly succeeded: ${JSON.stringify(response.body)}`))

export const makeClient = (
  revision: Revision,
  transport: "http" | "stdio",
  send: Client["send"]
): Client => ({
  revision,
  transport,
  send,
  call: (method, params) => Effect.flatMap(send(method, params), (response) => expectResult(method, response)),
  fail: (method, params) => Effect.flatMap(send(method, params), (response) => expectError(method, response))
})

/** The same client sending extra headers on every request. */
export const withHeaders = (client: Client, headers: Record<string, string>): Client =>
  makeClient(client.revision, client.transport, (method, params, extra) => client.send(method, params, { ...headers, ...extra }))

/** A 2026-07-28 client over HTTP: per-request `_meta` and the routing headers. */
export const modernHttp = (url: string): Client =>
  makeClient("2026-07-28", "http", (method, params = {}, headers = {}) => {
    const request = modernRequest(method, params, { headers })
    return Effect.map(postText(url, request.headers, request.body), parsed)
  })

/** A 2025-11-25 client over HTTP: `initialize`, then requests in the session. */
export const legacyHttp = (url: string, headers: Record<string, string> = {}): Effect.Effect<Client & { readonly initialize: any }> =>
  Effect.gen(function*() {
    const init = yield* post(url, headers, {
      jsonrpc: "2.0",
      id: nextId++,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
    })
    const session = init.headers["mcp-session-id"]
    if (session === undefined) return yield* Effect.die(new Error(`no session: ${JSON.stringify(init)}`))
    const sessionHeaders = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25", ...headers }
    yield* post(url, sessionHeaders, { jsonrpc: "2.0", method: "notifications/initialized" })
    return {
      ...makeClient("2025-11-25", "http", (method, params = {}, extra = {}) =>
        post(url, { ...sessionHeaders, ...extra }, { jsonrpc: "2.0", id: nextId++, method, params })),
      initialize: init.body.result
    }
  })

/** The URL of the HTTP server under test. */
export class ServerUrl extends Context.Service<ServerUrl, string>()("test/ServerUrl") {}

export interface ServerOptions {
  readonly directoryRead?: boolean
  readonly cacheHints?: McpServer.CacheHints
  readonly instructions?: string
}

export const adapters = (options?: ServerOptions) =>
  SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25], {
    directoryRead: options?.directoryRead ?? true
  })

/** Serves an HTTP app (routes) on 127.0.0.1, on a free port, and provides its MCP URL. */
export const serveApp = <E>(app: Layer.Layer<any, E, any>): Layer.Layer<ServerUrl, E> => {
  const url = Layer.effect(ServerUrl)(
    Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("expected a TCP address"))
      return `http://127.0.0.1:${address.port}/mcp`
    })
  )
  // Requirement markers are met by the middleware the caller provided to `app`; a mistake fails the test at runtime.
  return Layer.merge(HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }), url).pipe(
    Layer.provide(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }))
  ) as unknown as Layer.Layer<ServerUrl, E>
}

/** An HTTP MCP server on 127.0.0.1 (free port) with `registrations`, providing its URL. */
export const httpServer = <E, R>(registrations: Layer.Layer<any, E, R>, options?: ServerOptions) => {
  const app = McpServer.layerHttp({
    name: "skills-test-server",
    version: "1.0.0",
    path: "/mcp",
    protocols: adapters(options),
    registrations,
    ...(options?.cacheHints === undefined ? {} : { cacheHints: options.cacheHints }),
    ...(options?.instructions === undefined ? {} : { instructions: options.instructions })
  })
  return serveApp<E>(app as Layer.Layer<any, E, any>)
}

/** A stdio MCP server running in process, and a client per revision talking NDJSON to it. */
export class StdioPipe extends Context.Service<StdioPipe, {
  readonly request: (message: Record<string, unknown>) => Effect.Effect<Response>
  readonly notify: (message: Record<string, unknown>) => Effect.Effect<void>
  /** Every notification the server sent so far. */
  readonly notifications: Array<any>
}>()("test/StdioPipe") {}

export const stdioServer = <E, R>(registrations: Layer.Layer<any, E, R>, options?: ServerOptions) =>
  Layer.unwrap(Effect.gen(function*() {
    const input = yield* Queue.unbounded<Uint8Array>()
    const output = yield* Queue.unbounded<any>()
    let buffered = ""
    const stdio = Stdio.layerTest({
      stdin: Stream.fromQueue(input),
      stdout: () =>
        Sink.forEach((chunk: string | Uint8Array) =>
          Effect.sync(() => {
            buffered += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk)
            let newline = buffered.indexOf("\n")
            while (newline !== -1) {
              const line = buffered.slice(0, newline).trim()
              buffered = buffered.slice(newline + 1)
              if (line.length > 0) Queue.offerUnsafe(output, JSON.parse(line))
              newline = buffered.indexOf("\n")
            }
          })
        )
    })
    const encoder = new TextEncoder()
    const write = (message: unknown) => Queue.offer(input, encoder.encode(JSON.stringify(message) + "\n"))
    const notifications: Array<any> = []
    const pipe = StdioPipe.of({
      notifications,
      notify: (message) => Effect.asVoid(write({ jsonrpc: "2.0", ...message })),
      request: (message) =>
        Effect.gen(function*() {
          const id = `s${nextId++}`
          yield* write({ jsonrpc: "2.0", id, ...message })
          while (true) {
            const received = yield* Queue.take(output)
            if (received.id === id) return { status: 200, headers: {}, body: received }
            if (received.id === undefined) notifications.push(received)
          }
        })
    })
    const server = McpServer.layerStdio({
      name: "skills-test-server",
      version: "1.0.0",
      protocols: adapters(options),
      registrations,
      ...(options?.cacheHints === undefined ? {} : { cacheHints: options.cacheHints })
    })
    return Layer.merge(Layer.succeed(StdioPipe, pipe), server.pipe(Layer.provide(stdio)))
  })) as unknown as Layer.Layer<StdioPipe, E>

/** A 2026-07-28 client over the stdio pipe. */
export const modernStdio = (pipe: StdioPipe["Service"]): Client =>
  makeClient("2026-07-28", "stdio", (method, params = {}) =>
    pipe.request({ method, params: { ...params, _meta: { ...meta, ...(params._meta as object) } } }))

/** A 2025-11-25 client over the stdio pipe (initializes the connection first). */
export const legacyStdio = (pipe: StdioPipe["Service"]): Effect.Effect<Client & { readonly initialize: any }> =>
  Effect.gen(function*() {
    const init = yield* pipe.request({
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }
    })
    yield* pipe.notify({ method: "notifications/initialized" })
    return { ...makeClient("2025-11-25", "stdio", (method, params = {}) => pipe.request({ method, params })), initialize: init.body.result }
  })
