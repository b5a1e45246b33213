/**
 * What the command-line programs share: load a skills folder with a readable report, and serve the
 * skills over HTTP or stdio.
 *
 * @since 0.1.0
 */
import { NodeHttpServer, NodeStdio } from "@effect/platform-node"
import { Manifest } from "@mcp-skills/core"
import type * as ByteSize from "effect/ByteSize"
import * as Console from "effect/Console"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { McpProtocol, McpServer } from "effect/ai"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as DirectorySource from "../DirectorySource.js"
import * as HttpAdmission from "../HttpAdmission.js"
import * as Observability from "../Observability.js"
import type * as Skill from "../Skill.js"
import * as SkillRegistry from "../SkillRegistry.js"
import * as SkillsServer from "../SkillsServer.js"
import * as Replication from "./replication.js"
import * as StdioFraming from "../StdioFraming.js"
import type * as DirectoryModel from "../DirectoryModel.js"

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

const describeSkipped = (skipped: DirectoryModel.InvalidSkillDirectory) =>
  `${skipped.directory}: ${
    skipped.error._tag === "InvalidSkill" ? skipped.error.problems.map(Manifest.describe).join("; ") : skipped.error.message
  }`

/**
 * Up to this many skills, start-up prints one line per skill; above it, one summary line (a
 * catalogue of 10,000 skills would otherwise print 10,000 lines before listening).
 *
 * @since 0.1.0
 */
export const maxListedSkills = 50

const listSkills = (skills: ReadonlyArray<DirectoryModel.LoadedSkill>, log: (line: string) => Effect.Effect<void>) => {
  if (skills.length > maxListedSkills) {
    const files = skills.reduce((sum, skill) => sum + skill.manifest.files.length, 0)
    return log(`  ${plural(files, "file")} in all (one line per skill up to ${maxListedSkills} skills)`)
  }
  return Effect.forEach(skills, (skill) => log(`  ${skill.manifest.uri} (${plural(skill.manifest.files.length, "file")})`), {
    discard: true
  })
}

/**
 * Loads a skills folder and reports what happened, one line per skill folder that was skipped and per
 * entry that was left out, on `log` (stdout in HTTP mode, stderr in stdio mode, where stdout carries
 * the protocol). Problems always go to stderr.
 *
 * @since 0.1.0
 */
export const loadReported = Effect.fnUntraced(function*(
  directory: string,
  options: DirectoryModel.Options & {
    readonly log: (line: string) => Effect.Effect<void>
    readonly verb?: string | undefined
  }
) {
  const loaded = yield* DirectorySource.load(directory, options)
  for (const skipped of loaded.skipped) yield* Console.error(`skipped ${describeSkipped(skipped)}`)
  for (const ignored of loaded.ignored) yield* Console.error(`ignored ${ignored.path}: ${ignored.reason}`)
  if (loaded.skills.length === 0) yield* Console.error(`warning: no valid skill (a folder with a SKILL.md) under ${directory}`)
  yield* options.log(
    `${options.verb ?? "loaded"} ${plural(loaded.skills.length, "skill")} from ${directory}` +
      (loaded.skipped.length > 0 ? ` (${loaded.skipped.length} skipped)` : "")
  )
  yield* listSkills(loaded.skills, options.log)
  return { loaded, definitions: DirectorySource.toDefinitions(loaded, options) }
})

/**
 * Opens a `DirectorySource` over `roots` and reports its first scan like {@link loadReported}:
 * problems on stderr, what was loaded on `log`. Later problems (bad edits under `--watch`) go to
 * stderr too, one line each.
 *
 * @since 0.1.0
 */
