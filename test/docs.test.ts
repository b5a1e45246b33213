/**
 * The shape of the documentation: a README short enough to read, and one list of guides that the
 * README and the docs index agree on, each guide a file of docs/.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { root } from "./codeBlocks.js"

const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8")

/** The Markdown files of docs/ that a text links to, in order, each once. */
export const guidesLinked = (markdown: string, prefix: string): ReadonlyArray<string> => [
  ...new Set(
    [...markdown.matchAll(/\]\(([\w./-]+\.md)(?:#[\w-]*)?\)/g)]
      .map(([, target]) => target!)
      .filter((target) => target.startsWith(prefix) && !target.slice(prefix.length).includes("/"))
      .map((target) => target.slice(prefix.length))
  )
]

describe("the documentation", () => {
  const readme = read("README.md")
  const index = read("docs/README.md")
  const guides = fs.readdirSync(path.join(root, "docs")).filter((name) => name.endsWith(".md") && name !== "README.md").sort()

  it("the README has at most 250 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250)
  })

  it("the docs index links every guide of docs/, and only those", () => {
    const tableRows = index.slice(index.indexOf("| guide |"), index.indexOf("\n## ", index.indexOf("| guide |")))
    expect([...guidesLinked(tableRows, "")].sort()).toEqual(guides)
  })

  it("the README's table of guides is the index's, in the same order", () => {
    const table = (markdown: string, prefix: string) =>
      guidesLinked(markdown.slice(markdown.indexOf("| guide |"), markdown.indexOf("\n## ", markdown.indexOf("| guide |"))), prefix)
    expect(table(readme, "docs/")).toEqual(table(index, ""))
  })
})

/** The declarations a public module exports, each with the JSDoc just above it (or none). */
export const exportsOf = (source: string): ReadonlyArray<{ readonly name: string; readonly doc: string | undefined }> => {
  const lines = source.split("\n")
  return lines.flatMap((line, at): ReadonlyArray<{ readonly name: string; readonly doc: string | undefined }> => {
    const found = /^export (?:declare )?(?:abstract )?(?:const|function|class|interface|type|namespace|enum|let) (\w+)/.exec(line)
    if (found === null) return []
    if (lines[at - 1]?.trim() !== "*/") return [{ name: found[1]!, doc: undefined }]
    let start = at - 1
    while (start > 0 && !lines[start]!.trim().startsWith("/**")) start--
    return [{ name: found[1]!, doc: lines.slice(start, at).join("\n") }]
  })
}

describe("the reference", () => {
  for (const pkg of ["skills-core", "skills-server", "skills-client"]) {
    it(`every export of ${pkg}'s public modules has its JSDoc with @since and @category`, () => {
      const exported = Object.keys(JSON.parse(read(`packages/${pkg}/package.json`)).exports as Record<string, unknown>)
        .filter((key) => key !== "." && !key.endsWith(".json"))
        .map((key) => `packages/${pkg}/src/${key.slice(2)}.ts`)
      expect(exported.length).toBeGreaterThan(5)
      const missing = exported.flatMap((file) =>
        exportsOf(read(file)).filter(({ doc }) => doc === undefined || !/@since /.test(doc) || !/@category /.test(doc))
          .map(({ name }) => `${file}: ${name}`)
      )
      expect(missing).toEqual([])
    })
  }
})

describe("exportsOf", () => {
  it("finds each export with the JSDoc just above it, and none where a comment or nothing stands there", () => {
    const source = "/**\n * A.\n * @since 0.1.0\n * @category models\n */\nexport type A = 1\n// why\nexport const b = 2\nconst c = 3\n"
    expect(exportsOf(source).map(({ doc, name }) => [name, doc?.includes("@category models") ?? false])).toEqual([["A", true], ["b", false]])
  })
})

describe("guidesLinked", () => {
  it("reads the guides a text links to, each once, anchors dropped, other folders left out", () => {
    const text = "[a](docs/a.md) [b](docs/b.md#x) [a again](docs/a.md) [pkg](packages/x/README.md) [deep](docs/sub/c.md)"
    expect(guidesLinked(text, "docs/")).toEqual(["a.md", "b.md"])
  })
})
