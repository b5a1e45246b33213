/**
 * The watcher's own bounds, crossed: past 10,000 distinct paths in one round the
 * watcher stops listing them and asks for one rescan of everything; under a stream of events that
 * never goes quiet, a reload still comes at least every `maxDelay`. A recording `reload` stands in
 * for the registry, so the counts are the watcher's alone.
 */
import { describe, expect } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Watcher from "../src/internal/directory/watch.js"
import { tree } from "./support/tree.js"
import { live, sleep } from "./support/watched.js"

const watching = (root: string, debounce = Duration.millis(100), maxDelay = Duration.seconds(1)) =>
  Effect.gen(function*() {
    // Each round's paths, or `undefined` for "everything".
    const rounds: Array<ReadonlySet<string> | undefined> = []
    yield* Watcher.run({
      roots: [root],
      reload: (paths) => Effect.sync(() => void rounds.push(paths)),
      check: Effect.succeed({ missed: [], racy: [] }),
      warn: () => Effect.void
    }, { debounce, maxDelay, sweep: undefined })
    return rounds
  })

describe("watcher bounds", () => {
  live("more than 10,000 paths in one round: one rescan of everything, not a list", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": "---\nname: alpha\ndescription: A.\n---\n" })
      // A long debounce and maxDelay, so that the whole burst falls into one round even if the
      // writer is paused now and then on a busy machine.
      const rounds = yield* watching(root, Duration.seconds(3), Duration.minutes(1))
      const writer = spawn(process.execPath, ["-e", `
        const fs = require("node:fs")
        const dir = ${JSON.stringify(path.join(root, "alpha"))}
        for (let i = 0; i < 10500; i++) fs.writeFileSync(dir + "/file-" + i + ".md", "")
      `], { stdio: "inherit" })
      expect(yield* Effect.promise(() => new Promise<number | null>((resolve) => writer.on("exit", resolve)))).toBe(0)
      for (let attempt = 0; attempt < 300 && !rounds.includes(undefined); attempt++) yield* sleep(100)
      expect(rounds).toContain(undefined)
      // Below the bound, a round lists its paths.
      expect(rounds.filter((round) => round !== undefined).every((round) => round!.size <= 10_000)).toBe(true)
    }))

  live("events that never go quiet still get a reload at least every maxDelay", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": "---\nname: alpha\ndescription: A.\n---\n" })
      const rounds = yield* watching(root)
      // A write every 20 ms for 4 s: never 100 ms of quiet.
      for (let i = 0; i < 200; i++) {
        fs.writeFileSync(path.join(root, "alpha/log.md"), `line ${i}\n`)
        yield* sleep(20)
      }
      const during = rounds.length
      expect(during).toBeGreaterThanOrEqual(2)
      expect(rounds.every((round) => round !== undefined && round.has(path.join(root, "alpha/log.md")))).toBe(true)
    }))
})
