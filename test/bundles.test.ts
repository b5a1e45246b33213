/**
 * Each executable's bundle is ASCII and carries no documentation comments. V8 keeps a module's
 * source for as long as the process runs, and one character outside Latin-1 makes it keep the
 * whole source two bytes a character: the server's 3.3 MB of source held 6.5 MiB of every
 * server's RSS. The JSDoc of the bundled packages was 40% of it, and no one reads it there.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { root } from "./codeBlocks.js"

// `npm test` builds first; run alone, this needs `npm run build`.
for (
  const bundle of ["packages/skills-server/dist/src/bin/mcp-skills-server.bundle.js", "packages/skills-client/dist/src/bin/mcp-skills.bundle.js"]
) {
  describe(bundle, () => {
    const source = fs.readFileSync(path.join(root, bundle), "latin1")

    it("is ASCII", () => {
      expect([...new Set(source.match(/[^\x00-\x7f]/g) ?? [])]).toEqual([])
    })

    it("has no JSDoc comments", () => {
      expect(source.match(/^\s*\/\*\*(?!\s*@license)[^\n]*$/gm)?.slice(0, 3) ?? []).toEqual([])
    })
  })
}
