import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const repo = Path.resolve(import.meta.dirname, "../../..")
const wrapper = Path.resolve(import.meta.dirname, "../bin/conformance-client")

describe("official conformance suite, client scenarios", () => {
  it("passes all four SEP-2640 client scenarios on 2026-07-28 and 2025-11-25", () => {
    const run = spawnSync("bash", [Path.join(repo, "scripts/conformance.sh"), "--client-only", "--client-cmd", wrapper], {
      cwd: repo,
      encoding: "utf8",
      timeout: 300_000
    })
    const output = `${run.stdout}\n${run.stderr}`
    expect(output).toContain("conformance: 8 passed, 0 failed")
    for (const scenario of ["no-prefetch", "verify-digest", "verify-size", "verify-frontmatter"]) {
      for (const version of ["2026-07-28", "2025-11-25"]) {
        expect(output).toContain(`PASS client/sep-2640-client-${scenario}@${version}`)
      }
    }
    expect(run.status).toBe(0)
  }, 320_000)
})
