/**
 * The `mcp-skills` command line: list, inspect, read and install skills from an MCP server,
 * verifying every file against its entry.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as CommandLine from "effect/process/CommandLine"
import { McpClientError } from "effect/ai/McpClientError"
import { Argument, Command, Flag } from "effect/cli"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { McpTelemetry, Signing, type Skill } from "@mcp-skills/core"
import * as NodeFs from "node:fs"
import * as ClientLimits from "./ClientLimits.js"
import * as Pull from "./Pull.js"
import * as PullError from "./PullError.js"
import * as SkillCache from "./SkillCache.js"
import * as SkillsClient from "./SkillsClient.js"
import * as Verification from "./Verification.js"
import type { SkillsClientError } from "./SkillsClientError.js"

const common = {
  stdio: Flag.String("stdio").pipe(
    Flag.withDescription("Spawn this server command line and talk MCP over its stdio instead of HTTP"),
    Flag.optional
  ),
  timeout: Flag.Finite("timeout").pipe(
    Flag.withDescription(`Seconds to wait for each request (default ${Duration.toSeconds(ClientLimits.Timeout)})`),
    Flag.withDefault(Duration.toSeconds(ClientLimits.Timeout))
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
  ),
  args: Argument.String("args").pipe(
    Argument.withDescription("TARGET (an MCP URL, omitted with --stdio) followed by the command's arguments"),
    Argument.variadic()
  )
}

interface Common {
  readonly stdio: Option.Option<string>
  readonly timeout: number
  readonly protocol: SkillsClient.ProtocolChoice
  readonly header: ReadonlyArray<string>
  readonly cache: Option.Option<string>
  readonly allowDynamic: boolean
  readonly trust: ReadonlyArray<string>
  readonly trustUnsigned: ReadonlyArray<string>
  readonly args: ReadonlyArray<string>
}

class Usage extends Error {}

const counted = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`

// "(3 files, 195 bytes)"
const sizes = (files: number, bytes: number) => `${counted(files, "file")}, ${counted(bytes, "byte")}`

// Splits `--stdio` the way a shell would split plain words and quotes, refusing shell syntax
// (pipes, variables, globs) instead of passing it on literally.
const commandLine = (line: string): ReadonlyArray<string> => {
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
const trustOf = (input: Common): Verification.Trust | undefined => {
  if (input.trust.length === 0) {
    if (input.trustUnsigned.length > 0) throw new Usage("--trust-unsigned needs --trust")
    return undefined
  }
  const keys = input.trust.map((file) => {
    let pem: string
    try {
      pem = NodeFs.readFileSync(file, "utf8")
    } catch (error) {
      throw new Usage(`--trust ${file}: ${error instanceof Error ? error.message : String(error)}`)
    }
    const key = Signing.publicKey(pem)
    if (Result.isFailure(key)) throw new Usage(`--trust ${file}: ${key.failure.reason}`)
    return key.success
  })
  return { keys, mode: "required", unsigned: input.trustUnsigned }
}

/** The client layer of a target and the arguments after it. */
const target = (input: Common, token: Option.Option<Redacted.Redacted<string>>) => {
  if (!(input.timeout > 0)) throw new Usage("--timeout must be a positive number of seconds")
  const cache = Option.isSome(input.cache) ? SkillCache.layerDisk(input.cache.value) : SkillCache.layerMemory()
  const trust = trustOf(input)
  const options = {
    timeout: `${input.timeout} seconds` as const,
    protocolVersion: input.protocol,
    allowDynamic: input.allowDynamic,
    trust
  }
  if (Option.isSome(input.stdio)) {
    const [command, ...args] = commandLine(input.stdio.value)
    if (command === undefined || command === "") throw new Usage("--stdio needs a command")
    if (input.header.length > 0) throw new Usage("--header is for HTTP targets, not --stdio")
    const layer = SkillsClient.layerStdio({ ...options, command, args, server: input.stdio.value.trim() }).pipe(
      Layer.provide([NodeServices.layer, cache])
    )
    return { layer, rest: input.args, trust }
  }
  const [url, ...rest] = input.args
  if (url === undefined || !/^https?:\/\//.test(url)) throw new Usage("TARGET must be an http(s) MCP URL, or use --stdio \"command args\"")
  const layer = SkillsClient.layerHttp({ ...options, url, headers: headersOf(input.header, token), readTransport: "lean" }).pipe(
    Layer.provide([FetchHttpClient.layer, cache])
  )
  return { layer, rest, trust }
}

/**
 * Runs `f` with a client for the target (and the `--trust` keys it was made with, read once); any
 * failure becomes one line on stderr and exit status 1.
 */
const withTarget = <A>(
  input: Common,
  f: (
    client: SkillsClient.Service,
    rest: ReadonlyArray<string>,
    trust: Verification.Trust | undefined
  ) => Effect.Effect<A, SkillsClientError | McpClientError | PullError.Error, FileSystem.FileSystem>
) =>
  Effect.gen(function*() {
    const token = yield* Config.option(Config.Redacted("MCP_SKILLS_TOKEN")).pipe(Effect.orDie)
    const { layer, rest, trust } = target(input, token)
    return yield* SkillsClient.SkillsClient.use((client) => f(client, rest, trust)).pipe(Effect.provide(layer))
  }).pipe(
    Effect.catchDefect((defect) =>
      defect instanceof Usage ? Effect.fail(new PullError.PullError({ check: "usage", detail: defect.message })) : Effect.die(defect)
    ),
    Effect.catch((error) =>
      Effect.gen(function*() {
        // An unsupported effect is no failure of a skill or file: its message says what to install.
        yield* Console.error(`mcp-skills: ${error._tag === "UnsupportedEffect" ? error.message : PullError.toPullError(error).message}`)
        process.exitCode = 1
      })
    )
  )

const list = Command.make("list", {
  ...common,
  json: Flag.Boolean("json").pipe(Flag.withDescription("Print the listing as JSON"), Flag.withDefault(false))
}, (input) =>
  withTarget(input, (client, rest, trust) =>
    Effect.gen(function*() {
      if (rest.length > 0) return yield* new PullError.PullError({ check: "usage", detail: `unexpected arguments ${rest.join(" ")}` })
      const listing = yield* client.listSkills()
      // With --trust, each skill's signature as the client judges it (no file is read).
      const policy = trust === undefined ? undefined : Result.getOrThrow(Verification.trustPolicy(trust))
      const signatures = new Map<string, Signature>()
      if (policy !== undefined) for (const skill of listing.skills) signatures.set(skill.uri, signatureOf(policy, skill))
      if (input.json) {
        yield* Console.log(JSON.stringify(
          {
            server: client.server,
            skills: listing.skills.map((skill) => signatures.has(skill.uri) ? { ...skill, signature: signatures.get(skill.uri) } : skill),
            invalid: listing.invalid.map((e) => ({ uri: e.uri, problems: e.problems })),
            cacheHint: listing.cacheHint
          },
          null,
          2
        ))
      } else {
        for (const skill of listing.skills) {
          const files = skill.resources === "dynamic"
            ? "dynamic"
            : sizes(skill.resources.length, skill.resources.reduce((n, r) => n + r.size, 0))
          const signature = signatures.get(skill.uri)
          yield* Console.log(
            `${skill.uri}\t${skill.frontmatter.name}\t(${files})\t${signature === undefined ? "" : `${describeSignature(signature)}\t`}${skill.frontmatter.description}`
          )
        }
      }
      for (const invalid of listing.invalid) yield* Console.error(`mcp-skills: ${PullError.toPullError(invalid, { skill: invalid.uri }).message}`)
      if (listing.invalid.length > 0) process.exitCode = 1
    }))).pipe(Command.withDescription("List the skills of a server; reads no file"))

/** What `list --trust` says of a skill's signature. */
type Signature =
  | { readonly status: "verified"; readonly signer: string }
  | { readonly status: "unsigned" }
  /** Read unverified: its URI is allowed unsigned (`--trust-unsigned`). */
  | { readonly status: "allowed" }
  | { readonly status: "invalid"; readonly signer: string | undefined; readonly problem: string }
  | { readonly status: "untrusted"; readonly signers: ReadonlyArray<string> }

// The check every read makes first, reported rather than failed.
const signatureOf = (policy: Verification.TrustPolicy, skill: Skill.Skill): Signature => {
  const checked = Verification.checkSignature(skill, policy)
  if (Result.isSuccess(checked)) {
    const signer = checked.success[0]
    return signer === undefined ? { status: "allowed" } : { status: "verified", signer }
  }
  const error = checked.failure
  switch (error._tag) {
    case "UnsignedSkill":
      return { status: "unsigned" }
    case "SignatureInvalid":
      return { status: "invalid", signer: error.keyId, problem: Signing.describeProblem(error.problem) }
    case "UntrustedSigner":
      return { status: "untrusted", signers: error.keyIds }
  }
}

const describeSignature = (signature: Signature): string => {
  switch (signature.status) {
    case "verified":
      return `signed by ${signature.signer} (verified)`
    case "unsigned":
      return "unsigned"
    case "allowed":
      return "not verified (allowed by --trust-unsigned)"
    case "invalid":
      return `signature${signature.signer === undefined ? "" : ` by ${signature.signer}`} does not verify: ${signature.problem}`
    case "untrusted":
      return `signed by ${signature.signers.join(", ")} (not trusted)`
  }
}

const get = Command.make("get", common, (input) =>
  withTarget(input, (client, rest) =>
    Effect.gen(function*() {
      const [uri, ...extra] = rest
      if (uri === undefined || extra.length > 0) return yield* new PullError.PullError({ check: "usage", detail: "get needs exactly one SKILL_URI" })
      const { skill, cacheHint } = yield* client.getSkill(uri)
      yield* Console.log(JSON.stringify({ skill, cacheHint }, null, 2))
    }))).pipe(Command.withDescription("Print one skill entry (skills/get)"))

const read = Command.make("read", common, (input) =>
  withTarget(input, (client, rest) =>
    Effect.gen(function*() {
      const [uri, file, ...extra] = rest
      if (uri === undefined || extra.length > 0) {
        return yield* new PullError.PullError({ check: "usage", detail: "read needs SKILL_URI and at most one FILE" })
      }
      const { skill } = yield* client.getSkill(uri)
      yield* client.checkEntry(skill)
      // SKILL.md is always read and verified first (R127, R126).
      const loaded = yield* client.loadSkill(skill).pipe(Effect.mapError((e) => PullError.toPullError(e, { skill: uri, file: uri })))
      const bytes = file === undefined
        ? loaded.skillMd.bytes
        : (yield* client.readSkillResource(skill, file).pipe(Effect.mapError((e) => PullError.toPullError(e, { skill: uri, file })))).bytes
      yield* Effect.promise(() => new Promise<void>((resolve) => process.stdout.write(bytes, () => resolve())))
    }))).pipe(Command.withDescription("Print one verified file of a skill (SKILL.md by default)"))

const renderProgress = () => {
  let last = ""
  return (progress: { readonly skill: string; readonly bytes: number; readonly total: number }) => {
    if (!process.stderr.isTTY || progress.total < 1024 * 1024) return
    const ratio = Math.min(1, progress.bytes / progress.total)
    const width = 30
    const bar = "#".repeat(Math.round(ratio * width)).padEnd(width, ".")
    const line = `\r[${bar}] ${Math.round(ratio * 100)}% ${progress.skill}`
    if (line === last) return
    last = line
    process.stderr.write(line + (ratio >= 1 ? "\n" : ""))
  }
}

const pull = Command.make("pull", {
  ...common,
  all: Flag.Boolean("all").pipe(Flag.withDescription("Pull every listed skill"), Flag.withDefault(false)),
  into: Flag.String("into").pipe(Flag.withDescription("Target folder")),
  acceptChanges: Flag.Boolean("accept-changes").pipe(
    Flag.withDescription("Replace skills whose files changed since the last pull"),
    Flag.withDefault(false)
  ),
  acceptSigner: Flag.Boolean("accept-signer").pipe(
    Flag.withDescription("With --trust: accept a skill signed by another trusted key than the lock file records"),
    Flag.withDefault(false)
  )
}, (input) =>
  withTarget(input, (client, rest) =>
    Effect.gen(function*() {
      if (input.all === (rest.length > 0)) {
        return yield* new PullError.PullError({ check: "usage", detail: "pull needs SKILL_URI arguments or --all, not both" })
      }
      const summary = yield* Pull.pull(client, {
        into: input.into,
        uris: rest,
        all: input.all,
        acceptChanges: input.acceptChanges,
        acceptSigner: input.acceptSigner,
        onProgress: renderProgress()
      })
      for (const outcome of summary.skills) {
        switch (outcome._tag) {
          case "Added":
            yield* Console.log(`added ${outcome.uri} -> ${outcome.path} (${sizes(outcome.files, outcome.bytes)})`)
            break
          case "Updated":
            yield* Console.log(`updated ${outcome.uri} -> ${outcome.path} (${sizes(outcome.files, outcome.bytes)})`)
            for (const uri of outcome.added) yield* Console.log(`  + ${uri}`)
            for (const uri of outcome.removed) yield* Console.log(`  - ${uri}`)
            for (const uri of outcome.changed) yield* Console.log(`  ~ ${uri}`)
            break
          case "Unchanged":
            yield* Console.log(`unchanged ${outcome.uri}`)
            break
          case "Nested":
            yield* Console.log(`nested ${outcome.uri} -> ${outcome.path} (inside ${outcome.within})`)
            break
        }
      }
    }))).pipe(Command.withDescription("Verify skills into a folder, all or nothing, and record them in mcp-skills.lock.json"))

/**
 * The root command.
 *
 * @since 0.1.0
 */
export const command = Command.make("mcp-skills").pipe(
  Command.withDescription("List, read and install MCP skills (SEP-2640) with verification"),
  Command.withSubcommands([list, get, read, pull])
)

/**
 * Runs the command line with the process arguments; the exit status is 0 only on full success.
 *
 * @since 0.1.0
 */
export const main: Effect.Effect<void, unknown> = Effect.suspend(() => {
  const run = command.pipe(Command.run({ version: "0.1.0" }))
  // A configured OTLP endpoint turns CLIENT spans (their context sent to the server in `_meta`)
  // and the client's series on, exported as the OTEL_* variables say.
  if (!McpTelemetry.otlpConfigured(process.env)) return run
  const protocol = McpTelemetry.otlpProtocol(process.env.OTEL_EXPORTER_OTLP_PROTOCOL)
  if (protocol === undefined) {
    return Effect.andThen(
      Console.error(`mcp-skills: OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got ${process.env.OTEL_EXPORTER_OTLP_PROTOCOL}`),
      Effect.sync(() => void (process.exitCode = 1))
    )
  }
  return Effect.provide(
    run,
    Layer.merge(McpTelemetry.layer(), McpTelemetry.layerOtlp({ protocol, serviceName: "mcp-skills", serviceVersion: "0.1.0" }))
  )
}).pipe(Effect.provide(NodeServices.layer))
