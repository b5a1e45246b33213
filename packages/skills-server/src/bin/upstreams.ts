/**
 * The gateway options of `mcp-skills-server serve`: upstream skill servers served beside (or
 * instead of) the folders, `--upstream PREFIX=URL`, `--upstream-header PREFIX:NAME=VALUE`,
 * `--upstream-stdio PREFIX=COMMAND`, `--trust KEY`, `--admit FILE` and `--admit-mode`, checked
 * before anything starts; and the `inventory` command that writes an admit list.
 *
 * @since 0.1.0
 */
import { Signing } from "@mcp-skills/core"
import { Verification } from "@mcp-skills/client"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { Command, Flag } from "effect/cli"
import * as NodeFs from "node:fs"
import * as V8 from "node:v8"
import * as AdmitList from "../AdmitList.js"
import * as ServerLimits from "../ServerLimits.js"
import * as UpstreamSource from "../UpstreamSource.js"
import type * as UpstreamStatus from "../UpstreamStatus.js"

/**
 * The flags, to spread into the `serve` command's.
 *
 * @since 0.1.0
 */
export const flags = {
  upstream: Flag.String("upstream").pipe(
    Flag.withDescription("Serve the skills of another MCP skills server under PREFIX, as PREFIX=URL; every file is verified first; repeatable"),
    Flag.atLeast(0)
  ),
  upstreamHeader: Flag.String("upstream-header").pipe(
    Flag.withDescription("An HTTP header for every request to the upstream of PREFIX, as PREFIX:NAME=VALUE (a token); repeatable"),
    Flag.atLeast(0)
  ),
  upstreamStdio: Flag.String("upstream-stdio").pipe(
    Flag.withDescription("Spawn an upstream and speak MCP over its stdio, as PREFIX=COMMAND (words split on spaces); repeatable"),
    Flag.atLeast(0)
  ),
  trust: Flag.String("trust").pipe(
    Flag.withDescription(
      "A signer's public key (SPKI PEM file, from keygen); repeatable. Then an upstream skill is served only if signed by one of them, and the signature verifies"
    ),
    Flag.atLeast(0)
  ),
  admit: Flag.String("admit").pipe(
    Flag.withDescription("An admit list (the format inventory writes), followed as it is edited: which upstream skill versions may be served"),
    Flag.optional
  ),
  admitMode: Flag.Literals("admit-mode", ["observe", "admit"] as const).pipe(
    Flag.withDescription(
      "With --admit: observe serves every verified skill and logs those the list does not name; admit serves only what it names (default observe)"
    ),
    Flag.optional
  )
}

/**
 * What the flags gave.
 *
 * @since 0.1.0
 */
export interface Input {
  readonly upstream: ReadonlyArray<string>
  readonly upstreamHeader: ReadonlyArray<string>
  readonly upstreamStdio: ReadonlyArray<string>
  readonly trust: ReadonlyArray<string>
  readonly admit: Option.Option<string>
  readonly admitMode: Option.Option<AdmitList.Mode>
}

/**
 * The gateway the flags describe: its upstreams, and the admit list it follows.
 *
 * @since 0.1.0
 */
export interface Gateway {
  readonly upstreams: ReadonlyArray<UpstreamSource.Upstream>
  readonly admit: { readonly path: string; readonly mode: AdmitList.Mode } | undefined
}

const split = (spec: string, separator: string) => {
  const at = spec.indexOf(separator)
  return at <= 0 ? undefined : [spec.slice(0, at), spec.slice(at + 1)] as const
}

const trustOf = (files: ReadonlyArray<string>): Result.Result<Verification.Trust | undefined, string> => {
  if (files.length === 0) return Result.succeed(undefined)
  const keys: Array<Signing.PublicKey> = []
  for (const file of files) {
    const key = Verification.readPublicKeyFile(file)
    if (Result.isFailure(key)) return Result.fail(`--trust ${key.failure}`)
    keys.push(key.success)
  }
  return Result.succeed({ keys, mode: "required" })
}

