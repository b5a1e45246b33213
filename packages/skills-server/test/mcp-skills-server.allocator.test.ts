/**
 * `serve` over HTTP runs with one glibc malloc arena. By default each thread gets its own, and
 * glibc keeps freed memory at the top of each up to twice the largest block freed so far: Node's
 * compile cache frees one of 5.8 MiB while it loads the executable, and the arenas of V8's compiler
 * threads then kept about 10 MiB they had freed (docs/performance.md). glibc reads its variables
 * when a process starts, so the executable starts again in place, once, with the variable set; an
 * operator who tunes or replaces the allocator keeps their choice, and the short commands and
 * stdio servers never pay for the second start. Seen from a probe node preloads into every start
 * of the process as a user runs it (the file npm links).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { examples, executable, spawnNode, waitFor, withProbedServe } from "./support/cli-server.js"

// Preloaded into the executable: one line for each program the process starts as, with its id and
// the arenas its environment allows glibc.
const probe = `data:text/javascript,${
  encodeURIComponent(`process.stderr.write("start " + process.pid + " " + (process.env.MALLOC_ARENA_MAX ?? "-") + "\\n")`)
}`

// Each start of the process, in order: its id and its arenas.
const starts = (stderr: string) => [...stderr.matchAll(/^start (\d+) (\S+)$/gm)].map(([, pid, arenas]) => ({ pid: Number(pid), arenas }))

// What the machine running the tests tunes of the allocator, blanked: an empty variable tunes nothing.
const untuned = Object.fromEntries(
  Object.keys(process.env).filter((name) => /^MALLOC_|^GLIBC_TUNABLES$|^LD_PRELOAD$/.test(name)).map((name) => [name, ""])
)

// The starts of a `serve` that reached "listening" with `env`.
const serveStarts = (env: Record<string, string>) =>
  withProbedServe(probe, [], { ...untuned, NODE_OPTIONS: "", ...env }, async (running) => ({
    starts: starts(running.stderr()),
    pid: running.child.pid!
  }))

// glibc's own report of itself: the arenas are a glibc variable, set only where glibc reads it.
const glibc = process.platform === "linux" && (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
      .glibcVersionRuntime !== undefined

describe("mcp-skills-server: the allocator", () => {
  it.live.runIf(glibc)("serve starts again in place once, with one malloc arena", () =>
    Effect.gen(function*() {
      const { pid, starts } = yield* serveStarts({})
      assert.deepStrictEqual(starts, [{ pid, arenas: "-" }, { pid, arenas: "1" }])
    }), 30_000)

  for (
    const [what, env] of [
      ["sets a malloc variable of its own", { MALLOC_MMAP_THRESHOLD_: "4194304" }],
      ["tunes glibc", { GLIBC_TUNABLES: "glibc.malloc.trim_threshold=131072" }],
      ["preloads a library, as another allocator is", { LD_PRELOAD: "libc.so.6" }]
    ] as const
  ) {
    it.live.runIf(glibc)(`serve starts once, as it is, when the operator ${what}`, () =>
      Effect.gen(function*() {
        const { pid, starts } = yield* serveStarts(env)
        assert.deepStrictEqual(starts, [{ pid, arenas: "-" }])
      }), 30_000)
  }

  // A host starts a stdio server for each session and waits on it: it starts once.
  it.live.runIf(glibc)("serve over stdio starts once", () =>
    Effect.promise(async () => {
      const running = spawnNode([`--import=${probe}`, executable, "serve", examples, "--stdio"], { ...untuned, NODE_OPTIONS: "" })
      await waitFor(running, "stderr", /^start /m)
      running.child.stdin!.end()
      assert.strictEqual(await running.exited, 0)
      assert.deepStrictEqual(starts(running.stderr()), [{ pid: running.child.pid!, arenas: "-" }])
    }), 30_000)

  it.live("a command that does not serve starts once", () =>
    Effect.promise(async () => {
      const running = spawnNode([`--import=${probe}`, executable, "--help"], { ...untuned, NODE_OPTIONS: "" })
      assert.strictEqual(await running.exited, 0)
      assert.deepStrictEqual(starts(running.stderr()), [{ pid: running.child.pid!, arenas: "-" }])
    }), 30_000)
})
