#!/usr/bin/env node
/**
 * `mcp-skills-server serve DIR`: serves every skill under a folder over MCP (streamable HTTP, or
 * stdio with `--stdio`), on protocol revisions 2026-07-28 and 2025-11-25.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { CliReport, McpTelemetry } from "@mcp-skills/core"
import * as ByteSize from "effect/ByteSize"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { Argument, Command, Flag } from "effect/cli"
import * as Check from "./check.js"
import * as DirectorySource from "../DirectorySource.js"
import * as Heap from "./heap.js"
import * as RouterAdmission from "../internal/routerAdmission.js"
import * as Observability from "../Observability.js"
import * as Replication from "./replication.js"
import * as ServerLimits from "../ServerLimits.js"
import * as Serve from "./serve.js"
import * as Signing from "./signing.js"
import * as Upstreams from "./upstreams.js"
import type * as DirectoryModel from "../DirectoryModel.js"

const directory = Argument.String("directory").pipe(
  Argument.withDescription("Folder holding the skills: every folder below it with a SKILL.md is a skill; several may be given"),
  Argument.variadic({ min: 0 })
)

const root = Flag.String("root").pipe(
  Flag.withDescription("Another skills folder with its own prefix, as DIR=PREFIX (e.g. ./team=acme/team); repeatable"),
  Flag.atLeast(0)
)

const host = Flag.String("host").pipe(
  Flag.withDescription("Interface to listen on (HTTP) (default 127.0.0.1)"),
  Flag.withDefault("127.0.0.1")
)

// Checked here, so a port out of range is a usage error before anything loads (Node throws on it).
const portFlag = (name: string, description: string) =>
  Flag.Int(name).pipe(
    Flag.withDescription(description),
    Flag.filter((value) => value >= 0 && value <= 65535, () => "a TCP port from 0 to 65535")
  )

const port = portFlag("port", "TCP port to listen on (HTTP); 0 picks a free one (default 3000)").pipe(Flag.withDefault(3000))

const path = Flag.String("path").pipe(
  Flag.withDescription("HTTP path of the MCP endpoint (default /mcp)"),
  Flag.withDefault("/mcp"),
  Flag.map((value) => (value.startsWith("/") ? value : `/${value}`) as `/${string}`)
)

const stdio = Flag.Boolean("stdio").pipe(
  Flag.withDescription("Serve over stdin/stdout instead of HTTP"),
  Flag.withDefault(false)
)

const strict = Flag.Boolean("strict").pipe(
  Flag.withDescription("Refuse to start when any skill folder is invalid, instead of skipping it"),
  Flag.withDefault(false)
)

const lenient = Flag.Boolean("lenient").pipe(
  Flag.withDescription(
    "Serve each skill as found where its meaning is plain (a folder not named as the skill, frontmatter YAML refuses, a non-slug name, a description over 1024 characters), each repair said in one line; signed skills are never rewritten"
  ),
  Flag.withDefault(false)
)

const protocol = Flag.Literals("protocol", Serve.revisions).pipe(
  Flag.withDescription("Protocol revision to serve; repeat for several (default: all)"),
  Flag.atLeast(0)
)

const watch = Flag.Boolean("watch").pipe(
  Flag.withDescription(
    "Reload the skills when files under DIRECTORY change; an invalid edit keeps serving the skill's last good version"
  ),
  Flag.withDefault(false)
)

const watchCheck = Flag.Finite("watch-check").pipe(
  Flag.withDescription(
    "With --watch: seconds between stamp checks that catch changes no file event reported (network volumes, bind mounts); 0 turns them off (default 5)"
  ),
  Flag.filter((seconds) => seconds >= 0, () => "a number of seconds, 0 or more"),
  Flag.optional
)

const prefix = Flag.String("prefix").pipe(
  Flag.withDescription("Skill-path segments put before every skill, e.g. acme/tools"),
  Flag.optional
)

const allowOrigin = Flag.String("allow-origin").pipe(
  Flag.withDescription(
    "Browser Origin (e.g. https://app.example.com) allowed to call the HTTP listeners, MCP endpoint and metrics; repeatable (default: none but the listener's own, e.g. http://127.0.0.1:PORT)"
  ),
  Flag.atLeast(0)
)

const allowHost = Flag.String("allow-host").pipe(
  Flag.withDescription(
    "A name HTTP requests may give in Host (no port), besides localhost, 127.0.0.1, [::1] and --host; repeatable; '*' admits any. Without it a loopback --host admits only those (a DNS-rebinding page is refused), any other --host every Host"
  ),
  Flag.filterMap((name) => Option.fromUndefinedOr(RouterAdmission.normalizeName(name)), () => "a host name without a port (an IPv6 address in brackets), or '*'"),
  Flag.atLeast(0)
)

const redisUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "redis:" || url.protocol === "rediss:" ? Option.some(value) : Option.none()
  } catch {
    return Option.none()
  }
}

const redisFlag = (description: string) =>
  Flag.String("redis").pipe(Flag.withDescription(description), Flag.filterMap(redisUrl, () => "a redis:// or rediss:// URL"))

const redis = redisFlag(
  "Redis URL of the change bus shared with other replicas (redis://host:port): they follow each other's catalogue revision"
).pipe(Flag.optional)

const sizeFlag = (name: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(description),
    Flag.filterMap(
      (value) =>
        Option.filter(
          /^\s*\d+\s*$/.test(value) ? Option.some(ByteSize.bytes(BigInt(value.trim()))) : ByteSize.fromString(value),
          (size) => !ByteSize.isZero(size)
        ),
      () => "a positive size such as 4MiB, 512KiB or 1000000 (bytes)"
    ),
    Flag.optional
  )

const maxBodySize = sizeFlag(
  "max-body-size",
  "Largest HTTP request body (or stdio line) accepted, e.g. 4MiB, 512KiB, 1000000 bytes (default 4MiB)"
)

const onDemandAbove = sizeFlag(
  "on-demand-above",
  "Serve files larger than this (e.g. 1MiB) from disk on each read, verified against their digest, instead of holding them in memory"
)

const requireSigned = Flag.Boolean("require-signed").pipe(
  Flag.withDescription(
    "Serve only skills with a signature (see sign) that verifies against their files; others are left out with one line each"
  ),
  Flag.withDefault(false)
)

const tools = Flag.Boolean("tools").pipe(
  Flag.withDescription(
    "Also serve the catalogue as read-only tools (search_skills, load_skill, read_skill_file) for hosts without the Skills extension"
  ),
  Flag.withDefault(false)
)

const pageSize = Flag.Int("page-size").pipe(
  Flag.withDescription(`Entries per page of skills/list and directory reads (HTTP) (default ${ServerLimits.PageSize})`),
  Flag.filter((n) => n >= 1, () => "a positive integer"),
  Flag.withDefault(ServerLimits.PageSize)
)

const sessionCap = (name: string, description: string) =>
  Flag.Int(name).pipe(
    Flag.withDescription(description),
    Flag.filterMap((value) => Option.liftPredicate(value, (n) => n >= 1), () => "a positive integer"),
    Flag.optional
  )

const maxSessions = sessionCap(
  "max-sessions",
  "Most 2025-11-25 HTTP sessions held at once; past it initialize gets 503 with Retry-After (default 10000)"
)

const maxSessionsPerClient = sessionCap(
  "max-sessions-per-client",
  "Most 2025-11-25 HTTP sessions one remote address holds at once (default 1000)"
)

const metrics = Flag.Boolean("metrics").pipe(
  Flag.withDescription("Serve Prometheus metrics at GET /metrics on the MCP listener (HTTP)"),
  Flag.withDefault(false)
)

const metricsPort = portFlag(
  "metrics-port",
  "Serve Prometheus metrics at GET /metrics on this port of --host instead (HTTP or stdio); 0 picks a free one. It admits the Host and Origin the MCP endpoint admits (--allow-host, --allow-origin)"
).pipe(Flag.optional)

const logFormat = Flag.Literals("log-format", ["text", "json"] as const).pipe(
  Flag.withDescription("text, or json: one JSON object per line on stderr, trace and span ids included (default text)"),
  Flag.withDefault("text" as const)
)

const serve = Command.make(
  "serve",
  {
    directory, root, host, port, path, stdio, strict, lenient, watch, watchCheck, protocol, prefix, allowOrigin, allowHost, redis, pageSize,
    maxBodySize, onDemandAbove, maxSessions, maxSessionsPerClient, requireSigned, tools, metrics, metricsPort, logFormat, ...Upstreams.flags
  },
  Effect.fnUntraced(function*(input) {
    // In stdio mode stdout carries the protocol, so every human-readable line goes to stderr;
    // with --log-format json every line is a structured log record (on stderr).
    const log = input.logFormat === "json"
      ? (line: string) => Effect.logInfo(line)
      : input.stdio
      ? Console.error
      : Console.log
    const otlp = McpTelemetry.otlpConfigured(process.env)
    const otlpProtocol = Observability.otlpProtocol(process.env.OTEL_EXPORTER_OTLP_PROTOCOL)
    if (otlp && otlpProtocol === undefined) {
      return yield* fail(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got ${process.env.OTEL_EXPORTER_OTLP_PROTOCOL}`)
    }
    const observed = input.metrics || Option.isSome(input.metricsPort) || otlp
    const limit = Option.getOrUndefined(input.maxBodySize)
    const upstreams = Upstreams.parse(input)
    if (Result.isFailure(upstreams)) return yield* fail(upstreams.failure)
    const source = yield* Serve.openReported(rootsOf(input), { log })
    const watching = input.watch
      ? { log, sweep: Option.match(input.watchCheck, { onNone: () => ServerLimits.WatchSweep, onSome: sweepOf }) }
      : undefined
    const replication = { redis: Option.getOrUndefined(input.redis), log }
    const admitted = { allowedOrigins: input.allowOrigin, allowedHosts: input.allowHost }
    const server = Upstreams.serving(upstreams.success, { log }, (followed) =>
      input.stdio
        ? Layer.effectDiscard(Effect.andThen(Heap.compact, Console.error(`serving on stdio`))).pipe(
          Layer.provide(Serve.stdio(source, input.protocol, watching, replication, limit, input.requireSigned, followed, input.tools))
        )
        : Serve.http(source, {
          ...admitted,
          host: input.host,
          port: input.port,
          path: input.path,
          protocols: input.protocol,
          watch: watching,
          replication,
          pageSize: input.pageSize,
          maxBodySize: limit,
          sessions: {
            maxSessions: Option.getOrUndefined(input.maxSessions),
            maxSessionsPerClient: Option.getOrUndefined(input.maxSessionsPerClient)
          },
          requireSigned: input.requireSigned,
          tools: input.tools,
          upstreams: followed,
          metrics: input.metrics,
          // What loading the catalogue left behind goes before anyone is told to come.
          onListening: (url) => Effect.andThen(Heap.compact, log(`listening ${url}`))
        }))
    const metricsServer = Option.match(input.metricsPort, {
      onNone: () => Layer.empty,
      onSome: (port) =>
        Serve.metricsListener({ ...admitted, host: input.host, port, onListening: (url) => log(`metrics at ${url}`) })
    })
    const observability = Layer.mergeAll(
      // Spans only where they go somewhere: without an OTLP endpoint nothing would export them.
      observed ? Observability.layer({ spans: otlp }) : Layer.empty,
      otlp
        ? Observability.layerOtlp({ protocol: otlpProtocol, serviceName: Serve.serverInfo.name, serviceVersion: Serve.serverInfo.version })
        : Layer.empty
    )
    // Over stdio the transport ends by itself once input has ended and every request has been
    // answered (StdioFraming), which ends the program: the other layers are provided to the
    // server (built before it, in its fiber), not merged with it (built beside it, which the end
    // of the transport would not end).
    return yield* Layer.launch(server.pipe(Layer.provide(metricsServer), Layer.provide(observability)))
  }, (effect) =>
    // Expected failures get one readable line and exit status 1, not a stack trace.
    Effect.catchTags(effect, {
      SourceDirectoryError: (error) => fail(error.message),
      InvalidSkills: (error) => fail(error.message),
      RegistrationError: (error) => fail(error.message),
      UriCollision: (error) => fail(error.message),
      UpstreamError: (error) => fail(error.message),
      AdmitListError: (error) => fail(error.message),
      ListenError: (error) => fail(error.message)
    }), // The JSON logger is in place before anything logs.
  (effect, input) => input.logFormat === "json" ? Effect.provide(effect, Observability.layerJsonLogs) : effect)
).pipe(
  // Every rule between options is checked here, before a file is read.
  Command.validate((input) => {
    if (rootsOf(input).length === 0 && input.upstream.length === 0 && input.upstreamStdio.length === 0) {
      return CliReport.usage("give at least one skills folder (DIRECTORY or --root DIR=PREFIX) or upstream (--upstream PREFIX=URL)")
    }
    if (Option.isSome(input.watchCheck) && !input.watch) return CliReport.usage("--watch-check needs --watch")
    if (input.metrics && input.stdio) return CliReport.usage("--metrics needs the HTTP listener; with --stdio use --metrics-port")
    const limit = Option.getOrUndefined(input.maxBodySize)
    if (input.stdio && limit !== undefined && limit > ServerLimits.LargestLineSize) {
      return CliReport.usage("--max-body-size is at most 16MiB with --stdio (the longest line effect's stdio reader takes)")
    }
    return Effect.void
  }),
  Command.withDescription("Serve every skill under DIRECTORY over MCP (Skills extension, SEP-2640)"),
  Command.withExamples([
    { command: "mcp-skills-server serve ./skills", description: "HTTP on http://127.0.0.1:3000/mcp" },
    { command: "mcp-skills-server serve ./skills --port 0 --strict", description: "a free port; refuse invalid skills" },
    { command: "mcp-skills-server serve ./repo --lenient", description: "a cloned repository, each skill served as found" },
    { command: "mcp-skills-server serve ./skills --stdio", description: "stdio, for clients that spawn the server" },
    { command: "mcp-skills-server serve ./skills --watch", description: "reload while you edit the skills" },
    { command: "mcp-skills-server serve ./skills --root ./team=acme/team", description: "two folders, the second under acme/team" },
    { command: "mcp-skills-server serve ./skills --watch --redis redis://127.0.0.1:6379", description: "one replica of several" },
    {
      command: "mcp-skills-server serve ./skills --host 0.0.0.0 --allow-host skills.example.com --metrics-port 9464",
      description: "every interface, answering only that name (and loopback); metrics on their own port"
    },
    {
      command: "mcp-skills-server serve --upstream team=https://skills.team.example/mcp --upstream-stdio docs=./docs-server",
      description: "a gateway: other servers' skills under skill://team/ and skill://docs/, every file verified"
    }
  ])
)

const segments = (value: string) => value.split("/").filter((s) => s.length > 0)

/** The folders `serve` was given: DIRECTORY arguments (under --prefix) and --root DIR=PREFIX. */
const rootsOf = (input: {
  readonly directory: ReadonlyArray<string>
  readonly root: ReadonlyArray<string>
  readonly prefix: Option.Option<string>
  readonly strict: boolean
  readonly lenient: boolean
  readonly onDemandAbove: Option.Option<ByteSize.ByteSize>
}): Array<DirectoryModel.Root> => {
  const common = {
    strict: input.strict,
    lenient: input.lenient,
    onDemandAbove: Option.getOrUndefined(Option.map(input.onDemandAbove, (size) => Number(size)))
  }
  const prefixed = Option.getOrUndefined(Option.map(input.prefix, segments))
  return [
    ...input.directory.map((path) => ({ path, ...common, prefix: prefixed })),
    ...input.root.map((spec) => {
      const at = spec.lastIndexOf("=")
      return at === -1 ? { path: spec, ...common } : { path: spec.slice(0, at), ...common, prefix: segments(spec.slice(at + 1)) }
    })
  ]
}

