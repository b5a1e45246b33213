/**
 * What long-lived SSE responses carry for proxies and balancers: a keep-alive comment every 15 s
 * while idle (virtual time), ending with the stream; `X-Accel-Buffering: no` on event streams only.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { HttpServerResponse } from "effect/http"
import * as TestClock from "effect/testing/TestClock"
import * as EventStreams from "../src/internal/eventStreams.js"

const text = (chunks: ReadonlyArray<Uint8Array>) => chunks.map((chunk) => new TextDecoder().decode(chunk))

describe("event streams", () => {
  it.effect("an idle stream gets its first keep-alive comment at 15 s, not before, then one every 15 s", () =>
    Effect.gen(function*() {
      const comments: Array<string> = []
      const fiber = yield* EventStreams.withKeepAlive(Stream.never).pipe(
        Stream.runForEach((chunk) => Effect.sync(() => comments.push(...text([chunk])))),
        Effect.forkChild
      )
      yield* TestClock.adjust("14999 millis")
      assert.deepStrictEqual(comments, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(comments, [": keepalive\n\n"])
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual(comments.length, 3)
      yield* Fiber.interrupt(fiber)
    }))

  it.effect("the stream ends when its events end", () =>
    Effect.gen(function*() {
      const event = new TextEncoder().encode("data: {}\n\n")
      const chunks = yield* Stream.runCollect(EventStreams.withKeepAlive(Stream.make(event)))
      assert.deepStrictEqual(text(chunks), ["data: {}\n\n"])
    }))

  it("marks event streams, and only them, X-Accel-Buffering: no", () => {
    const sse = HttpServerResponse.stream(Stream.empty, { contentType: "text/event-stream" })
    assert.strictEqual(EventStreams.noProxyBuffering(sse).headers["x-accel-buffering"], "no")
    const json = HttpServerResponse.text("{}", { contentType: "application/json" })
    assert.isUndefined(EventStreams.noProxyBuffering(json).headers["x-accel-buffering"])
    const otherStream = HttpServerResponse.stream(Stream.empty, { contentType: "application/octet-stream" })
    assert.isUndefined(EventStreams.noProxyBuffering(otherStream).headers["x-accel-buffering"])
  })
})
