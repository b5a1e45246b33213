/**
 * The `mcp-skills` command line: list, inspect, read and install skills from an MCP server,
 * verifying every file against its entry.
 *
 * @since 0.1.0
 */
import * as ByteSize from "effect/ByteSize"
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
import { CliReport, McpTelemetry, Signing, type Skill } from "@mcp-skills/core"
import { isUtf8 } from "node:buffer"
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
const operandsOf = (names: string, description: string) =>
  Argument.String(names).pipe(
    Argument.withDescription(`TARGET: an MCP URL, left out with --stdio${description}`),
    Argument.withMetavar(""),
    Argument.variadic()
  )

const operands = (input: Common) => Option.isSome(input.stdio) ? input.args : input.args.slice(1)

const program = "mcp-skills"

// The arguments of each command, checked before anything is read or asked.
const arity = <I extends Common>(command: string, check: (operands: ReadonlyArray<string>, input: I) => string | undefined) =>
  Command.validate((input: I) => {
    const problem = check(operands(input), input)
    return problem === undefined ? Effect.void : CliReport.usage(`${command} ${problem}`)
  })

interface Common {
  readonly stdio: Option.Option<string>
  readonly timeout: number
  readonly protocol: SkillsClient.ProtocolChoice
  readonly header: ReadonlyArray<string>
  readonly cache: Option.Option<string>
  readonly cacheMaxSize: Option.Option<ByteSize.ByteSize>
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
  const rest = operands(input)
  if (!(input.timeout > 0)) throw new Usage("--timeout must be a positive number of seconds")
  const bound = { maxBytes: Option.getOrUndefined(input.cacheMaxSize) }
  const cache = Option.isSome(input.cache) ? SkillCache.layerDisk(input.cache.value, bound) : SkillCache.layerMemory(bound)
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
    return { layer, rest, trust }
  }
  const url = input.args[0]
  if (url === undefined || !/^https?:\/\//.test(url)) throw new Usage("TARGET must be an http(s) MCP URL, or use --stdio \"command args\"")
  const layer = SkillsClient.layerHttp({ ...options, url, headers: headersOf(input.header, token), readTransport: "lean" }).pipe(
    Layer.provide([FetchHttpClient.layer, cache])
  )
  return { layer, rest, trust }
}

/**
 * Runs `f` with a client for the target (and the `--trust` keys it was made with, read once); any
 * failure becomes one line on stderr and exit status 1, an option the target cannot be made with
 * a usage error of `command`.
 */
const withTarget = <A>(
  command: string,
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
    // An unsupported effect is no failure of a skill or file: its message says what to install.
    Effect.catch((error) => fail(error._tag === "UnsupportedEffect" ? error.message : PullError.toPullError(error).message)),
    Effect.catchDefect((defect) => defect instanceof Usage ? CliReport.usageIn([program, command])(defect.message) : Effect.die(defect))
  )

const fail = CliReport.fail(program)

const list = Command.make("list", {
  ...common,
  args: operandsOf("TARGET", ""),
  json: Flag.Boolean("json").pipe(Flag.withDescription("Print the listing as JSON"), Flag.withDefault(false))
}, (input) =>
  withTarget("list", input, (client, _, trust) =>
    Effect.gen(function*() {
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
      for (const invalid of listing.invalid) yield* fail(PullError.toPullError(invalid, { skill: invalid.uri }).message)
    }))).pipe(
  arity("list", (rest) => rest.length > 0 ? `takes no argument after TARGET, got ${rest.join(" ")}` : undefined),
  Command.withDescription("List the skills of a server (one line each: URI, name, files, description); reads no file"),
  Command.withExamples([
    { command: "mcp-skills list http://127.0.0.1:3000/mcp", description: "the skills of a server over HTTP" },
    { command: "mcp-skills list --stdio \"mcp-skills-server serve ./skills --stdio\" --json", description: "a server it spawns, as JSON" }
  ])
)

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

const get = Command.make("get", {
  ...common,
  args: operandsOf("TARGET SKILL_URI", "; SKILL_URI: the skill's SKILL.md URI")
}, (input) =>
  withTarget("get", input, (client, [uri]) =>
    Effect.gen(function*() {
      const { skill, cacheHint } = yield* client.getSkill(uri!)
      yield* Console.log(JSON.stringify({ skill, cacheHint }, null, 2))
    }))).pipe(
  arity("get", (rest) => rest.length === 1 ? undefined : `needs exactly one SKILL_URI after TARGET, got ${rest.length}`),
  Command.withDescription("Print one skill entry as JSON (skills/get): its frontmatter, files, sizes and digests"),
  Command.withExamples([
    { command: "mcp-skills get http://127.0.0.1:3000/mcp skill://pdf-processing/SKILL.md", description: "the entry of one skill" }
  ])
)