export const openReported = Effect.fnUntraced(function*(
  roots: ReadonlyArray<DirectoryModel.Root>,
  options: { readonly log: (line: string) => Effect.Effect<void> }
) {
  const source = yield* DirectorySource.make(roots, { log: Console.error })
  const scan = yield* source.scan
  for (const { root, loaded } of scan.roots) {
    for (const skipped of loaded.skipped) yield* Console.error(`skipped ${describeSkipped(skipped)}`)
    for (const ignored of loaded.ignored) yield* Console.error(`ignored ${ignored.path}: ${ignored.reason}`)
    if (loaded.skills.length === 0) yield* Console.error(`warning: no valid skill (a folder with a SKILL.md) under ${root.path}`)
    yield* options.log(
      `loaded ${plural(loaded.skills.length, "skill")} from ${root.path}` +
        (loaded.skipped.length > 0 ? ` (${loaded.skipped.length} skipped)` : "")
    )
    yield* listSkills(loaded.skills, options.log)
  }
  // The registry's first build takes this scan's definitions: scanning again right away would stat
  // every file a second time and re-read those written in the last second. Later builds (reloads)
  // scan.
  let first: ReadonlyArray<Skill.Static> | undefined = scan.definitions
  return {
    ...source,
    definitions: Effect.suspend(() => {
      const definitions = first
      first = undefined
      return definitions === undefined ? source.definitions : Effect.succeed(definitions)
    })
  } satisfies DirectoryModel.Source
})

/**
 * What a server serves: fixed definitions, or a directory source (rescanned by `reload`, and on
 * file changes with `watch`).
 *
 * @since 0.1.0
 */
export type Skills = ReadonlyArray<Skill.Definition> | DirectoryModel.Source

/**
 * Reload a directory source whenever something under its roots changes; `log` gets one line per
 * reload.
 *
 * @since 0.1.0
 */
export interface Watch {
  readonly log: (line: string) => Effect.Effect<void>
  /** Interval of the periodic stamp check (`DirectorySource.WatchOptions.sweep`). */
  readonly sweep?: DirectorySource.WatchOptions["sweep"]
  /** The watcher's own warnings (a change no event reported). Default: stderr. */
  readonly warn?: ((line: string) => Effect.Effect<void>) | undefined
}

const isSource = (skills: Skills): skills is DirectoryModel.Source => "scan" in skills

// A reload that fails keeps the previous catalogue: the registry swaps snapshots atomically.
const watcher = (source: DirectoryModel.Source, watch: Watch) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const registry = yield* SkillRegistry.SkillRegistry
    const where = source.roots.map((root) => root.path).join(", ")
    yield* DirectorySource.watch(source, {
      sweep: watch.sweep,
      log: watch.warn ?? Console.error,
      onReload: (result) =>
        Exit.match(result, {
          onFailure: (cause) => {
            const error = Cause.squash(cause)
            return Console.error(
              `reload failed, still serving the previous skills: ${error instanceof Error ? error.message : String(error)}`
            )
          },
          // A reload that changed nothing (a racy file read again, an event for unchanged bytes)
          // is not news: one line per real change.
          onSuccess: (changes) =>
            Effect.gen(function*() {
              if (changes.added.length + changes.removed.length + changes.changed.length === 0) return
              const snapshot = yield* registry.snapshot
              yield* watch.log(`reloaded ${plural(snapshot.skills.length, "skill")} from ${where}`)
              for (const uri of changes.added) yield* watch.log(`  added ${uri}`)
              for (const uri of changes.removed) yield* watch.log(`  removed ${uri}`)
              for (const change of changes.changed) yield* watch.log(`  changed ${change.uri}`)
            })
        })
    })
  }))

const registrations = (
  skills: Skills,
  watch: Watch | undefined,
  options: {
    readonly pageSize?: number | undefined
    readonly fastRoute?: boolean | undefined
    readonly sessions?: SkillsServer.SessionOptions | undefined
    readonly requireSigned?: boolean | undefined
  }
) => {
  const { pageSize, fastRoute, sessions, requireSigned } = options
  const settings = { pageSize, fastRoute, sessions, requireSigned }
  if (!isSource(skills)) return SkillsServer.layer({ skills, ...settings })
  const layer = SkillsServer.layer({ skills: skills.definitions, ...settings })
  return watch === undefined ? layer : watcher(skills, watch).pipe(Layer.provideMerge(layer))
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
  /** Join other replicas on a change bus (the revision is then logged at start-up and on every change). */
  readonly replication?: Replication.Options | undefined
  /** Entries per page of `skills/list` and directory reads (default 50). */
  readonly pageSize?: number | undefined
  /** Largest request body accepted (default `ServerLimits.MaxBodySize`). */
  readonly maxBodySize?: ByteSize.Input | undefined
  /** The skills layer's fast route (default on; `SkillsServer.Options.fastRoute`). */
  readonly fastRoute?: boolean | undefined
  /** Serve Prometheus text at `GET /metrics` on this listener (`Observability.layerPrometheus`). */
  readonly metrics?: boolean | undefined
  /** Bounds of 2025-11-25 sessions (`SkillsServer.Options.sessions`). */
  readonly sessions?: SkillsServer.SessionOptions | undefined
  /** Serve only skills whose signature verifies (`SkillsServer.Options.requireSigned`). */
  readonly requireSigned?: boolean | undefined
}

