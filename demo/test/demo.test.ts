/**
 * `npm start` (demo/dist/src/main.js): serves examples/skills and shows SkillsClient verifying them.
 */
import { describe, expect, it } from "@effect/vitest"
import { run as runScript, withPortInUse } from "./run.js"

const run = (args: ReadonlyArray<string>, env?: Readonly<Record<string, string>>) => runScript("main.js", args, env)

describe.concurrent("npm start", () => {
  it("--once serves the examples, runs the client transcript and exits 0", async () => {
    const demo = run(["--once"])
    expect(await demo.exited, demo.stderr()).toBe(0)
    const out = demo.stdout()
    expect(out).toMatch(/^listening http:\/\/127\.0\.0\.1:\d+\/mcp$/m)
    expect(out).toContain("skills/list: 6 skills")
    expect(out).toMatch(/loadSkill skill:\/\/pdf-processing\/SKILL\.md: \d+ bytes, size ✓ digest ✓ frontmatter ✓/)
    expect(out).toContain("→ skill://pdf-processing/assets/logo.png: image/png")
    expect(out).toContain("skill://pdf-processing/references  (inode/directory)")
    expect(out).toContain('"../git-workflow/SKILL.md" → refused before any request')
    expect(out).toContain("Every check passed")
  })

  it("a port in use: one line naming the listener, its address and the errno, exit 1", async () => {
    const [code, stderr, port] = await withPortInUse(async (port) => {
      const demo = run(["--once"], { PORT: String(port) })
      return [await demo.exited, demo.stderr(), port] as const
    })
    expect(stderr).toBe(`demo: cannot listen for the MCP endpoint on 127.0.0.1:${port}: address already in use (EADDRINUSE)\n`)
    expect(code).toBe(1)
  })

  it("without --once it keeps serving until SIGTERM, then exits 0", async () => {
    const demo = run([])
    const url = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = /^Still serving (\S+); press Ctrl-C to stop\.$/m.exec(demo.stdout())
        if (match !== null) resolve(match[1]!)
      }
      demo.child.stdout.on("data", check)
      demo.exited.then((code) => reject(new Error(`exited ${code}: ${demo.stderr()}`)))
    })
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "skills/get"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "skills/get",
        params: {
          uri: "skill://changelog-writer/SKILL.md",
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} }
        }
      })
    }).then((r) => r.json() as Promise<{ result: { skill: { frontmatter: { name: string } } } }>)
    expect(response.result.skill.frontmatter.name).toBe("changelog-writer")
    demo.child.kill("SIGTERM")
    expect(await demo.exited).toBe(0)
  })
})
