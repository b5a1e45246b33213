/**
 * What the command-line programs share: load a skills folder with a readable report, and serve the
 * skills over HTTP or stdio.
 *
 * @since 0.1.0
 */
// Modules, not the barrel: the barrel loads every Node adapter (Redis, WebSockets), 650 modules
// that every command would pay for before doing anything.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import { Manifest } from "@mcp-skills/core"
import type * as ByteSize from "effect/ByteSize"
import * as Console from "effect/Console"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { McpProtocol, McpServer } from "effect/ai"
import { HttpRouter, HttpServer } from "effect/http"
import type * as NodeHttp from "node:http"
import { createServer } from "node:http"
import * as NodeUtil from "node:util"
import * as DirectorySource from "../DirectorySource.js"
import * as HttpAdmission from "../HttpAdmission.js"
import * as RouterAdmission from "../internal/routerAdmission.js"
import * as Observability from "../Observability.js"
import type * as Skill from "../Skill.js"
import * as SkillRegistry from "../SkillRegistry.js"
import * as SkillsServer from "../SkillsServer.js"
import * as Replication from "./replication.js"
import * as StdioFraming from "../StdioFraming.js"
import * as DirectoryModel from "../DirectoryModel.js"
import type * as UpstreamSource from "../UpstreamSource.js"

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
 * One line for a skill folder that is not served: the folder, then each problem with its file and line.
 *
 * @since 0.2.0
 */
export const describeSkipped = (skipped: DirectoryModel.InvalidSkillDirectory) =>
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

/**
 * Each repair in one line, then their count per kind in one (`--lenient`).
 *
 * @since 0.2.0
 */
