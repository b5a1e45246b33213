import { execFile, spawn } from "node:child_process"
import * as Path from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as McpClient from "effect/ai/McpClient"
import { SkillCache, SkillsClient } from "@mcp-skills/client"

/** A fresh folder in the system's temp folder, removed with the scope. */
export const tempDir = (prefix: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.makeTempDirectoryScoped({ prefix })
  }).pipe(Effect.provide(NodeFileSystem.layer), Effect.orDie)

export const versions: ReadonlyArray<McpClient.ProtocolVersion> = ["2026-07-28", "2025-11-25"]

/** Runs `f` with a client connected to `url` over HTTP. */
export const withClient = <A, E>(
  url: string,
  f: (client: SkillsClient.Service) => Effect.Effect<A, E>,
  options: Omit<Parameters<typeof SkillsClient.layerHttp>[0], "url"> & {
    readonly cache?: Layer.Layer<never>
  } = {}
) =>
  SkillsClient.SkillsClient.use(f).pipe(
    Effect.provide(
      SkillsClient.layerHttp({ url, ...options }).pipe(
        Layer.provide([FetchHttpClient.layer, options.cache ?? SkillCache.layerMemory()])
      )
    )
  )

/** The built `mcp-skills-server` executable. */
export const serverCli = Path.resolve(import.meta.dirname, "../../../skills-server/dist/src/bin/mcp-skills-server.js")

/** Starts `mcp-skills-server serve DIR --port 0 ...args` and answers its URL and what it printed so far. */
export const serveHttp = (dir: string, args: ReadonlyArray<string> = []) =>
  Effect.acquireRelease(
    Effect.callback<{ url: string; stop: () => void; output: () => string }>((resume) => {
      const child = spawn(process.execPath, [serverCli, "serve", dir, "--port", "0", ...args], { stdio: ["ignore", "pipe", "pipe"] })
      let out = ""
      child.stderr.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
      })
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        const match = /listening (http:\/\/\S+)/.exec(out)
        if (match !== null) resume(Effect.succeed({ url: match[1]!, stop: () => child.kill("SIGTERM"), output: () => out }))
      })
      child.on("exit", (code) => resume(Effect.die(new Error(`mcp-skills-server exited (${code}): ${out}`))))
    }),
    ({ stop }) => Effect.sync(stop)
  )


const cli = Path.resolve(import.meta.dirname, "../../dist/src/bin/mcp-skills.js")

export interface Run {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a built CLI (asynchronously: servers in this process keep answering). */
export const runProgram = (program: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): Promise<Run> =>
  new Promise((resolve) => {
    const options = { encoding: "utf8" as const, timeout: 60_000, env: { ...process.env, MCP_SKILLS_TOKEN: "", ...env } }
    execFile(process.execPath, [program, ...args], options, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    })
  })

/** Runs the built `mcp-skills` CLI. */
export const runCli = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): Promise<Run> =>
  runProgram(cli, args, env)
