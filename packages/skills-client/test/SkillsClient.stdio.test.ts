// A stdio server that cannot start or that stops is reported as itself: the command that could not
// start and why (ENOENT, EACCES), or how the server ended (its exit code or signal) and the end of
// its stderr, within `ClientLimits`' bounds; never "MCP server closed stdout" or "write EPIPE".
import { assert, describe, it } from "@effect/vitest"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as McpClient from "effect/ai/McpClient"
import { existsSync } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { ClientLimits, SkillCache, SkillsClient, SkillsClientError } from "@mcp-skills/client"
import { makeFixture } from "./support/fixture.js"
import { serverCli, tempDir, versions } from "./support/helpers.js"

const dying = Path.join(import.meta.dirname, "fixtures/dying-stdio-server.mjs")

/** What `listSkills` over a client of `command args` fails with (the layer's failure included). */
const failure = (command: string, args: ReadonlyArray<string>, protocolVersion: McpClient.ProtocolVersion | "auto" = "auto") =>
  SkillsClient.SkillsClient.use((client) => client.listSkills()).pipe(
    Effect.provide(
      SkillsClient.layerStdio({ command, args, protocolVersion }).pipe(Layer.provide([NodeServices.layer, SkillCache.layerMemory()]))
    ),
    Effect.exit,
    Effect.map((exit) => {
      assert.isTrue(Exit.isFailure(exit), "the listing should have failed")
      return Exit.isFailure(exit) ? exit.cause.reasons.map((reason) => reason._tag === "Fail" ? reason.error : reason)[0] : undefined
    })
  )

const stopped = (error: unknown) => {
  assert.instanceOf(error, SkillsClientError.ServerStopped)
  return error as SkillsClientError.ServerStopped
}

const sh = (script: string) => ["sh", ["-c", script]] as const

describe.concurrent("a stdio server that cannot start", () => {
  it.live("a missing command: ServerNotStarted naming it, ENOENT", () =>
    Effect.gen(function*() {
      const error = yield* failure("mcp-skills-no-such-command", [])
      assert.instanceOf(error, SkillsClientError.ServerNotStarted)
      assert.deepInclude(error, { command: "mcp-skills-no-such-command", code: "ENOENT" })
      assert.strictEqual(
        (error as SkillsClientError.ServerNotStarted).message,
        "cannot start the server command mcp-skills-no-such-command: not found (ENOENT)"
      )
    }))

  it.live("a file that may not be run: ServerNotStarted, EACCES", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("stdio-")
      const file = Path.join(dir, "server.sh")
      yield* Effect.promise(() => Fs.writeFile(file, "#!/bin/sh\n", { mode: 0o644 }))
      const error = yield* failure(file, [])
      assert.instanceOf(error, SkillsClientError.ServerNotStarted)
      assert.deepInclude(error, { command: file, code: "EACCES" })
    }))

  it.live("a working folder that is not there: ServerNotStarted naming it", () =>
    Effect.gen(function*() {
      const exit = yield* SkillsClient.SkillsClient.use((client) => client.listSkills()).pipe(
        Effect.provide(
          SkillsClient.layerStdio({ command: process.execPath, cwd: "/nonexistent/mcp-skills" }).pipe(Layer.provide(NodeServices.layer))
        ),
        Effect.flip
      )
      assert.instanceOf(exit, SkillsClientError.ServerNotStarted)
      assert.include(exit.message, "/nonexistent/mcp-skills")
    }))
})

