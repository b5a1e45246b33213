/**
 * Each executable's bundle is ASCII and carries no documentation comments. V8 keeps a module's
 * source for as long as the process runs, and one character outside Latin-1 makes it keep the
 * whole source two bytes a character: the server's 3.3 MB of source held 6.5 MiB of every
 * server's RSS. The JSDoc of the bundled packages was 40% of it, and no one reads it there.
 *
 * Neither executable loads Node's fetch implementation (undici) to start: importing `node:http`
 * as an ES module did (its `WebSocket` export), 20 ms and 4 MiB of every start (rolldown.config.mjs).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { root } from "./codeBlocks.js"

// Printed as the process exits: whether Node loaded undici's module.
const reportUndici = `data:text/javascript,${
  encodeURIComponent(
    `process.on("exit", () => process.stderr.write("undici loaded: " + process.moduleLoadList.some((m) => m.includes("undici")) + "\\n"))`
  )
}`

// `npm test` builds first; run alone, this needs `npm run build`.
for (
  const [bundle, bin] of [
    ["packages/skills-server/dist/src/bin/mcp-skills-server.bundle.js", "packages/skills-server/bin/mcp-skills-server.js"],
    ["packages/skills-client/dist/src/bin/mcp-skills.bundle.js", "packages/skills-client/bin/mcp-skills.js"]
  ] as const
) {
  describe(bundle, () => {
    const source = fs.readFileSync(path.join(root, bundle), "latin1")

    it("is ASCII", () => {
      expect([...new Set(source.match(/[^\x00-\x7f]/g) ?? [])]).toEqual([])
    })

    it("has no JSDoc comments", () => {
      expect(source.match(/^\s*\/\*\*(?!\s*@license)[^\n]*$/gm)?.slice(0, 3) ?? []).toEqual([])
    })

    it("starts without loading Node's fetch implementation", () => {
      const run = spawnSync(process.execPath, ["--import", reportUndici, path.join(root, bin), "--help"], { encoding: "utf8" })
      expect(run.status).toBe(0)
      expect(run.stderr).toContain("undici loaded: false")
    })
  })
}

// A Node that reports an older version than `engines` asks for (as Node 20 on a user's PATH).
const oldNode = `data:text/javascript,${encodeURIComponent(`Object.defineProperty(process.versions, "node", { value: "20.20.2" })`)}`

for (const [name, bin] of [
  ["mcp-skills-server", "packages/skills-server/bin/mcp-skills-server.js"],
  ["mcp-skills", "packages/skills-client/bin/mcp-skills.js"]
] as const) {
  it(`${name} on a Node older than engines: one line naming the Node it needs, exit 1`, () => {
    for (const args of [["--version"], ["--help"], ["list", "http://127.0.0.1:9/mcp"]]) {
      const run = spawnSync(process.execPath, ["--import", oldNode, path.join(root, bin), ...args], { encoding: "utf8" })
      expect(run.status).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr).toBe(`${name}: needs Node 22.19.0 or later, but runs on Node 20.20.2; install a newer Node\n`)
    }
  })
}