// Text a terminal shows as it is: UTF-8 without NUL. Anything else would garble it.
const isBinary = (bytes: Uint8Array) => bytes.includes(0) || !isUtf8(bytes)

const read = Command.make("read", {
  ...common,
  args: operandsOf(
    "TARGET SKILL_URI [FILE]",
    "; SKILL_URI: the skill's SKILL.md URI; FILE: a file of the skill, as a path inside it or its URI (default SKILL.md)"
  ),
  out: Flag.String("out").pipe(
    Flag.withDescription("Write the verified file here instead of printing it (needed for a binary file when standard output is a terminal)"),
    Flag.optional
  )
}, (input) =>
  withTarget("read", input, (client, [uri, file]) =>
    Effect.gen(function*() {
      const { skill } = yield* client.getSkill(uri!)
      yield* client.checkEntry(skill)
      // SKILL.md is always read and verified first (R127, R126).
      const loaded = yield* client.loadSkill(skill).pipe(Effect.mapError((e) => PullError.toPullError(e, { skill: uri, file: uri })))
      const read = file === undefined
        ? { uri: skill.uri, mimeType: "text/markdown", bytes: loaded.skillMd.bytes }
        : yield* client.readSkillResource(skill, file).pipe(Effect.mapError((e) => PullError.toPullError(e, { skill: uri, file })))
      if (Option.isSome(input.out)) {
        const out = input.out.value
        return yield* Effect.try({
          try: () => NodeFs.writeFileSync(out, read.bytes),
          catch: (error) =>
            new PullError.PullError({ check: "write", file: out, detail: `cannot write ${out}: ${error instanceof Error ? error.message : String(error)}` })
        })
      }
      if (process.stdout.isTTY && isBinary(read.bytes)) {
        throw new Usage(
          `${read.uri} is binary (${read.mimeType ?? "unknown type"}, ${counted(read.bytes.byteLength, "byte")}) and standard output is a terminal: give --out FILE, or pipe it`
        )
      }
      yield* Effect.promise(() => new Promise<void>((resolve) => process.stdout.write(read.bytes, () => resolve())))
    }))).pipe(
  arity("read", (rest) => rest.length === 1 || rest.length === 2 ? undefined : `needs SKILL_URI and at most one FILE after TARGET, got ${rest.length} arguments`),
  Command.withDescription(
    "Print one verified file of a skill (SKILL.md by default; SKILL.md is always read and verified first). A binary file is not printed to a terminal: give --out or pipe it"
  ),
  Command.withExamples([
    { command: "mcp-skills read http://127.0.0.1:3000/mcp skill://pdf-processing/SKILL.md", description: "print SKILL.md" },
    {
      command: "mcp-skills read http://127.0.0.1:3000/mcp skill://pdf-processing/SKILL.md references/FORMS.md",
      description: "print a file of the skill"
    },
    {
      command: "mcp-skills read http://127.0.0.1:3000/mcp skill://pdf-processing/SKILL.md assets/logo.png --out logo.png",
      description: "write a binary file"
    }
  ])
)

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

// What a pull replaced on disk (--overwrite-local), path by path.
const logOverwritten = (folder: string, local: PullError.Edits) =>
  Effect.forEach([
    ...local.modified.map((path) => `  ! ${path} (edited here, replaced)`),
    ...local.missing.map((path) => `  ! ${path} (deleted here, restored)`),
    ...local.added.map((path) => `  ! ${path} (added here, removed)`),
    ...(local.truncated ? [`  ! ${folder} (held more than the pull wrote; all of it replaced)`] : [])
  ], (line) => Console.log(line), { discard: true })

