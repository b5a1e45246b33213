import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it, type TestContext } from "vitest"
import { runCli, serveHttp, serverCli } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"


// Each test owns its server and folder, so the CLI runs (about a second each) can overlap.
const server = async (context: TestContext, tamper: Tamper.Tamper = {}) => {
  const s = await Tamper.start(tamper)
  context.onTestFinished(s.close)
  return s
}

const tempDir = async (context: TestContext) => {
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "mcp-skills-pull-"))
  context.onTestFinished(() => Fs.rm(dir, { recursive: true, force: true }))
  return Path.join(dir, "skills")
}

const written = async (dir: string) => (await Fs.readdir(dir, { recursive: true }).catch(() => [])).sort()

describe.concurrent("mcp-skills list / get / read", () => {
  it("list reads no file; --json carries entries and cache hint", async (context) => {
    const s = await server(context)
    const run = await runCli(["list", s.url, "--json"])
    expect(run.status).toBe(0)
    const out = JSON.parse(run.stdout)
    expect(out.skills.map((skill: { uri: string }) => skill.uri)).toEqual([Tamper.SkillUri])
    expect(out.cacheHint).toEqual({ ttlMs: 300000, cacheScope: "private" })
    expect(s.reads()).toEqual([])
  })

  it("list reports an invalid entry on stderr and exits 1", async (context) => {
    const s = await server(context, { invalidEntry: true })
    const run = await runCli(["list", s.url])
    expect(run.status).toBe(1)
    expect(run.stdout).toContain(Tamper.SkillUri)
    expect(run.stderr).toMatch(/^mcp-skills: entry check failed: invalid entry skill:\/\/broken\/SKILL\.md: /)
  })

  it("get prints the entry; read prints verified bytes, SKILL.md first", async (context) => {
    const s = await server(context, { unlisted: true })
    const get = await runCli(["get", s.url, Tamper.SkillUri, "--protocol", "2025-11-25"])
    expect(get.status).toBe(0)
    expect(JSON.parse(get.stdout).skill.uri).toBe(Tamper.SkillUri)
    const read = await runCli(["read", s.url, Tamper.SkillUri, "templates/invoice.md"])
    expect(read.status).toBe(0)
    expect(read.stdout).toBe("# Invoice template\n\nTotal: {{amount}}\n")
    expect(s.reads()).toEqual([Tamper.SkillUri, Tamper.InvoiceUri])
  })

  it("a skill that is not served: one line, the uri once", async (context) => {
    const s = await server(context)
    const run = await runCli(["get", s.url, "skill://does/not/exist/SKILL.md"])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe("mcp-skills: not-found check failed: no skill is served at skill://does/not/exist/SKILL.md\n")
  })

  it("--cache DIR keeps verified files: a second read asks the server for SKILL.md no more", async (context) => {
    const s = await server(context)
    const cache = await tempDir(context)
    for (let i = 0; i < 2; i++) {
      const run = await runCli(["read", s.url, Tamper.SkillUri, "--cache", cache])
      expect(run.stdout).toBe(Tamper.SkillMd)
    }
    expect(s.reads()).toEqual([Tamper.SkillUri])
  })

  it("a server without the extension: the message says so", async (context) => {
    const s = await server(context, { noExtension: true })
    const run = await runCli(["list", s.url])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe(
      `mcp-skills: extension check failed: ${s.url} does not offer the io.modelcontextprotocol/skills extension: it declares no skills capability\n`
    )
  })

  it("read refuses a file outside the manifest without asking the server", async (context) => {
    const s = await server(context, { unlistedFile: true })
    const read = await runCli(["read", s.url, Tamper.SkillUri, "secret.md"])
    expect(read.status).toBe(1)
    expect(read.stderr.trim().split("\n")).toHaveLength(1)
    expect(read.stderr).toContain("unlisted check failed")
    expect(s.reads()).toEqual([Tamper.SkillUri])
  })
})

