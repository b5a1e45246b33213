/**
 * The executable's heap once the catalogue is loaded.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"

/**
 * Collects the whole heap once, as V8 would some seconds later: loading a catalogue leaves what it
 * built on the way (listings, grown columns and tables, the reads' records) in the old generation,
 * where no collection has looked yet. Measured at the moment `serve` says it listens, that was 9 MiB
 * at 10,000 skills and 108 MiB at 100,000 (docs/performance.md); collected before the first request,
 * the pause is not one a client waits on. Through the inspector's `HeapProfiler.collectGarbage`
 * (what DevTools' button does), in process, with no port opened; a Node built without the
 * inspector skips it.
 *
 * @since 0.1.0
 */
export const compact: Effect.Effect<void> = Effect.promise(async () => {
  const inspector = await import("node:inspector").catch(() => undefined)
  if (inspector === undefined) return
  const session = new inspector.Session()
  session.connect()
  try {
    await new Promise<void>((resolve) => session.post("HeapProfiler.collectGarbage", () => resolve()))
  } finally {
    session.disconnect()
  }
})
