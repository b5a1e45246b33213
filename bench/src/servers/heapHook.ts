/**
 * Preloaded into a server (`node --import heapHook.js ...`) by `profileHeap.ts`: on SIGUSR2 it
 * writes a heap snapshot to `$HEAP_SNAPSHOT_FILE` and prints `heap-snapshot {json}` on stdout with
 * `process.memoryUsage()` before and after (the snapshot runs a full GC first, so "after" is what
 * is live). A signal rather than IPC, so the server is spawned exactly as the bench spawns it.
 */
import { writeHeapSnapshot } from "node:v8"

process.on("SIGUSR2", () => {
  const before = process.memoryUsage()
  const file = writeHeapSnapshot(process.env["HEAP_SNAPSHOT_FILE"])
  const after = process.memoryUsage()
  process.stdout.write(`heap-snapshot ${JSON.stringify({ file, before, after })}\n`)
})
