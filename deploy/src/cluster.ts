/**
 * `npm run cluster -- DIR [--replicas 3] [--port 3000]`: on 127.0.0.1, one Redis (the change bus),
 * N replicas of `mcp-skills-server serve DIR --watch --redis ...` and one HAProxy in front of them
 * with `deploy/haproxy.cfg`. Prints `listening http://127.0.0.1:PORT/mcp` once every part is ready
 * (every replica answers through the balancer) and stops everything on Ctrl-C.
 *
 * The cluster test starts the same cluster through `start`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

// The repository holding this file, whether it runs from `deploy/src` (tests) or `deploy/dist/src`.
const repoRoot = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!fs.existsSync(path.join(dir, "deploy/haproxy.cfg"))) {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error("cannot find the repository's deploy/haproxy.cfg")
    dir = parent
  }
  return dir
})()
// The executable as npm links it: what an operator runs, V8 settings included.
const serverBin = path.join(repoRoot, "packages/skills-server/bin/mcp-skills-server.js")

/** The HAProxy configuration users copy; the cluster rewrites its address lines only. */
export const haproxyConfig = path.join(repoRoot, "deploy/haproxy.cfg")

/** What the cluster needs from the system, and how a Debian or Ubuntu machine gets it. */
export const requiredPackages = ["haproxy", "redis-server"] as const

// HAProxy lives in /usr/sbin, which is not on every user's PATH.
const locate = (name: string): string | undefined =>
  [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/local/sbin", "/sbin"]
    .filter((dir) => dir.length > 0)
    .map((dir) => path.join(dir, name))
    .find((candidate) => {
      try {
        fs.accessSync(candidate, fs.constants.X_OK)
        return true
      } catch {
        return false
      }
    })

/** The executables of `requiredPackages`, or the names of those missing. */
export const findPackages = (): { readonly haproxy: string; readonly redis: string } | { readonly missing: ReadonlyArray<string> } => {
  const haproxy = locate("haproxy")
  const redis = locate("redis-server")
  return haproxy !== undefined && redis !== undefined
    ? { haproxy, redis }
    : { missing: requiredPackages.filter((name) => locate(name) === undefined) }
}

/** A free TCP port on 127.0.0.1 (asked of the system, then released). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** A child process with its output kept, for readiness lines and post-mortems. */
export interface Part {
  readonly name: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

const startPart = (name: string, command: string, args: ReadonlyArray<string>): Part => {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { name, child, output: () => output, exited }
}

const waitForOutput = (part: Part, pattern: RegExp, timeoutMs: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const check = () => {
      if (pattern.test(part.output())) return done(resolve)
      if (part.child.exitCode !== null || part.child.signalCode !== null) {
        return done(() => reject(new Error(`${part.name} exited before it was ready:\n${part.output()}`)))
      }
    }
    const timer = setTimeout(() => done(() => reject(new Error(`${part.name} not ready after ${timeoutMs} ms:\n${part.output()}`))), timeoutMs)
    const interval = setInterval(check, 25)
    const done = (then: () => void) => {
      clearTimeout(timer)
      clearInterval(interval)
      then()
    }
    check()
  })

const stopPart = async (part: Part): Promise<void> => {
  if (part.child.exitCode !== null || part.child.signalCode !== null) return
  part.child.kill("SIGTERM")
  const killer = setTimeout(() => part.child.kill("SIGKILL"), 3_000)
  await part.exited
  clearTimeout(killer)
}

/** The configuration of `deploy/haproxy.cfg` with this cluster's addresses. */
export const renderConfig = (
  template: string,
  options: { readonly port: number; readonly replicaPorts: ReadonlyArray<number>; readonly statsSocket: string }
): string => {
  const begin = template.indexOf("    # replicas: begin\n")
  const end = template.indexOf("    # replicas: end\n")
  if (begin === -1 || end === -1) throw new Error(`${haproxyConfig} lost its "# replicas: begin/end" markers`)
  const servers = options.replicaPorts.map((port, i) => `    server replica${i + 1} 127.0.0.1:${port}\n`).join("")
  const rendered = template.slice(0, begin) + "    # replicas: begin\n" + servers + template.slice(end)
  return rendered
    .replace(/^    bind 127\.0\.0\.1:\d+$/m, `    bind 127.0.0.1:${options.port}`)
    .replace(/^    stats socket \S+/m, `    stats socket ${options.statsSocket}`)
}

/** Options of `start`. */
export interface Options {
  readonly directory: string
  readonly replicas: number
  /** Balancer port; 0 picks a free one. */
  readonly port: number
  /** Which replicas run with `--watch` (default: all). */
  readonly watch?: (index: number) => boolean
  /** More arguments for every replica's `serve` (e.g. `--page-size 2`). */
  readonly serveArgs?: ReadonlyArray<string>
  /** Lines of progress (default: none). */
  readonly log?: (line: string) => void
}

/** A running cluster. */
export interface Cluster {
  /** The balancer's MCP endpoint. */
  readonly url: string
  readonly redisUrl: string
  /** Each replica's own MCP endpoint (bypassing the balancer). */
  readonly replicaUrls: ReadonlyArray<string>
  /** HAProxy's server name of each replica (`replica1`...), as in the `X-MCP-Replica` header. */
  readonly replicaNames: ReadonlyArray<string>
  readonly replicaOutput: (index: number) => string
  /** Kills a replica at once (SIGKILL), as a crash would. */
  readonly kill: (index: number) => Promise<void>
  /** Starts a killed replica again on its port and waits until it listens. */
  readonly restart: (index: number) => Promise<void>
  /** Kills Redis at once (SIGKILL): the bus is down, and what it held is lost. */
  readonly killBus: () => Promise<void>
  /** Starts Redis again on its port, empty. */
  readonly restartBus: () => Promise<void>
  /** HAProxy's view of each replica: `UP`, `DOWN`, ... (from `show stat` on the admin socket). */
  readonly status: () => Promise<ReadonlyArray<string>>
  /** Stops every part and removes the temporary files. */
  readonly stop: () => Promise<void>
}

const adminCommand = (socket: string, command: string): Promise<string> =>
  new Promise((resolve, reject) => {
    let answer = ""
    const connection = net.createConnection(socket)
    connection.on("connect", () => connection.end(`${command}\n`))
    connection.on("data", (chunk) => (answer += chunk))
    connection.on("end", () => resolve(answer))
    connection.on("error", reject)
  })

const discover = (url: string) =>
  fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "server/discover"
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "mcp-skills-cluster", version: "0.1.0" }
        }
      }
    }),
    signal: AbortSignal.timeout(2_000)
  })

