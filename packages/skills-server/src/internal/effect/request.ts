/**
 * A request's body as the fast route reads it. effect's `request.arrayBuffer` makes each request's
 * body a cached effect run on a fiber of its own, then reads the stream through another: about 20 µs
 * of the 55-75 µs of CPU a small `resources/read` takes here (alternated 3-second loads). Where
 * effect's Node server made the request (`@effect/platform-node`'s, whose body cache is the own field
 * `arrayBufferEffect`, still empty), the bytes are read from its Node stream here and put in that
 * cache, so that a request the route then leaves to effect reads the same body from it. Anywhere
 * else, effect's own read.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import { Readable } from "node:stream"

// The parts of `@effect/platform-node`'s request this module uses.
interface NodeRequest {
  readonly bodySource: unknown
  readonly onError: (cause: unknown) => unknown
  arrayBufferEffect: Effect.Effect<ArrayBuffer, unknown> | undefined
}

const isNodeRequest = (request: object): request is NodeRequest =>
  Object.hasOwn(request, "arrayBufferEffect") && (request as NodeRequest).arrayBufferEffect === undefined &&
  typeof (request as NodeRequest).onError === "function"

/**
 * The body of `request`, which its `Content-Length` says is `length` bytes (the route admits no
 * other request): read from Node's stream where effect's Node server made the request, else by
 * effect.
 */
export const read = (request: HttpServerRequest.HttpServerRequest, length: number): Effect.Effect<Uint8Array, unknown> => {
  const source = isNodeRequest(request) ? request.bodySource : undefined
  if (!(source instanceof Readable) || source.readableEnded || source.destroyed || source.readableFlowing !== null) {
    return Effect.map(request.arrayBuffer, (buffer) => new Uint8Array(buffer))
  }
  const node = request as unknown as NodeRequest
  return Effect.callback<Uint8Array, unknown>((resume) => {
    // Its own memory, exactly the body: effect's cache holds an `ArrayBuffer` of the body alone.
    const bytes = new Uint8Array(length)
    let filled = 0
    const detach = () => source.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose)
    const settle = (outcome: Effect.Effect<Uint8Array, unknown>) => {
      detach()
      node.arrayBufferEffect = Effect.map(outcome, (read) => read.buffer as ArrayBuffer)
      resume(outcome)
    }
    const onData = (chunk: Buffer) => {
      // Node's parser delivers `Content-Length` bytes at most: more is a stream that is not it.
      if (filled + chunk.byteLength > length) return settle(Effect.fail(node.onError(new Error("body longer than its Content-Length"))))
      bytes.set(chunk, filled)
      filled += chunk.byteLength
    }
    const onEnd = () =>
      settle(filled === length ? Effect.succeed(bytes) : Effect.fail(node.onError(new Error("body shorter than its Content-Length"))))
    const onError = (error: unknown) => settle(Effect.fail(node.onError(error)))
    const onClose = () => settle(Effect.fail(node.onError(new Error("request closed before its body was read"))))
    source.on("data", onData).once("end", onEnd).once("error", onError).once("close", onClose)
    return Effect.sync(detach)
  })
}
