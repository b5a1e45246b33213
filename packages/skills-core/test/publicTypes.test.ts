import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

// `npm test` builds before testing, so the emitted declarations are the public signatures.
const dist = path.join(import.meta.dirname, "..", "dist", "src")

describe("public signatures", () => {
  it("no declaration file of skills-core mentions `any`", () => {
    const files = fs.readdirSync(dist).filter((file) => file.endsWith(".d.ts"))
    expect(files.length).toBeGreaterThanOrEqual(10)
    for (const file of files) {
      const code = fs.readFileSync(path.join(dist, file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "")
      expect(code, file).not.toMatch(/\bany\b/)
    }
  })
})
