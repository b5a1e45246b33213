/**
 * `mcp-skills-server` printing more than a pipe holds to a reader that stops after one line, as
 * `| head -n 1` does: the command ends quietly, status 0 and nothing on stderr, not with an
 * unhandled EPIPE and its stack trace.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { spawnBin } from "./support/cli-server.js"
import { tempDir } from "./support/tree.js"

// One line each, some 120 KB in all.
const Skills = 2_000

describe("mcp-skills-server sign read by a reader that stops early", () => {
  it.live("ends quietly: status 0, nothing on stderr", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("skills-output-")
      const skills = path.join(dir, "skills")
      for (let i = 0; i < Skills; i++) {
        fs.mkdirSync(path.join(skills, `s${i}`), { recursive: true })
        fs.writeFileSync(path.join(skills, `s${i}`, "SKILL.md"), `---\nname: s${i}\ndescription: Skill number ${i}\n---\n`)
      }
      const key = path.join(dir, "key")
      assert.strictEqual(yield* Effect.promise(() => spawnBin("mcp-skills-server", ["keygen", "--out", key]).exited), 0)
      const signing = spawnBin("mcp-skills-server", ["sign", skills, "--key", `${key}.private.pem`])
      signing.child.stdout!.on("data", () => {
        if (signing.stdout().includes("\n")) signing.child.stdout!.destroy()
      })
      const code = yield* Effect.promise(() => signing.exited)
      assert.match(signing.stdout(), /^signed skill:\/\/s\d+\/SKILL\.md /)
      assert.strictEqual(signing.stderr(), "")
      assert.strictEqual(code, 0)
    }).pipe(Effect.scoped), 60_000)
})
