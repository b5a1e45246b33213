/**
 * What every command of the `mcp-skills` command line shares: the flags that reach a server
 * (`--stdio`, `--header`, `--trust`, `--cache`, ...), the operands after TARGET, and running a
 * command with its server, every failure one line.
 */
import * as ByteSize from "effect/ByteSize"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as CommandLine from "effect/process/CommandLine"
import type { McpClientError } from "effect/ai/McpClientError"
import { Argument, Command, Flag } from "effect/cli"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { CliReport } from "@mcp-skills/core"
import * as ClientLimits from "../../ClientLimits.js"
import * as Follow from "../../Follow.js"
import * as PullError from "../../PullError.js"
import * as SkillCache from "../../SkillCache.js"
import * as SkillsClient from "../../SkillsClient.js"
import type { SkillsClientError } from "../../SkillsClientError.js"
import * as Verification from "../../Verification.js"

export const common = {
  stdio: Flag.String("stdio").pipe(
    Flag.withDescription("Spawn this server command line and talk MCP over its stdio instead of HTTP"),
    Flag.optional
  ),
  timeout: Flag.Finite("timeout").pipe(
    Flag.withDescription(`Seconds to wait for each request (default ${Duration.toSeconds(ClientLimits.Timeout)})`),
    Flag.withDefault(Duration.toSeconds(ClientLimits.Timeout))
  ),
  maxEntries: Flag.Int("max-entries").pipe(
    Flag.withDescription(
      `The most skills one listing holds, whatever the server's page size (default ${ClientLimits.MaxEntries.toLocaleString("en-US")})`
    ),
    Flag.withDefault(ClientLimits.MaxEntries)
  ),
  protocol: Flag.Literals("protocol", ["auto", "2026-07-28", "2025-11-25"]).pipe(
    Flag.withDescription("MCP protocol revision; auto tries 2026-07-28, then 2025-11-25 (default auto)"),
    Flag.withDefault("auto")
  ),
  header: Flag.String("header").pipe(
    Flag.withDescription("An HTTP header for every request, 'Name: value' (repeatable); MCP_SKILLS_TOKEN=... sends 'Authorization: Bearer ...'"),
    Flag.atLeast(0)
  ),
  cache: Flag.String("cache").pipe(
    Flag.withDescription(
      "Keep verified files in this folder (private to you, outside any skills folder) and reuse them (default: in memory, for this run only)"
    ),
    Flag.optional
  ),
  cacheMaxSize: Flag.String("cache-max-size").pipe(
    Flag.withDescription(
      "The most the cache keeps, e.g. 512MiB or 2GiB (default 256MiB with --cache, 64MiB in memory); the least recently used files go first"
    ),
    Flag.filterMap(
      (value) => Option.filter(ByteSize.fromString(value), (size) => !ByteSize.isZero(size)),
      () => "a positive size with a unit, such as 256MiB, 2GiB or 100000B"
    ),
    Flag.optional
  ),
  allowDynamic: Flag.Boolean("allow-dynamic").pipe(
    Flag.withDescription("Load \"dynamic\" skills, which carry no digests and cannot be verified"),
    Flag.withDefault(false)
  ),
  trust: Flag.String("trust").pipe(
    Flag.withDescription(
      "A signer's public key (SPKI PEM file, from mcp-skills-server keygen); repeatable. Then only skills signed by one of them, whose signature verifies, are read"
    ),
    Flag.atLeast(0)
  ),
  trustUnsigned: Flag.String("trust-unsigned").pipe(
    Flag.withDescription("With --trust: a SKILL_URI read without a signature (dynamic and rendered skills cannot be signed); repeatable"),
    Flag.atLeast(0)
  )
}

/**
 * A command's operands, named in its help: TARGET (the MCP URL, left out with --stdio), then
 * what the command takes. `operands` is what follows TARGET.
 */
export const operandsOf = (names: string, description: string) =>
  Argument.String(names).pipe(
    Argument.withDescription(`TARGET: an MCP URL, left out with --stdio${description}`),
    Argument.withMetavar(""),
    Argument.variadic()
  )

export const operands = (input: Common) => Option.isSome(input.stdio) ? input.args : input.args.slice(1)

export const program = "mcp-skills"

// The arguments of each command, checked before anything is read or asked.
export const arity = <I extends Common>(command: string, check: (operands: ReadonlyArray<string>, input: I) => string | undefined) =>
  Command.validate((input: I) => {
    const problem = check(operands(input), input)
    return problem === undefined ? Effect.void : CliReport.usage(`${command} ${problem}`)
  })

export interface Common {
  readonly stdio: Option.Option<string>
  readonly timeout: number
  readonly maxEntries: number
  readonly protocol: SkillsClient.ProtocolChoice
  readonly header: ReadonlyArray<string>
  readonly cache: Option.Option<string>
  readonly cacheMaxSize: Option.Option<ByteSize.ByteSize>
  readonly allowDynamic: boolean
  readonly trust: ReadonlyArray<string>
  readonly trustUnsigned: ReadonlyArray<string>
  readonly args: ReadonlyArray<string>
}

export class Usage extends Error {}


