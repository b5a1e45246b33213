/**
 * What `mcp-skills` writes reaches its reader whole, into a file or into a pipe however slowly it is
 * read; a reader that stops early (`| head`) ends it quietly; a file system failure is one line in
 * the system's words, with its path. Run from `dist` against `mcp-skills-server` serving a catalogue
 * of 3,000 small skills: over a megabyte of JSON, far more than a pipe holds.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest"
import { serveHttp } from "./support/helpers.js"

const cli = Path.resolve(import.meta.dirname, "../dist/src/bin/mcp-skills.js")
const Skills = 3_000

interface Ended {
  readonly status: number | null
  readonly stdout: Buffer
  readonly stderr: string
}

const ended = (child: ChildProcess, stdout: () => Buffer) =>
  new Promise<Ended>((resolve) => {
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    child.on("close", (status) => resolve({ status, stdout: stdout(), stderr }))
  })

const run = (stdout: "pipe" | number, args: ReadonlyArray<string>): ChildProcess =>
  spawn(process.execPath, [cli, ...args], { stdio: ["ignore", stdout, "pipe"], env: { ...process.env, MCP_SKILLS_TOKEN: "" } })

/** `mcp-skills ARGS` with standard output a file: what the file holds once it exited. */
const intoFile = async (args: ReadonlyArray<string>, file: string): Promise<Ended> => {
  const handle = await Fs.open(file, "w")
  try {
    const done = await ended(run(handle.fd, args), () => Buffer.alloc(0))
    return { ...done, stdout: await Fs.readFile(file) }
  } finally {
    await handle.close()
  }
}

/**
 * `mcp-skills ARGS` with standard output a pipe whose reader takes the first chunk, then reads
 * nothing for a while: the program has written everything by then, most of it still queued for
 * the full pipe, and whatever it drops on exit is missing here.
 */
const throughSlowPipe = (args: ReadonlyArray<string>): Promise<Ended> => {
  const child = run("pipe", args)
  const chunks: Array<Buffer> = []
  child.stdout!.once("data", (first: Buffer) => {
    chunks.push(first)
    child.stdout!.pause()
    setTimeout(() => child.stdout!.on("data", (chunk: Buffer) => chunks.push(chunk)).resume(), 1_500)
  })
  return ended(child, () => Buffer.concat(chunks))
}

/** `mcp-skills ARGS` read up to its first line, then the pipe closed, as `| head -n 1` does. */
const firstLine = (args: ReadonlyArray<string>): Promise<Ended> => {
  const child = run("pipe", args)
  let read = Buffer.alloc(0)
  child.stdout!.on("data", (chunk: Buffer) => {
    read = Buffer.concat([read, chunk])
    if (read.includes(0x0a)) child.stdout!.destroy()
  })
  return ended(child, () => read.subarray(0, read.indexOf(0x0a) + 1))
}

const temp = async (context: TestContext | undefined, prefix: string) => {
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), prefix))
  context?.onTestFinished(() => Fs.rm(dir, { recursive: true, force: true }))
  return dir
}

let url = ""
let catalogue = ""
let stop: () => void = () => {}

beforeAll(async () => {
  catalogue = await temp(undefined, "mcp-skills-output-")
  await Promise.all(Array.from({ length: Skills }, async (_, i) => {
    await Fs.mkdir(Path.join(catalogue, `s${i}`))
    await Fs.writeFile(Path.join(catalogue, `s${i}`, "SKILL.md"), `---\nname: s${i}\ndescription: Skill number ${i}\n---\nBody ${i}.\n`)
  }))
  // serveHttp ties the server to a scope, held open here until every test is done.
  await new Promise<void>((resolve, reject) => {
    const done = new Promise<void>((release) => {
      stop = release
    })
    Effect.runPromise(Effect.scoped(Effect.flatMap(serveHttp(catalogue), (served) =>
      Effect.promise(() => {
        url = served.url
        resolve()
        return done
      })))).catch(reject)
  })
}, 60_000)

afterAll(async () => {
  stop()
  await Fs.rm(catalogue, { recursive: true, force: true })
})

describe("mcp-skills list of a large catalogue", () => {
  for (const [what, args] of [["--json", ["--json"]], ["plain", []]] as const) {
    it(`${what}: through a slowly read pipe, the same bytes as into a file`, async (context) => {
      const file = Path.join(await temp(context, "mcp-skills-output-file-"), "listing")
      const [filed, piped] = await Promise.all([intoFile(["list", url, ...args], file), throughSlowPipe(["list", url, ...args])])
      expect(filed).toMatchObject({ status: 0, stderr: "" })
      expect(piped).toMatchObject({ status: 0, stderr: "" })
      expect(piped.stdout.byteLength).toBe(filed.stdout.byteLength)
      expect(Buffer.compare(piped.stdout, filed.stdout)).toBe(0)
      const text = piped.stdout.toString("utf8")
      if (what === "--json") expect(JSON.parse(text).skills).toHaveLength(Skills)
      else expect(text.trimEnd().split("\n")).toHaveLength(Skills)
    }, 60_000)
  }

  it("a reader that stops after one line ends it quietly: status 0, nothing on stderr", async () => {
    const run = await firstLine(["list", url])
    expect(run.stdout.toString("utf8")).toMatch(/^skill:\/\/s\d+\/SKILL\.md\ts\d+\t/)
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
  }, 60_000)
})

const succeeds = (command: string, args: ReadonlyArray<string>) =>
  new Promise<boolean>((resolve) => execFile(command, args, (error) => resolve(error === null)))

describe("mcp-skills pull: a file system failure in words, with its path", () => {
  it.skipIf(process.getuid?.() !== 0)("a full disk (a 64 KiB tmpfs): no space left on device, and nothing left behind", async (context) => {
    const mount = await temp(context, "mcp-skills-full-")
    if (!(await succeeds("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mount]))) return context.skip()
    context.onTestFinished(async () => {
      await succeeds("umount", [mount])
    })
    const into = Path.join(mount, "skills")
    const pull = await intoFile(["pull", url, "--all", "--into", into], Path.join(await temp(context, "mcp-skills-full-out-"), "out"))
    expect(pull.status).toBe(1)
    expect(pull.stderr).toMatch(new RegExp(`^mcp-skills: write check failed: cannot write ${into}/\\S+: no space left on device\\n$`))
    expect(await Fs.readdir(mount)).toEqual([])
  }, 60_000)

  it("a folder on the way that is a file: not a folder", async (context) => {
    const dir = await temp(context, "mcp-skills-notdir-")
    await Fs.writeFile(Path.join(dir, "file"), "")
    const into = Path.join(dir, "file", "skills")
    const pull = await intoFile(["pull", url, "skill://s1/SKILL.md", "--into", into], Path.join(dir, "out"))
    expect(pull.stderr).toBe(`mcp-skills: write check failed: cannot write ${into}: not a folder\n`)
    expect(pull.status).toBe(1)
  }, 60_000)
})
