/**
 * The official MCP conformance suite (pinned devDependency, skills scenarios) against the built
 * `mcp-skills-server` serving examples/skills, through scripts/conformance.sh, whose verdict is
 * strict: any FAILURE, WARNING or unexpected SKIPPED check fails a scenario.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { examples, httpServer } from "./support/cli-server.js"
import { conformance } from "./support/conformance.js"

const scenarios = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]

describe("conformance", () => {
  it.live("examples/skills passes every server scenario strictly on 2026-07-28 and 2025-11-25", () =>
    Effect.gen(function*() {
      const { url } = yield* httpServer(examples)
      const result = yield* conformance([url])
      const report = `${result.stdout}\n${result.stderr}`
      expect(result.code, report).toBe(0)
      for (const revision of ["2026-07-28", "2025-11-25"]) {
        for (const scenario of scenarios) {
          expect(result.stdout, report).toMatch(new RegExp(`^PASS server/${scenario}@${revision} \\(\\d+ success, 0 failure, 0 warning`, "m"))
        }
      }
      expect(result.stdout).toMatch(/^conformance: 6 passed, 0 failed$/m)
    }), { timeout: 300_000 })

  it.live("the runner's verdict is strict: a WARNING fails the scenario", () =>
    Effect.gen(function*() {
      // A reserved metadata key is only a WARNING for the suite (exit 0); our script must fail on it.
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "skills-warning-"))
      fs.mkdirSync(path.join(root, "reserved"))
      fs.writeFileSync(
        path.join(root, "reserved/SKILL.md"),
        "---\nname: reserved\ndescription: Uses a reserved metadata key.\nmetadata:\n  io.modelcontextprotocol/x: \"1\"\n---\n\n# Reserved\n"
      )
      const { url } = yield* httpServer(root)
      const result = yield* conformance(["--spec-version", "2026-07-28", url, "enumeration"])
      expect(result.code).toBe(1)
      expect(result.stdout).toMatch(/^FAIL server\/sep-2640-skills-enumeration@2026-07-28 .*WARNING: sep-2640-metadata-reserved-prefix/m)
      expect(result.stdout).toMatch(/^conformance: 0 passed, 1 failed$/m)
    }), { timeout: 120_000 })
})