export const reportRepairs = (repairs: ReadonlyArray<DirectoryModel.Repaired>, log: (line: string) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    if (repairs.length === 0) return
    const counts = new Map<string, number>()
    for (const repaired of repairs) {
      yield* log(`repaired ${DirectoryModel.describeRepaired(repaired)}`)
      counts.set(repaired.repair._tag, (counts.get(repaired.repair._tag) ?? 0) + 1)
    }
    yield* log(`${plural(repairs.length, "repair")}: ${[...counts].map(([kind, count]) => `${count} ${kind}`).join(", ")}`)
  })

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
  for (const warning of loaded.warnings) yield* Console.error(`warning: ${Manifest.describe(warning)}`)
  yield* reportRepairs(loaded.repairs, options.log)
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
    for (const warning of loaded.warnings) yield* Console.error(`warning: ${Manifest.describe(warning)}`)
    yield* reportRepairs(loaded.repairs, options.log)
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
    readonly upstreams?: UpstreamSource.Upstreams | undefined
    readonly tools?: boolean | undefined
  }
) => {
  const { pageSize, fastRoute, sessions, requireSigned, upstreams, tools } = options
  const settings = { pageSize, fastRoute, sessions, requireSigned, tools }
  const local = isSource(skills) ? skills.definitions : skills
  const layer = upstreams === undefined
    ? SkillsServer.layer({ skills: local, ...settings })
    : upstreams.follow.pipe(
      Layer.provideMerge(SkillsServer.layer({ skills: upstreams.catalogue(local), ...settings }).pipe(Layer.provide(upstreams.resolver)))
    )
  return watch === undefined || !isSource(skills) ? layer : watcher(skills, watch).pipe(Layer.provideMerge(layer))
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
  /** Browser origins every route admits (`HttpAdmission.RouterOptions.allowedOrigins`). */
  readonly allowedOrigins: ReadonlyArray<string>
  /** Host names every route admits (`HttpAdmission.RouterOptions.allowedHosts`). */
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  /** Runs once the server accepts requests, with its full MCP endpoint URL. */
  readonly onListening: (url: string) => Effect.Effect<void>
  readonly watch?: Watch | undefined
  /** Join other replicas on a change bus (the revision is then logged at start-up and on every change). */
  readonly replication?: Replication.Options | undefined
  /** Entries per page of `skills/list` and directory reads (default 100). */
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
  /** Upstream skill servers served beside `definitions` (`UpstreamSource`). */
  readonly upstreams?: UpstreamSource.Upstreams | undefined
  /** Also serve the catalogue as tools (`SkillsServer.Options.tools`). */
  readonly tools?: boolean | undefined
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
 * Serves skills over streamable HTTP at `http://host:port/path`; fails with {@link ListenError}
 * when it cannot listen.
 *
 * @since 0.1.0
 */
export const http = (definitions: Skills, options: HttpOptions) =>
  listen("MCP endpoint", (allowedOrigins) => {
    const mcp = McpServer.layerHttp({
      ...serverInfo,
      path: options.path,
      protocols: protocolsFor(options.protocols),
      allowedOrigins,
      allowSessionTermination: true,
      registrations: Replication.replicate(options.replication)(registrations(definitions, options.watch, options))
    }).pipe(Layer.provide(HttpAdmission.layer({ maxBodySize: options.maxBodySize })))
    return options.metrics === true ? Layer.merge(mcp, Observability.layerPrometheus()) : mcp
  }, options, options.path, closingStreams)

/**
 * A listener that could not be opened: which one (`listener`), the address it was given, and
 * the system's reason (`code` is the errno name, e.g. `EADDRINUSE`).
 *
 * @since 0.1.0
 * @category errors
 */
export class ListenError extends Schema.TaggedError<ListenError>()("ListenError", {
  listener: Schema.Literals(["MCP endpoint", "metrics endpoint"]),
  host: Schema.String,
  port: Schema.Number,
  code: Schema.optional(Schema.String),
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot listen for the ${this.listener} on ${bracketed(this.host)}:${this.port}: ${this.reason}` +
      (this.code === undefined ? "" : ` (${this.code})`)
  }
}

const bracketed = (host: string) => host.includes(":") ? `[${host}]` : host

// Node's listen errors carry the errno name (`code`), its number and the failing call.
const listenError = (
  listener: ListenError["listener"],
  options: { readonly host: string; readonly port: number },
  cause: unknown
) => {
  const error = cause as { readonly code?: unknown; readonly errno?: unknown; readonly syscall?: unknown; readonly message?: unknown }
  const code = typeof error.code === "string" ? error.code : undefined
  const system = typeof error.errno === "number" ? NodeUtil.getSystemErrorMap().get(error.errno)?.[1] : undefined
  // libuv's name for ENOTFOUND's errno reads "unknown node or service".
  const reason = code === "ENOTFOUND"
    ? "no such host"
    : system !== undefined
    ? system
    : typeof error.message === "string" && error.message !== ""
    ? error.message
    : String(cause)
  return new ListenError({ listener, host: options.host, port: options.port, code, reason })
}

/**
 * The one way this program opens an HTTP listener: `routes` behind `HttpAdmission.layerRouter`
 * (every route admits the same Host and Origin), served on `host:port`; a listen failure becomes
 * a `ListenError` naming `listener`; `onListening` is told the URL of `path` once requests are
 * handled. `routes` gets the one list of admitted origins (effect's endpoint checks its own): the
 * `allowedOrigins` given and the listener's own, known once it listens.
 */
const listen = <E, R>(
  listener: ListenError["listener"],
  routes: (allowedOrigins: ReadonlyArray<string>) => Layer.Layer<never, E, R>,
  options: {
    readonly host: string
    readonly port: number
    readonly allowedOrigins: ReadonlyArray<string>
    readonly allowedHosts?: ReadonlyArray<string> | undefined
    readonly onListening: (url: string) => Effect.Effect<void>
  },
  path: string,
  server: () => NodeHttp.Server
) => {
  const admitted = Layer.unwrap(Effect.map(HttpServer.HttpServer, (server) => {
    const allowedOrigins = [...options.allowedOrigins, ...RouterAdmission.ownOrigins(server.address)]
    return routes(allowedOrigins).pipe(Layer.provide(HttpAdmission.layerRouter({ allowedHosts: options.allowedHosts, allowedOrigins })))
  }))
  const served = HttpRouter.serve(admitted, { disableListenLog: true, disableLogger: true }).pipe(
    Layer.provideMerge(Layer.mergeAll(
      // NodeHttpServer.layer, with its ServeError (which has no message) named.
      Layer.effect(HttpServer.HttpServer)(
        NodeHttpServer.make(() => answeringWhileStarting(server()), { port: options.port, host: options.host }).pipe(
          Effect.mapError((error) => listenError(listener, options, error.cause))
        )
      ),
      NodeHttpServer.layerHttpServices
    ))
  )
  // Built after `served`, so the handler is installed before anyone is told the address.
  return announce(options, path).pipe(Layer.provide(served))
}

// Effect's Node server listens before the routes are built (they need its address), and the
// routes take the registry, a gateway's wait for its upstreams, the change bus: a request accepted
// in between reached no handler and was held until the client gave up. Until effect installs its
// handler, every request is answered 503 with Retry-After, so clients and balancers try again.
const answeringWhileStarting = (server: NodeHttp.Server) => {
  const starting = (_request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse) => {
    response.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" })
    response.end("starting: not serving yet, try again\n")
  }
  const handOver = (event: string | symbol, listener: unknown) => {
    if (event !== "request" || listener === starting) return
    server.off("request", starting)
    server.off("newListener", handOver)
  }
  server.on("request", starting)
  server.on("newListener", handOver)
  return server
}

// Tells `onListening` the URL of `path` on the server listening (the port it was given, if 0).
const announce = (
  options: { readonly host: string; readonly port: number; readonly onListening: (url: string) => Effect.Effect<void> },
  path: string
) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const port = server.address._tag === "UnixPathAddress" ? options.port : server.address.port
    yield* options.onListening(`http://${bracketed(options.host)}:${port}${path}`)
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
  requireSigned?: boolean | undefined,
  upstreams?: UpstreamSource.Upstreams | undefined,
  tools?: boolean | undefined
) =>
  McpServer.layerStdio({
    ...serverInfo,
    protocols: protocolsFor(protocols),
    registrations: Replication.replicate(replication)(registrations(definitions, watch, { requireSigned, upstreams, tools }))
  }).pipe(Layer.provide(StdioFraming.layer({ maxLineSize })), Layer.provide(NodeStdio.layer))

/**
 * Serves Prometheus text at `http://host:port/metrics` on a listener of its own (for stdio servers,
 * or to keep metrics off the MCP port), admitting the Host and Origin the MCP endpoint admits;
 * `onListening` gets its URL. Fails with {@link ListenError} when it cannot listen.
 *
 * @since 0.1.0
 */
export const metricsListener = (options: {
  readonly host: string
  readonly port: number
  readonly allowedOrigins: ReadonlyArray<string>
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly onListening: (url: string) => Effect.Effect<void>
}) => listen("metrics endpoint", () => Observability.layerPrometheus(), options, "/metrics", () => createServer())