const sweepOf = (seconds: number) => seconds > 0 ? `${seconds} seconds` as const : false as const

const check = Command.make(
  "check",
  {
    directory: Argument.String("directory").pipe(Argument.withDescription("Folder (or repository) to check")),
    lenient,
    json: Flag.Boolean("json").pipe(Flag.withDescription("Print the findings and counts as JSON (for CI)"), Flag.withDefault(false))
  },
  (input) =>
    Check.run(input.directory, input, fail).pipe(Effect.catchTag("SourceDirectoryError", (error) => fail(error.message)))
).pipe(
  Command.withDescription(
    "Say what serve would serve, repair and refuse under DIRECTORY, and where each skill was found: one line per finding, then the count of each kind; exit status 0 only when nothing is refused"
  ),
  Command.withExamples([
    { command: "mcp-skills-server check ./repo", description: "what serve ./repo would serve, and why not the rest" },
    { command: "mcp-skills-server check ./repo --lenient --json", description: "the same with repairs, as JSON for CI" }
  ])
)

const reload = Command.make(
  "reload",
  { redis: redisFlag("Redis URL of the replicas' change bus (redis://host:port)") },
  (input) => Effect.catchTag(Replication.reloadAll(input.redis), "BusError", (error) => fail(error.message))
).pipe(
  Command.withDescription("Ask every replica on the change bus to reload its skills (after a deploy)"),
  Command.withExamples([{ command: "mcp-skills-server reload --redis redis://127.0.0.1:6379", description: "every replica reloads" }])
)

