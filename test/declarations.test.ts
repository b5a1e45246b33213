import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { leaks, relativeNames } from "./declarations.js"
import { root } from "./codeBlocks.js"

// `npm test` builds first; run alone, this needs `npm run build`.
for (const name of ["skills-core", "skills-server", "skills-client"]) {
  describe(`packages/${name}`, () => {
    it("has public declaration files that name only public modules", () => {
      expect(leaks(path.join(root, "packages", name)).map((leak) => `${leak.file} names ${leak.names}`)).toEqual([])
    })
  })
}

describe("the declarations check", () => {
  it("reads imports, re-exports and import() types, but not JSDoc lines", () => {
    const text = [
      "/**",
      " * import { Pull } from \"./Example.js\"",
      " */",
      "import * as A from \"./a.js\";",
      "import type { B } from \"./internal/b.js\";",
      "export * as C from \"./c.js\";",
      "export { d } from \"effect/D\";",
      "export declare const e: import(\"./internal/e.js\").E;",
      "import \"./side.js\";"
    ].join("\n")
    expect(relativeNames(text)).toEqual(["./a.js", "./internal/b.js", "./c.js", "./internal/e.js", "./side.js"])
  })

  it("finds a public declaration naming a module the package does not export", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "declarations-"))
    try {
      fs.mkdirSync(path.join(dir, "dist/src/internal"), { recursive: true })
      fs.writeFileSync(
        path.join(dir, "package.json"),
        JSON.stringify({
          exports: {
            ".": { types: "./dist/src/index.d.ts" },
            "./A": { types: "./dist/src/A.d.ts" },
            "./package.json": "./package.json"
          }
        })
      )
      fs.writeFileSync(path.join(dir, "dist/src/index.d.ts"), "export * as A from \"./A.js\";\n")
      fs.writeFileSync(
        path.join(dir, "dist/src/A.d.ts"),
        "import * as P from \"./internal/plan.js\";\nexport type Step = P.Step;\nexport declare const b: import(\"./B.js\").B;\n"
      )
      expect(leaks(dir)).toEqual([
        { file: "dist/src/A.d.ts", names: "dist/src/internal/plan.d.ts" },
        { file: "dist/src/A.d.ts", names: "dist/src/B.d.ts" }
      ])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
