/**
 * Starts a server in its own child process (so its RSS is its own and it does not share the load
 * generator's event loop), waits for its `listening URL` line, and reads its memory from /proc.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")

export interface Child {
  readonly name: string
  readonly url: string
  readonly process: ChildProcess
  /** Milliseconds from spawn to the listening line. */
  readonly startMs: number
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/** `VmRSS` and `VmHWM` (peak RSS) in bytes, or undefined where /proc is missing. */
export const memoryOf = (pid: number): { rss: number; peak: number } | undefined => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (key: string) => Number(/(\d+)\s*kB/.exec(status.split("\n").find((l) => l.startsWith(key)) ?? "")?.[1] ?? NaN) * 1024
    return { rss: kb("VmRSS:"), peak: kb("VmHWM:") }
  } catch {
    return undefined
  }
}

export const start = (name: string, args: ReadonlyArray<string>, timeoutMs = 300_000): Promise<Child> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let tail = ""
    let ready = false
    const timer = setTimeout(() => {
      // Never leave a half-started server behind: it would hold the CPU and keep this process alive.
      child.kill("SIGKILL")
      reject(new Error(`${name} did not start in ${timeoutMs} ms:\n${tail}`))
    }, timeoutMs)
    const stop = () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done()
        child.once("exit", () => done())
        // SIGINT: effect's runMain interrupts and exits normally, so --cpu-prof gets written.
        child.kill("SIGINT")
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref()
      })
    child.stderr.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000)
    })
    child.stdout.on("data", (chunk: Buffer) => {
      const text = chunk.toString()
      // Keep only the last lines: our CLI prints one line per skill.
      out = (out + text).slice(-4000)
      const match = /listening (http:\/\/\S+)/.exec(out)
      if (match !== null && !ready) {
        ready = true
        clearTimeout(timer)
        resolve({ name, url: match[1]!, process: child, startMs: performance.now() - started, output: () => out + tail, stop })
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited with ${code} before listening:\n${out}\n${tail}`))
    })
  })

const dist = (path: string) => Path.join(repoRoot, path)

/** `BENCH_CPU_PROF=DIR` runs our server under `node --cpu-prof`, writing its profile to DIR on exit. */
const profiling = (): Array<string> => {
  const dir = process.env["BENCH_CPU_PROF"]
  return dir === undefined || dir === "" ? [] : ["--cpu-prof", `--cpu-prof-dir=${dir}`]
}

/** Our server's executable as a user runs it: its bin file, which loads the bundle the build makes. */
export const serverBin = dist("packages/skills-server/bin/mcp-skills-server.js")

/** A free port on loopback, for every `serve` the bench starts. */
export const loopback = ["--port", "0", "--host", "127.0.0.1"]

export const oursArgs = (dir: string) => [...profiling(), serverBin, "serve", dir, ...loopback]

export const ours = (dir: string, timeoutMs?: number) => start("ours", oursArgs(dir), timeoutMs)

export const sdk = (dir: string, pageSize: number, timeoutMs?: number) =>
  start("sdk", [dist("bench/dist/servers/sdk.js"), dir, String(pageSize)], timeoutMs)

export const floor = (answers: string) => start("floor", [dist("bench/dist/servers/floor.js"), answers])

export const oursLayer = (dir: string, args: ReadonlyArray<string> = []) =>
  start("ours", [...profiling(), dist("bench/dist/servers/ours-layer.js"), dir, ...args])

/** `mcp-skills-server serve --metrics`: spans and series on, Prometheus text at /metrics. */
export const oursMetrics = (dir: string) => start("ours-metrics", [...oursArgs(dir), "--metrics"])

/** Our server (Layer) with the fast route disabled and `Observability.layer` on. */
export const oursRouteOffMetrics = (dir: string) =>
  start("ours-off-metrics", [...profiling(), dist("bench/dist/servers/ours-layer.js"), dir, "--no-fast-route", "--metrics"])

/** Our server (Layer) with the fast route disabled: effect's dispatch for every request. */
export const oursRouteOff = (dir: string) =>
  start("ours-off", [...profiling(), dist("bench/dist/servers/ours-layer.js"), dir, "--no-fast-route"])

/** Another checkout of this repository, built: its server executable and its commit. */
export interface Checkout {
  readonly dir: string
  readonly bin: string
  readonly commit: string
}

/** The built checkout at `dir`, or an error naming what is missing (`npm install && npm run build` there). */
export const checkout = (dir: string): Checkout => {
  // Older checkouts have no bin file in front of the bundle: their executable is the compiled one.
  const bin = ["packages/skills-server/bin/mcp-skills-server.js", "packages/skills-server/dist/src/bin/mcp-skills-server.js"]
    .map((path) => Path.join(dir, path))
    .find((path) => existsSync(path) && existsSync(Path.join(dir, "packages/skills-server/dist")))
  if (bin === undefined) throw new Error(`--against=${dir}: no built server there (run npm install && npm run build in it)`)
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dir, encoding: "utf8" }).trim()
  return { dir, bin, commit }
}

/**
 * The server of `checkout` over `dir`, as `before`: the same command line as ours, with our
 * default page size (`pageSize`), which an older checkout's default may differ from.
 */
export const before = (checkout: Checkout, dir: string, pageSize: number) =>
  start("before", [checkout.bin, "serve", dir, ...loopback, "--page-size", String(pageSize)])
