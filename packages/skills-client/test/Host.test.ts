/**
 * `mcp-skills pull --host H --scope S` as a user runs it, from `dist`, with `HOME` pointed at a
 * temporary folder and the project as the working folder: every host preset and scope puts each
 * skill where that host reads it (`<folder>/<name>/SKILL.md`), with the lock file recording its
 * origin; `--into` wins over the host's folder; two servers serving a skill of one name into one
 * folder are refused naming both, and `--prefix` gives one of them folders of its own; `status`
 * says what is installed where; `sync` stops cleanly on SIGINT.
 */
import { execFile, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Host } from "@mcp-skills/client"
import * as Tamper from "./support/TamperServer.js"

const cli = Path.resolve(import.meta.dirname, "../dist/src/bin/mcp-skills.js")

interface Run {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

const run = (args: ReadonlyArray<string>, places: Host.Places): Promise<Run> =>
  new Promise((resolve) => {
    const env = { ...process.env, HOME: places.home, USERPROFILE: places.home, MCP_SKILLS_TOKEN: "" }
    execFile(process.execPath, [cli, ...args], { cwd: places.cwd, env, encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    })
  })

const freshPlaces = async (): Promise<Host.Places> => {
  const root = await Fs.realpath(await Fs.mkdtemp(Path.join(Os.tmpdir(), "mcp-skills-host-")))
  const places = { cwd: Path.join(root, "project"), home: Path.join(root, "home") }
  await Fs.mkdir(places.cwd)
  await Fs.mkdir(places.home)
  return places
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

// What a pull of the example skill says of it.
const added = `(3 files, ${Tamper.exampleFiles().reduce((n, file) => n + file.bytes.length, 0)} bytes)`

const lockOf = async (into: string) => JSON.parse(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8"))

let server: Tamper.TamperServer
let other: Tamper.TamperServer
const made: Array<string> = []

beforeAll(async () => {
  server = await Tamper.start()
  other = await Tamper.start()
})

afterAll(async () => {
  await server.close()
  await other.close()
  await Promise.all(made.map((dir) => Fs.rm(dir, { recursive: true, force: true })))
})

const places = async () => {
  const found = await freshPlaces()
  made.push(Path.dirname(found.cwd))
  return found
}

// Where each host reads skills, written out here as its documentation says, not derived from Host.
const expected: ReadonlyArray<readonly [Host.Host, Host.Scope, "cwd" | "home", string]> = [
  ["claude-code", "project", "cwd", ".claude/skills"],
  ["claude-code", "user", "home", ".claude/skills"],
  ["codex", "project", "cwd", ".agents/skills"],
  ["codex", "user", "home", ".agents/skills"],
  ["goose", "project", "cwd", ".agents/skills"],
  ["goose", "user", "home", ".agents/skills"],
  ["copilot", "project", "cwd", ".github/skills"],
  ["copilot", "user", "home", ".copilot/skills"],
  ["cursor", "project", "cwd", ".cursor/skills"],
  ["cursor", "user", "home", ".cursor/skills"],
  ["agents", "project", "cwd", ".agents/skills"],
  ["agents", "user", "home", ".agents/skills"]
]

describe.concurrent("pull --host --scope puts skills where each host reads them", () => {
  it("every preset is tested here", () => {
    expect(new Set(expected.map(([host]) => host))).toEqual(new Set(Host.Host.literals))
  })

  for (const [host, scope, base, folder] of expected) {
    it(`${host}, ${scope}: ${base === "home" ? "~" : "."}/${folder}/pdf-processing`, async () => {
      const at = await places()
      const result = await run(["pull", server.url, "--all", "--host", host, "--scope", scope], at)
      expect(result.stderr).toBe("")
      expect(result.status).toBe(0)
      const into = Path.join(at[base], folder)
      expect(result.stdout).toBe(`added skill://pdf-processing/SKILL.md -> pdf-processing ${added}\n`)
      for (const file of Tamper.exampleFiles()) {
        const path = Path.join(into, "pdf-processing", file.uri.slice("skill://pdf-processing/".length))
        expect(sha256(await Fs.readFile(path))).toBe(sha256(file.bytes))
      }
      const lock = await lockOf(into)
      expect(lock.skills).toHaveLength(1)
      expect(lock.skills[0]).toMatchObject({ origin: server.url, uri: Tamper.SkillUri, path: "pdf-processing", dynamic: false })
      expect(Date.parse(lock.skills[0].verifiedAt)).toBeGreaterThan(Date.now() - 120_000)
      expect(lock.skills[0].files.map((file: { uri: string; digest: string }) => [file.uri, file.digest]).sort()).toEqual(
        Tamper.exampleFiles().map((file) => [file.uri, sha256(file.bytes)]).sort()
      )
      // Nothing was written in the other place.
      expect(await Fs.readdir(at[base === "home" ? "cwd" : "home"])).toEqual([])
    }, 180_000)
  }

  it("the scope defaults to project, and --into wins over the host's folder (its flat layout stays)", async () => {
    const at = await places()
    expect((await run(["pull", server.url, "--all", "--host", "cursor"], at)).status).toBe(0)
    expect(await Fs.readdir(Path.join(at.cwd, ".cursor/skills/pdf-processing"))).toContain("SKILL.md")
    const into = Path.join(at.cwd, "elsewhere")
    expect((await run(["pull", server.url, "--all", "--host", "cursor", "--into", into], at)).status).toBe(0)
    expect(await Fs.readdir(Path.join(into, "pdf-processing"))).toContain("SKILL.md")
  }, 180_000)

  it("placement mistakes are usage errors, found before any server is asked", async () => {
    const at = await places()
    const nowhere = "http://127.0.0.1:9/mcp"
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["pull", nowhere, "--all"], "mcp-skills: pull needs --into DIR or --host HOST; run 'mcp-skills pull --help'"],
      [["pull", nowhere, "--all", "--into", "x", "--scope", "user"], "mcp-skills: pull --scope needs --host; run 'mcp-skills pull --help'"],
      [["sync", nowhere, "--all", "--host", "codex", "--prefix", "Bad_Prefix"],
        "mcp-skills: sync --prefix must be lowercase letters, digits and single hyphens (at most 64), as a skill name is; got \"Bad_Prefix\"; run 'mcp-skills sync --help'"]
    ]
    for (const [args, line] of cases) {
      const result = await run(args, at)
      expect(result.stderr).toBe(`${line}\n`)
      expect(result.status).toBe(1)
    }
    expect(await Fs.readdir(at.cwd)).toEqual([])
  }, 180_000)
})

describe.concurrent("--scope user needs an absolute home folder that exists", () => {
  const homes: ReadonlyArray<readonly [string, string, string]> = [
    ["an empty", "", "HOME is empty"],
    ["a relative", "home", "HOME is \"home\" (not an absolute path)"],
    ["a missing", "/nonexistent-mcp-skills-home", "HOME is \"/nonexistent-mcp-skills-home\" (no such file or folder)"]
  ]
  for (const [what, home, said] of homes) {
    it(`${what} HOME: pull, sync and status refuse it in one line naming it, before any server is asked`, async () => {
      const at = { ...(await places()), home }
      const nowhere = "http://127.0.0.1:9/mcp"
      for (const args of [
        ["pull", nowhere, "--all", "--host", "claude-code", "--scope", "user"],
        ["sync", nowhere, "--all", "--host", "codex", "--scope", "user"],
        ["status", "--scope", "user"],
        ["status"]
      ]) {
        const result = await run(args, at)
        expect(result.stderr).toBe(
          `mcp-skills: ${said}; the user scope is below the home folder, so set HOME to the absolute path of an existing folder\n`
        )
        expect(result.stdout).toBe("")
        expect(result.status).toBe(1)
      }
      // The project scope needs no home.
      const project = await run(["status", "--scope", "project"], at)
      expect(project.status).toBe(0)
      expect(project.stdout).toMatch(/^no skills installed in /)
      expect(await Fs.readdir(at.cwd)).toEqual([])
    }, 60_000)
  }
})

describe("several servers into one host folder", () => {
  it("a second server's skill of the same name is refused naming both; --prefix gives it folders of its own", async () => {
    const at = await places()
    expect((await run(["pull", server.url, "--all", "--host", "claude-code"], at)).status).toBe(0)
    const into = Path.join(at.cwd, ".claude/skills")
    const before = await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")
    const refused = await run(["pull", other.url, "--all", "--host", "claude-code"], at)
    expect(refused.status).toBe(1)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toBe(
      `mcp-skills: collision check failed: ${Tamper.SkillUri} from ${other.url} would be installed at pdf-processing, which holds ${Tamper.SkillUri} from ${server.url}; pass --prefix to install the skills of ${other.url} under folders of their own\n`
    )
    expect(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")).toBe(before)
    const prefixed = await run(["pull", other.url, "--all", "--host", "claude-code", "--prefix", "vendor"], at)
    expect(prefixed.stderr).toBe("")
    expect(prefixed.stdout).toBe(`added skill://pdf-processing/SKILL.md -> vendor-pdf-processing ${added}\n`)
    const lock = await lockOf(into)
    expect(lock.skills.map((skill: { origin: string; path: string }) => [skill.origin, skill.path]).sort()).toEqual([
      [server.url, "pdf-processing"],
      [other.url, "vendor-pdf-processing"]
    ].sort())
    // status names both, each from its server, up to date.
    const status = await run(["status", "--host", "claude-code", "--scope", "project"], at)
    expect(status.status).toBe(0)
    const [head, ...lines] = status.stdout.trimEnd().split("\n")
    expect(head).toBe(`${into} (claude-code, project): 2 skills`)
    lines.sort()
    expect(lines[0]).toMatch(new RegExp(`^  pdf-processing\\t${Tamper.SkillUri}\\tfrom ${server.url}\\tverified \\S+Z\\tup to date$`))
    expect(lines[1]).toMatch(new RegExp(`^  vendor-pdf-processing\\t${Tamper.SkillUri}\\tfrom ${other.url}\\tverified \\S+Z\\tup to date$`))
    // An edit here and a change on the server are both told.
    await Fs.appendFile(Path.join(into, "pdf-processing/SKILL.md"), "mine\n")
    other.tamper.revised = true
    try {
      const changed = await run(["status", "--host", "claude-code"], at)
      expect(changed.stdout).toContain("\tup to date; edited here (1 file)\n")
      expect(changed.stdout).toMatch(/vendor-pdf-processing\t.*\tout of date\n/)
      const offline = await run(["status", "--host", "claude-code", "--offline"], at)
      expect(offline.stdout).toContain("\tnot checked; edited here (1 file)\n")
    } finally {
      other.tamper.revised = false
    }
  }, 180_000)
})

describe("mcp-skills sync", () => {
  it("installs, prints one line per change, and stops cleanly on SIGINT (status 0, nothing half-installed)", async () => {
    const at = await places()
    const child = spawn(process.execPath, [cli, "sync", server.url, "--all", "--host", "goose"], {
      cwd: at.cwd,
      env: { ...process.env, HOME: at.home, MCP_SKILLS_TOKEN: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    const deadline = Date.now() + 30_000
    while (!out.includes("added ") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    child.kill("SIGINT")
    expect(await exited).toBe(0)
    const into = Path.join(at.cwd, ".agents/skills")
    expect(out.split("\n").slice(0, 2)).toEqual([
      `connected to ${server.url} (2026-07-28)`,
      `added skill://pdf-processing/SKILL.md -> pdf-processing ${added}`
    ])
    expect(out).toContain(`stopped; ${into} holds what was last installed whole\n`)
    expect((await Fs.readdir(into)).sort()).toEqual(["mcp-skills.lock.json", "pdf-processing"])
  }, 120_000)
})
