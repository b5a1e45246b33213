/**
 * What long-lived SSE responses need to cross proxies and balancers: no buffering, and traffic
 * while nothing happens.
 *
 * @internal
 */
import * as Stream from "effect/Stream"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

/**
 * Marks an event-stream response `X-Accel-Buffering: no` (the spec's advice for proxies that buffer
 * responses, nginx first among them); other responses are returned as they are.
 */
export const noProxyBuffering = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse =>
  response.body._tag === "Stream" && (response.body.contentType ?? "").startsWith("text/event-stream")
    ? HttpServerResponse.setHeader(response, "x-accel-buffering", "no")
    : response

const keepAliveComment = new TextEncoder().encode(": keepalive\n\n")

/**
 * Adds an SSE comment every 15 s (as effect does on `subscriptions/listen`), so an idle stream is
 * not cut by a proxy's or client's idle timeout; it ends when `events` ends.
 */
export const withKeepAlive = <E, R>(events: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Uint8Array, E, R> =>
  Stream.merge(events, Stream.tick("15 seconds").pipe(Stream.drop(1), Stream.map(() => keepAliveComment)), {
    haltStrategy: "left"
  })
