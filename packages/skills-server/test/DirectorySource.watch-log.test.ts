/**
 * `--watch` says one thing per real change: one reload line for an edit (no second line for the
 * racy re-read a few seconds later, which changes nothing), and the periodic check does not
 * report as missed a change whose file event arrived before the check began.
 */
import { assert, describe } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Watcher from "../src/internal/directory/watch.js"
import { skillMd } from "./support/fixtures.js"
import { live, serve, sleep } from "./support/watched.js"

const folder = () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "watch-log-"))
  fs.mkdirSync(path.join(root, "alpha"))
  fs.writeFileSync(path.join(root, "alpha", "SKILL.md"), skillMd("alpha"))
  fs.writeFileSync(path.join(root, "alpha", "guide.md"), "one\n")
  return root
}

describe("watch log", () => {
  live("an edit is one reload line, even after the periodic check re-reads the racy file", () =>
    Effect.gen(function*() {
      const root = folder()
      const served = yield* serve(root, "200 millis")
      // Past the racy window of the first scan, so only the edit's own re-read is left.
      yield* sleep(1_500)
      const start = served.lines.length
      fs.writeFileSync(path.join(root, "alpha", "guide.md"), "two\n")
      yield* served.settled("the edit")
      // The racy window (1 s) and several periodic checks.
      yield* sleep(2_500)
      const lines = served.lines.slice(start)
      assert.strictEqual(lines.filter((line) => line.startsWith("reloaded")).length, 1, lines.join("\n"))
      assert.isFalse(lines.some((line) => line.includes("no file event reported")), lines.join("\n"))
    }))

  live("a change whose event came before the periodic check began is not reported as missed", () =>
    Effect.gen(function*() {
      const root = folder()
      const file = path.join(root, "alpha", "guide.md")
      const warnings: Array<string> = []
      let reloads = 0
      // The check compares with the last scan, which the pending reload has not updated yet.
      let stale = false
      yield* Watcher.run({
        roots: [root],
        reload: () => Effect.sync(() => void reloads++),
        check: Effect.sync(() => {
          const missed = stale ? [file] : []
          stale = false
          return { missed, racy: [] }
        }),
        warn: (line) => Effect.sync(() => void warnings.push(line))
      }, { debounce: Duration.millis(600), maxDelay: Duration.seconds(2), sweep: Duration.millis(100) })
      fs.writeFileSync(file, "two\n")
      yield* sleep(100)
      stale = true
      yield* sleep(2_000)
      assert.deepStrictEqual(warnings, [])
      assert.strictEqual(reloads, 1)
    }))
})
