/**
 * The gateway options of `mcp-skills-server serve`: upstream skill servers served beside (or
 * instead of) the folders, `--upstream PREFIX=URL`, `--upstream-header PREFIX:NAME=VALUE`,
 * `--upstream-stdio PREFIX=COMMAND` and `--trust KEY`, checked into `UpstreamSource.Upstream`s
 * before anything starts.
 *
 * @since 0.1.0
 */
import { Signing } from "@mcp-skills/core"
import type { Verification } from "@mcp-skills/client"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Result from "effect/Result"
import { Flag } from "effect/cli"
import * as NodeFs from "node:fs"
import * as UpstreamSource from "../UpstreamSource.js"

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
}

const split = (spec: string, separator: string) => {
  const at = spec.indexOf(separator)
  return at <= 0 ? undefined : [spec.slice(0, at), spec.slice(at + 1)] as const
}

const trustOf = (files: ReadonlyArray<string>): Result.Result<Verification.Trust | undefined, string> => {
  if (files.length === 0) return Result.succeed(undefined)
  const keys: Array<Signing.PublicKey> = []
  for (const file of files) {
    let pem: string
    try {
      pem = NodeFs.readFileSync(file, "utf8")
    } catch (error) {
      return Result.fail(`--trust ${file}: ${error instanceof Error ? error.message : String(error)}`)
    }
    const key = Signing.publicKey(pem)
    if (Result.isFailure(key)) return Result.fail(`--trust ${file}: ${key.failure.reason}`)
    keys.push(key.success)
  }
  return Result.succeed({ keys, mode: "required" })
}

/**
 * The upstreams the flags name, or the usage error to print.
 *
 * @since 0.1.0
 */
export const parse = (input: Input): Result.Result<ReadonlyArray<UpstreamSource.Upstream>, string> => {
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

// Starts following `upstreams` (none: `undefined`) and reports, on `log`, what each one serves;
// its problems (unreachable, a skill refused) go to stderr, one line each.
const open = Effect.fnUntraced(function*(
  upstreams: ReadonlyArray<UpstreamSource.Upstream>,
  options: { readonly log: (line: string) => Effect.Effect<void> }
) {
  if (upstreams.length === 0) return undefined
  const followed = yield* UpstreamSource.make(upstreams, { log: Console.error })
  for (const status of yield* followed.status) {
    yield* options.log(
      `following upstream ${status.name}: ${status.skills} verified skill${status.skills === 1 ? "" : "s"}` +
        (status.reachable ? "" : ` (unreachable: ${status.problem ?? "connecting"})`)
    )
  }
  return followed
})

/**
 * The server `serve` makes of the upstreams it follows: they are followed for as long as the
 * server layer lives, inside it, so what is provided to it (metrics, traces) reaches them too.
 *
 * @since 0.1.0
 */
export const serving = <A, E, R>(
  upstreams: ReadonlyArray<UpstreamSource.Upstream>,
  options: { readonly log: (line: string) => Effect.Effect<void> },
  server: (followed: UpstreamSource.Upstreams | undefined) => Layer.Layer<A, E, R>
) => Layer.unwrap(Effect.map(open(upstreams, options), server)).pipe(Layer.provide(FetchHttpClient.layer))
