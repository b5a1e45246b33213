/**
 * Test support: run the built command-line programs (`dist`, under the repo's Node 22) as child
 * processes, and stop them when the test's scope closes.
 */
import { NodeServices } from "@effect/platform-node"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Serve from "../../src/bin/serve.js"
import type * as Skill from "../../src/Skill.js"

export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url))
export const node = path.join(repoRoot, "node_modules/.bin/node")
export const examples = path.join(repoRoot, "examples/skills")
/** The skills of `examples/skills`, in listing order. */
export const exampleUris = [
  "skill://acme/billing/refunds/SKILL.md",
  "skill://acme/billing/refunds/escalation/SKILL.md",
  "skill://changelog-writer/SKILL.md",
  "skill://csv-cleaning/SKILL.md",
  "skill://git-workflow/SKILL.md",
  "skill://pdf-processing/SKILL.md"
]
export const bin = (name: string) => path.join(repoRoot, "packages/skills-server/dist/src/bin", `${name}.js`)

export interface Running {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the exit code (or signal name) once the process has ended. */
  readonly exited: Promise<number | string>
}

/**
 * Spawns `node dist/src/bin/<name>.js ...args` with pipes for all three streams, as another user
 * if `as` says so (a test running as root denies itself nothing).
 */
export const spawnBin = (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  as: { readonly uid: number; readonly gid: number } | undefined = undefined
): Running => spawnNode([bin(name), ...args], env, as)

/** The executable a user runs: the file npm links as `mcp-skills-server`, in front of the bundle. */
export const executable = path.join(repoRoot, "packages/skills-server/bin/mcp-skills-server.js")

/** Spawns the repo's Node 22 with `argv` (node's options, then a script and its arguments), as `spawnBin`. */
export const spawnNode = (
  argv: ReadonlyArray<string>,
  env: Record<string, string> = {},
  as: { readonly uid: number; readonly gid: number } | undefined = undefined
): Running => {
  const child = spawn(node, argv, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
    ...as
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | string>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown"))
  )
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/**
 * `use` of `mcp-skills-server serve` of `folder` (the examples) over HTTP on loopback, started as a user starts
 * it with the module `probe` preloaded by node (after `nodeOptions`), once it listens; stopped after.
 */
export const withProbedServe = <A>(
  probe: string,
  nodeOptions: ReadonlyArray<string>,
  env: Record<string, string>,
  use: (running: Running) => Promise<A>,
  folder = examples
) =>
  Effect.acquireUseRelease(
    Effect.sync(() =>
      spawnNode([`--import=${probe}`, ...nodeOptions, executable, "serve", folder, "--host", "127.0.0.1", "--port", "0"], env)
    ),
    (running) =>
      Effect.promise(async () => {
        await waitFor(running, "stdout", /^listening http/m)
        return use(running)
      }),
    (running) => Effect.promise(() => stop(running))
  )

/** Waits until `pattern` shows up on the given stream, failing if the process ends first. */
export const waitFor = (running: Running, stream: "stdout" | "stderr", pattern: RegExp): Promise<RegExpMatchArray> =>
  new Promise((resolve, reject) => {
    const check = () => {
      const match = running[stream]().match(pattern)
      if (match !== null) {
        running.child[stream]!.off("data", check)
        resolve(match)
      }
    }
    running.child[stream]!.on("data", check)
    running.exited.then((code) =>
      reject(
        new Error(`process ended (${code}) before ${pattern}\nstdout:\n${running.stdout()}\nstderr:\n${running.stderr()}`)
      )
    )
    check()
  })

/** Stops a process with SIGTERM (SIGKILL after 5 s) and returns how it ended. */
export const stop = (running: Running): Promise<number | string> => {
  if (running.child.exitCode === null && running.child.signalCode === null) {
    running.child.kill("SIGTERM")
    const timer = setTimeout(() => running.child.kill("SIGKILL"), 5_000)
    running.exited.then(() => clearTimeout(timer))
  }
  return running.exited
}

/**
 * Starts `mcp-skills-server serve` over HTTP on 127.0.0.1 with a free port, for the length of the
 * scope, and gives the MCP endpoint URL.
 */
export const httpServer = (directory: string, extraArgs: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const running = spawnBin("mcp-skills-server", ["serve", directory, "--host", "127.0.0.1", "--port", "0", ...extraArgs])
      const [, url] = await waitFor(running, "stdout", /^listening (http:\/\/\S+)$/m)
      return { running, url: url! }
    }),
    ({ running }) => Effect.promise(() => stop(running))
  )

/**
 * `examples/skills` (plus `extra` skills) served in process the way the CLI serves them, on a free
 * loopback port for the length of the test's scope; succeeds with the MCP endpoint URL.
 */
export const serveExamples = (extra: ReadonlyArray<Skill.Definition> = []) =>
  Effect.gen(function*() {
    const { definitions } = yield* Serve.loadReported(examples, { strict: true, log: () => Effect.void })
    const url = yield* Deferred.make<string>()
    yield* Layer.build(Serve.http([...definitions, ...extra], {
      host: "127.0.0.1",
      port: 0,
      path: "/mcp",
      protocols: [],
      allowedOrigins: [],
      onListening: (listening) => Deferred.succeed(url, listening).pipe(Effect.asVoid)
    }))
    return yield* Deferred.await(url)
  }).pipe(Effect.provide(NodeServices.layer))
