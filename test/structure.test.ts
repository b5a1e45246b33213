import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { root } from "./codeBlocks.js"
import { cycles, lineCount, type Module, modules, specifiers } from "./structure.js"

/** The most lines a module may have: past it, a module holds more than one idea. */
const MaxLines = 600

for (const name of ["skills-core", "skills-client", "skills-server"]) {
  describe(`packages/${name}/src`, () => {
    const graph = modules(path.join(root, "packages", name, "src"))

    it("has no import cycle (type-only imports count, but an internal module's of its public types)", () => {
      expect(cycles(graph).map((cycle) => `${cycle.path.join(" -> ")} (members: ${cycle.members.join(", ")})`)).toEqual([])
    })

    it(`has no module over ${MaxLines} lines`, () => {
      expect(graph.filter((module) => module.lines > MaxLines).map((module) => `${module.file}: ${module.lines} lines`)).toEqual([])
    })
  })
}

describe("the structure check", () => {
  const graph = (edges: Record<string, ReadonlyArray<string>>): ReadonlyArray<Module> =>
    Object.entries(edges).map(([file, imports]) => ({ file, lines: 1, imports }))

  it("reads imports, type-only imports and re-exports, over several lines, but not JSDoc examples", () => {
    const text = [
      "/**",
      " * import { Pull } from \"./Example.js\"",
      " */",
      "import * as A from \"./a.js\"",
      "import type { B } from \"./b.js\"",
      "import {",
      "  c,",
      "  d",
      "} from \"./c.js\"",
      "import \"./side.js\"",
      "export * as E from \"./e.js\"",
      "export { f } from \"effect/F\"",
      "export type { G } from \"./g.js\"",
      "export const g = `import x from \"./template.js\"`"
    ].join("\n")
    expect(specifiers(text)).toEqual([
      { specifier: "./a.js", typeOnly: false },
      { specifier: "./b.js", typeOnly: true },
      { specifier: "./c.js", typeOnly: false },
      { specifier: "./side.js", typeOnly: false },
      { specifier: "./e.js", typeOnly: false },
      { specifier: "effect/F", typeOnly: false },
      { specifier: "./g.js", typeOnly: true }
    ])
  })

  it("counts lines as wc -l does", () => {
    expect([lineCount(""), lineCount("a"), lineCount("a\n"), lineCount("a\nb"), lineCount("a\nb\n")]).toEqual([0, 1, 1, 2, 2])
  })

  it("finds every cycle once, with its members and a loop through them, and a module importing itself", () => {
    expect(cycles(graph({
      "a.ts": ["b.ts"],
      "b.ts": ["c.ts", "d.ts"],
      "c.ts": ["a.ts"],
      "d.ts": [],
      "e.ts": ["e.ts"],
      "f.ts": ["a.ts"]
    }))).toEqual([
      { members: ["a.ts", "b.ts", "c.ts"], path: ["a.ts", "b.ts", "c.ts", "a.ts"] },
      { members: ["e.ts"], path: ["e.ts", "e.ts"] }
    ])
    expect(cycles(graph({ "a.ts": ["b.ts"], "b.ts": ["c.ts"], "c.ts": [] }))).toEqual([])
  })
})

describe("the structure check on a package", () => {
  it("counts type-only imports, except an internal module's of a public module's types", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "structure-"))
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
      fs.writeFileSync(path.join(dir, file), text)
    }
    write("Public.ts", "import * as Impl from \"./internal/impl.js\"\nexport const run = Impl.run\n")
    write("internal/impl.ts", "import type { Options } from \"../Public.js\"\nexport const run = (o: Options) => o\n")
    write("A.ts", "import type { B } from \"./B.js\"\nexport type A = B\n")
    write("B.ts", "import type { A } from \"./A.js\"\nexport type B = A\n")
    try {
      expect(cycles(modules(dir)).map((cycle) => cycle.members)).toEqual([["A.ts", "B.ts"]])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
