/**
 * Line framing in front of effect's stdio MCP transport (`McpServer.layerStdio`): every line a
 * client writes gets an answer, and nothing a client writes can stop the server reading.
 *
 * effect 4.1.0 decodes standard input as newline-delimited JSON and fails the whole read on a line
 * that is not JSON: it logs a stack trace (on stdout, where the protocol runs), drops every other
 * request of the same read, and resumes reading half a second later (so garbage costs seconds per
 * megabyte). Valid JSON that is no JSON-RPC message is dropped without an answer. This layer wraps
 * the `Stdio` service so effect only ever reads well-formed messages:
 *
 * - a line that is not JSON is answered `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,...}}`
 *   on stdout and logged once on stderr (as a warning of effect's logger, which this layer sends
 *   to stderr: stdout carries the protocol);
 * - JSON that is not a JSON-RPC 2.0 request, notification, response or batch is answered
 *   `-32600` (with the message's id when it has a valid one), and so is a message nesting arrays
 *   and objects more than 128 levels deep (effect would overflow its stack on it and never answer);
 * - a line longer than `maxLineSize` (default 4 MiB) is skipped without being held, and answered
 *   `-32600`;
 * - blank lines are ignored; a last line without a newline before end of input is still a line;
 * - at end of input, open `subscriptions/listen` streams are cancelled, so once every request has
 *   been answered effect ends the transport (and `serve --stdio` exits) instead of waiting for a
 *   client that has gone.
 *
 * Lines are split on bytes, so garbage is skipped as fast as it can be read.
 *
 * ```ts
 * import { NodeStdio } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { McpProtocol, McpServer } from "effect/ai"
 * import { Skill, SkillsServer, StdioFraming } from "@mcp-skills/server"
 *
 * const Server = McpServer.layerStdio({
 *   name: "docs", version: "1.0.0",
 *   protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
 *   registrations: SkillsServer.layer({ skills: [] as Array<Skill.Definition> })
 * }).pipe(Layer.provide(StdioFraming.layer()), Layer.provide(NodeStdio.layer))
 *
 * Layer.launch(Server)
 * ```
 *
 * @since 0.1.0
 */
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import * as Nesting from "./internal/nesting.js"
import * as ServerLimits from "./ServerLimits.js"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /**
   * Longest line accepted (`4194304`, `"4 MiB"`, ...); default `ServerLimits.MaxLineSize`, at most
   * `ServerLimits.LargestLineSize`.
   */
  readonly maxLineSize?: ByteSize.Input | undefined
}

const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const NEWLINE = 0x0a

type Id = string | number | null

// What a line was, once read: a message to hand to effect, or a refusal to answer here.
type Line =
  | { readonly _tag: "Message"; readonly bytes: Uint8Array; readonly value: unknown }
  | { readonly _tag: "Refused"; readonly id: Id; readonly code: number; readonly message: string; readonly log: string }

const isId = (id: unknown): id is string | number =>
  typeof id === "string" || (typeof id === "number" && Number.isFinite(id))

const has = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key)

// JSON-RPC 2.0 §4-5: a request or notification (method, optional id), a response (id, exactly
// one of result and error), or a batch (effect answers batches itself).
const invalidMessage = (value: unknown): { readonly id: Id; readonly why: string } | undefined => {
  if (Array.isArray(value)) return undefined
  if (typeof value !== "object" || value === null) return { id: null, why: "not a JSON-RPC object" }
  const message = value as Record<string, unknown>
  const id = isId(message.id) ? message.id : null
  if (message.jsonrpc !== "2.0") return { id, why: `jsonrpc is not "2.0"` }
  if (has(message, "method")) {
    if (typeof message.method !== "string") return { id, why: "method is not a string" }
    return has(message, "id") && !isId(message.id) ? { id: null, why: "id is not a string or number" } : undefined
  }
  if (has(message, "result") === has(message, "error")) return { id, why: "neither a request nor a response" }
  return isId(message.id) || message.id === null ? undefined : { id: null, why: "id is not a string or number" }
}

const isBlank = (bytes: Uint8Array) => {
  for (const byte of bytes) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false
  return true
}

const encoder = new TextEncoder()

const answer = (refused: Extract<Line, { _tag: "Refused" }>) =>
  JSON.stringify({ jsonrpc: "2.0", id: refused.id, error: { code: refused.code, message: refused.message } }) + "\n"

/**
 * Splits standard input into lines and sorts them, keeping at most `maxBytes` of one line.
 * State per read of standard input.
 */
