/**
 * A catalogue past 5,000 skills listed with every client's defaults: effect's `McpClient` follows
 * at most 100 pages and 10,000 items, which the server's page size (100) fits, and `mcp-skills
 * list` bounds what a listing holds, not its pages. Both list 10,000 skills whole.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpClient, McpProtocol } from "effect/ai"
import { FetchHttpClient } from "effect/http"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { Skill, SkillsServer } from "../src/index.js"
import { node, repoRoot } from "./support/cli-server.js"
import { httpServer, ServerUrl } from "./support/wire.js"

const Count = 10_000

const cli = path.join(repoRoot, "packages/skills-client/dist/src/bin/mcp-skills.js")

const catalogue = Array.from({ length: Count }, (_, i) => {
  const name = `skill-${String(i).padStart(5, "0")}`
  return Skill.make({ path: `team-${i % 97}/${name}`, files: { "SKILL.md": `---\nname: ${name}\ndescription: Skill ${i}\n---\n` } })
})

// Every line of a child's standard output, read as it comes.
const linesOf = (args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<{ readonly code: number | null; readonly lines: number; readonly stderr: string }>((resolve) => {
      const child = spawn(node, args, { stdio: ["ignore", "pipe", "pipe"] })
      let lines = 0
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => {
        for (const byte of chunk) if (byte === 10) lines++
      })
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      child.on("exit", (code) => resolve({ code, lines, stderr }))
    })
  )

describe(`${Count.toLocaleString("en-US")} skills listed with every client's defaults`, () => {
  it.live("effect's McpClient (100 pages, 10,000 items) and mcp-skills list, both revisions", () =>
    Effect.gen(function*() {
      const url = yield* ServerUrl
      for (const protocol of [McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]) {
        const skills = yield* McpClient.McpClient.use((client) => client.listSkills()).pipe(
          Effect.provide(
            McpClient.layerHttp({ name: "effect-client", version: "1.0.0", url, protocol, extensions: { skills: true } }).pipe(
              Layer.provide(FetchHttpClient.layer)
            )
          )
        )
        expect(new Set(skills.map((skill) => skill.uri)).size).toBe(Count)
      }
      const listed = yield* linesOf([cli, "list", url])
      expect(listed.stderr).toBe("")
      expect(listed.code).toBe(0)
      expect(listed.lines).toBe(Count)
      // A bound below the catalogue is said, naming it.
      const bounded = yield* linesOf([cli, "list", url, "--max-entries", "5000"])
      expect(bounded.code).toBe(1)
      expect(bounded.stderr).toContain("past the bound of 5000 (maxEntries)")
    }).pipe(Effect.provide(httpServer(SkillsServer.layer({ skills: catalogue })))), { timeout: 120_000 })

  it.live("mcp-skills list follows a server's small pages to the end (400 pages of 25)", () =>
    Effect.gen(function*() {
      const listed = yield* linesOf([cli, "list", yield* ServerUrl])
      expect(listed.stderr).toBe("")
      expect(listed.lines).toBe(Count)
    }).pipe(Effect.provide(httpServer(SkillsServer.layer({ skills: catalogue, pageSize: 25 })))), { timeout: 120_000 })
})
