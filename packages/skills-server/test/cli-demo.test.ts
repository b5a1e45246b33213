/**
 * The `npm start` demo (dist/src/bin/demo.js): serves examples/skills and plays a verifying client.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnBin, stop, waitFor } from "./cli-server.js"

describe.concurrent("demo", () => {
  it.live("--once prints a transcript whose every check passes, then exits 0", () =>
    Effect.gen(function*() {
      const running = spawnBin("demo", ["--once"], { PORT: "0" })
      expect(yield* Effect.promise(() => running.exited), running.stderr()).toBe(0)
      const out = running.stdout()
      expect(out).toMatch(/^listening http:\/\/127\.0\.0\.1:\d+\/mcp$/m)
      expect(out).toContain("← 6 skills")
      expect(out).toContain("→ resources/read skill://pdf-processing/SKILL.md")
      expect(out).toContain("→ resources/read skill://pdf-processing/assets/logo.png")
      expect(out.match(/✓/g)?.length).toBe(6)
      expect(out).not.toContain("✗")
      expect(out).toContain("Every check passed")
    }))

  it.live("without --once it keeps serving until SIGTERM, then exits 0", () =>
    Effect.gen(function*() {
      const running = spawnBin("demo", [], { PORT: "0" })
      const [, url] = yield* Effect.promise(() => waitFor(running, "stdout", /^Still serving (\S+); press Ctrl-C to stop\.$/m))
      const response = yield* Effect.promise(() =>
        fetch(url!, {
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
        }).then((r) => r.json() as Promise<any>)
      )
      expect(response.result.skill.frontmatter.name).toBe("changelog-writer")
      expect(yield* Effect.promise(() => stop(running))).toBe(0)
    }))
})