describe.concurrent("mcp-skills against a server that demands a bearer token", () => {
  const token = "s3cret-token"

  it("--header sends it: list and pull work", async (context) => {
    const s = await server(context, { bearer: token })
    const dir = await tempDir(context)
    const header = ["--header", `Authorization: Bearer ${token}`]
    const list = await runCli(["list", s.url, ...header])
    expect(list.stderr).toBe("")
    expect(list.stdout).toContain(Tamper.SkillUri)
    const pull = await runCli(["pull", s.url, "--all", "--into", dir, ...header, "--header", "X-Trace: 1"])
    expect(pull.stderr).toBe("")
    expect(pull.stdout).toBe(`added ${Tamper.SkillUri} -> pdf-processing (3 files, 195 bytes)\n`)
  })

  it("MCP_SKILLS_TOKEN sends it: list and pull work", async (context) => {
    const s = await server(context, { bearer: token })
    const dir = await tempDir(context)
    const list = await runCli(["list", s.url], { MCP_SKILLS_TOKEN: token })
    expect(list.status).toBe(0)
    expect(list.stdout).toContain(Tamper.SkillUri)
    const pull = await runCli(["pull", s.url, "--all", "--into", dir], { MCP_SKILLS_TOKEN: token })
    expect(pull.status).toBe(0)
    expect(await written(dir)).toContain("pdf-processing/SKILL.md")
  })

  it("without it: exit 1 with one line naming 401 and what to do", async (context) => {
    const s = await server(context, { bearer: token })
    const dir = await tempDir(context)
    for (const args of [["list", s.url], ["pull", s.url, "--all", "--into", dir]]) {
      const run = await runCli(args)
      expect(run.status).toBe(1)
      expect(run.stderr.trim().split("\n")).toEqual([
        "mcp-skills: auth check failed: the server answered 401 Unauthorized: send credentials with --header 'Authorization: Bearer ...' or MCP_SKILLS_TOKEN"
      ])
    }
    expect(await written(dir)).toEqual([])
  })

  it("403: exit 1 with one line naming it", async (context) => {
    const s = await server(context, { forbidden: true })
    const run = await runCli(["list", s.url, "--header", "Authorization: Bearer wrong"])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe("mcp-skills: auth check failed: the server answered 403 Forbidden: the credentials sent do not allow this\n")
  })

  it("a malformed --header is a usage error", async (context) => {
    const s = await server(context)
    const run = await runCli(["list", s.url, "--header", "no colon here"])
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("--header needs 'Name: value'")
  })
})

// A rewriting server's names a pull must never write.
const hostileNames: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["a planted .git/config", [".git/config"]],
  ["a 200-level path", [`${"d/".repeat(200)}x.md`]],
  ["two names differing only in case", ["templates/INVOICE.md"]]
]

