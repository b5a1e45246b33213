/**
 * The `mcp-skills` command line: list, search, inspect, read and install skills from an MCP server,
 * verifying every file against its entry; install them where agent hosts read them and keep them
 * in sync; say what is installed where.
 *
 * @since 0.1.0
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { Command, Flag } from "effect/cli"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { McpTelemetry, Signing, type Skill } from "@mcp-skills/core"
import { CliReport } from "@mcp-skills/core"
import { isUtf8 } from "node:buffer"
import * as NodeFs from "node:fs"
import * as Install from "./internal/cli/install.js"
import * as Search from "./internal/cli/search.js"
import * as Status from "./internal/cli/status.js"
import { arity, common, fail, operandsOf, Usage, withTarget } from "./internal/cli/target.js"
import { counted, sizes } from "./internal/lines.js"
import { reasonOf } from "./internal/systemError.js"
import * as PullError from "./PullError.js"
import * as Verification from "./Verification.js"

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
            new PullError.PullError({ check: "write", file: out, detail: `cannot write ${out}: ${reasonOf(error)}` })
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

/**
 * The root command.
 *
 * @since 0.1.0
 * @category cli
 */
export const command = Command.make("mcp-skills").pipe(
  Command.withDescription("List, read, install and keep in sync MCP skills (SEP-2640) with verification"),
  Command.withSubcommands([list, Search.command, get, read, ...Install.commands, Status.command]),
  Command.withExamples([
    { command: "mcp-skills list http://127.0.0.1:3000/mcp", description: "what a server offers" },
    { command: "mcp-skills pull --help", description: "every option of pull" }
  ])
)

/**
 * Runs the command line with the process arguments; the exit status is 0 only on full success.
 *
 * @since 0.1.0
 * @category cli
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
