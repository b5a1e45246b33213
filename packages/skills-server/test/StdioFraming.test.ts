/**
 * stdio under hostile input: malformed lines are answered (-32700 / -32600) and never stop the
 * valid ones, long lines are skipped at the limit, and end of input right after a request still
 * answers it, then ends the transport. In process (both revisions) and through `serve --stdio`.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import { McpServer } from "effect/ai"
import { ServerLimits, SkillsServer, StdioFraming } from "../src/index.js"
import { examples, spawnBin, stop, waitFor } from "./support/cli-server.js"
import { catalogue } from "./support/catalogue.js"
import { deepRequest } from "./support/session.js"
import { adapters, clientInfo } from "./support/wire.js"
import type { Revision } from "./support/wire.js"

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": clientInfo
}

const request = (revision: Revision, id: string | number, method: string, params: Record<string, unknown> = {}) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method,
    params: revision === "2026-07-28" ? { ...params, _meta: meta } : params
  })

/** What a client of `revision` writes first (2025-11-25 initializes; 2026-07-28 needs nothing). */
const opening = (revision: Revision) =>
  revision === "2025-11-25"
    ? [
      request(revision, "init", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
    ]
    : []

const encoder = new TextEncoder()

/**
 * Runs a stdio server in process, writes `chunks` to its stdin, ends stdin, and waits for the
 * transport to end on its own (effect ends it once every request has been answered). Returns
 * every message written to stdout.
 */
const session = (chunks: ReadonlyArray<string | Uint8Array>, options?: StdioFraming.Options) =>
  Effect.gen(function*() {
    const input = yield* Queue.unbounded<Uint8Array, Cause.Done>()
    let written = ""
    const decoder = new TextDecoder()
    const stdio = Stdio.layerTest({
      stdin: Stream.fromQueue(input),
      stdout: () =>
        Sink.forEach((chunk: string | Uint8Array) =>
          Effect.sync(() => {
            written += typeof chunk === "string" ? chunk : decoder.decode(chunk)
          })
        )
    })
    const server = McpServer.layerStdio({
      name: "framing-test",
      version: "1.0.0",
      protocols: adapters(),
      registrations: SkillsServer.layer({ skills: catalogue })
    }).pipe(Layer.provide(StdioFraming.layer(options)), Layer.provide(stdio))
    const fiber = yield* Effect.forkChild(Layer.launch(server))
    for (const chunk of chunks) yield* Queue.offer(input, typeof chunk === "string" ? encoder.encode(chunk) : chunk)
    yield* Queue.end(input)
    const exit = yield* Fiber.await(fiber).pipe(
      Effect.timeoutOrElse({
        duration: "30 seconds",
        orElse: () => Effect.die(new Error(`the transport did not end after end of input; stdout:\n${written}`))
      })
    )
    assert.isTrue(exit._tag === "Failure" && Cause.hasInterruptsOnly(exit.cause), `transport ended with ${String(exit)}`)
    assert.isTrue(written === "" || written.endsWith("\n"), "every message ends its line")
    return written.split("\n").filter((line) => line.length > 0).map((line) => JSON.parse(line))
  })

const answerTo = (messages: ReadonlyArray<any>, id: string | number) => {
  const found = messages.filter((message) => message.id === id && !("method" in message))
  assert.strictEqual(found.length, 1, `exactly one answer to ${JSON.stringify(id)}: ${JSON.stringify(messages)}`)
  return found[0]
}

const refusals = (messages: ReadonlyArray<any>, code: number) =>
  messages.filter((message) => message.error?.code === code)

describe("StdioFraming", () => {
  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    describe(revision, () => {
      it.live("garbage mixed with valid lines: every valid id answered, every bad line refused once", () =>
        Effect.gen(function*() {
          const valid = (id: string) => request(revision, id, "skills/list")
          const split = valid("split")
          const invalidUtf8 = new Uint8Array([0xff, 0xfe, 0x00, 0x7b, 0x0a])
          const messages = yield* session([
            [...opening(revision), valid("a"), "garbage", valid("b"), "{\"jsonrpc\":", valid("c")].join("\n") + "\n",
            // Not JSON-RPC, though JSON: answered -32600 (with the id when it is a valid one).
            "42\nnull\n{}\n" + JSON.stringify({ jsonrpc: "2.0", id: "bad-method", method: 5 }) + "\n" +
            JSON.stringify({ jsonrpc: "2.0", id: { nested: true }, method: "ping" }) + "\n",
            // A valid line split across three reads, CRLF endings, blank lines, bytes that are not UTF-8.
            split.slice(0, 10),
            split.slice(10, 20),
            split.slice(20) + "\r\n\n   \n",
            invalidUtf8,
            "\u0000\u0001binary\n" + valid("d") + "\r\n",
            // The last request, with no newline before end of input.
            valid("e")
          ])
          for (const id of ["a", "b", "c", "split", "d", "e"]) {
            assert.isArray(answerTo(messages, id).result.skills, id)
          }
          if (revision === "2025-11-25") assert.isObject(answerTo(messages, "init").result.capabilities)
          const parseErrors = refusals(messages, -32700)
          assert.strictEqual(parseErrors.length, 4) // garbage, {"jsonrpc":, the non-UTF-8 line, binary
          for (const error of parseErrors) assert.deepStrictEqual(error, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } })
          const invalid = refusals(messages, -32600)
          assert.deepStrictEqual(invalid.map((message) => message.id), [null, null, null, "bad-method", null])
        }))

      it.live("a message nested deeper than 128 levels is answered -32600 with its id; at the bound it is served", () =>
        Effect.gen(function*() {
          const messages = yield* session([
            [
              ...opening(revision),
              deepRequest(revision, "at", 128),
              deepRequest(revision, "over", 129),
              deepRequest(revision, "deep", 5_000),
              request(revision, "after", "skills/list")
            ].join("\n") + "\n"
          ])
          assert.isArray(answerTo(messages, "at").result.skills)
          for (const id of ["over", "deep"]) {
            assert.deepStrictEqual(answerTo(messages, id).error, { code: -32600, message: "Invalid Request: nested deeper than 128 levels" })
          }
          assert.isArray(answerTo(messages, "after").result.skills)
        }))

      it.live("end of input right after a request still answers it, then the transport ends", () =>
        Effect.gen(function*() {
          const withNewline = yield* session([...opening(revision), request(revision, 1, "skills/list")].map((line) => line + "\n"))
          assert.isArray(answerTo(withNewline, 1).result.skills)
          const without = yield* session([[...opening(revision), request(revision, 2, "skills/list")].join("\n")])
          assert.isArray(answerTo(without, 2).result.skills)
        }))
    })
  }

  // Any mix of requests and garbage lines, cut into reads anywhere (inside a line, inside a UTF-8
  // character), ending with or without a newline: each request answered once, each non-blank
  // garbage line refused once with id null, nothing else written.
  const Mix = Arbitrary.all({
    modern: Arbitrary.schema(Schema.Boolean),
    lines: Arbitrary.array(
      Arbitrary.all({ request: Arbitrary.schema(Schema.Boolean), garbage: Arbitrary.schema(Schema.String) }),
      { minLength: 1, maxLength: 10 }
    ),
    cuts: Arbitrary.array(Arbitrary.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))), { maxLength: 6 }),
    trailingNewline: Arbitrary.schema(Schema.Boolean)
  })

  it.live.prop("every request among arbitrary garbage is answered, however the input is cut", [Mix], ([mix]) =>
    Effect.gen(function*() {
      const revision: Revision = mix.modern ? "2026-07-28" : "2025-11-25"
      const lines = mix.lines.map((line, i) =>
        line.request ? request(revision, `r${i}`, "skills/list") : line.garbage.replaceAll("\n", " ")
      )
      const text = [...opening(revision), ...lines].join("\n") + (mix.trailingNewline ? "\n" : "")
      const bytes = encoder.encode(text)
      const cuts = [...new Set(mix.cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)
      const chunks = [0, ...cuts].map((start, i) => bytes.subarray(start, cuts[i] ?? bytes.length)).filter((c) => c.length > 0)
      const messages = yield* session(chunks)
      const requests = mix.lines.flatMap((line, i) => line.request ? [`r${i}`] : [])
      for (const id of requests) assert.isArray(answerTo(messages, id).result.skills)
      const garbage = mix.lines.filter((line, i) => !line.request && !/^[ \t\r]*$/.test(lines[i]!))
      const refused = messages.filter((message) => message.error !== undefined)
      assert.strictEqual(refused.length, garbage.length, JSON.stringify({ lines, refused }))
      for (const message of refused) assert.strictEqual(message.id, null)
    }), { timeout: 120_000, arbitrary: { runs: 30 } })

  it.live("end of input with an open subscriptions/listen stream ends the transport", () =>
    Effect.gen(function*() {
      const messages = yield* session([
        request("2026-07-28", "listen", "subscriptions/listen", { notifications: { resourcesListChanged: true } }) + "\n" +
        request("2026-07-28", "after", "skills/list")
      ])
      assert.isArray(answerTo(messages, "after").result.skills)
      assert.isTrue(messages.some((message) => message.method === "notifications/subscriptions/acknowledged"))
    }))

  it.live("a line at the limit is read, one byte more is refused and skipped, however it arrives", () =>
    Effect.gen(function*() {
      const limit = 1024
      const padded = (id: string, size: number) => {
        const line = request("2026-07-28", id, "skills/list")
        return line + " ".repeat(size - line.length)
      }
      const huge = "x".repeat(64 * 1024)
      const messages = yield* session([
        padded("at", limit) + "\n",
        padded("over", limit + 1) + "\n",
        // 1 MiB without a newline, in 16 reads: refused once, where it ends.
        ...Array.from({ length: 16 }, () => huge),
        "\n" + request("2026-07-28", "next", "skills/list") + "\n"
      ], { maxLineSize: limit })
      assert.isArray(answerTo(messages, "at").result.skills)
      assert.isFalse(messages.some((message) => message.id === "over"))
      const refused = refusals(messages, -32600)
      assert.strictEqual(refused.length, 2)
      for (const message of refused) assert.include(message.error.message, `longer than ${limit} bytes`)
      assert.isArray(answerTo(messages, "next").result.skills)
    }))
})

