/**
 * `mcp-skills` as a new user meets it, run from `dist`: a usage error is one line naming the cause
 * with a hint to the command's help, before anything is asked of a server; each command's help
 * names its arguments and shows examples; `read` does not print a binary file to a terminal.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { runCli, serveHttp } from "./support/helpers.js"

const cli = Path.resolve(import.meta.dirname, "../dist/src/bin/mcp-skills.js")
const examples = Path.resolve(import.meta.dirname, "../../../examples/skills")
const logo = Path.join(examples, "pdf-processing/assets/logo.png")
const skill = "skill://pdf-processing/SKILL.md"

// Port 9 (discard) on loopback: nothing answers, so a run that asked would fail with a transport error.
const nowhere = "http://127.0.0.1:9/mcp"

/** Exactly one line on stderr, this one; nothing on stdout; exit status 1. */
const oneLine = (run: { readonly status: number; readonly stdout: string; readonly stderr: string }, line: string) => {
  expect(run.stderr).toBe(`${line}\n`)
  expect(run.stdout).toBe("")
  expect(run.status).toBe(1)
}

describe.concurrent("mcp-skills: a usage error is one line, before anything is asked", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, string]> = [
    ["an unknown flag", ["list", "--bogus", nowhere], "mcp-skills: unknown flag --bogus; run 'mcp-skills list --help'"],
    ["an unknown command", ["lst", nowhere], `mcp-skills: unknown command "lst" (did you mean list?); run 'mcp-skills --help'`],
    ["get without SKILL_URI", ["get", nowhere], "mcp-skills: get needs exactly one SKILL_URI after TARGET, got 0; run 'mcp-skills get --help'"],
    ["read with two files", ["read", nowhere, skill, "a", "b"], "mcp-skills: read needs SKILL_URI and at most one FILE after TARGET, got 3 arguments; run 'mcp-skills read --help'"],
    ["list with an argument", ["list", nowhere, skill], `mcp-skills: list takes no argument after TARGET, got ${skill}; run 'mcp-skills list --help'`],
    ["pull with SKILL_URI and --all", ["pull", nowhere, skill, "--all", "--into", "x"], "mcp-skills: pull needs SKILL_URI arguments or --all, not both; run 'mcp-skills pull --help'"],
    ["a TARGET that is no URL", ["list", "localhost:3000"], `mcp-skills: TARGET must be an http(s) MCP URL, or use --stdio "command args"; run 'mcp-skills list --help'`],
    ["a timeout of 0", ["list", "--timeout", "0", nowhere], "mcp-skills: --timeout must be a positive number of seconds; run 'mcp-skills list --help'"],
    ["a missing flag value", ["list", nowhere, "--timeout"], "mcp-skills: Missing value for flag --timeout. Expected: number; run 'mcp-skills list --help'"]
  ]
  for (const [what, args, line] of cases) {
    it(what, async () => oneLine(await runCli(args), line))
  }
})

describe.concurrent("mcp-skills --help", () => {
  const named = {
    list: "TARGET",
    get: "TARGET SKILL_URI",
    read: "TARGET SKILL_URI [FILE]",
    pull: "TARGET [SKILL_URI...]"
  }
  for (const [command, args] of Object.entries(named)) {
    it(`${command} names its arguments and shows an example`, async () => {
      const help = await runCli([command, "--help"])
      expect(help.status).toBe(0)
      expect(help.stdout).toContain(`USAGE\n  mcp-skills ${command} [flags] [<${args}...>]`)
      expect(help.stdout).toMatch(/ARGUMENTS\n {2}TARGET.*TARGET: an MCP URL, left out with --stdio/)
      expect(help.stdout).toMatch(new RegExp(`EXAMPLES\\n(.*\\n)*? {2}mcp-skills ${command} `))
    })
  }
})

/** Runs the CLI with standard output a terminal (`script` gives it a pseudo-terminal); what the terminal showed. */
const inTerminal = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly status: number; readonly shown: string }>((resolve) => {
    const line = [process.execPath, cli, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ")
    execFile("script", ["-qec", line, "/dev/null"], { encoding: "utf8", timeout: 60_000 }, (error, stdout) =>
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, shown: stdout.replaceAll("\r\n", "\n") }))
  })

/** Runs the CLI with standard output a pipe; its bytes as they came. */
const piped = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly status: number; readonly stdout: Buffer; readonly stderr: string }>((resolve) => {
    execFile(process.execPath, [cli, ...args], { encoding: "buffer", timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr: stderr.toString("utf8") }))
  })

/** Runs `f` while `mcp-skills-server serve examples/skills` serves, with its MCP URL. */
const withServer = <A>(f: (url: string) => Promise<A>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(serveHttp(examples), ({ url }) => Effect.promise(() => f(url)))))

describe.concurrent("mcp-skills read of a binary file", () => {
  it("to a terminal: refused in one line naming the file and what to do, exit 1", async () => {
    const [run, text] = await withServer(async (url) => [
      await inTerminal(["read", url, skill, "assets/logo.png"]),
      await inTerminal(["read", url, skill])
    ])
    expect(run.status).toBe(1)
    const size = (await Fs.stat(logo)).size
    expect(run.shown).toBe(
      `mcp-skills: skill://pdf-processing/assets/logo.png is binary (image/png, ${size} bytes) and standard output is a terminal: give --out FILE, or pipe it; run 'mcp-skills read --help'\n`
    )
    // A text file is printed to the terminal as before.
    expect(text.status).toBe(0)
    expect(text.shown).toBe(await Fs.readFile(Path.join(examples, "pdf-processing/SKILL.md"), "utf8").then((s) => s.replaceAll("\r\n", "\n")))
  })

  it("piped: the verified bytes as they are; --out FILE: written there, to a terminal too", async (context) => {
    const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "mcp-skills-read-"))
    context.onTestFinished(() => Fs.rm(dir, { recursive: true, force: true }))
    const out = Path.join(dir, "logo.png")
    const [run, written] = await withServer(async (url) => [
      await piped(["read", url, skill, "assets/logo.png"]),
      await inTerminal(["read", url, skill, "assets/logo.png", "--out", out])
    ] as const)
    const bytes = await Fs.readFile(logo)
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    expect(Buffer.compare(run.stdout, bytes)).toBe(0)
    expect(written).toEqual({ status: 0, shown: "" })
    expect(Buffer.compare(await Fs.readFile(out), bytes)).toBe(0)
  })
})
