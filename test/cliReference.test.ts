/**
 * docs/clis.md against the executables' own `--help`: every command has its section, every flag of
 * a command's help is a row of its table with an example that runs that command with that flag,
 * and no row names a flag the command no longer has. Reads the built executables (`npm test`
 * builds first).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { root } from "./codeBlocks.js"

const bins = {
  "mcp-skills-server": "packages/skills-server/dist/src/bin/mcp-skills-server.js",
  "mcp-skills": "packages/skills-client/dist/src/bin/mcp-skills.js"
} as const

const help = (bin: keyof typeof bins, ...command: Array<string>) =>
  execFileSync(process.execPath, [path.join(root, bins[bin]), ...command, "--help"], { encoding: "utf8", timeout: 60_000 })

// The lines of one section of a help text ("FLAGS", "SUBCOMMANDS"): from its title to the next
// line that is not indented (a blank line or the next title).
const section = (text: string, title: string): ReadonlyArray<string> => {
  const lines = text.split("\n")
  const start = lines.indexOf(title)
  if (start < 0) return []
  const end = lines.findIndex((line, i) => i > start && !/^\s+\S/.test(line))
  return lines.slice(start + 1, end < 0 ? undefined : end)
}

/** The names of a help text's subcommands. */
export const commandsOf = (text: string) => section(text, "SUBCOMMANDS").map((line) => /^\s+(\S+)/.exec(line)![1]!)

/** The long flags of a help text's FLAGS section (not the global ones). */
export const flagsOf = (text: string) => section(text, "FLAGS").map((line) => /^\s+(--[\w-]+)/.exec(line)![1]!)

/** The rows of the flag table of a guide's `## BIN COMMAND` section: flag and example. */
export const rowsOf = (guide: string, heading: string) => {
  const start = guide.indexOf(`\n## ${heading}\n`)
  if (start < 0) return undefined
  const next = guide.indexOf("\n## ", start + 1)
  const body = guide.slice(start, next < 0 ? undefined : next)
  return [...body.matchAll(/^\| `(--[\w-]+)` \|.*\| `([^`]+)` \|$/gm)].map(([, flag, example]) => ({ flag: flag!, example: example! }))
}

const guide = fs.readFileSync(path.join(root, "docs/clis.md"), "utf8")

describe("docs/clis.md", () => {
  describe.each(Object.keys(bins) as Array<keyof typeof bins>)("%s", (bin) => {
    const top = help(bin)
    const commands = commandsOf(top)

    it("has a section for every command and none for a command that does not exist", () => {
      expect(commands.length).toBeGreaterThan(0)
      const documented = [...guide.matchAll(new RegExp(`^## ${bin} (\\S+)$`, "gm"))].map(([, command]) => command)
      expect(documented.sort()).toEqual([...commands].sort())
    })

    it("names every global flag", () => {
      for (const flag of ["--help", "--version", "--log-level", "--completions", "--wizard"]) {
        expect(top).toContain(flag)
        expect(guide).toContain(`\`${flag}`)
      }
    })

    it.each(commands)("%s: every flag of --help, each with an example of it, and no other", (command) => {
      const flags = flagsOf(help(bin, command))
      const rows = rowsOf(guide, `${bin} ${command}`) ?? []
      expect(rows.map((row) => row.flag).sort()).toEqual([...flags].sort())
      for (const { example, flag } of rows) {
        expect(example, `the example of ${flag}`).toMatch(new RegExp(`^${bin} ${command}\\b`))
        expect(example.split(/\s+/), `the example of ${flag}`).toSatisfy((words: Array<string>) =>
          words.some((word) => word === flag || word.startsWith(`${flag}=`))
        )
      }
    }, 60_000)
  })
})

describe("the help and guide readers", () => {
  const text = [
    "USAGE",
    "  tool run [flags]",
    "",
    "FLAGS",
    "  --out string    where",
    "  --all           every one",
    "GLOBAL FLAGS",
    "  --help, -h      help"
  ].join("\n")

  it("reads the FLAGS section only, not the global flags", () => {
    expect(flagsOf(text)).toEqual(["--out", "--all"])
  })

  it("reads a section's table rows, not the next section's", () => {
    const markdown = [
      "## tool run",
      "",
      "| flag | what it does | example |",
      "| --- | --- | --- |",
      "| `--out` | where | `tool run --out x` |",
      "",
      "## tool other",
      "",
      "| `--all` | every one | `tool other --all` |"
    ].join("\n")
    expect(rowsOf(`\n${markdown}`, "tool run")).toEqual([{ flag: "--out", example: "tool run --out x" }])
    expect(rowsOf(`\n${markdown}`, "tool gone")).toBeUndefined()
  })
})
