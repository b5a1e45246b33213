/**
 * `serve` collects its heap once the catalogue is loaded, before it says it listens: loading leaves
 * what it built on the way in the old generation, which V8 would only collect seconds later (at
 * 100,000 skills, 108 MiB of RSS at the moment the server listens). Measured inside the process
 * started as a user starts it: what a full collection still finds to free when "listening" is
 * written, over HTTP and over stdio.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { executable, spawnNode, stop, waitFor, withProbedServe } from "./support/cli-server.js"
import { skillMd } from "./support/fixtures.js"
import { tempDir, write } from "./support/tree.js"

// Preloaded into the executable: the heap in use when the line saying the server is ready is
// written (HTTP on stdout, stdio on stderr), then after a full collection, printed on stderr.
const probe = `data:text/javascript,${
  encodeURIComponent(`
import { Session } from "node:inspector"
import { writeSync } from "node:fs"
let done = false
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream)
  stream.write = (chunk, ...rest) => {
    if (!done && /^(listening http|serving on stdio)/m.test(String(chunk))) {
      done = true
      const before = process.memoryUsage().heapUsed
      const session = new Session()
      session.connect()
      session.post("HeapProfiler.collectGarbage", () => {
        writeSync(2, "garbage " + (before - process.memoryUsage().heapUsed) + "\\n")
        session.disconnect()
      })
    }
    return write(chunk, ...rest)
  }
}
`)
}`

// A catalogue of 600 skills of four files each, in a folder removed with the scope: enough for the
// loader's leftovers to be megabytes.
const catalogue = Effect.gen(function*() {
  const root = yield* tempDir("heap-")
  for (let index = 0; index < 600; index++) {
    const name = `skill-${String(index).padStart(4, "0")}`
    const folder = `team-${index % 7}/${name}`
    write(root, `${folder}/SKILL.md`, skillMd(name, `Skill number ${index} of the catalogue`))
    for (const file of ["references/guide.md", "references/api.md", "run.py"]) {
      write(root, `${folder}/${file}`, `${file} of ${name}\n`.repeat(40))
    }
  }
  return root
})

const MiB = 1_048_576

describe("mcp-skills-server: the heap once loaded", () => {
  it.live("holds next to no garbage when serve says it listens (HTTP)", () =>
    Effect.scoped(Effect.gen(function*() {
      const root = yield* catalogue
      yield* withProbedServe(probe, [], { NODE_OPTIONS: "" }, async (running) => {
        const [, garbage] = await waitFor(running, "stderr", /^garbage (-?\d+)$/m)
        assert.isBelow(Number(garbage), MiB)
      }, root)
    })), 60_000)

  it.live("holds next to no garbage when serve says it serves on stdio", () =>
    Effect.scoped(Effect.gen(function*() {
      const root = yield* catalogue
      yield* Effect.acquireUseRelease(
        Effect.sync(() => spawnNode([`--import=${probe}`, executable, "serve", root, "--stdio"], { NODE_OPTIONS: "" })),
        (running) =>
          Effect.promise(async () => {
            const [, garbage] = await waitFor(running, "stderr", /^garbage (-?\d+)$/m)
            assert.isBelow(Number(garbage), MiB)
          }),
        (running) => Effect.promise(() => stop(running))
      )
    })), 60_000)
})