describe.concurrent("a stdio server that stops", () => {
  it.live("`false` at the handshake: its exit code, not write EPIPE", () =>
    Effect.gen(function*() {
      const error = stopped(yield* failure("false", []))
      assert.deepStrictEqual(error.exit, { _tag: "Exited", code: 1 })
      assert.deepStrictEqual(error.stderr, [])
      assert.strictEqual(error.message, "the server false exited with code 1 and wrote nothing to stderr")
    }))

  it.live("one that writes to stderr and exits 3: the code and its last lines, one line first", () =>
    Effect.gen(function*() {
      const [command, args] = sh("echo 'loading config' >&2; echo 'Error: \\033[31mno such file\\033[0m: skills.yaml' >&2; exit 3")
      const error = stopped(yield* failure(command, args))
      assert.deepStrictEqual(error.exit, { _tag: "Exited", code: 3 })
      // Terminal colours are taken out: the lines go into a message.
      assert.deepStrictEqual(error.stderr, ["loading config", "Error: no such file: skills.yaml"])
      assert.strictEqual(
        error.message,
        `the server ${command} -c ${args[1]} exited with code 3; its stderr ends with:\n  loading config\n  Error: no such file: skills.yaml`
      )
    }))

  it.live("one killed by a signal: the signal", () =>
    Effect.gen(function*() {
      const error = stopped(yield* failure(...sh("echo dying >&2; kill -9 $$")))
      assert.deepStrictEqual(error.exit, { _tag: "Killed", signal: "SIGKILL" })
      assert.deepStrictEqual(error.stderr, ["dying"])
    }))

  it.live(`its stderr: the last ${ClientLimits.StderrLines} lines of its last ${ClientLimits.StderrBytes} bytes`, () =>
    Effect.gen(function*() {
      // More lines than kept, and then one line longer than the bytes kept, then two short ones.
      const many = stopped(yield* failure(...sh(`for i in $(seq 1 ${ClientLimits.StderrLines + 15}); do echo "line $i" >&2; done; exit 2`)))
      assert.deepStrictEqual(many.stderr, Array.from({ length: ClientLimits.StderrLines }, (_, i) => `line ${i + 16}`))
      const long = stopped(
        yield* failure(...sh(`head -c ${ClientLimits.StderrBytes * 4} /dev/zero | tr '\\0' x >&2; echo >&2; echo last >&2; echo words >&2; exit 2`))
      )
      // The cut first line is dropped: what is kept is whole lines only.
      assert.deepStrictEqual(long.stderr, ["last", "words"])
    }))

  it.live(`one that closes its output and keeps running: reported as such after ${ClientLimits.ExitWait}`, () =>
    Effect.gen(function*() {
      const error = stopped(yield* failure(...sh("exec 1>&-; echo 'closed stdout' >&2; exec sleep 30")))
      assert.deepStrictEqual(error.exit, { _tag: "Running" })
      assert.deepStrictEqual(error.stderr, ["closed stdout"])
      assert.include(error.message, "closed its output but did not exit")
    }))

  it.live("one that exits on the first request: the handshake fails with its code", () =>
    Effect.gen(function*() {
      const error = stopped(yield* failure(process.execPath, [dying, "*", "4"]))
      assert.deepStrictEqual(error.exit, { _tag: "Exited", code: 4 })
      assert.match(error.stderr[0]!, /^fatal: giving up on (server\/discover|initialize)$/)
    }))
})

describe.skipIf(!existsSync(serverCli)).concurrent("a stdio server that exits after the handshake", () => {
  for (const protocolVersion of versions) {
    it.live(`the next request fails with its code and stderr, typed (${protocolVersion})`, () =>
      Effect.gen(function*() {
        const dir = yield* makeFixture
        const error = stopped(yield* failure(process.execPath, [dying, "skills/list", "5", serverCli, dir], protocolVersion))
        assert.deepStrictEqual(error.exit, { _tag: "Exited", code: 5 })
        assert.deepStrictEqual(error.stderr, ["fatal: giving up on skills/list"])
      }))
  }

  it.live("effect's own McpClient calls carry it inside McpClientError", () =>
    Effect.gen(function*() {
      const dir = yield* makeFixture
      const error = yield* SkillsClient.SkillsClient.use((client) => Effect.flip(client.mcp.readResource({ uri: "skill://x/SKILL.md" }))).pipe(
        Effect.provide(
          SkillsClient.layerStdio({ command: process.execPath, args: [dying, "resources/read", "6", serverCli, dir] }).pipe(
            Layer.provide(NodeServices.layer)
          )
        )
      )
      assert.strictEqual(error.reason._tag, "TransportError")
      const cause = stopped(error.reason._tag === "TransportError" ? error.reason.cause : undefined)
      assert.deepStrictEqual(cause.exit, { _tag: "Exited", code: 6 })
      assert.include(error.message, "exited with code 6")
    }))
})
