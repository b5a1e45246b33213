#!/usr/bin/env node
/**
 * `mcp-skills-server serve DIR`: serves every skill under a folder over MCP (streamable HTTP, or
 * stdio with `--stdio`), on protocol revisions 2026-07-28 and 2025-11-25.
 *
 * @since 0.1.0
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import { Argument, Command, Flag } from "effect/cli"
import type * as DirectorySource from "../DirectorySource.js"
import * as Serve from "./serve.js"

const directory = Argument.String("directory").pipe(
  Argument.withDescription("Folder holding the skills: every folder below it with a SKILL.md is a skill; several may be given"),
  Argument.variadic({ min: 0 })
)

const root = Flag.String("root").pipe(
  Flag.withDescription("Another skills folder with its own prefix, as DIR=PREFIX (e.g. ./team=acme/team); repeatable"),
  Flag.atLeast(0)
)

const host = Flag.String("host").pipe(
  Flag.withDescription("Interface to listen on (HTTP)"),
  Flag.withDefault("127.0.0.1")
)

const port = Flag.Int("port").pipe(
  Flag.withDescription("TCP port to listen on (HTTP); 0 picks a free one"),
  Flag.withDefault(3000)
)

const path = Flag.String("path").pipe(
  Flag.withDescription("HTTP path of the MCP endpoint"),
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
    "With --watch: seconds between stamp checks that catch changes no file event reported (network volumes, bind mounts); 0 turns them off"
  ),
  Flag.withDefault(5)
)

const prefix = Flag.String("prefix").pipe(
  Flag.withDescription("Skill-path segments put before every skill, e.g. acme/tools"),
  Flag.optional
)

const allowOrigin = Flag.String("allow-origin").pipe(
  Flag.withDescription("Browser Origin allowed to call the HTTP endpoint; repeatable (default: none)"),
  Flag.atLeast(0)
)

const serve = Command.make(
  "serve",
  { directory, root, host, port, path, stdio, strict, watch, watchCheck, protocol, prefix, allowOrigin },
  Effect.fnUntraced(function*(input) {
    // In stdio mode stdout carries the protocol, so every human-readable line goes to stderr.
    const log = input.stdio ? Console.error : Console.log
    const segments = (value: string) => value.split("/").filter((s) => s.length > 0)
    const prefixed = input.prefix._tag === "Some" ? segments(input.prefix.value) : undefined
    const roots: Array<DirectorySource.Root> = [
      ...input.directory.map((path) => ({ path, strict: input.strict, prefix: prefixed })),
      ...input.root.map((spec) => {
        const at = spec.lastIndexOf("=")
        return at === -1
          ? { path: spec, strict: input.strict }
          : { path: spec.slice(0, at), strict: input.strict, prefix: segments(spec.slice(at + 1)) }
      })
    ]
    if (roots.length === 0) return yield* fail("give at least one skills folder (DIRECTORY or --root DIR=PREFIX)")
    const source = yield* Serve.openReported(roots, { log })
    const watching = input.watch
      ? { log, sweep: input.watchCheck > 0 ? `${input.watchCheck} seconds` as const : false as const }
      : undefined
    const server = input.stdio
      ? Layer.effectDiscard(Console.error(`serving on stdio`)).pipe(
        Layer.provide(Serve.stdio(source, input.protocol, watching))
      )
      : Serve.http(source, {
        host: input.host,
        port: input.port,
        path: input.path,
        protocols: input.protocol,
        allowedOrigins: input.allowOrigin,
        watch: watching,
        onListening: (url) => log(`listening ${url}`)
      })
    // A stdio server's client closing stdin means it is done: exit cleanly rather than wait to be killed.
    return yield* input.stdio ? Effect.raceFirst(Layer.launch(server), Serve.stdinClosed) : Layer.launch(server)
  }, (effect) =>
    // Expected failures get one readable line and exit status 1, not a stack trace.
    Effect.catchTags(effect, {
      SourceDirectoryError: (error) => fail(error.message),
      InvalidSkills: (error) => fail(error.message),
      RegistrationError: (error) => fail(error.message),
      UriCollision: (error) => fail(error.message),
      ServeError: (error) => fail(`cannot listen: ${error.message}`)
    }))
).pipe(
  Command.withDescription("Serve every skill under DIRECTORY over MCP (Skills extension, SEP-2640)"),
  Command.withExamples([
    { command: "mcp-skills-server serve ./skills", description: "HTTP on http://127.0.0.1:3000/mcp" },
    { command: "mcp-skills-server serve ./skills --port 0 --strict", description: "a free port; refuse invalid skills" },
    { command: "mcp-skills-server serve ./skills --stdio", description: "stdio, for clients that spawn the server" },
    { command: "mcp-skills-server serve ./skills --watch", description: "reload while you edit the skills" },
    { command: "mcp-skills-server serve ./skills --root ./team=acme/team", description: "two folders, the second under acme/team" }
  ])
)

const fail = (message: string) =>
  Effect.andThen(Console.error(`mcp-skills-server: ${message}`), Effect.sync(() => {
    process.exitCode = 1
  }))

Command.make("mcp-skills-server").pipe(
  Command.withDescription("MCP server for Agent Skills (io.modelcontextprotocol/skills)"),
  Command.withSubcommands([serve]),
  Command.run({ version: Serve.serverInfo.version }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({
    // Ctrl-C or SIGTERM is how a server is meant to stop: exit status 0, not 130.
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)
