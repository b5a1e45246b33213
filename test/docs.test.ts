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

describe("guidesLinked", () => {
  it("reads the guides a text links to, each once, anchors dropped, other folders left out", () => {
    const text = "[a](docs/a.md) [b](docs/b.md#x) [a again](docs/a.md) [pkg](packages/x/README.md) [deep](docs/sub/c.md)"
    expect(guidesLinked(text, "docs/")).toEqual(["a.md", "b.md"])
  })
})