const keygen = Command.make(
  "keygen",
  {
    out: Flag.String("out").pipe(
      Flag.withDescription("Write OUT.private.pem and OUT.public.pem (default mcp-skills-signing); never replaces a file"),
      Flag.withDefault("mcp-skills-signing")
    )
  },
  (input) =>
    Signing.keygen(input.out).pipe(
      Effect.flatMap(({ privatePath, publicPath, keyId }) =>
        Console.log(`wrote ${privatePath} (private: keep it offline) and ${publicPath}\nkey ${keyId}`)
      ),
      Effect.catchTag("SigningFailed", (error) => fail(error.message))
    )
).pipe(
  Command.withDescription("Make an ed25519 key pair for signing skills (PKCS#8 and SPKI PEM)"),
  Command.withExamples([{ command: "mcp-skills-server keygen --out ~/keys/acme", description: "~/keys/acme.private.pem and .public.pem" }])
)

const sign = Command.make(
  "sign",
  {
    directory: Argument.String("directory").pipe(Argument.withDescription("Folder holding the skills to sign")),
    key: Flag.String("key").pipe(Flag.withDescription("The private key (PKCS#8 PEM, from keygen)"))
  },
  (input) =>
    Signing.sign(input.directory, input.key).pipe(
      Effect.flatMap(({ keyId, signed }) =>
        Effect.gen(function*() {
          for (const skill of signed) {
            yield* Console.log(`signed ${skill.uri} (${skill.directory}/${DirectorySource.SignaturesFileName})${skill.replaced ? ", replacing this key's earlier signature" : ""}`)
          }
          yield* Console.log(`${signed.length} skill${signed.length === 1 ? "" : "s"} signed by ${keyId}`)
        })
      ),
      Effect.catchTags({
        SigningFailed: (error) => fail(error.message),
        SourceDirectoryError: (error) => fail(error.message),
        InvalidSkills: (error) => fail(`nothing signed: ${error.message}`),
        RegistrationError: (error) => fail(`nothing signed: ${error.message}`)
      })
    )
).pipe(
  Command.withDescription(
    "Sign every skill under DIRECTORY: each skill's signature goes in its folder's .mcp-skills-signatures.json (never served, in no manifest), beside other keys' signatures"
  ),
  Command.withExamples([{ command: "mcp-skills-server sign ./skills --key ~/keys/acme.private.pem", description: "sign, then serve ./skills" }])
)

const fail = CliReport.fail("mcp-skills-server")

Command.make("mcp-skills-server").pipe(
  Command.withDescription("MCP server for Agent Skills (io.modelcontextprotocol/skills)"),
  Command.withSubcommands([serve, check, reload, keygen, sign, Upstreams.inventory]),
  Command.withExamples([
    { command: "mcp-skills-server serve ./skills", description: "serve a folder of skills on http://127.0.0.1:3000/mcp" },
    { command: "mcp-skills-server serve --help", description: "every option of serve" }
  ]),
  Command.run({ version: Serve.serverInfo.version }),
  Effect.provide([CliReport.layerPresenter, NodeServices.layer]),
  CliReport.runMain(NodeRuntime.runMain)
)
