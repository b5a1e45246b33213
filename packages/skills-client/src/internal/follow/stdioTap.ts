/**
 * Hearing a stdio server's notifications: effect's stdio client reads the process's output and
 * drops every notification, so the client is given a spawner whose processes' output is also read
 * here, line by line, for `list_changed` and `updated` (lines longer than a notification can be
 * are passed by without being kept), and whose input also takes the follower's own messages
 * (`subscriptions/listen`, `resources/subscribe`), each written whole between the client's. Their
 * answers carry ids the client never used, so it ignores them.
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type { Signal } from "../../FollowChannel.js"
import * as StdioLines from "../stdioLines.js"
import { MaxEventBytes, signalOf } from "./listen.js"

/** A spawner that taps its processes, the signals heard, and a writer to the latest process. */
export interface Tap {
  readonly spawner: ChildProcessSpawner.ChildProcessSpawner["Service"]
  readonly signals: Queue.Dequeue<Signal>
  readonly write: (message: unknown) => Effect.Effect<void>
}

// Signals waiting to be taken: a flood keeps the latest ones (any one makes the follower look again).
const MaxPendingSignals = 64

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Wraps `spawner` for one connection (see the module description). */
export const make = (
  spawner: ChildProcessSpawner.ChildProcessSpawner["Service"]
): Effect.Effect<Tap, never, Scope.Scope> =>
  Effect.gen(function*() {
    const signals = yield* Effect.acquireRelease(Queue.sliding<Signal>(MaxPendingSignals), Queue.shutdown)
    let input: Queue.Queue<Uint8Array, Cause.Done> | undefined
    const tapped = ChildProcessSpawner.make((command) =>
      Effect.gen(function*() {
        const handle = yield* spawner.spawn(command)
        const merged = yield* Queue.unbounded<Uint8Array, Cause.Done>()
        yield* Stream.fromQueue(merged).pipe(Stream.run(handle.stdin), Effect.ignore, Effect.forkScoped)
        input = merged
        const read = StdioLines.make(MaxEventBytes, {
          tooLong: () => {},
          line: (bytes) => {
            const line = decoder.decode(bytes)
            if (!line.includes("notifications/")) return
            let message: unknown
            try {
              message = JSON.parse(line)
            } catch {
              return
            }
            const signal = signalOf(message)
            if (signal !== undefined) Queue.offerUnsafe(signals, signal)
          }
        })
        return ChildProcessSpawner.makeHandle({
          ...handle,
          stdout: Stream.tap(handle.stdout, (chunk) => Effect.sync(() => read(chunk))),
          stdin: Sink.forEach((chunk: Uint8Array) => Queue.offer(merged, chunk)).pipe(Sink.ensuring(Queue.end(merged)))
        })
      })
    )
    return {
      spawner: tapped,
      signals,
      write: (message) =>
        Effect.suspend(() =>
          input === undefined ? Effect.void : Effect.asVoid(Queue.offer(input, encoder.encode(JSON.stringify(message) + "\n")))
        )
    }
  })