/**
 * The gateway the flags name, or the usage error to print.
 *
 * @since 0.1.0
 */
export const parse = (input: Input): Result.Result<Gateway, string> => {
  const upstreams = parseUpstreams(input)
  if (Result.isFailure(upstreams)) return Result.fail(upstreams.failure)
  if (Option.isNone(input.admit)) {
    return Option.isSome(input.admitMode) ? Result.fail("--admit-mode needs --admit FILE") : Result.succeed({ upstreams: upstreams.success, admit: undefined })
  }
  if (upstreams.success.length === 0) return Result.fail("--admit applies to upstream skills: give --upstream or --upstream-stdio")
  return Result.succeed({
    upstreams: upstreams.success,
    admit: { path: input.admit.value, mode: Option.getOrElse(input.admitMode, () => "observe" as const) }
  })
}

const parseUpstreams = (input: Input): Result.Result<ReadonlyArray<UpstreamSource.Upstream>, string> => {
  const trust = trustOf(input.trust)
  if (Result.isFailure(trust)) return Result.fail(trust.failure)
  const http: Array<readonly [string, string]> = []
  for (const spec of input.upstream) {
    const parts = split(spec, "=")
    if (parts === undefined) return Result.fail(`--upstream ${spec}: expected PREFIX=URL`)
    http.push(parts)
  }
  const headers = new Map(http.map(([prefix]) => [prefix, {} as Record<string, string>]))
  for (const spec of input.upstreamHeader) {
    const target = split(spec, ":")
    const header = target === undefined ? undefined : split(target[1], "=")
    if (target === undefined || header === undefined) return Result.fail(`--upstream-header ${spec}: expected PREFIX:NAME=VALUE`)
    const values = headers.get(target[0])
    if (values === undefined) return Result.fail(`--upstream-header ${spec}: no --upstream ${target[0]}=URL`)
    values[header[0].trim().toLowerCase()] = header[1]
  }
  const upstreams: Array<UpstreamSource.Upstream> = http.map(([prefix, url]) => ({
    prefix,
    transport: UpstreamSource.http(url, headers.get(prefix)),
    trust: trust.success
  }))
  for (const spec of input.upstreamStdio) {
    const parts = split(spec, "=")
    const words = parts?.[1].split(/\s+/).filter((word) => word.length > 0) ?? []
    if (parts === undefined || words.length === 0) return Result.fail(`--upstream-stdio ${spec}: expected PREFIX=COMMAND`)
    upstreams.push({ prefix: parts[0], transport: UpstreamSource.stdio(words[0]!, words.slice(1)), trust: trust.success })
  }
  if (trust.success !== undefined && upstreams.length === 0) {
    return Result.fail("--trust applies to upstream skills: give --upstream or --upstream-stdio")
  }
  const valid = UpstreamSource.validate(upstreams)
  return Result.isFailure(valid) ? Result.fail(valid.failure.message) : Result.succeed(upstreams)
}

// Starts following the gateway's upstreams (none: `undefined`); their problems (unreachable, a
// skill refused, an admit list edit that cannot be used) go to stderr, one line each.
const follow = (gateway: Gateway) =>
  Effect.gen(function*() {
    if (gateway.upstreams.length === 0) return undefined
    // Following upstreams keeps many short-lived objects alive across young collections (files
    // verified as they arrive), which taught V8 to allocate the objects of effect's own sites, used
    // by every later request, straight in the old generation: a gateway then ran a full collection
    // every ~150 ms and spent 4x a direct server's CPU per `skills/list`. A gateway runs without
    // pretenuring; a server without upstreams keeps it (3-5% less CPU per request with it).
    V8.setFlagsFromString("--no-allocation-site-pretenuring")
    const admit = gateway.admit === undefined
      ? undefined
      : { mode: gateway.admit.mode, list: yield* AdmitList.watch(gateway.admit.path, { log: Console.error }) }
    return yield* UpstreamSource.make(gateway.upstreams, { log: Console.error, admit })
  })

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

