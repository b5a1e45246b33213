/**
 * The connection `layerHttp` opens: effect's HTTP transport for the handshake and every other
 * method, and the sender of the extension's own requests over stateless 2026-07-28.
 */
import * as Effect from "effect/Effect"
import * as McpClient from "effect/ai/McpClient"
import type * as McpProtocol from "effect/ai/McpProtocol"
import * as Transport from "./transport.js"

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
  return Effect.all({
    network: Effect.succeed("tcp" as const),
    transport: McpClient.http({
      url: options.url,
      protocol,
      maxMessageBytes: options.maxMessageBytes,
      ...(headers === undefined || Effect.isEffect(headers) ? {} : { headers })
    }),
    // Stateless 2026-07-28 only: 2025-11-25 sessions stay with McpClient's transport.
    send: protocol.protocolVersion !== "2026-07-28"
      ? Effect.succeed(undefined)
      : options.readTransport === "lean"
      ? Transport.leanSend({
        url: options.url,
        headers: headers === undefined ? Effect.succeed({}) : Effect.isEffect(headers) ? headers : Effect.succeed(headers),
        maxMessageBytes: options.maxMessageBytes,
        maxSockets: options.maxConnections ?? 8
      })
      : Transport.httpSend({
        url: options.url,
        headers: headers === undefined || Effect.isEffect(headers) ? undefined : headers,
        maxMessageBytes: options.maxMessageBytes
      })
  })
}