/** Starts Redis, the replicas and HAProxy; resolves once every replica answers through HAProxy. */
export const start = async (options: Options): Promise<Cluster> => {
  const found = findPackages()
  if ("missing" in found) throw new Error(`missing ${found.missing.join(", ")}`)
  const log = options.log ?? (() => {})
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-skills-cluster-"))
  const parts: Array<Part> = []
  const replicas: Array<Part | undefined> = []
  const stop = async () => {
    await Promise.all([...parts, ...replicas].filter((part) => part !== undefined).map(stopPart))
    fs.rmSync(temp, { recursive: true, force: true })
  }
  try {
    const redisPort = await freePort()
    const redisUrl = `redis://127.0.0.1:${redisPort}`
    let redis: Part | undefined
    const startRedis = async () => {
      redis = startPart("redis-server", found.redis, [
        "--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", temp
      ])
      parts.push(redis)
      await waitForOutput(redis, /Ready to accept connections/, 15_000)
    }
    await startRedis()
    log(`redis ${redisUrl}`)

    // First start on a port the system picks (no race for it); a restart takes the same port back,
    // since HAProxy's configuration names it.
    const replicaPorts: Array<number> = []
    const startReplica = async (i: number) => {
      const port = replicaPorts[i] ?? 0
      const args = [serverBin, "serve", options.directory, "--port", String(port), "--redis", redisUrl, ...(options.serveArgs ?? [])]
      if (options.watch?.(i) ?? true) args.push("--watch")
      const replica = startPart(`replica${i + 1}`, process.execPath, args)
      replicas[i] = replica
      await waitForOutput(replica, /^listening http:\/\/127\.0\.0\.1:\d+\//m, 30_000)
      replicaPorts[i] = Number(replica.output().match(/^listening http:\/\/127\.0\.0\.1:(\d+)\//m)![1])
    }
    await Promise.all(Array.from({ length: options.replicas }, (_, i) => startReplica(i)))
    const replicaUrls = replicaPorts.map((port) => `http://127.0.0.1:${port}/mcp`)
    for (const [i, url] of replicaUrls.entries()) log(`replica${i + 1} ${url}`)

    const port = options.port === 0 ? await freePort() : options.port
    const statsSocket = path.join(temp, "haproxy.sock")
    const config = path.join(temp, "haproxy.cfg")
    fs.writeFileSync(config, renderConfig(fs.readFileSync(haproxyConfig, "utf8"), { port, replicaPorts, statsSocket }))
    const haproxy = startPart("haproxy", found.haproxy, ["-db", "-f", config])
    parts.push(haproxy)
    const url = `http://127.0.0.1:${port}/mcp`
    const replicaNames = replicaPorts.map((_, i) => `replica${i + 1}`)

    // Ready when each replica has answered through the balancer (round robin reaches all of them).
    const seen = new Set<string>()
    const deadline = Date.now() + 30_000
    while (seen.size < replicaNames.length) {
      if (haproxy.child.exitCode !== null) throw new Error(`haproxy exited:\n${haproxy.output()}`)
      if (Date.now() > deadline) throw new Error(`not every replica answered through ${url}:\n${haproxy.output()}`)
      try {
        const response = await discover(url)
        await response.arrayBuffer()
        const replica = response.headers.get("x-mcp-replica")
        if (response.status === 200 && replica !== null) seen.add(replica)
      } catch {
        // not listening yet
      }
      if (seen.size < replicaNames.length) await new Promise((resolve) => setTimeout(resolve, 50))
    }

    return {
      url,
      redisUrl,
      replicaUrls,
      replicaNames,
      replicaOutput: (i) => replicas[i]?.output() ?? "",
      kill: async (i) => {
        const replica = replicas[i]
        if (replica === undefined) return
        replica.child.kill("SIGKILL")
        await replica.exited
      },
      restart: (i) => startReplica(i),
      killBus: async () => {
        redis?.child.kill("SIGKILL")
        await redis?.exited
      },
      restartBus: startRedis,
      status: async () => {
        const rows = (await adminCommand(statsSocket, "show stat")).split("\n").map((line) => line.split(","))
        const header = rows[0] ?? []
        const name = header.indexOf("svname")
        const status = header.indexOf("status")
        return replicaNames.map((replica) => rows.find((row) => row[0] === "mcp_replicas" && row[name] === replica)?.[status] ?? "?")
      },
      stop
    }
  } catch (error) {
    await stop()
    throw error
  }
}

const usage = "usage: npm run cluster -- DIR [--replicas 3] [--port 3000]"

const parseArguments = (argv: ReadonlyArray<string>): Options | string => {
  let directory: string | undefined
  let replicas = 3
  let port = 3000
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const value = () => {
      const next = argv[++i]
      const number = Number(next)
      return next !== undefined && Number.isSafeInteger(number) ? number : undefined
    }
    if (arg === "--replicas") {
      const n = value()
      if (n === undefined || n < 1 || n > 32) return `--replicas takes a number from 1 to 32`
      replicas = n
    } else if (arg === "--port") {
      const n = value()
      if (n === undefined || n < 0 || n > 65_535) return `--port takes a TCP port (0 picks a free one)`
      port = n
    } else if (arg.startsWith("-") || directory !== undefined) {
      return `unexpected argument ${arg}`
    } else {
      directory = arg
    }
  }
  if (directory === undefined) return "give the skills folder"
  if (!fs.statSync(directory, { throwIfNoEntry: false })?.isDirectory()) return `${directory} is not a folder`
  return { directory: path.resolve(directory), replicas, port }
}

const main = async () => {
  const found = findPackages()
  if ("missing" in found) {
    console.error(
      `npm run cluster needs ${found.missing.join(" and ")}, which ${found.missing.length === 1 ? "is" : "are"} not installed.\n` +
        `On Debian or Ubuntu: sudo apt-get update && sudo apt-get install -y ${requiredPackages.join(" ")}`
    )
    process.exitCode = 1
    return
  }
  const options = parseArguments(process.argv.slice(2))
  if (typeof options === "string") {
    console.error(`${options}\n${usage}`)
    process.exitCode = 1
    return
  }
  let cluster: Cluster
  try {
    cluster = await start({ ...options, log: (line) => console.log(line) })
  } catch (error) {
    console.error(`cannot start the cluster: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
    return
  }
  console.log(`listening ${cluster.url}`)
  let stopping = false
  const shutdown = () => {
    if (stopping) return
    stopping = true
    console.log("stopping")
    void cluster.stop().then(() => process.exit(0))
  }
  process.on("SIGINT", shutdown)
  process.on("SIGTERM", shutdown)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) void main()
