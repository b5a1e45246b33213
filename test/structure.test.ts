import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { root } from "./codeBlocks.js"
import { cycles, headerLines, lineCount, type Module, modules, scan, specifiers, trespasses } from "./structure.js"

/** The most lines a module may have: past it, a module holds more than one idea. */
const MaxLines = 600

/** The most lines of a module's header: its purpose, not the manual of its details. */
const MaxHeaderLines = 45

/** The server's fence: the one folder that touches effect's internals, and its one door. */
const fence = { folder: "internal/effect/", port: "internal/effect/port.ts" }

const packages = ["skills-core", "skills-client", "skills-server"]

for (const name of packages) {
  describe(`packages/${name}/src`, () => {
    const graph = modules(path.join(root, "packages", name, "src"))

    it("has no import cycle, type-only imports included", () => {
      expect(cycles(graph).map((cycle) => `${cycle.path.join(" -> ")} (members: ${cycle.members.join(", ")})`)).toEqual([])
    })

    it(`has no module over ${MaxLines} lines`, () => {
      expect(graph.filter((module) => module.lines > MaxLines).map((module) => `${module.file}: ${module.lines} lines`)).toEqual([])
    })

    it(`has no module header over ${MaxHeaderLines} lines`, () => {
      expect(graph.filter((module) => module.header > MaxHeaderLines).map((module) => `${module.file}: a header of ${module.header} lines`))
        .toEqual([])
    })
  })
}

describe("packages/skills-server/src: the fence", () => {
  it("only internal/effect/ touches effect's internals, and the rest of the server enters it by its port", () => {
    expect(trespasses(path.join(root, "packages", "skills-server", "src"), fence)).toEqual([])
  })

  it("the fence holds its port", () => {
    expect(fs.existsSync(path.join(root, "packages", "skills-server", "src", fence.port))).toBe(true)
  })
})

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

  it("reads code apart from comments, strings and regular expressions, and knows an import's specifier", () => {
    const { code, literals } = scan([
      "// a.installHandlers \"effect/x\"",
      "import * as A from \"effect/ai\"",
      "const k = \"effect/http/Key\" /* mapUnsafe */",
      "const r = /[\"']effect\\//g, half = 4 / 2",
      "const t = `x ${\"y\"}`",
      "adapter.installHandlers()"
    ].join("\n"))
    expect(literals.map(({ line, specifier, value }) => [line, specifier, value])).toEqual([
      [2, true, "effect/ai"],
      [3, false, "effect/http/Key"],
      [5, false, "x ${\"y\"}"]
    ])
    expect(code).not.toContain("mapUnsafe")
    expect(code.match(/installHandlers/g)).toHaveLength(1)
    expect(code.split("\n")).toHaveLength(6)
  })
})

describe("the fence rule on a package", () => {
  const withPackage = (files: Record<string, string>, check: (src: string) => void) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "structure-"))
    try {
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
        fs.writeFileSync(path.join(dir, file), text)
      }
      check(dir)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }

  it("finds each way in to effect's internals outside the fence, and none inside it or in comments", () => {
    withPackage({
      "internal/effect/port.ts": "export { wrap } from \"./adapter.js\"\n",
      "internal/effect/adapter.ts": [
        "import * as Rpc from \"effect/rpc/Rpc\"",
        "const key = \"effect/ai/McpRuntime/ServerRuntime\"",
        "export const wrap = (base: any) => ({ ...base, installHandlers: base.installHandlers })",
        "Object.defineProperty(server, key, { value: 1 })"
      ].join("\n"),
      "Public.ts": [
        "/**",
        " * import { McpServer } from \"effect/ai\" (an example: not code) and installHandlers, mapUnsafe",
        " */",
        "import * as Port from \"./internal/effect/port.js\"",
        "import { McpServer } from \"effect/ai\"",
        "export const ok = Port.wrap"
      ].join("\n"),
      "internal/a.ts": [
        "import * as RpcGroup from \"effect/rpc/RpcGroup\"",
        "import type * as Core from \"effect/ai/internal/mcpCore\"",
        "import * as Adapter from \"./effect/adapter.js\"",
        "const key = \"effect/http/HttpRouter/Middleware-\"",
        "export const f = (context: any, adapter: any) => [context.mapUnsafe, adapter.installHandlers]",
        "Object.defineProperty(adapter, \"x\", { value: 1 })",
        "server.addResource = (resource: unknown) => resource",
        "const same = server.addResource === undefined || ((x: number) => x)"
      ].join("\n")
    }, (src) => {
      expect(trespasses(src, { folder: "internal/effect/", port: "internal/effect/port.ts" })).toEqual([
        "internal/a.ts:1: imports effect/rpc/RpcGroup",
        "internal/a.ts:2: imports effect/ai/internal/mcpCore",
        "internal/a.ts:3: enters the fence by internal/effect/adapter.ts, not by internal/effect/port.ts",
        "internal/a.ts:4: names effect's key \"effect/http/HttpRouter/Middleware-\"",
        "internal/a.ts:5: names effect's hook mapUnsafe",
        "internal/a.ts:5: names effect's hook installHandlers",
        "internal/a.ts:6: patches an object (Object.defineProperty)",
        "internal/a.ts:7: patches effect's McpServer service (addResource)"
      ])
    })
  })

  it("counts type-only imports, an internal module's of a public module's types included", () => {
    withPackage({
      "Public.ts": "import * as Impl from \"./internal/impl.js\"\nexport const run = Impl.run\n",
      "internal/impl.ts": "import type { Options } from \"../Public.js\"\nexport const run = (o: Options) => o\n",
      "A.ts": "import type { B } from \"./B.js\"\nexport type A = B\n",
      "B.ts": "import type { A } from \"./A.js\"\nexport type B = A\n"
    }, (src) => {
      expect(cycles(modules(src)).map((cycle) => cycle.members)).toEqual([["A.ts", "B.ts"], ["Public.ts", "internal/impl.ts"]])
    })
  })
})
