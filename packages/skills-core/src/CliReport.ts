/**
 * How the command-line programs of this project (`mcp-skills`, `mcp-skills-server`) report what
 * went wrong, with `effect/cli`: one line on stderr that names the cause, and exit status 1.
 *
 * A usage error (an unknown flag or command, a bad value, a rule between options) is that line
 * followed by where to read more, `mcp-skills-server: --watch-check needs --watch; run
 * 'mcp-skills-server serve --help'`, instead of the whole help with the error last, as
 * `effect/cli` presents it by default. Provide {@link layerPresenter} to `Command.run`; a rule the
 * program checks itself fails with {@link usage} (in `Command.validate`) or {@link usageIn} (in a
 * handler); any other failure is reported with {@link fail}.
 *
 * ```ts
 * import { CliReport } from "@mcp-skills/core"
 * import { Effect } from "effect"
 * import { Command, Flag } from "effect/cli"
 *
 * const greet = Command.make("greet", { loud: Flag.Boolean("loud") }, () => Effect.void).pipe(
 *   Command.validate(({ loud }) => loud ? CliReport.usage("--loud is not for today") : Effect.void)
 * )
 * export const main = Command.run(greet, { version: "1.0.0" }).pipe(Effect.provide(CliReport.layerPresenter))
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Runtime from "effect/Runtime"
import { CliError, CliOutput } from "effect/cli"

// effect's formatter escapes control characters (a flag value may carry any); no colors, as
// every line here may go to a log.
const plain = CliOutput.defaultFormatter({ colors: false })

// One line: effect's messages of a suggestion end in an indented list on lines of their own.
const folded = (text: string) => text.replace(/\s+/g, " ").trim()

const suggesting = (suggestions: ReadonlyArray<string>) =>
  suggestions.length === 0 ? "" : ` (did you mean ${suggestions.join(" or ")}?)`

const describe = (error: CliError.CliError): string => {
  switch (error._tag) {
    case "UnrecognizedOption":
      return `unknown flag ${folded(plain.formatCliError(new CliError.UnrecognizedOption({ option: error.option, suggestions: [] })))
        .replace(/^Unrecognized flag: /, "")}${suggesting(error.suggestions)}`
    case "UnknownSubcommand":
      return `unknown command ${folded(plain.formatCliError(new CliError.UnknownSubcommand({ subcommand: error.subcommand, suggestions: [] })))
        .replace(/^Unknown subcommand /, "")}${suggesting(error.suggestions)}`
    default:
      return folded(plain.formatCliError(error))
  }
}

/**
 * The line of a usage error: `PROGRAM: what was wrong; run 'PROGRAM COMMAND --help'`, every
 * error of the invocation in it.
 *
 * @since 0.1.0
 * @category cli
 */
export const usageLine = (commandPath: ReadonlyArray<string>, errors: ReadonlyArray<CliError.CliError>): string =>
  `${commandPath[0] ?? ""}: ${errors.map(describe).join("; ")}; run '${commandPath.join(" ")} --help'`

/**
 * `effect/cli`'s presenter with usage errors as {@link usageLine} on stderr; help and version as
 * `effect/cli` presents them.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPresenter: Layer.Layer<never> = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? Console.error(usageLine(event.commandPath, event.errors))
      : CliOutput.defaultPresenter.present(event)
})

/**
 * A usage error found by the program itself (a rule between options, an argument a command
 * cannot take): fail a `Command.validate` with it, and it is reported like a parse error, before
 * the handler runs.
 *
 * @since 0.1.0
 * @category cli
 */
export const usage = (message: string): Effect.Effect<never, CliError.ValidationError> =>
  Effect.fail(new CliError.ValidationError({ message }))

/**
 * {@link usage} for a handler, which `Command.run` does not know the command of: the error names
 * `commandPath` (e.g. `["mcp-skills", "read"]`) and is reported like a parse error.
 *
 * @since 0.1.0
 * @category cli
 */
export const usageIn = (commandPath: ReadonlyArray<string>) => (message: string): Effect.Effect<never, CliError.ShowHelp> =>
  Effect.fail(new CliError.ShowHelp({ commandPath, errors: [new CliError.ValidationError({ message })] }))

/**
 * Reports a failure that is no usage error, `PROGRAM: message` on stderr, and sets exit status 1.
 *
 * @example
 * ```ts
 * import { CliReport } from "@mcp-skills/core"
 * import { Effect } from "effect"
 *
 * // "my-tool: cannot read ./skills: permission denied" on stderr, and exit status 1
 * Effect.runSync(CliReport.fail("my-tool")("cannot read ./skills: permission denied"))
 * ```
 *
 * @since 0.1.0
 * @category cli
 */
export const fail = (program: string) => (message: string): Effect.Effect<void> =>
  Effect.andThen(
    Console.error(`${program}: ${message}`),
    Effect.sync(() => {
      process.exitCode = 1
    })
  )

/**
 * What runs a program as a process's main program, as `NodeRuntime.runMain` of
 * `@effect/platform-node` does (`Runtime.makeRunMain`).
 *
 * @since 0.2.0
 * @category cli
 */
export type MainRunner = <A, E>(effect: Effect.Effect<A, E>, options: {
  readonly disableErrorReporting: boolean
  readonly teardown: Runtime.Teardown
}) => void

const outputs = [process.stdout, process.stderr]

// A write to a pipe nobody reads any more fails with EPIPE, once for every write after it too: the
// program is interrupted the first time, as SIGPIPE stops a C program, and the rest go unheard.
const endWhenUnread = (fiber: Fiber.Fiber<unknown, unknown>) => {
  let unread = false
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
    if (unread) return
    unread = true
    fiber.interruptUnsafe(fiber.id)
  }
  for (const stream of outputs) stream.on("error", onError)
}

// Node queues what a full pipe cannot take yet, and `process.exit` drops the queue; an empty write
// is answered once every write before it was taken, or failed.
const flushed = () => Promise.all(outputs.map((stream) => new Promise<void>((resolve) => stream.write("", () => resolve()))))

/**
 * Runs `effect` as an executable's main program with `runner` (`NodeRuntime.runMain`), and exits
 * once its output is out: every byte written reaches standard output and standard error first,
 * into a file, a terminal or a pipe, and a reader that stops early (`| head`) ends the program
 * quietly. The status is what the program set (`process.exitCode`) when it succeeded, 1 (or its
 * error's exit code) when it failed, and 0 when it was interrupted (Ctrl-C, SIGTERM, a reader
 * gone), which is how a server or a `sync` is meant to stop. Every log line, a failure's report
 * included, goes to standard error (`Logger.LogToStderr`): standard output carries the program's
 * output, or the protocol of a stdio server, and nothing else.
 *
 * @since 0.2.0
 * @category cli
 */
export const runMain = (runner: MainRunner) => <A, E>(effect: Effect.Effect<A, E>): void =>
  runner(
    Effect.withFiber((fiber) => {
      endWhenUnread(fiber)
      return effect.pipe(
        // The report runMain would make, made here, where it goes to stderr too.
        Effect.tapCause((cause) =>
          Cause.hasInterruptsOnly(cause) || !Runtime.getErrorReported(Cause.squash(cause)) ? Effect.void : Effect.logError(cause)
        ),
        Effect.provideService(Logger.LogToStderr, true)
      )
    }),
    {
      disableErrorReporting: true,
      teardown: (exit) => {
        const exitWith = (code: number) => void flushed().then(() => process.exit(code === 0 ? process.exitCode : code))
        return Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? exitWith(0) : Runtime.defaultTeardown(exit, exitWith)
      }
    }
  )