describe("ServerLimits.LargestLineSize", () => {
  it.live("a line of the largest limit reaches effect's reader and is answered; a larger limit is refused", () =>
    Effect.gen(function*() {
      const largest = Number(ServerLimits.LargestLineSize)
      assert.strictEqual(largest, 16 * 1024 * 1024)
      const line = request("2026-07-28", "big", "skills/list")
      const messages = yield* session([line + " ".repeat(largest - line.length) + "\n"], { maxLineSize: largest })
      assert.isArray(answerTo(messages, "big").result.skills)
      assert.throws(() => StdioFraming.layer({ maxLineSize: largest + 1 }), /between 1 byte and 16 MiB/)
      assert.throws(() => StdioFraming.layer({ maxLineSize: 0 }), /between 1 byte and 16 MiB/)
    }))
})

describe("mcp-skills-server serve --stdio under hostile input", () => {
  it.live("echo '<request>' | serve --stdio prints the answer, then exits 0", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serve", examples, "--stdio"])
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(running)))
      running.child.stdin!.end(request("2026-07-28", 1, "skills/list") + "\n")
      expect(yield* Effect.promise(() => running.exited)).toBe(0)
      const [answer] = running.stdout().trim().split("\n").map((line) => JSON.parse(line))
      expect(answer.id).toBe(1)
      expect(answer.result.skills.length).toBe(6)
    }))

  it.live("--max-body-size over 16MiB with --stdio is one readable error", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serve", examples, "--stdio", "--max-body-size", "17MiB"])
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(running)))
      expect(yield* Effect.promise(() => running.exited)).toBe(1)
      expect(running.stderr()).toBe(
        "mcp-skills-server: --max-body-size is at most 16MiB with --stdio (the longest line effect's stdio reader takes); run 'mcp-skills-server serve --help'\n"
      )
      expect(running.stdout()).toBe("")
    }))

  it.live("malformed lines: a -32700 answer on stdout and one line each on stderr, no stack trace", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serve", examples, "--stdio"])
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(running)))
      yield* Effect.promise(() => waitFor(running, "stderr", /^serving on stdio$/m))
      running.child.stdin!.write(
        ["not json", request("2025-11-25", "init", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo }), "{{{", request("2026-07-28", 2, "skills/list")]
          .join("\n") + "\n"
      )
      yield* Effect.promise(() => waitFor(running, "stdout", /"id":2/))
      running.child.stdin!.end()
      expect(yield* Effect.promise(() => running.exited)).toBe(0)
      const messages = running.stdout().trim().split("\n").map((line) => JSON.parse(line))
      expect(messages.filter((message) => message.error?.code === -32700)).toHaveLength(2)
      expect(messages.some((message) => message.id === "init" && message.result !== undefined)).toBe(true)
      expect(messages.some((message) => message.id === 2 && message.result !== undefined)).toBe(true)
      const warnings = running.stderr().split("\n").filter((line) => line.includes("is not JSON"))
      expect(warnings).toHaveLength(2)
      expect(running.stderr()).not.toMatch(/^\s+at /m)
    }))
})
