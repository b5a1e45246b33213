/**
 * Type-checks the TypeScript blocks a user reads, as a user would paste them: the fenced ```ts blocks
 * of the READMEs and guides, and those of the JSDoc comments of the sources (their `@example`s).
 * Each block is its own module (so it must bring its own imports), compiled by the repository's `tsc`
 * under the repository's compiler options, with `@mcp-skills/*` resolved to the workspace sources.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** The repository root. */
export const root = path.resolve(import.meta.dirname, "..")

/**
 * One fenced TypeScript block: the 1-based Markdown line of its first code line, the indentation
 * of its fence (removed from the code) and its code.
 */
export interface Block {
  readonly line: number
  readonly indent: number
  readonly code: string
}

const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/

/** Every ```ts (or ```typescript) block of a Markdown text, whatever follows the language name. */
export const blocks = (markdown: string): ReadonlyArray<Block> => {
  const lines = markdown.split("\n")
  const out: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = fence.exec(lines[i]!)
    if (open === null) continue
    const [, indent, marker, language] = open
    const body: Array<string> = []
    let j = i + 1
    // A fence closes with the same character, at least as long, and nothing else on the line.
    for (; j < lines.length && !new RegExp(`^\\s*${marker![0]}{${marker!.length},}\\s*$`).test(lines[j]!); j++) {
      body.push(lines[j]!.startsWith(indent!) ? lines[j]!.slice(indent!.length) : lines[j]!)
    }
    if (language === "ts" || language === "typescript") out.push({ line: i + 2, indent: indent!.length, code: body.join("\n") })
    i = j
  }
  return out
}

// A source's JSDoc, line for line and column for column: the comment leaders (`/**`, ` * `, `*\/`)
// and everything outside the comments become spaces.
const unwrap = (source: string): ReadonlyArray<string> => {
  let inside = false
  return source.split("\n").map((line) => {
    if (!inside) {
      const open = line.indexOf("/**")
      if (open < 0) return ""
      inside = true
      line = " ".repeat(open + 3) + line.slice(open + 3)
    }
    const close = line.indexOf("*/")
    if (close >= 0) {
      inside = false
      line = line.slice(0, close)
    }
    const leader = /^\s*\*(?!\/) ?/.exec(line)
    return leader === null ? line : " ".repeat(leader[0].length) + line.slice(leader[0].length)
  })
}

// Each `@example` of a source's JSDoc: the 0-based line of its tag, and the lines of its content
// (to the next tag or the end of its comment).
const exampleSections = (source: string, lines: ReadonlyArray<string>) =>
  [...source.matchAll(/\/\*\*[\s\S]*?\*\//g)].flatMap((comment) => {
    const first = source.slice(0, comment.index).split("\n").length - 1
    const last = first + comment[0].split("\n").length - 1
    const sections: Array<{ readonly tag: number; readonly from: number; readonly to: number }> = []
    for (let i = first; i <= last; i++) {
      if (!/^\s*@example\b/.test(lines[i]!)) continue
      let end = i + 1
      while (end <= last && !/^\s*@\w/.test(lines[end]!)) end++
      sections.push({ tag: i, from: i + 1, to: end })
    }
    return sections
  })

/**
 * The `@example`s of a TypeScript source's JSDoc as Markdown, line for line and column for column:
 * everything else (code, comment leaders, the rest of each comment) becomes spaces, so the blocks
 * `blocks` finds in it, and the errors `check` reports, are at their places in the source.
 */
export const examples = (source: string): string => {
  const lines = unwrap(source)
  const kept = new Set(exampleSections(source, lines).flatMap(({ from, to }) => Array.from({ length: to - from }, (_, i) => from + i)))
  return lines.map((line, i) => (kept.has(i) ? line : "")).join("\n")
}

/**
 * Every `@example` of a source's JSDoc that holds no ```ts block, as `<file>:<line> - …`: the site
 * would show it without anything compiling it.
 */
export const bareExamples = (file: string, source: string): ReadonlyArray<string> => {
  const lines = unwrap(source)
  return exampleSections(source, lines)
    .filter(({ from, to }) => blocks(lines.slice(from, to).join("\n")).length === 0)
    .map(({ tag }) => `${file}:${tag + 1} - @example holds no \`\`\`ts block, so nothing compiles it`)
}

const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc")

/** One text whose TypeScript blocks are checked: a Markdown file, or a source's `examples`. */
export interface Document {
  readonly file: string
  readonly markdown: string
}

/**
 * Compiles every block of every document in one `tsc` run and returns the errors as
 * `<file>:<line>:<column> - error TS…: …`, lines counted in the document. Empty when every block
 * compiles.
 */
export const checkAll = (documents: ReadonlyArray<Document>): ReadonlyArray<string> => {
  const found = documents.flatMap((document, d) =>
    blocks(document.markdown).map((block) => ({ ...block, file: document.file, name: `block-${d}-${block.line}.ts` }))
  )
  if (found.length === 0) return []
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "code-blocks-"))
  try {
    // The blocks resolve `effect`, `@effect/platform-node` and the rest as a user's project would.
    fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "junction")
    const names = found.map((block) => block.name)
    const byName = new Map(found.map((block) => [block.name, block]))
    found.forEach((block) => fs.writeFileSync(path.join(dir, block.name), `${block.code}\nexport {}\n`))
    const source = (pkg: string) => [path.join(root, "packages", pkg, "src", "index.ts")]
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({
      extends: path.join(root, "tsconfig.base.json"),
      compilerOptions: {
        noEmit: true,
        composite: false,
        declaration: false,
        declarationMap: false,
        sourceMap: false,
        incremental: false,
        // An example may well show a value without using it.
        noUnusedLocals: false,
        noUnusedParameters: false,
        paths: {
          "@mcp-skills/core": source("skills-core"),
          "@mcp-skills/server": source("skills-server"),
          "@mcp-skills/client": source("skills-client")
        }
      },
      files: names
    }))
    // package.json with "type": "module", as the README's projects are ES modules.
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
    const run = spawnSync(process.execPath, [tsc, "-p", path.join(dir, "tsconfig.json"), "--pretty", "false"], { cwd: dir, encoding: "utf8" })
    if (run.error !== undefined) throw run.error
    const output = `${run.stdout}${run.stderr}`.trim()
    if (run.status === 0) return []
    const errors = output.split("\n").filter((line) => line.length > 0 && !line.startsWith(" ")).map((line) => {
      const at = /^(block-\d+-\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line)
      const block = at === null ? undefined : byName.get(at[1]!)
      if (at === null || block === undefined) return line
      const [, , row, column, message] = at
      return `${block.file}:${block.line + Number(row) - 1}:${Number(column) + block.indent} - ${message}`
    })
    return errors.length > 0 ? errors : [`tsc exited with ${run.status}: ${output}`]
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** `checkAll` of one Markdown file. */
export const check = (file: string, markdown: string): ReadonlyArray<string> => checkAll([{ file, markdown }])
