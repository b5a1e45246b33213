import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { root } from "./readme.js"
import { cycles, headerLines, lineCount, type Module, modules, specifiers } from "./structure.js"

/** The most lines a module may have: past it, a module holds more than one idea. */
const MaxLines = 600

/** The most lines of a module's header: its purpose, not the manual of its details. */
const MaxHeaderLines = 45

const packages = [
  { name: "skills-core", headers: true },
  { name: "skills-client", headers: true },
  // The server's three long headers are issue 28's server phase.
  { name: "skills-server", headers: false }
] as const

for (const { headers, name } of packages) {
  describe(`packages/${name}/src`, () => {
    const graph = modules(path.join(root, "packages", name, "src"))

    it("has no import cycle, type-only imports included", () => {
      expect(cycles(graph).map((cycle) => `${cycle.path.join(" -> ")} (members: ${cycle.members.join(", ")})`)).toEqual([])
    })

    it(`has no module over ${MaxLines} lines`, () => {
      expect(graph.filter((module) => module.lines > MaxLines).map((module) => `${module.file}: ${module.lines} lines`)).toEqual([])
    })

    it.runIf(headers)(`has no module header over ${MaxHeaderLines} lines`, () => {
      expect(graph.filter((module) => module.header > MaxHeaderLines).map((module) => `${module.file}: a header of ${module.header} lines`))
        .toEqual([])
    })
  })
}

describe("the structure check", () => {
  const graph = (edges: Record<string, ReadonlyArray<string>>): ReadonlyArray<Module> =>
    Object.entries(edges).map(([file, imports]) => ({ file, lines: 1, header: 0, imports }))

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

  it("counts the lines of the comment a module opens with, after a shebang, and none before code", () => {
    expect(headerLines("/**\n * One.\n *\n * @since 0.1.0\n */\nimport * as A from \"./a.js\"\n")).toBe(5)
    expect(headerLines("#!/usr/bin/env node\n/**\n * Two.\n */\n")).toBe(3)
    expect(headerLines("/** @internal */\nexport const a = 1\n")).toBe(1)
    expect(headerLines("import * as A from \"./a.js\"\n/** Not a header. */\n")).toBe(0)
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
  it("counts type-only imports, an internal module's of a public module's types included", () => {
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
      expect(cycles(modules(dir)).map((cycle) => cycle.members)).toEqual([["A.ts", "B.ts"], ["Public.ts", "internal/impl.ts"]])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
