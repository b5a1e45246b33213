/**
 * What the command-line programs share: load a skills folder with a readable report, and serve the
 * skills over HTTP or stdio.
 *
 * @since 0.1.0
 */
import { NodeHttpServer, NodeStdio } from "@effect/platform-node"
import { Manifest } from "@mcp-skills/core"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { McpProtocol, McpServer } from "effect/ai"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as DirectorySource from "../DirectorySource.js"
import type * as Skill from "../Skill.js"
import * as SkillRegistry from "../SkillRegistry.js"
import * as SkillsServer from "../SkillsServer.js"

/**
 * The name and version the server reports in `server/discover` and `initialize`.
 *
 * @since 0.1.0
 */
export const serverInfo = { name: "mcp-skills-server", version: "0.1.0" } as const

/**
 * Protocol revisions the programs can serve.
 *
 * @since 0.1.0
 */
export const revisions = ["2026-07-28", "2025-11-25"] as const

/**
 * @since 0.1.0
 */
export type Revision = typeof revisions[number]

const adapters = {
  "2026-07-28": McpProtocol.v2026_07_28,
  "2025-11-25": McpProtocol.v2025_11_25
} as const

type Adapter = typeof adapters[Revision]

const protocolsFor = (selected: ReadonlyArray<Revision>): readonly [Adapter, ...Array<Adapter>] => {
  const chosen = revisions.filter((revision) => selected.length === 0 || selected.includes(revision))
  const [first, ...rest] = chosen.map((revision) => adapters[revision])
  return SkillsServer.protocols([first ?? adapters["2026-07-28"], ...rest] as const)
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/**
 * Loads a skills folder and reports what happened, one line per skill folder that was skipped and per
 * entry that was left out, on `log` (stdout in HTTP mode, stderr in stdio mode, where stdout carries
 * the protocol). Problems always go to stderr.
 *
 * @since 0.1.0
 */
export const loadReported = Effect.fnUntraced(function*(
  directory: string,
  options: DirectorySource.Options & {
    readonly log: (line: string) => Effect.Effect<void>
    readonly verb?: string | undefined
  }
) {
  const loaded = yield* DirectorySource.load(directory, options)
  for (const skipped of loaded.skipped) {
    const problems = skipped.error._tag === "InvalidSkill"
      ? skipped.error.problems.map(Manifest.describe).join("; ")
      : skipped.error.message
    yield* Console.error(`skipped ${skipped.directory}: ${problems}`)
  }
  for (const ignored of loaded.ignored) yield* Console.error(`ignored ${ignored.path}: ${ignored.reason}`)
  if (loaded.skills.length === 0) yield* Console.error(`warning: no valid skill (a folder with a SKILL.md) under ${directory}`)
  yield* options.log(
    `${options.verb ?? "loaded"} ${plural(loaded.skills.length, "skill")} from ${directory}` +
      (loaded.skipped.length > 0 ? ` (${loaded.skipped.length} skipped)` : "")
  )
  for (const skill of loaded.skills) yield* options.log(`  ${skill.manifest.uri} (${plural(skill.files.length, "file")})`)
  return { loaded, definitions: DirectorySource.toDefinitions(loaded, options) }
})

/**
 * Reload the skills whenever something under `directory` changes.
 *
 * @since 0.1.0
 */
export interface Watch {
  readonly directory: string
  readonly options: DirectorySource.Options
  readonly log: (line: string) => Effect.Effect<void>
}

// Changes are debounced, hidden entries (.git, editor swap files) are ignored, and a reload that fails
// keeps the previous catalogue: the registry swaps snapshots atomically, all or nothing.
const watcher = (watch: Watch) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const registry = yield* SkillRegistry.SkillRegistry
    const reload = Effect.gen(function*() {
      const { definitions } = yield* loadReported(watch.directory, { ...watch.options, log: watch.log, verb: "reloaded" })
      yield* registry.replace(definitions)
    }).pipe(Effect.catch((error) => Console.error(`reload failed, still serving the previous skills: ${error.message}`)))
    const ready = Deferred.makeUnsafe<void>()
    const watching = yield* fs.watch(watch.directory, {
      recursive: true,
      onReady: () => Deferred.doneUnsafe(ready, Effect.void)
    }).pipe(
      Stream.filter((event) => !event.path.split(/[\\/]/).some((segment) => segment.startsWith("."))),
      Stream.debounce("200 millis"),
      Stream.runForEach(() => reload),
      Effect.catch((error) => Console.error(`stopped watching ${watch.directory}: ${error.message}`)),
      Effect.forkScoped
    )
    // The server is announced only once the watcher is installed, so no early edit is missed.
    yield* Effect.raceFirst(Deferred.await(ready), Fiber.await(watching))
  }))

const registrations = (definitions: ReadonlyArray<Skill.Definition>, watch: Watch | undefined) => {
  const skills = SkillsServer.layer({ skills: definitions })
  return watch === undefined ? skills : watcher(watch).pipe(Layer.provideMerge(skills))
}

/**
 * Options of {@link http}.
 *
 * @since 0.1.0
 */
export interface HttpOptions {
  readonly host: string
  readonly port: number
  readonly path: `/${string}`
  readonly protocols: ReadonlyArray<Revision>
  readonly allowedOrigins: ReadonlyArray<string>
  /** Runs once the server accepts requests, with its full MCP endpoint URL. */
  readonly onListening: (url: string) => Effect.Effect<void>
  readonly watch?: Watch | undefined
}

/**
 * Serves skills over streamable HTTP at `http://host:port/path`.
 *
 * @since 0.1.0
 */
export const http = (definitions: ReadonlyArray<Skill.Definition>, options: HttpOptions) => {
  const mcp = McpServer.layerHttp({
    ...serverInfo,
    path: options.path,
    protocols: protocolsFor(options.protocols),
    allowedOrigins: options.allowedOrigins,
    allowSessionTermination: true,
    registrations: registrations(definitions, options.watch)
  })
  const served = HttpRouter.serve(mcp, { disableListenLog: true, disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
  )
  // Built after `served`, so the handler is installed before anyone is told the address.
  return Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const port = server.address._tag === "UnixPathAddress" ? options.port : server.address.port
    const host = options.host.includes(":") ? `[${options.host}]` : options.host
    yield* options.onListening(`http://${host}:${port}${options.path}`)
  })).pipe(Layer.provide(served))
}

/**
 * Serves skills over stdio (newline-delimited JSON-RPC on stdin/stdout).
 *
 * @since 0.1.0
 */
export const stdio = (
  definitions: ReadonlyArray<Skill.Definition>,
  protocols: ReadonlyArray<Revision>,
  watch?: Watch | undefined
) =>
  McpServer.layerStdio({
    ...serverInfo,
    protocols: protocolsFor(protocols),
    registrations: registrations(definitions, watch)
  }).pipe(Layer.provide(NodeStdio.layer))
