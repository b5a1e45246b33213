/**
 * What long-lived SSE responses need to cross proxies and balancers: no buffering, and traffic
 * while nothing happens; and a bound on what a reader that stopped reading makes the server hold.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as ServerLimits from "../ServerLimits.js"

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
 * Adds an SSE comment every `ServerLimits.KeepAliveInterval` (as effect does on `subscriptions/listen`), so an idle stream is
 * not cut by a proxy's or client's idle timeout; it ends when `events` ends.
 */
export const withKeepAlive = <E, R>(events: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Uint8Array, E, R> =>
  Stream.merge(events, Stream.tick(ServerLimits.KeepAliveInterval).pipe(Stream.drop(1), Stream.map(() => keepAliveComment)), {
    haltStrategy: "left"
  })

/**
 * `events`, taken as they happen into a buffer of at most `maxBytes` that the response's writer
 * has not taken yet. A reader that falls behind (the client holds the stream open and stops
 * reading, so the writer waits on the socket) would make the buffer pass its bound: then `onDrop`
 * runs and `writer` (the fiber writing the response: the request's) is interrupted, which closes
 * the connection and releases the stream. A reader that keeps up never holds more than a burst.
 */
export const bounded = <E, R>(
  events: Stream.Stream<Uint8Array, E, R>,
  maxBytes: number,
  writer: Fiber.Fiber<unknown, unknown>,
  onDrop: Effect.Effect<void>
): Stream.Stream<Uint8Array, E, R> =>
  Stream.unwrap(Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Uint8Array, E | Cause.Done>()
    let pending = 0
    const take = (bytes: Uint8Array) =>
      pending + bytes.length > maxBytes
        ? Effect.andThen(Effect.andThen(onDrop, Effect.forkDetach(Fiber.interrupt(writer))), Effect.interrupt)
        : Effect.sync(() => {
          pending += bytes.length
          Queue.offerUnsafe(queue, bytes)
        })
    yield* Stream.runForEach(events, take).pipe(
      Effect.matchCauseEffect({ onSuccess: () => Queue.end(queue), onFailure: (cause) => Queue.failCause(queue, cause) }),
      Effect.forkScoped
    )
    return Stream.fromQueue(queue).pipe(Stream.tap((bytes) => Effect.sync(() => void (pending -= bytes.length))))
  }))
