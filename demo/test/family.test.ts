/**
 * demo/dist/src/family.js: the skill family of examples/family, whose instances depend on the
 * x-team header, verified for two teams through SkillsClient.
 */
import { describe, expect, it } from "@effect/vitest"
import { run, withPortInUse } from "./run.js"

describe("family demo", () => {
  it("--once shows each team its own customers, verified, and exits 0", async () => {
    const demo = run("family.js", ["--once"])
    const code = await demo.exited
    const stdout = demo.stdout()
    expect(code, demo.stderr()).toBe(0)
    expect(stdout).toMatch(/^listening http:\/\/127\.0\.0\.1:\d+\/mcp$/m)
    expect(stdout).toContain("team support: skills/list shows 3 skills (private)")
    expect(stdout).toContain("team sales: skills/list shows 4 skills (private)")
    expect(stdout).toContain("references/checklist.md, 193 bytes, digest ✓: # support checklist for Acme Corp")
    expect(stdout).toContain("references/checklist.md, 189 bytes, digest ✓: # sales checklist for Acme Corp")
    expect(stdout).toContain("skill://team-handbook/SKILL.md")
    // Globex is a support customer: hidden from sales even by URI.
    expect(stdout).toMatch(/team sales[\s\S]*skills\/get globex: refused/)
    expect(stdout).toContain("skills/get customers/%2E%2E: refused")
    expect(stdout).toContain("Every check passed")
  })

  it("a port in use: one line naming the address and the errno, exit 1", async () => {
    const [code, stderr, port] = await withPortInUse(async (port) => {
      const demo = run("family.js", ["--once"], { PORT: String(port) })
      return [await demo.exited, demo.stderr(), port] as const
    })
    expect(stderr).toBe(`family demo: cannot listen: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`)
    expect(code).toBe(1)
  })
})
