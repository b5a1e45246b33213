/**
 * A storm of file events and symbolic link loops. 5,000
 * files created in one watched skill folder are coalesced into a few reloads while a client keeps
 * polling and is answered throughout; a link loop is logged once, watching goes on, and once the
 * loop is gone later edits are served.
 */
import { describe, expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { tree, write } from "./support/tree.js"
import { live, serve, sleep } from "./support/watched.js"

const skillMd = (name: string, note = "") => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n${note}`

const eventually = (what: string, check: () => boolean) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 300; attempt++) {
      if (check()) return
      yield* sleep(100)
    }
    throw new Error(`timed out waiting for ${what}`)
  })

describe("serve --watch under hostile input", () => {
  live("5,000 files created in one skill folder while a client polls: coalesced, every poll answered within 5 s", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "beta/SKILL.md": skillMd("beta") })
      const { client, settled, lines } = yield* serve(root)

      let polling = true
      const waits: Array<number> = []
      const poller = yield* Effect.gen(function*() {
        while (polling) {
          const start = performance.now()
          const response = yield* client.send("resources/read", { uri: "skill://beta/SKILL.md" })
          waits.push(performance.now() - start)
          expect(response.body?.result?.contents?.[0]?.text).toBe(skillMd("beta"))
        }
      }).pipe(Effect.forkChild)

      const before = lines.length
      // Another process creates the files all at once, as `cp -r`, `tar x` or `git checkout` do.
      const writer = spawn(process.execPath, ["-e", `
        const fs = require("node:fs")
        const dir = ${JSON.stringify(path.join(root, "alpha/bulk"))}
        fs.mkdirSync(dir)
        for (let i = 0; i < 5000; i++) fs.writeFileSync(dir + "/file-" + i + ".md", "file " + i + "\\n")
      `], { stdio: "inherit" })
      const exited = yield* Effect.promise(() => new Promise<number | null>((resolve) => writer.on("exit", resolve)))
      expect(exited).toBe(0)
      // 5,001 files are over the 512-file limit: the last good version stays, and says why.
      yield* eventually("the limit line", () => lines.some((line) => /^alpha: .*512.*still serving the last good version$/.test(line)))
      yield* sleep(1_500)
      const storm = lines.slice(before)
      fs.rmSync(path.join(root, "alpha/bulk"), { recursive: true })
      write(root, "alpha/SKILL.md", skillMd("alpha", "After the storm.\n"))
      yield* settled("after the storm")
      polling = false
      yield* Fiber.join(poller)

      expect(waits.length).toBeGreaterThan(10)
      expect(Math.max(...waits)).toBeLessThan(5_000)
      // Coalesced and quiet: the limit is said a handful of times at most, not once per event. A
      // rescan may land while the first few hundred files exist, which is a valid skill then
      // (served and said in one "reloaded" line): a few such lines, never one per file.
      expect(storm.filter((line) => line.startsWith("reloaded ")).length).toBeLessThan(5)
      expect(storm.filter((line) => line.includes("512")).length).toBeGreaterThan(0)
      expect(storm.length).toBeLessThan(50)
    }))

  live("a symbolic link loop is logged once, watching goes on, and after the loop is removed edits are served", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/guide.md": "v0\n" })
      const { settled, read, lines } = yield* serve(root)
      fs.symlinkSync("b.md", path.join(root, "alpha/a.md"))
      fs.symlinkSync("a.md", path.join(root, "alpha/b.md"))
      // A link to the folder it sits in: never followed, by the scan or the watcher.
      fs.symlinkSync(".", path.join(root, "alpha/up"))
      yield* eventually("the loop lines", () => lines.includes("ignored alpha/b.md: symbolic link loop"))
      for (let i = 1; i <= 3; i++) {
        write(root, "alpha/guide.md", `v${i}\n`)
        yield* settled(`edit ${i} beside the loop`)
      }
      expect(lines.filter((line) => line.startsWith("ignored "))).toEqual([
        "ignored alpha/a.md: symbolic link loop",
        "ignored alpha/b.md: symbolic link loop",
        "ignored alpha/up: symbolic link to a folder (not followed)"
      ])

      fs.rmSync(path.join(root, "alpha/a.md"))
      fs.rmSync(path.join(root, "alpha/b.md"))
      write(root, "alpha/guide.md", "after the loop\n")
      yield* settled("edit after the loop is removed")
      write(root, "alpha/a.md", "a regular file now\n")
      yield* settled("a.md as a regular file")
      expect(new TextDecoder().decode(yield* read("alpha/a.md"))).toBe("a regular file now\n")
    }))
})