// Splits `--stdio` the way a shell would split plain words and quotes, refusing shell syntax
// (pipes, variables, globs) instead of passing it on literally.
export const commandLine = (line: string): ReadonlyArray<string> => {
  const strings = Object.assign([line], { raw: [line] }) as unknown as TemplateStringsArray
  const words = CommandLine.template(strings)
  if (Result.isFailure(words)) throw new Usage(`--stdio: ${words.failure.message}`)
  return words.success.map((word) => typeof word === "string" ? word : Redacted.value(word))
}

// RFC 9110 token characters.
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** `--header` values, plus `Authorization: Bearer $MCP_SKILLS_TOKEN` unless one is given. */
const headersOf = (lines: ReadonlyArray<string>, token: Option.Option<Redacted.Redacted<string>>) => {
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    const name = colon < 0 ? "" : line.slice(0, colon).trim()
    if (!headerName.test(name)) throw new Usage(`--header needs 'Name: value', got ${JSON.stringify(line)}`)
    headers[name.toLowerCase()] = line.slice(colon + 1).trim()
  }
  if (Option.isSome(token) && headers.authorization === undefined) headers.authorization = `Bearer ${Redacted.value(token.value)}`
  return headers
}

/** `--trust` keys read from their files; none without `--trust`. */
export const trustOf = (input: Common): Verification.Trust | undefined => {
  if (input.trust.length === 0) {
    if (input.trustUnsigned.length > 0) throw new Usage("--trust-unsigned needs --trust")
    return undefined
  }
  const keys = input.trust.map((file) => {
    const key = Verification.readPublicKeyFile(file)
    if (Result.isFailure(key)) throw new Usage(`--trust ${key.failure}`)
    return key.success
  })
  return { keys, mode: "required", unsigned: input.trustUnsigned }
}

/**
 * The server of a target as `Follow` reaches it (its transport, the client's options and the
 * cache), the client layer made of them, and the arguments after it.
 */
export const target = (input: Common, token: Option.Option<Redacted.Redacted<string>>) => {
  const rest = operands(input)
  if (!(input.timeout > 0)) throw new Usage("--timeout must be a positive number of seconds")
  if (!(input.maxEntries > 0)) throw new Usage("--max-entries must be a positive integer")
  const bound = { maxBytes: Option.getOrUndefined(input.cacheMaxSize) }
  const cache = Option.isSome(input.cache) ? SkillCache.layerDisk(input.cache.value, bound) : SkillCache.layerMemory(bound)
  const trust = trustOf(input)
  const options = {
    timeout: `${input.timeout} seconds` as const,
    maxEntries: input.maxEntries,
    protocolVersion: input.protocol,
    allowDynamic: input.allowDynamic,
    trust
  }
  const reached = (transport: Follow.Transport, clientOptions: Follow.ClientOptions) => ({
    transport,
    options: clientOptions,
    cache,
    layer: Follow.clientLayer(transport, clientOptions).pipe(Layer.provide([FetchHttpClient.layer, NodeServices.layer, cache])),
    rest,
    trust
  })
  if (Option.isSome(input.stdio)) {
    const [command, ...args] = commandLine(input.stdio.value)
    if (command === undefined || command === "") throw new Usage("--stdio needs a command")
    if (input.header.length > 0) throw new Usage("--header is for HTTP targets, not --stdio")
    return reached(Follow.stdio(command, args), { ...options, server: input.stdio.value.trim() })
  }
  const url = input.args[0]
  if (url === undefined || !/^https?:\/\//.test(url)) throw new Usage("TARGET must be an http(s) MCP URL, or use --stdio \"command args\"")
  return reached(Follow.http(url, headersOf(input.header, token)), { ...options, readTransport: "lean" })
}

/**
 * Runs `f` with the target of `input`; an option the target cannot be made with is a usage error
 * of `command`, one line.
 */
export const withReached = <A, E, R>(command: string, input: Common, f: (reached: Reached) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const token = yield* Config.option(Config.Redacted("MCP_SKILLS_TOKEN")).pipe(Effect.orDie)
    return yield* f(target(input, token))
  }).pipe(
    Effect.catchDefect((defect) => defect instanceof Usage ? CliReport.usageIn([program, command])(defect.message) : Effect.die(defect))
  )

/** What {@link target} makes of a command line. */
export type Reached = ReturnType<typeof target>

/**
 * Runs `f` with a client for the target (and the `--trust` keys it was made with, read once); any
 * failure becomes one line on stderr and exit status 1, an option the target cannot be made with
 * a usage error of `command`.
 */
export const withTarget = <A>(
  command: string,
  input: Common,
  f: (
    client: SkillsClient.Service,
    rest: ReadonlyArray<string>,
    trust: Verification.Trust | undefined
  ) => Effect.Effect<A, SkillsClientError | McpClientError | PullError.Error, FileSystem.FileSystem>
) =>
  withReached(command, input, ({ layer, rest, trust }) =>
    SkillsClient.SkillsClient.use((client) => f(client, rest, trust)).pipe(
      Effect.provide(layer),
      // An unsupported effect is no failure of a skill or file: its message says what to install.
      Effect.catch((error) => fail(error._tag === "UnsupportedEffect" ? error.message : PullError.toPullError(error).message))
    ))

export const fail = CliReport.fail(program)
