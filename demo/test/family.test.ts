/**
 * demo/dist/src/family.js: the skill family of examples/family, whose instances depend on the
 * x-team header, verified for two teams through SkillsClient.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

describe("family demo", () => {
  it("--once shows each team its own customers, verified, and exits 0", async () => {
    const child = spawn(`${root}node_modules/.bin/node`, [`${root}demo/dist/src/family.js`, "--once"], {
      cwd: root,
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const code = await new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? -1)))
    expect(code, stderr).toBe(0)
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
})