const makeFramer = (maxBytes: number) => {
  const decoder = new TextDecoder()
  let pending: Array<Uint8Array> = []
  let pendingBytes = 0
  let tooLong = false
  let lineNumber = 0

  const read = (bytes: Uint8Array): Line | undefined => {
    lineNumber++
    if (isBlank(bytes)) return undefined
    let value: unknown
    // Parsed here to sort the line (effect parses it again): a failure must be answered here,
    // where it costs one line, not inside effect's reader, where it costs the whole read.
    try {
      value = JSON.parse(decoder.decode(bytes))
    } catch (error) {
      return {
        _tag: "Refused",
        id: null,
        code: PARSE_ERROR,
        message: "Parse error",
        log: `line ${lineNumber} is not JSON (${error instanceof Error ? error.message.slice(0, 120) : "unreadable"})`
      }
    }
    // effect serializes each message again, recursively: one nested too deep would never be answered.
    if (Nesting.tooDeep(bytes)) {
      return {
        _tag: "Refused",
        id: Nesting.idOf(value),
        code: INVALID_REQUEST,
        message: Nesting.error.message,
        log: `line ${lineNumber} nests deeper than ${ServerLimits.MaxDepth} levels`
      }
    }
    const invalid = invalidMessage(value)
    return invalid === undefined
      ? { _tag: "Message", bytes, value }
      : {
        _tag: "Refused",
        id: invalid.id,
        code: INVALID_REQUEST,
        message: `Invalid Request: ${invalid.why}`,
        log: `line ${lineNumber} is no JSON-RPC message (${invalid.why})`
      }
  }

  const end = (last: Uint8Array): Line | undefined => {
    const over = tooLong || pendingBytes + last.length > maxBytes
    const bytes = over || pending.length === 0 ? last : Buffer.concat([...pending, last])
    pending = []
    pendingBytes = 0
    tooLong = false
    if (!over) return read(bytes)
    lineNumber++
    return {
      _tag: "Refused",
      id: null,
      code: INVALID_REQUEST,
      message: `Invalid Request: line longer than ${maxBytes} bytes`,
      log: `line ${lineNumber} is longer than ${maxBytes} bytes, skipped`
    }
  }

  return {
    push: (chunk: Uint8Array): Array<Line> => {
      const lines: Array<Line> = []
      let start = 0
      while (true) {
        const newline = chunk.indexOf(NEWLINE, start)
        if (newline === -1) {
          const rest = chunk.subarray(start)
          if (tooLong || pendingBytes + rest.length > maxBytes) {
            // Past the limit nothing more of this line is kept, only where it ends.
            tooLong = true
            pending = []
            pendingBytes = 0
          } else if (rest.length > 0) {
            // Copied: the reader may reuse the chunk's memory.
            pending.push(Uint8Array.from(rest))
            pendingBytes += rest.length
          }
          return lines
        }
        const line = end(chunk.subarray(start, newline))
        if (line !== undefined) lines.push(line)
        start = newline + 1
      }
    },
    flush: (): Array<Line> => {
      if (!tooLong && pendingBytes === 0) return []
      const line = end(new Uint8Array(0))
      return line === undefined ? [] : [line]
    }
  }
}

const newlineBytes = new Uint8Array([NEWLINE])

const track = (listening: Set<string | number>, value: unknown) => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return
  const message = value as { readonly method?: unknown; readonly id?: unknown; readonly params?: any }
  if (message.method === "subscriptions/listen" && isId(message.id)) listening.add(message.id)
  if (message.method === "notifications/cancelled" && isId(message.params?.requestId)) {
    listening.delete(message.params.requestId)
  }
}

const cancel = (requestId: string | number) =>
  encoder.encode(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } }) + "\n")

/**
 * Wraps the `Stdio` service: provide it to `McpServer.layerStdio`, on top of a platform `Stdio`
 * (`NodeStdio.layer`). Also sends effect's log output to stderr.
 *
 * @example
 * ```ts
 * import { NodeStdio } from "@effect/platform-node"
 * import { SkillsServer, StdioFraming } from "@mcp-skills/server"
 * import { Layer } from "effect"
 * import { McpProtocol, McpServer } from "effect/ai"
 *
 * // Every line answered (garbage with -32700), lines over 1 MiB skipped unread; at end of input
 * // every request is answered, then the server ends.
 * const OverStdio = McpServer.layerStdio({
 *   name: "docs", version: "1.0.0",
 *   protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
 *   registrations: SkillsServer.layer({ skills: [] })
 * }).pipe(
 *   Layer.provide(StdioFraming.layer({ maxLineSize: "1 MiB" })),
 *   Layer.provide(NodeStdio.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<Stdio.Stdio, never, Stdio.Stdio> => {
  const maxLineSize = options?.maxLineSize === undefined
    ? ServerLimits.MaxLineSize
    : ByteSize.fromInputUnsafe(options.maxLineSize)
  if (maxLineSize === ByteSize.zero || maxLineSize > ServerLimits.LargestLineSize) {
    throw new RangeError(`StdioFraming maxLineSize must be between 1 byte and ${Number(ServerLimits.LargestLineSize) / 1024 / 1024} MiB, got ${maxLineSize} bytes`)
  }
  const maxBytes = Number(maxLineSize)
  const framed = Effect.gen(function*() {
    const stdio = yield* Stdio.Stdio
    const stdin = Stream.suspend(() => {
      const framer = makeFramer(maxBytes)
      // Open subscriptions/listen requests: cancelled at end of input, or the transport would
      // wait for them forever after its client has gone.
      const listening = new Set<string | number>()
      const sort = (lines: Array<Line>) =>
        Effect.gen(function*() {
          const messages: Array<Uint8Array> = []
          const answers: Array<string> = []
          for (const line of lines) {
            if (line._tag === "Refused") {
              answers.push(answer(line))
              yield* Effect.logWarning(`stdin ${line.log}; answered ${line.code}`)
              continue
            }
            track(listening, line.value)
            messages.push(line.bytes, newlineBytes)
          }
          if (answers.length > 0) yield* Stream.run(Stream.make(answers.join("")), stdio.stdout())
          return messages.length === 0 ? [] : [Buffer.concat(messages)]
        })
      return stdio.stdin.pipe(
        Stream.mapEffect((chunk) => sort(framer.push(chunk))),
        Stream.concat(Stream.fromEffect(Effect.suspend(() => sort(framer.flush())))),
        Stream.concat(Stream.sync(() => Array.from(listening, cancel))),
        Stream.flattenIterable
      )
    })
    return Stdio.make({ ...stdio, stdin })
  })
  return Layer.effect(Stdio.Stdio)(framed).pipe(Layer.merge(Layer.succeed(Logger.LogToStderr, true)))
}
