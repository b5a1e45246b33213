/**
 * The connection `layerHttp` opens: effect's HTTP transport for the handshake and every other
 * method, and the one sender of the extension's own requests over stateless 2026-07-28, its bytes
 * moved through the provided `HttpClient` or over a `node:http` agent.
 */
import * as Effect from "effect/Effect"
import * as McpClient from "effect/ai/McpClient"
import type * as McpProtocol from "effect/ai/McpProtocol"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as ClientLimits from "../ClientLimits.js"
import * as HttpSend from "./httpSend.js"

/** Opens the transports of one connection attempt at `protocol`'s revision. */
export const connect = (
  protocol: McpProtocol.ProtocolAdapter<McpClient.ProtocolVersion>,
  options: {
    readonly url: string
    readonly headers: Readonly<Record<string, string>> | Effect.Effect<Readonly<Record<string, string>>> | undefined
    readonly readTransport: "HttpClient" | "lean" | undefined
    readonly maxConnections: number | undefined
    readonly maxMessageBytes: number
  }
) => {
  const headers = options.headers
  const fixed = headers === undefined || Effect.isEffect(headers) ? undefined : headers
  return Effect.all({
    network: Effect.succeed("tcp" as const),
    transport: McpClient.http({
      url: options.url,
      protocol,
      maxMessageBytes: options.maxMessageBytes,
      ...(fixed === undefined ? {} : { headers: fixed })
    }),
    // Stateless 2026-07-28 only: 2025-11-25 sessions stay with McpClient's transport.
    send: protocol.protocolVersion !== "2026-07-28"
      ? Effect.succeed(undefined)
      : options.readTransport === "lean"
      ? Effect.flatMap(HttpSend.viaAgent(options.url, options.maxConnections ?? ClientLimits.MaxConnections), (post) =>
        HttpSend.make(post, {
          headers: headers === undefined ? Effect.succeed({}) : Effect.isEffect(headers) ? headers : Effect.succeed(headers),
          maxMessageBytes: options.maxMessageBytes
        }))
      : Effect.gen(function*() {
        // Headers given as an Effect are already on the client (see `layerHttp`).
        const client = yield* HttpClient.HttpClient
        return yield* HttpSend.make(HttpSend.viaHttpClient(client, options.url), {
          headers: Effect.succeed(fixed ?? {}),
          maxMessageBytes: options.maxMessageBytes
        })
      })
  })
}

/**
 * Runs `connect` with headers given as an Effect added to every request of the HttpClient, which
 * both transports send through (fixed headers are given to each transport).
 */
export const withHeaders = <A, E, R>(
  headers: Readonly<Record<string, string>> | Effect.Effect<Readonly<Record<string, string>>> | undefined,
  connect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | HttpClient.HttpClient> =>
  headers === undefined || !Effect.isEffect(headers) ? connect : Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const withHeaders = HttpClient.mapRequestEffect(client, (request) =>
      Effect.map(headers, (values) => HttpClientRequest.setHeaders(request, values)))
    return yield* Effect.provideService(connect, HttpClient.HttpClient, withHeaders)
  })