describe.concurrent("mcp-skills pull", () => {
  it("pulls every file byte for byte and writes the lock file", async (context) => {
    const s = await server(context)
    const dir = await tempDir(context)
    const run = await runCli(["pull", s.url, "--all", "--into", dir])
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    for (const file of Tamper.exampleFiles()) {
      const relative = file.uri.slice("skill://".length)
      expect(Buffer.from(file.bytes).equals(await Fs.readFile(Path.join(dir, relative)))).toBe(true)
    }
    const lock = JSON.parse(await Fs.readFile(Path.join(dir, "mcp-skills.lock.json"), "utf8"))
    expect(lock.skills).toHaveLength(1)
    expect(lock.skills[0].origin).toBe(s.url)
    expect(lock.skills[0].files.map((f: { uri: string; digest: string; size: number }) => [f.uri, f.digest, f.size])).toEqual(
      Tamper.exampleFiles().map((f) => [f.uri, Tamper.digestOf(f.bytes), f.bytes.length]).sort()
    )
    expect(await written(dir)).toEqual([
      "mcp-skills.lock.json",
      "pdf-processing",
      "pdf-processing/SKILL.md",
      "pdf-processing/assets",
      "pdf-processing/assets/logo.png",
      "pdf-processing/templates",
      "pdf-processing/templates/invoice.md"
    ])
  })

  it("a SKILL_URI absent from the listing is fetched with skills/get (R30)", async (context) => {
    const s = await server(context, { unlisted: true })
    const dir = await tempDir(context)
    const run = await runCli(["pull", s.url, Tamper.SkillUri, "--into", dir])
    expect(run.status).toBe(0)
    expect(s.requests.some((r) => r.method === "skills/get")).toBe(true)
    expect(await written(dir)).toContain("pdf-processing/SKILL.md")
  })

  const failures: ReadonlyArray<{
    readonly name: string
    readonly tamper: Tamper.Tamper
    readonly check: string
    readonly args?: ReadonlyArray<string>
    /** The files read before the failure; `[]` for refusals decided from the entry alone. */
    readonly reads?: ReadonlyArray<string>
    readonly file?: string
  }> = [
    { name: "ExtensionNotSupported", tamper: { noExtension: true }, check: "extension", reads: [] },
    { name: "DigestMismatch on SKILL.md", tamper: { flipByte: Tamper.SkillUri }, check: "digest", reads: [Tamper.SkillUri], file: Tamper.SkillUri },
    { name: "DigestMismatch on a later file", tamper: { flipByte: Tamper.InvoiceUri }, check: "digest", file: Tamper.InvoiceUri },
    { name: "SizeMismatch", tamper: { extraBytes: Tamper.SkillUri }, check: "size", reads: [Tamper.SkillUri], file: Tamper.SkillUri },
    { name: "FrontmatterMismatch", tamper: { changedFrontmatter: true }, check: "frontmatter", reads: [Tamper.SkillUri] },
    { name: "WrongResourceReturned", tamper: { wrongUri: Tamper.InvoiceUri }, check: "uri", file: Tamper.InvoiceUri },
    { name: "InvalidResourceContents", tamper: { badBase64: true }, check: "contents", file: Tamper.LogoUri },
    { name: "LimitExceeded", tamper: { oversize: true }, check: "limit", reads: [] },
    { name: "DynamicSkillRefused", tamper: { dynamic: true }, check: "dynamic", reads: [] },
    { name: "RepeatedCursor", tamper: { repeatedCursor: true }, check: "cursor", reads: [] },
    { name: "RunawayListing", tamper: { runawayPages: true }, check: "cursor", reads: [] },
    { name: "SkillNotFound", tamper: {}, check: "not-found", args: ["skill://nope/SKILL.md"], reads: [] },
    { name: "UnexpectedContents", tamper: { appendItem: Tamper.InvoiceUri }, check: "unlisted", file: Tamper.InvoiceUri },
    { name: "timeout", tamper: { hang: ["resources/read"] }, check: "timeout", args: ["--all", "--timeout", "0.5"] },
    ...hostileNames.map(([name, plant]) => ({ name, tamper: { plant }, check: "name", reads: [] }))
  ]

  for (const failure of failures) {
    it(`${failure.name}: exit 1, one line naming the ${failure.check} check, nothing written`, async (context) => {
      const s = await server(context, failure.tamper)
      const dir = await tempDir(context)
      const run = await runCli(["pull", s.url, ...(failure.args ?? ["--all"]), "--into", dir])
      expect(run.status).toBe(1)
      const lines = run.stderr.trim().split("\n")
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(new RegExp(`^mcp-skills: ${failure.check} check failed`))
      // The file named once.
      if (failure.file !== undefined) expect(lines[0]!.split(failure.file)).toHaveLength(2)
      if (failure.reads !== undefined) expect(s.reads()).toEqual(failure.reads)
      expect(await written(dir)).toEqual([])
    })
  }

  it("--all leaves out each skill that fails verification, naming it, installs the rest and exits 1", async (context) => {
    const s = await server(context, { invalidEntry: true, others: ["alpha", "beta"], flipByte: Tamper.InvoiceUri })
    const dir = await tempDir(context)
    const run = await runCli(["pull", s.url, "--all", "--into", dir])
    expect(run.status).toBe(1)
    expect(run.stdout).toBe(
      "added skill://alpha/SKILL.md -> alpha (1 file, 47 bytes)\nadded skill://beta/SKILL.md -> beta (1 file, 46 bytes)\n"
    )
    const lines = run.stderr.trim().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^mcp-skills: entry check failed: invalid entry skill:\/\/broken\/SKILL\.md: /)
    expect(lines[1]).toMatch(new RegExp(`^mcp-skills: digest check failed.*${Tamper.InvoiceUri}`))
    const lock = JSON.parse(await Fs.readFile(Path.join(dir, "mcp-skills.lock.json"), "utf8"))
    expect(lock.skills.map((skill: { uri: string }) => skill.uri)).toEqual(["skill://alpha/SKILL.md", "skill://beta/SKILL.md"])
    expect(await written(dir)).toEqual(["alpha", "alpha/SKILL.md", "beta", "beta/SKILL.md", "mcp-skills.lock.json"])
    // Repaired, the skill left out goes in beside the others on the next pull.
    delete s.tamper.flipByte
    const again = await runCli(["pull", s.url, "--all", "--into", dir])
    expect(again.stdout).toContain(`added ${Tamper.SkillUri} -> pdf-processing`)
    expect(again.stderr.trim().split("\n")).toHaveLength(1)
  })

  it("--allow-dynamic pulls a \"dynamic\" skill found through directory reads (R63), marked dynamic in the lock", async (context) => {
    const s = await server(context, { dynamic: true, directoryRead: true })
    const dir = await tempDir(context)
    const run = await runCli(["pull", s.url, "--all", "--into", dir, "--allow-dynamic"])
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    for (const file of Tamper.exampleFiles()) {
      expect(Buffer.from(file.bytes).equals(await Fs.readFile(Path.join(dir, file.uri.slice("skill://".length))))).toBe(true)
    }
    expect(s.reads()[0]).toBe(Tamper.SkillUri)
    const lock = JSON.parse(await Fs.readFile(Path.join(dir, "mcp-skills.lock.json"), "utf8"))
    expect(lock.skills[0].dynamic).toBe(true)
    expect(lock.skills[0].files.map((f: { digest: string }) => f.digest).sort()).toEqual(
      Tamper.exampleFiles().map((f) => Tamper.digestOf(f.bytes)).sort()
    )
  })

  it("a re-pull shows what changed and replaces a changed skill only with --accept-changes", async (context) => {
    const s = await server(context)
    const dir = await tempDir(context)
    expect((await runCli(["pull", s.url, "--all", "--into", dir])).status).toBe(0)
    const invoice = Path.join(dir, "pdf-processing/templates/invoice.md")
    const before = await Fs.readFile(invoice, "utf8")
    s.tamper.revised = true
    const refused = await runCli(["pull", s.url, "--all", "--into", dir])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toMatch(/^mcp-skills: changed check failed: skill:\/\/pdf-processing\/SKILL\.md changed since the last pull/)
    expect(refused.stderr).toContain(`~${Tamper.InvoiceUri}`)
    expect(await Fs.readFile(invoice, "utf8")).toBe(before)
    const accepted = await runCli(["pull", s.url, "--all", "--into", dir, "--accept-changes"])
    expect(accepted.status).toBe(0)
    expect(accepted.stdout).toBe(`updated ${Tamper.SkillUri} -> pdf-processing (3 files, 179 bytes)\n  ~ ${Tamper.InvoiceUri}\n`)
    const again = await runCli(["pull", s.url, "--all", "--into", dir])
    expect(again.stdout).toBe(`unchanged ${Tamper.SkillUri}\n`)
    expect(await Fs.readFile(invoice, "utf8")).toBe("# Invoice template v2\n")
    const lock = JSON.parse(await Fs.readFile(Path.join(dir, "mcp-skills.lock.json"), "utf8"))
    expect(lock.skills[0].files.find((f: { uri: string }) => f.uri === Tamper.InvoiceUri).size).toBe(22)
    expect(await written(dir)).not.toContainEqual(expect.stringMatching(/staging/))
  })

  it("a symlinked skill folder: exit 1, one line naming the link, its target untouched", async (context) => {
    const s = await server(context)
    const dir = await tempDir(context)
    const elsewhere = `${dir}-elsewhere`
    await Fs.mkdir(elsewhere, { recursive: true })
    await Fs.mkdir(dir, { recursive: true })
    await Fs.symlink(elsewhere, Path.join(dir, "pdf-processing"))
    const run = await runCli(["pull", s.url, "--all", "--into", dir])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe(
      `mcp-skills: link check failed: ${Path.join(dir, "pdf-processing")} is a symbolic link; a pull never writes through links\n`
    )
    expect(await Fs.readdir(elsewhere)).toEqual([])
    expect(await Fs.readdir(dir)).toEqual(["pdf-processing"])
    expect(s.reads()).toEqual([])
  })

  it("refuses to overwrite a folder it did not write", async (context) => {
    const s = await server(context)
    const dir = await tempDir(context)
    await Fs.mkdir(Path.join(dir, "pdf-processing"), { recursive: true })
    await Fs.writeFile(Path.join(dir, "pdf-processing/mine.txt"), "mine")
    const run = await runCli(["pull", s.url, "--all", "--into", dir])
    expect(run.status).toBe(1)
    expect(run.stderr).toContain("was not written by a pull")
    expect(await written(dir)).toEqual(["pdf-processing", "pdf-processing/mine.txt"])
    expect(s.reads()).toEqual([])
  })
})

