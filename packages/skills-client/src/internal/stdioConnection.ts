/**
 * The connection `layerStdio` opens: effect's stdio transport over a spawner that keeps what a
 * failure of the server needs to say: a command that could not start, how the server ended, and
 * the end of its stderr, which effect's transport reads and drops. Once the transport fails (the
 * server closed its output, a write to it failed, it exited), the failure waits for the exit code
 * and the end of stderr, at most `ClientLimits.ExitWait`, and carries `ServerStopped` inside
 * effect's `TransportError`, the only failure effect's McpClient passes on; the client's own
 * requests and its handshake take it out again ({@link lift}). The server's output reaches effect's
 * reader only as whole lines within `maxMessageBytes` (`StdioLines`): effect gathers a line in a
 * string flattened anew at each chunk, so one line of 100 MiB took a gateway past 600 MiB before it
 * was refused. A line past the bound refuses the connection there, with effect's `LimitError`, and
 * is not read further.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as PlatformError from "effect/PlatformError"
import * as Stream from "effect/Stream"
import * as McpClient from "effect/ai/McpClient"
import { LimitError, McpClientError, TransportError } from "effect/ai/McpClientError"
import type * as McpProtocol from "effect/ai/McpProtocol"
import type * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import { ExitWait, StderrBytes, StderrLines } from "../ClientLimits.js"
import { ServerNotStarted, type ServerExit, ServerStopped } from "../SkillsClientError.js"
import * as StdioLines from "./stdioLines.js"

// The last `StderrBytes` bytes written, as lines: a first line cut by the bound is dropped, and
// terminal escapes and control characters are removed, as the lines go into a message.
const tail = () => {
  const chunks: Array<Uint8Array> = []
  let bytes = 0
  let cut = false
  return {
    push: (chunk: Uint8Array) => {
      chunks.push(chunk)
      bytes += chunk.byteLength
      while (chunks.length > 1 && bytes - chunks[0]!.byteLength >= StderrBytes) {
        bytes -= chunks.shift()!.byteLength
        cut = true
      }
      if (bytes > StderrBytes) {
        // A copy, so that the rest of a large chunk is not held.
        chunks[0] = chunks[0]!.slice(bytes - StderrBytes)
        bytes = StderrBytes
        cut = true
      }
    },
    lines: (): ReadonlyArray<string> => {
      const text = new TextDecoder().decode(Buffer.concat(chunks))
      const lines = text.split(/\r?\n/)
      if (cut && lines.length > 1) lines.shift()
      return lines
        .map((line) => line.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/[\x00-\x08\x0a-\x1f\x7f]/g, "").trimEnd())
        .filter((line) => line !== "")
        .slice(-StderrLines)
    }
  }
}

const Newline = Uint8Array.of(0x0a)

// Node reports a signal only in the words of effect's error (`receipt of signal: 'SIGKILL'`).
const exitOf = (exit: Effect.Effect<number, PlatformError.PlatformError>): Effect.Effect<ServerExit> =>
  exit.pipe(
    Effect.map((code): ServerExit => ({ _tag: "Exited", code })),
    Effect.catch((error) =>
      Effect.succeed<ServerExit>({ _tag: "Killed", signal: /\bSIG[A-Z0-9]+\b/.exec(String(error.cause ?? error.message))?.[0] ?? "a signal" })
    )
  )

const Reasons: Readonly<Record<string, string>> = {
  ENOENT: "not found",
  EACCES: "permission denied",
  ENOEXEC: "not an executable format",
  ENOTDIR: "a path component is not a folder"
}

// What effect's spawner says when the command cannot start, in a user's words.
const notStarted = (command: ChildProcess.StandardCommand, error: PlatformError.PlatformError) => {
  const reason = error.reason
  const errno = reason._tag === "BadArgument" ? undefined : (reason.cause as { readonly code?: unknown } | undefined)?.code
  const code = typeof errno === "string" ? errno : undefined
  const cwd = command.options.cwd
  const words = code === undefined ? undefined : Reasons[code]
  const detail = reason._tag !== "BadArgument" && reason.module === "FileSystem"
    ? `its working folder ${cwd ?? reason.pathOrDescriptor} cannot be used: ${words ?? reason.description ?? reason._tag}`
    : words ?? reason.description ?? reason.message
  return new ServerNotStarted({ command: command.command, ...(code === undefined ? {} : { code }), detail })
}

/**
 * Spawns `command` and opens effect's stdio transport to it at `protocol`'s revision. `server`
 * names it in errors.
 *
 * @internal
 */
