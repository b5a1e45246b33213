/**
 * A request's headers and body as the fast route reads them, from `@effect/platform-node`'s request
 * where effect's Node server made it.
 *
 * **Headers.** effect's `request.headers` copies Node's (each name lower-cased again, each array
 * joined) the first time it is read: about 1 µs a request, paid by each request the route answers
 * although Node's own object already has lower-cased names and the same values (arrays only for
 * `set-cookie`, which no admission reads). `headers` gives Node's object for an HTTP/1 request until
 * effect has a copy or an override (a router's `modify`, an absolute-form target), then effect's.
 *
 * **Body.** effect's `request.arrayBuffer` makes each request's body a cached effect run on a fiber
 * of its own, then reads the stream through another: about 20 µs of the 55-75 µs of CPU a small
 * `resources/read` took here (alternated 3-second loads). Where effect's Node server made the
 * request (`@effect/platform-node`'s, whose body cache is the own field `arrayBufferEffect`, still
 * empty), the bytes are read from its Node stream here and put in that cache, so that a request the
 * route then leaves to effect reads the same body from it. Anywhere else, effect's own read.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import { Readable } from "node:stream"

// The parts of `@effect/platform-node`'s request this module uses.
interface NodeRequest {
  readonly source: { readonly headers?: unknown; readonly httpVersionMajor?: unknown }
  readonly headersOverride: unknown
  readonly bodySource: unknown
  readonly onError: (cause: unknown) => unknown
  arrayBufferEffect: Effect.Effect<ArrayBuffer, unknown> | undefined
}

const isNodeRequest = (request: object): request is NodeRequest =>
  Object.hasOwn(request, "arrayBufferEffect") && typeof (request as NodeRequest).onError === "function"

/** A request's headers with the values effect's `request.headers` has for every name but `set-cookie`. */
export const headers = (request: HttpServerRequest.HttpServerRequest): Readonly<Record<string, string | undefined>> => {
  // HTTP/2 requests' headers are effect's to translate (`:authority` becomes `host`).
  if (isNodeRequest(request) && Object.hasOwn(request, "headersOverride") && request.headersOverride === undefined && request.source.httpVersionMajor === 1) {
    const own = request.source.headers
    if (typeof own === "object" && own !== null) return own as Readonly<Record<string, string | undefined>>
  }
  return request.headers
}

/**
 * The body of `request`, which its `Content-Length` says is `length` bytes (the route admits no
 * other request), or `undefined` when it cannot be read (the client went, the stream failed):
 * read from Node's stream where effect's Node server made the request, else by effect.
 */
export const read = (request: HttpServerRequest.HttpServerRequest, length: number): Effect.Effect<Uint8Array | undefined> => {
  const source = isNodeRequest(request) && request.arrayBufferEffect === undefined ? request.bodySource : undefined
  if (!(source instanceof Readable) || source.readableEnded || source.destroyed || source.readableFlowing !== null) {
    return Effect.match(request.arrayBuffer, { onFailure: () => undefined, onSuccess: (buffer) => new Uint8Array(buffer) })
  }
  const node = request as unknown as NodeRequest
  return Effect.callback<Uint8Array | undefined>((resume) => {
    // From Node's pool when small: a buffer of its own costs a backing store to make and to free.
    const bytes = Buffer.allocUnsafe(length)
    let filled = 0
    // Plain listeners, all four taken off on the first outcome (no `once` wrappers to allocate).
    const detach = () => source.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose)
    const succeed = () => {
      detach()
      // effect's cache holds an `ArrayBuffer` of the body alone: copied out of the pool only if
      // effect reads it (a request the route leaves to effect), once.
      let own: ArrayBuffer | undefined
      node.arrayBufferEffect = Effect.sync(() => own ??= new Uint8Array(bytes).buffer)
      resume(Effect.succeed(bytes))
    }
    const fail = (cause: unknown) => {
      detach()
      node.arrayBufferEffect = Effect.fail(node.onError(cause))
      resume(Effect.succeed(undefined))
    }
    const onData = (chunk: Buffer) => {
      // Node's parser delivers `Content-Length` bytes at most: more is a stream that is not it.
      if (filled + chunk.byteLength > length) return fail(new Error("body longer than its Content-Length"))
      bytes.set(chunk, filled)
      filled += chunk.byteLength
    }
    const onEnd = () => filled === length ? succeed() : fail(new Error("body shorter than its Content-Length"))
    const onError = (error: unknown) => fail(error)
    const onClose = () => fail(new Error("request closed before its body was read"))
    source.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose)
    return Effect.sync(detach)
  })
}