// Session streams (2025-11-25 GET) stay open until the client leaves, and a graceful close waits
// for them: on close, requests in flight get a second to finish, then every connection is cut.
const closingStreams = () => {
  const server = createServer()
  const close = server.close.bind(server)
  server.close = (callback) => {
    close(callback)
    setTimeout(() => server.closeAllConnections(), 1_000).unref()
    return server
  }
  return server
}

/**
 * Serves skills over streamable HTTP at `http://host:port/path`.
 *
 * @since 0.1.0
 */
export const http = (definitions: Skills, options: HttpOptions) => {
  const mcp = McpServer.layerHttp({
    ...serverInfo,
    path: options.path,
    protocols: protocolsFor(options.protocols),
    allowedOrigins: options.allowedOrigins,
    allowSessionTermination: true,
    registrations: Replication.replicate(options.replication)(registrations(definitions, options.watch, options))
  }).pipe(Layer.provide(HttpAdmission.layer({ maxBodySize: options.maxBodySize })))
  const routes = options.metrics === true ? Layer.merge(mcp, Observability.layerPrometheus()) : mcp
  const served = HttpRouter.serve(routes, { disableListenLog: true, disableLogger: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(closingStreams, { port: options.port, host: options.host }))
  )
  // Built after `served`, so the handler is installed before anyone is told the address.
  return announce(options, options.path).pipe(Layer.provide(served))
}

// Tells `onListening` the URL of `path` on the server listening (the port it was given, if 0).
const announce = (
  options: { readonly host: string; readonly port: number; readonly onListening: (url: string) => Effect.Effect<void> },
  path: string
) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const port = server.address._tag === "UnixPathAddress" ? options.port : server.address.port
    const host = options.host.includes(":") ? `[${options.host}]` : options.host
    yield* options.onListening(`http://${host}:${port}${path}`)
  }))

/**
 * Serves skills over stdio (newline-delimited JSON-RPC on stdin/stdout, framed by
 * `StdioFraming`: every line is answered, and the server ends once input has ended and every
 * request has been answered).
 *
 * @since 0.1.0
 */
export const stdio = (
  definitions: Skills,
  protocols: ReadonlyArray<Revision>,
  watch?: Watch | undefined,
  replication?: Replication.Options | undefined,
  maxLineSize?: ByteSize.Input | undefined,
  requireSigned?: boolean | undefined
) =>
  McpServer.layerStdio({
    ...serverInfo,
    protocols: protocolsFor(protocols),
    registrations: Replication.replicate(replication)(registrations(definitions, watch, { requireSigned }))
  }).pipe(Layer.provide(StdioFraming.layer({ maxLineSize })), Layer.provide(NodeStdio.layer))

/**
 * Serves Prometheus text at `http://host:port/metrics` on a listener of its own (for stdio servers,
 * or to keep metrics off the MCP port); `onListening` gets its URL.
 *
 * @since 0.1.0
 */
export const metricsListener = (options: {
  readonly host: string
  readonly port: number
  readonly onListening: (url: string) => Effect.Effect<void>
}) =>
  announce(options, "/metrics").pipe(
    Layer.provide(
      HttpRouter.serve(Observability.layerPrometheus(), { disableListenLog: true, disableLogger: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
      )
    )
  )