export const connect = Effect.fnUntraced(function*(
  protocol: McpProtocol.ProtocolAdapter<McpClient.ProtocolVersion>,
  options: {
    readonly command: ChildProcess.StandardCommand
    readonly server: string
    readonly maxMessageBytes: number
  }
): Effect.fn.Return<
  { readonly transport: McpClient.Transport; readonly network: "pipe" },
  McpClientError | ServerNotStarted,
  ChildProcessSpawner.ChildProcessSpawner | Scope.Scope
> {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const exit = yield* Deferred.make<ServerExit>()
  const stderrEnded = yield* Deferred.make<void>()
  const stderr = tail()
  let spawnFailure: PlatformError.PlatformError | undefined
  let refused: McpClientError | undefined

  // Whole lines within the bound, each with its newline; the output ends after a line past it.
  const bounded = (stdout: Stream.Stream<Uint8Array, PlatformError.PlatformError>) =>
    Stream.suspend(() => {
      const lines: Array<Uint8Array> = []
      const push = StdioLines.make(options.maxMessageBytes, {
        line: (bytes) => {
          if (refused === undefined) lines.push(bytes, Newline)
        },
        tooLong: () => {
          refused ??= new McpClientError({
            reason: new LimitError({
              description: `${options.server} wrote a line of more than ${options.maxMessageBytes} bytes, the most one message may have`
            })
          })
        }
      })
      return stdout.pipe(
        Stream.map((chunk) => {
          push(chunk)
          const whole = Buffer.concat(lines)
          lines.length = 0
          return { whole, last: refused !== undefined }
        }),
        Stream.takeUntil(({ last }) => last),
        Stream.filter(({ whole }) => whole.length > 0),
        Stream.map(({ whole }) => whole)
      )
    })

  const watching = ChildProcessSpawner.make((command) =>
    spawner.spawn(command).pipe(
      Effect.tapError((error) => Effect.sync(() => void (spawnFailure = error))),
      Effect.tap((handle) => Effect.forkScoped(Effect.flatMap(exitOf(handle.exitCode), (ended) => Deferred.succeed(exit, ended)))),
      Effect.map((handle) =>
        ChildProcessSpawner.makeHandle({
          ...handle,
          stdout: bounded(handle.stdout),
          stderr: handle.stderr.pipe(
            Stream.tap((chunk) => Effect.sync(() => stderr.push(chunk))),
            Stream.ensuring(Deferred.succeed(stderrEnded, undefined))
          )
        })
      )
    )
  )

  const transport = yield* McpClient.stdio({ command: options.command, protocol, maxMessageBytes: options.maxMessageBytes }).pipe(
    Effect.provideService(ChildProcessSpawner.ChildProcessSpawner, watching),
    Effect.catchIf(
      () => spawnFailure !== undefined,
      () => Effect.fail(notStarted(options.command, spawnFailure!))
    )
  )

  // A transport failure is the server's end: what it was, once known, inside effect's error;
  // after a line past the bound, that line.
  const stopped = (error: McpClientError) =>
    refused !== undefined
      ? Effect.fail(refused)
      : error.reason._tag !== "TransportError"
      ? Effect.fail(error)
      : Effect.gen(function*() {
        yield* Effect.timeoutOption(Effect.all([Deferred.await(exit), Deferred.await(stderrEnded)]), ExitWait)
        const ended = (yield* Deferred.isDone(exit)) ? yield* Deferred.await(exit) : { _tag: "Running" as const }
        const cause = new ServerStopped({ server: options.server, exit: ended, stderr: stderr.lines() })
        return yield* new McpClientError({ reason: new TransportError({ description: cause.message, cause }) })
      })

  return {
    network: "pipe" as const,
    transport: {
      ...transport,
      request: (message, tool) => Effect.catch(transport.request(message, tool), stopped),
      notify: (message) => Effect.catch(transport.notify(message), stopped)
    }
  }
})

/**
 * A stopped server, out of the McpClientError that carried it through effect's McpClient.
 *
 * @internal
 */
export const lift = (error: McpClientError): McpClientError | ServerStopped =>
  error.reason._tag === "TransportError" && error.reason.cause instanceof ServerStopped ? error.reason.cause : error
