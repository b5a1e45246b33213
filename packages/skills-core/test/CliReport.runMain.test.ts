/**
 * `CliReport.runMain`, the one way every executable of the packages runs: standard output holds
 * the program's output alone (a stdio server's protocol), so a failure's report, a defect's
 * included, goes to standard error, and the status says it failed; an interrupted program exits
 * 0; output written just before exiting reaches a pipe whole.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const node = path.join(repoRoot, "node_modules/.bin/node")
const cliReport = path.join(repoRoot, "packages/skills-core/dist/src/CliReport.js")

// Runs `program` (the body of an ES module with Effect, Console and CliReport in scope) as a main program.
const run = (program: string) =>
  spawnSync(node, ["--input-type=module", "-e", `
    import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
    import { Console, Effect } from "effect"
    import * as CliReport from ${JSON.stringify(cliReport)}
    CliReport.runMain(NodeRuntime.runMain)(${program})
  `], { cwd: repoRoot, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })

describe("CliReport.runMain", () => {
  it("a defect at start-up is reported on stderr, never on stdout, and exits 1", () => {
    const result = run(`Effect.die(new Error("the layer could not start"))`)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("the layer could not start")
    expect(result.status).toBe(1)
  })

  it("a failure is reported on stderr and exits 1; log lines go to stderr", () => {
    const result = run(`Effect.andThen(Effect.logInfo("starting"), Effect.fail(new Error("refused")))`)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("starting")
    expect(result.stderr).toContain("refused")
    expect(result.status).toBe(1)
  })

  it("what the program writes reaches a pipe whole before the exit, with the status it set", () => {
    const result = run(`Effect.andThen(Console.log("x".repeat(4 * 1024 * 1024)), Effect.sync(() => { process.exitCode = 3 }))`)
    expect(result.stdout.length).toBe(4 * 1024 * 1024 + 1)
    expect(result.stderr).toBe("")
    expect(result.status).toBe(3)
  })

  it("an interrupted program exits 0 quietly", () => {
    const result = run(`Effect.interrupt`)
    expect(result.stdout).toBe("")
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
  })
})
