/**
 * `serve` keeps V8's young generation at the size it has when the executable starts. V8 doubles
 * it whenever objects outlive its collections, as loading the program and a catalogue makes them
 * do: 16 to 32 MiB more at the peak of a start, which the collection once loaded gives back only
 * after it (a container's memory limit meets the peak). An operator who sizes it on node's
 * command line or in NODE_OPTIONS keeps their size. Measured inside the process started as a
 * user starts it (the file npm links), once it listens.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { executable, spawnNode, waitFor, withProbedServe } from "./support/cli-server.js"

// Preloaded into the executable: the young generation's size when the process starts, and the
// largest it has been around any collection since (the collection after loading shrinks it
// again), on SIGUSR2 and at exit.
const probe = `data:text/javascript,${
  encodeURIComponent(`
import { GCProfiler, getHeapSpaceStatistics } from "node:v8"
const young = (spaces) => spaces.find((space) => space.spaceName === "new_space" || space.space_name === "new_space")
const first = young(getHeapSpaceStatistics()).space_size
const profiler = new GCProfiler()
profiler.start()
let largest = first
const report = () => {
  for (const gc of profiler.stop()?.statistics ?? []) {
    for (const when of [gc.beforeGC, gc.afterGC]) largest = Math.max(largest, young(when.heapSpaceStatistics).spaceSize)
  }
  profiler.start()
  process.stderr.write("young " + first + " " + largest + "\\n")
}
process.on("SIGUSR2", report)
process.on("exit", report)
`)
}`

// The young generation's first size and the largest it has been until the server listens.
const youngGeneration = (nodeOptions: ReadonlyArray<string>, env: Record<string, string>) =>
  withProbedServe(probe, nodeOptions, env, async (running) => {
    running.child.kill("SIGUSR2")
    const [, first, largest] = await waitFor(running, "stderr", /^young (\d+) (\d+)$/m)
    return { first: Number(first), largest: Number(largest) }
  })

describe("mcp-skills-server: the young generation", () => {
  // A short command would pay for the flag (Node compiles its own modules again once one changes)
  // and gain nothing: it leaves V8 alone.
  it.live("is left to V8 by a command that does not serve", () =>
    Effect.promise(async () => {
      const running = spawnNode([`--import=${probe}`, executable, "--help"], { NODE_OPTIONS: "" })
      assert.strictEqual(await running.exited, 0)
      const [, first, atExit] = running.stderr().match(/^young (\d+) (\d+)$/m)!
      assert.isAbove(Number(atExit), 2 * Number(first))
    }), 30_000)

  // Node's own start grows it once before the executable's first line runs: at most twice the
  // size the preloaded probe sees, where V8 left alone grows it eightfold or more.
  it.live("stays at the size it has when the executable starts, through loading", () =>
    Effect.gen(function*() {
      const { first, largest } = yield* youngGeneration([], { NODE_OPTIONS: "" })
      assert.isAtMost(largest, 2 * first)
    }), 30_000)

  for (
    const [where, nodeOptions, env] of [
      ["node's command line", ["--max-semi-space-size=8"], { NODE_OPTIONS: "" }],
      ["NODE_OPTIONS", [], { NODE_OPTIONS: "--max_semi_space_size=8" }]
    ] as const
  ) {
    it.live(`grows as V8 sees fit when ${where} sizes it`, () =>
      Effect.gen(function*() {
        const { first, largest } = yield* youngGeneration(nodeOptions, env)
        assert.isAbove(largest, 2 * first)
      }), 30_000)
  }
})
