/**
 * Type-checks the TypeScript blocks of a Markdown file as a user would paste them: each block is its
 * own module (so it must bring its own imports), compiled by the repository's `tsc` under the
 * repository's compiler options, with `@mcp-skills/*` resolved to the workspace sources.
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

const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc")

/**
 * Compiles every block and returns the errors as `<file>:<line>:<column> - error TS…: …`, lines
 * counted in the Markdown file. Empty when every block compiles.
 */
export const check = (file: string, markdown: string): ReadonlyArray<string> => {
  const found = blocks(markdown)
  if (found.length === 0) return []
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-blocks-"))
  try {
    // The blocks resolve `effect`, `@effect/platform-node` and the rest as a user's project would.
    fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "junction")
    const names = found.map((block) => `block-${block.line}.ts`)
    const indents = new Map(found.map((block) => [block.line, block.indent]))
    found.forEach((block, i) => fs.writeFileSync(path.join(dir, names[i]!), `${block.code}\nexport {}\n`))
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
      const at = /^block-(\d+)\.ts\((\d+),(\d+)\): (.*)$/.exec(line)
      if (at === null) return line
      const [, start, row, column, message] = at
      return `${file}:${Number(start) + Number(row) - 1}:${Number(column) + indents.get(Number(start))!} - ${message}`
    })
    return errors.length > 0 ? errors : [`tsc exited with ${run.status}: ${output}`]
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