const pull = Command.make("pull", {
  ...common,
  args: operandsOf("TARGET [SKILL_URI...]", "; SKILL_URI: the SKILL.md URI of a skill to pull (or --all)"),
  all: Flag.Boolean("all").pipe(Flag.withDescription("Pull every listed skill"), Flag.withDefault(false)),
  into: Flag.String("into").pipe(Flag.withDescription("Target folder")),
  acceptChanges: Flag.Boolean("accept-changes").pipe(
    Flag.withDescription("Replace skills whose files changed since the last pull"),
    Flag.withDefault(false)
  ),
  acceptSigner: Flag.Boolean("accept-signer").pipe(
    Flag.withDescription("With --trust: accept a skill signed by another trusted key than the lock file records"),
    Flag.withDefault(false)
  ),
  overwriteLocal: Flag.Boolean("overwrite-local").pipe(
    Flag.withDescription(
      "Replace installed files edited, deleted or added since they were pulled with the verified source (by default such a pull fails naming them)"
    ),
    Flag.withDefault(false)
  ),
  prune: Flag.Boolean("prune").pipe(
    Flag.withDescription("With --all: remove the skills the server no longer serves, folder and lock file record"),
    Flag.withDefault(false)
  )
}, (input) =>
  withTarget("pull", input, (client, rest) =>
    Effect.gen(function*() {
      const summary = yield* Pull.pull(client, {
        into: input.into,
        uris: rest,
        all: input.all,
        acceptChanges: input.acceptChanges,
        acceptSigner: input.acceptSigner,
        overwriteLocal: input.overwriteLocal,
        prune: input.prune,
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
            yield* logOverwritten(outcome.path, outcome.local)
            break
          case "Restored":
            yield* Console.log(`restored ${outcome.uri} -> ${outcome.path} (${sizes(outcome.files, outcome.bytes)})`)
            yield* logOverwritten(outcome.path, outcome.local)
            break
          case "Unchanged":
            yield* Console.log(`unchanged ${outcome.uri}`)
            break
          case "Nested":
            yield* Console.log(`nested ${outcome.uri} -> ${outcome.path} (inside ${outcome.within})`)
            break
          case "Gone":
            yield* Console.log(`gone ${outcome.uri}: no longer served; ${outcome.path} kept (--prune removes it)`)
            break
          case "Pruned":
            yield* Console.log(`pruned ${outcome.uri}: no longer served; its files under ${outcome.path} removed`)
            break
        }
      }
    }))).pipe(
  arity("pull", (rest, input) => input.all === (rest.length > 0) ? "needs SKILL_URI arguments or --all, not both" : undefined),
  Command.withDescription("Verify skills into a folder, all or nothing, and record them in mcp-skills.lock.json"),
  Command.withExamples([
    { command: "mcp-skills pull http://127.0.0.1:3000/mcp --all --into ./skills", description: "every skill the server lists" },
    {
      command: "mcp-skills pull http://127.0.0.1:3000/mcp skill://pdf-processing/SKILL.md --into ./skills --trust acme.public.pem",
      description: "one skill, only if a trusted key signed it"
    }
  ])
)

/**
 * The root command.
 *
 * @since 0.1.0
 */
export const command = Command.make("mcp-skills").pipe(
  Command.withDescription("List, read and install MCP skills (SEP-2640) with verification"),
  Command.withSubcommands([list, get, read, pull]),
  Command.withExamples([
    { command: "mcp-skills list http://127.0.0.1:3000/mcp", description: "what a server offers" },
    { command: "mcp-skills pull --help", description: "every option of pull" }
  ])
)

/**
 * Runs the command line with the process arguments; the exit status is 0 only on full success.
 *
 * @since 0.1.0
 */
export const main: Effect.Effect<void, unknown> = Effect.suspend(() => {
  const run = command.pipe(Command.run({ version: "0.1.0" }), Effect.provide(CliReport.layerPresenter))
  // A configured OTLP endpoint turns CLIENT spans (their context sent to the server in `_meta`)
  // and the client's series on, exported as the OTEL_* variables say.
  if (!McpTelemetry.otlpConfigured(process.env)) return run
  const protocol = McpTelemetry.otlpProtocol(process.env.OTEL_EXPORTER_OTLP_PROTOCOL)
  if (protocol === undefined) {
    return fail(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got ${process.env.OTEL_EXPORTER_OTLP_PROTOCOL}`)
  }
  return Effect.provide(
    run,
    Layer.merge(McpTelemetry.layer(), McpTelemetry.layerOtlp({ protocol, serviceName: "mcp-skills", serviceVersion: "0.1.0" }))
  )
}).pipe(Effect.provide(NodeServices.layer))