describe.concurrent("mcp-skills pull against a rewriting server", () => {
  for (const [name, plant] of hostileNames) {
    it(`${name}: exit 1 naming the file, nothing written, the lock file unchanged`, async (context) => {
      const s = await server(context)
      const dir = await tempDir(context)
      expect((await runCli(["pull", s.url, "--all", "--into", dir])).status).toBe(0)
      const lock = await Fs.readFile(Path.join(dir, "mcp-skills.lock.json"), "utf8")
      const before = await written(dir)
      s.tamper.plant = plant
      const run = await runCli(["pull", s.url, "--all", "--into", dir, "--accept-changes"])
      expect(run.status).toBe(1)
      expect(run.stderr.startsWith("mcp-skills: name check failed: ")).toBe(true)
      expect(run.stderr).toContain(`skill://pdf-processing/${plant[0]}`)
      expect(run.stderr.trim().split("\n")).toHaveLength(1)
      expect(await Fs.readFile(Path.join(dir, "mcp-skills.lock.json"), "utf8")).toBe(lock)
      expect(await written(dir)).toEqual(before)
    })
  }
})

describe.concurrent("mcp-skills text", () => {
  const served = async (context: TestContext) => {
    const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "mcp-skills-nested-"))
    context.onTestFinished(() => Fs.rm(dir, { recursive: true, force: true }))
    const files: Record<string, string> = {
      "outer/SKILL.md": "---\nname: outer\ndescription: Holds another skill\n---\n",
      "outer/notes.md": "notes\n",
      "outer/inner/SKILL.md": "---\nname: inner\ndescription: Inside outer\n---\n"
    }
    for (const [path, text] of Object.entries(files)) {
      await Fs.mkdir(Path.dirname(Path.join(dir, path)), { recursive: true })
      await Fs.writeFile(Path.join(dir, path), text)
    }
    return dir
  }
  const withServer = <A>(dir: string, f: (url: string) => Promise<A>) =>
    Effect.runPromise(Effect.scoped(Effect.flatMap(serveHttp(dir), ({ url }) => Effect.promise(() => f(url)))))

  it("pull prints a line for a nested skill, which the lock file records; list says 1 file", async (context) => {
    const dir = await served(context)
    const into = await tempDir(context)
    const [pull, list] = await withServer(dir, async (url) => [
      await runCli(["pull", url, "--all", "--into", into]),
      await runCli(["list", url])
    ])
    expect(pull.stderr).toBe("")
    expect(pull.stdout.trim().split("\n").sort()).toEqual([
      expect.stringMatching(/^added skill:\/\/outer\/SKILL\.md -> outer \(3 files, \d+ bytes\)$/),
      "nested skill://outer/inner/SKILL.md -> outer/inner (inside skill://outer/SKILL.md)"
    ])
    const lock = JSON.parse(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8"))
    expect(lock.skills.map((skill: { uri: string }) => skill.uri)).toEqual(["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"].sort())
    expect(list.stdout).toMatch(/^skill:\/\/outer\/inner\/SKILL\.md\tinner\t\(1 file, \d+ bytes\)\t/m)
    expect(list.stdout).toMatch(/^skill:\/\/outer\/SKILL\.md\touter\t\(3 files, \d+ bytes\)\t/m)
  })

  it("--help of both commands shows every default", async () => {
    const pull = await runCli(["pull", "--help"])
    expect(pull.stdout).toMatch(/--timeout number .*\(default 60\)/)
    expect(pull.stdout).toMatch(/--protocol choice .*\(default auto\)/)
    expect(pull.stdout).toMatch(/--cache string .*\(default: in memory, for this run only\)/)
    const serve = await new Promise<string>((resolve) =>
      execFile(process.execPath, [serverCli, "serve", "--help"], { encoding: "utf8" }, (_error, stdout) => resolve(stdout))
    )
    expect(serve).toMatch(/--host string .*\(default 127\.0\.0\.1\)/)
    expect(serve).toMatch(/--port integer .*\(default 3000\)/)
    expect(serve).toMatch(/--path string .*\(default \/mcp\)/)
    expect(serve).toMatch(/--watch-check number .*\(default 5\)/)
    expect(serve).toMatch(/--page-size integer .*\(default 100\)/)
  })
})