// ", 2 refused (skill://a/SKILL.md: why; skill://b/SKILL.md: why)", the first few and a count.
const refusals = (refused: ReadonlyArray<UpstreamStatus.Refused>) => {
  if (refused.length === 0) return ""
  // A client error's message often starts with the URI already.
  const quoted = refused.slice(0, ServerLimits.UpstreamRefusalsQuoted).map(({ reason, uri }) =>
    reason.startsWith(`${uri}: `) ? reason : `${uri}: ${reason}`
  )
  const more = refused.length - quoted.length
  return `, ${refused.length} refused (${quoted.join("; ")}${more === 0 ? "" : `; and ${more} more`})`
}

/**
 * The server `serve` makes of the upstreams it follows, reporting on `log` what each one serves:
 * they are followed for as long as the server layer lives, inside it, so what is provided to it
 * (metrics, traces) reaches them too.
 *
 * @since 0.1.0
 */
export const serving = <A, E, R>(
  gateway: Gateway,
  options: { readonly log: (line: string) => Effect.Effect<void> },
  server: (followed: UpstreamSource.Upstreams | undefined) => Layer.Layer<A, E, R>
) =>
  Layer.unwrap(Effect.gen(function*() {
    const followed = yield* follow(gateway)
    for (const status of followed === undefined ? [] : yield* followed.status) {
      yield* options.log(
        `following upstream ${status.name}: ${plural(status.skills, "verified skill")}` +
          (status.unadmitted === 0 ? "" : `, ${status.unadmitted} not in the admit list`) +
          refusals(status.refused) +
          (!status.reachable
            ? status.problem === undefined
              ? ` (not seen yet: no answer within ${Duration.format(ServerLimits.UpstreamStartup)}; it joins when it answers)`
              : ` (unreachable: ${status.problem})`
            : status.looked
            ? ""
            : " so far (its first look is still running; the rest is served once verified)")
      )
    }
    return server(followed)
  })).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * `mcp-skills-server inventory`: every verified skill version of the upstreams, written in the
 * admit list's format (to stdout, or `--out FILE`), so an operator admits by copying or editing it.
 * An upstream that cannot be reached fails it: an inventory says what each upstream serves.
 *
 * @since 0.1.0
 */
export const inventory = Command.make(
  "inventory",
  {
    ...flags,
    out: Flag.String("out").pipe(Flag.withDescription("Write the inventory to this file (default: stdout)"), Flag.optional)
  },
  Effect.fnUntraced(function*(input) {
    const gateway = parse(input)
    if (Result.isFailure(gateway)) return yield* fail(gateway.failure)
    if (gateway.success.upstreams.length === 0) return yield* fail("give the upstreams to take the inventory of (--upstream PREFIX=URL)")
    const followed = (yield* follow(gateway.success))!
    for (const status of yield* followed.status) {
      if (!status.reachable) return yield* fail(`upstream ${status.name} is unreachable: ${status.problem ?? "no answer"}`)
    }
    const text = AdmitList.format(yield* followed.inventory)
    if (Option.isNone(input.out)) return yield* Console.log(text.trimEnd())
    const out = input.out.value
    yield* Effect.try({ try: () => NodeFs.writeFileSync(out, text), catch: (error) => String(error) }).pipe(
      Effect.catch((reason) => fail(`cannot write ${out}: ${reason}`))
    )
  }, (effect) =>
    Effect.scoped(Effect.provide(effect, FetchHttpClient.layer)).pipe(
      Effect.catchTags({
        UpstreamError: (error) => fail(error.message),
        AdmitListError: (error) => fail(error.message)
      })
    ))
).pipe(
  Command.withDescription("Write every verified skill version of the upstreams in the admit list's format (--admit)"),
  Command.withExamples([{
    command: "mcp-skills-server inventory --upstream team=https://skills.team.example/mcp --out admit.json",
    description: "then serve --upstream team=... --admit admit.json --admit-mode admit"
  }])
)

const fail = (message: string) =>
  Effect.andThen(Console.error(`mcp-skills-server: ${message}`), Effect.sync(() => {
    process.exitCode = 1
  }))
