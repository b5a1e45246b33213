/**
 * Test support: the official conformance suite's skills scenarios through scripts/conformance.sh
 * (strict verdict), and the check that every server scenario passed on both revisions.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { repoRoot } from "./cli-server.js"

const script = path.join(repoRoot, "scripts/conformance.sh")

export interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `scripts/conformance.sh --out TMP ...args`. */
export const conformance = (args: ReadonlyArray<string>): Effect.Effect<Result> =>
  Effect.promise(() =>
    new Promise<Result>((resolve) => {
      const out = fs.mkdtempSync(path.join(os.tmpdir(), "skills-conformance-"))
      execFile("bash", [script, "--out", out, ...args], { cwd: repoRoot, timeout: 240_000 }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
    })
  )

/** Every server scenario passed strictly on 2026-07-28 and 2025-11-25. */
export const expectStrictPass = (result: Result) => {
  const report = `${result.stdout}\n${result.stderr}`
  expect(result.code, report).toBe(0)
  for (const revision of ["2026-07-28", "2025-11-25"]) {
    for (const scenario of ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]) {
      expect(result.stdout, report).toMatch(
        new RegExp(`^PASS server/${scenario}@${revision} \\(\\d+ success, 0 failure, 0 warning`, "m")
      )
    }
  }
  expect(result.stdout).toMatch(/^conformance: 6 passed, 0 failed$/m)
}
