/**
 * Other skill servers as sources of the catalogue: a gateway. Each upstream (an HTTP URL with its
 * request headers, or a stdio command) is read through the verifying `SkillsClient` of
 * `@mcp-skills/client`, and only what passed its checks is served: every file of a skill was
 * fetched and checked (size, digest, `SKILL.md` first and its frontmatter against the entry,
 * files the entry does not list never read, limits and, with `trust`, the author's signature
 * before any file). Its skills appear under the upstream's prefix (`skill://PREFIX/...`) as
 * ordinary definitions, so everything the server does (visibility, the fast route, notifications,
 * cache hints, sessions, metrics, the change bus) applies unchanged, and local folders, code
 * skills and upstreams mix in one catalogue.
 *
 * - Namespaces: a prefix adds path segments and never renames a skill. A skill of one origin that
 *   has the URI of, lies inside, or encloses a skill of another is refused: at start-up the
 *   catalogue fails with `RegistrationError`; on a change the newcomer is logged and not served.
 * - Live: the gateway hears each upstream's notifications (2026-07-28 `subscriptions/listen`;
 *   2025-11-25 a session of its own with `resources/subscribe`; over stdio the connection itself)
 *   and looks again, verifying only what changed; it also looks again after the upstream's
 *   `ttlMs`, within `recheck`, since not every server says when it changes. An unreachable
 *   upstream keeps its last verified skills (a log line, `mcp_skills_upstream_up` 0) and is
 *   reconnected with capped exponential backoff.
 * - Kinds: a `"dynamic"` upstream skill is served as dynamic, each read fetched and checked on
 *   request; a get-only (unlisted) skill is fetched, verified and registered on `skills/get`
 *   (through `SkillResolver`), and looked at again with the others.
 * - Nothing unverified is served: a version that fails a check is not served (the previous
 *   verified version stays, or the skill is absent), logged with the reason once and counted
 *   (`mcp_skills_upstream_refused`, by check).
 * - Signatures pass through unchanged (they cover no URI, so they survive the prefix); each entry
 *   says where it came from under `Skill.ProvenanceMetaKey`.
 * - Cache hints: each skill carries the hint of the upstream answer it came from, so a private
 *   upstream answer keeps the gateway's answers about it private.
 *
 * ```ts
 * const upstreams = yield* UpstreamSource.make([
 *   { prefix: "team", transport: UpstreamSource.http("https://skills.team.example/mcp") }
 * ])
 * const Skills = SkillsServer.layer({ skills: upstreams.catalogue(local) }).pipe(Layer.provide(upstreams.resolver))
 * const Gateway = upstreams.follow.pipe(Layer.provideMerge(Skills))
 * ```
 *
 * @since 0.1.0
 */
import { Limits, SkillUri } from "@mcp-skills/core"
import { Follow, Verification, type SkillsClient } from "@mcp-skills/client"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import type * as HttpClient from "effect/http/HttpClient"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as AdmitList from "./AdmitList.js"
import type * as Skill from "./Skill.js"
import * as ServerLimits from "./ServerLimits.js"
import * as SkillRegistry from "./SkillRegistry.js"
import * as SkillResolver from "./SkillResolver.js"
import type * as UpstreamStatus from "./UpstreamStatus.js"
import * as Connect from "./internal/upstream/connect.js"
import * as Following from "./internal/upstream/follow.js"
import * as Namespace from "./internal/upstream/namespace.js"

/**
 * How the gateway reaches an upstream: Streamable HTTP with headers sent on every request (a
 * token), or a command it spawns and speaks to over stdio (the client's `Follow.Transport`).
 *
 * @since 0.1.0
 * @category models
 */
export type Transport = Follow.Transport

/**
 * An upstream over HTTP.
 *
 * @since 0.1.0
 * @category constructors
 */
export const http: (url: string, headers?: Readonly<Record<string, string>>) => Transport = Follow.http

/**
 * An upstream spawned with `command` and `args`, spoken to over stdio.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stdio: (
  command: string,
  args?: ReadonlyArray<string>,
  options?: { readonly env?: Readonly<Record<string, string>> | undefined; readonly cwd?: string | undefined }
) => Transport = Follow.stdio

/**
 * One upstream.
 *
 * @since 0.1.0
 * @category models
 */
export interface Upstream {
  /**
   * The skill-path segments its skills are served under (`"team"`, `"acme/team"`); also its name
   * in logs, metrics and provenance. Not empty; unique among the upstreams.
   */
  readonly prefix: string
  readonly transport: Transport
  /**
   * The authors whose signatures its skills must carry (`Verification.Trust`): a skill without a
   * trusted signature that verifies is not served. Default: signatures are relayed, not required.
   */
  readonly trust?: Verification.Trust | undefined
  /** The revision to speak (default `"auto"`: 2026-07-28, else 2025-11-25). */
  readonly protocolVersion?: SkillsClient.ProtocolChoice | undefined
}

/**
 * Options shared by the upstreams of one gateway.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Per-skill limits an upstream skill is checked against (default the spec's 512 files / 16 MiB). */
  readonly limits?: Partial<Limits.Limits> | undefined
  /**
   * Bounds of the look again after an upstream's `ttlMs` (default `ServerLimits.UpstreamRecheck`, 5 seconds to 10 minutes): a
   * `ttlMs` of 0 is not a reason to ask without pause, nor a day a reason to miss a change.
   */
  readonly recheck?: { readonly min?: Duration.Input | undefined; readonly max?: Duration.Input | undefined } | undefined
  /** Reconnection backoff: doubling from `base` up to `cap` (default `ServerLimits.UpstreamBackoff`, 500 ms to 30 s). */
  readonly backoff?: { readonly base?: Duration.Input | undefined; readonly cap?: Duration.Input | undefined } | undefined
  /** Quiet time after a notification before looking again, so a burst costs one look (default `ServerLimits.UpstreamSettle`, 50 ms). */
  readonly settle?: Duration.Input | undefined
  /** Deadline of every request to an upstream (default `ServerLimits.UpstreamTimeout`, 30 seconds). */
  readonly timeout?: Duration.Input | undefined
  /**
   * How long `make` waits for the upstreams' first looks (default `ServerLimits.UpstreamStartup`, 10 seconds): one deadline
   * from the call for all of them, covering spawning or connecting, the handshake, the listing and
   * verifying every file. One that takes longer (a hanging upstream) starts with no skills and joins
   * the catalogue when it answers.
   */
  readonly startup?: Duration.Input | undefined
  /** Most get-only skills held per upstream; the least recently asked for goes first (default `ServerLimits.UpstreamMaxUnlisted`, 256). */
  readonly maxUnlisted?: number | undefined
  /** Receives the gateway's lines (an upstream down and back, a skill refused). Default `Effect.logWarning`. */
  readonly log?: ((line: string) => Effect.Effect<void>) | undefined
  /**
   * Governance (`AdmitList`): in `observe` mode every verified skill is served and each version
   * the list does not name is logged; in `admit` mode only the versions it names are served.
   * Default: every verified skill is served.
   */
  readonly admit?: { readonly mode: AdmitList.Mode; readonly list: AdmitList.Source } | undefined
}

/**
 * An upstream that cannot be followed as given: a bad prefix, two with one prefix, a URL that is
 * not HTTP, a trust key that is not one.
 *
 * @since 0.1.0
 * @category errors
 */
export class UpstreamError extends Schema.TaggedError<UpstreamError>()("UpstreamError", {
  upstream: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `upstream ${this.upstream}: ${this.reason}`
  }
}

/**
 * The upstreams of a gateway, followed from `make` until its scope closes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Upstreams {
  /** The verified definitions of every upstream now (no request is made). */
  readonly definitions: Effect.Effect<ReadonlyArray<Skill.Definition>>
  /**
   * `local` followed by every upstream's definitions, failing with `RegistrationError` when two
   * origins collide: the catalogue of `SkillsServer.layer`, run again on every reload.
   */
  readonly catalogue: <E, R>(
    local: Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, E, R>
  ) => Effect.Effect<ReadonlyArray<Skill.Definition>, E | SkillRegistry.RegistrationError, R>
  /** Provide to `SkillsServer.layer`: fetches get-only upstream skills on `skills/get`. */
  readonly resolver: Layer.Layer<SkillResolver.SkillResolver>
  /** Hands upstream changes to the registry the server built (provide the skills layer to it). */
  readonly follow: Layer.Layer<never, never, SkillRegistry.SkillRegistry>
  readonly status: Effect.Effect<ReadonlyArray<UpstreamStatus.Status>>
  /**
   * Every verified upstream skill version, served or not, in the admit list's format: what
   * `mcp-skills-server inventory` writes.
   */
  readonly inventory: Effect.Effect<AdmitList.AdmitList>
}

const segmentsOf = (prefix: string) => prefix.split("/").filter((segment) => segment.length > 0)

/**
 * Checks upstreams as `make` does, before anything starts (a command line's options): each one's
 * prefix segments, or the first problem found.
 *
 * @since 0.1.0
 * @category constructors
 */
export const validate = (upstreams: ReadonlyArray<Upstream>): Result.Result<ReadonlyArray<ReadonlyArray<string>>, UpstreamError> => {
  const names = new Set<string>()
  const prefixes: Array<ReadonlyArray<string>> = []
  for (const upstream of upstreams) {
    const checked = check(upstream, names)
    if (Result.isFailure(checked)) return Result.fail(checked.failure)
    prefixes.push(checked.success)
  }
  return Result.succeed(prefixes)
}

const check = (upstream: Upstream, names: Set<string>): Result.Result<ReadonlyArray<string>, UpstreamError> => {
  const fail = (reason: string) => Result.fail(new UpstreamError({ upstream: upstream.prefix, reason }))
  const segments = segmentsOf(upstream.prefix)
  if (segments.length === 0) return fail("the prefix is empty: an upstream's skills are served under a prefix of their own")
  if (segments.some(SkillUri.isHidden)) return fail("a prefix segment starting with \".\" would serve hidden paths")
  const probe = SkillUri.skillMd("skill", [...segments, "x"])
  if (Result.isFailure(probe)) return fail(`not a valid skill-path prefix: ${probe.failure.reason}`)
  const name = segments.join("/")
  if (names.has(name)) return fail("two upstreams have this prefix")
  names.add(name)
  if (upstream.transport._tag === "Http") {
    const url = URL.canParse(upstream.transport.url) ? new URL(upstream.transport.url) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return fail(`${upstream.transport.url} is not an http(s) URL`)
    }
  }
  if (upstream.trust !== undefined) {
    const policy = Verification.trustPolicy(upstream.trust)
    if (Result.isFailure(policy)) return fail(`trust: ${policy.failure.reason}`)
  }
  return Result.succeed(segments)
}

/**
 * Starts following `upstreams` in the current scope and waits for each one's first look, all
 * within one deadline (`startup`), so the catalogue starts with what they serve: an upstream
 * unreachable or silent at start-up starts with no skill (logged) and keeps being reconnected. Needs an `HttpClient` for HTTP
 * upstreams and a `ChildProcessSpawner` for stdio ones (`NodeServices.layer`).
 *
 * @example
 * ```ts
 * import { NodeServices } from "@effect/platform-node"
 * import { SkillsServer, UpstreamSource } from "@mcp-skills/server"
 * import { Effect, Layer } from "effect"
 * import { McpProtocol, McpServer } from "effect/ai"
 * import { FetchHttpClient } from "effect/http"
 *
 * // Another server's skills under skill://team/, every file verified before it is served.
 * const Gateway = Layer.unwrap(Effect.gen(function*() {
 *   const upstreams = yield* UpstreamSource.make([
 *     { prefix: "team", transport: UpstreamSource.http("https://skills.team.example/mcp") }
 *   ])
 *   const Skills = SkillsServer.layer({ skills: upstreams.catalogue([]) }).pipe(Layer.provide(upstreams.resolver))
 *   return McpServer.layerHttp({
 *     name: "gateway", version: "1.0.0", path: "/mcp",
 *     protocols: SkillsServer.protocols([McpProtocol.v2026_07_28]),
 *     registrations: upstreams.follow.pipe(Layer.provideMerge(Skills))
 *   })
 * })).pipe(Layer.provide([FetchHttpClient.layer, NodeServices.layer]))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  upstreams: ReadonlyArray<Upstream>,
  options: Options = {}
): Effect.Effect<Upstreams, UpstreamError, Scope.Scope | HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.gen(function*() {
    const prefixes = yield* Effect.fromResult(validate(upstreams))
    const limits: Limits.Limits = { ...Limits.defaults, ...options.limits }
    const duration = (input: Duration.Input | undefined, fallback: Duration.Input) => Duration.fromInputUnsafe(input ?? fallback)
    const registry = yield* Deferred.make<SkillRegistry.SkillRegistry["Service"]>()
    const intake = yield* Semaphore.make(1)
    const context = yield* Effect.context<HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner>()
    const followers = yield* Effect.forEach(upstreams, (upstream, i) => {
      const name = prefixes[i]!.join("/")
      const connection: Connect.Options = {
        name,
        transport: upstream.transport,
        protocolVersion: upstream.protocolVersion ?? "auto",
        trust: upstream.trust,
        limits,
        timeout: options.timeout ?? ServerLimits.UpstreamTimeout
      }
      return Following.make({
        name,
        prefix: prefixes[i]!,
        limits,
        connect: (held) => Effect.provideContext(Connect.connect(connection, held), context),
        recheck: { min: duration(options.recheck?.min, ServerLimits.UpstreamRecheck.min), max: duration(options.recheck?.max, ServerLimits.UpstreamRecheck.max) },
        backoff: { base: duration(options.backoff?.base, ServerLimits.UpstreamBackoff.base), cap: duration(options.backoff?.cap, ServerLimits.UpstreamBackoff.cap) },
        settle: duration(options.settle, ServerLimits.UpstreamSettle),
        maxUnlisted: options.maxUnlisted ?? ServerLimits.UpstreamMaxUnlisted,
        log: options.log ?? ((line) => Effect.logWarning(line)),
        intake,
        admission: options.admit === undefined ? undefined : { mode: options.admit.mode, current: options.admit.list.current }
      }, registry)
    })
    // An edited admit list is followed at once: each upstream serves what it admits now.
    if (options.admit !== undefined) {
      yield* Effect.forkScoped(Stream.runForEach(options.admit.list.changes, () =>
        Effect.forEach(followers, (follower) => follower.readmit, { discard: true })))
    }
    const startup = duration(options.startup, ServerLimits.UpstreamStartup)
    yield* Effect.forEach(followers, (follower) => follower.start(startup), { concurrency: "unbounded", discard: true })
    const definitions = Effect.map(
      Effect.forEach(followers, (follower) => follower.definitions),
      (all): ReadonlyArray<Skill.Definition> => all.flat()
    )
    // The upstream whose prefix is the longest one `uri` lies under.
    const owner = (uri: SkillUri.SkillMdUri) => {
      const path = SkillUri.skillPath(uri)
      let best: Following.Follower | undefined
      for (const follower of followers) {
        const prefix = follower.prefix
        if (path.length > prefix.length && prefix.every((segment, i) => path[i] === segment)) {
          if (best === undefined || prefix.length > best.prefix.length) best = follower
        }
      }
      return best
    }
    return {
      definitions,
      catalogue: (local) =>
        Effect.gen(function*() {
          const own = Effect.isEffect(local) ? yield* local : local
          const all = [...own, ...(yield* definitions)]
          const problems = Namespace.clashes(
            all.filter((definition) => definition._tag !== "Family").map((definition) => ({
              uri: SkillRegistry.keyOf(definition),
              origin: Namespace.originOfDefinition(definition)
            })),
            []
          )
          if (problems.length > 0) return yield* new SkillRegistry.RegistrationError({ problems })
          return all
        }),
      resolver: Layer.succeed(SkillResolver.SkillResolver, {
        resolve: (uri, target) => owner(uri)?.resolve(uri, target) ?? Effect.void
      }),
      follow: Layer.effectDiscard(Effect.gen(function*() {
        yield* Deferred.succeed(registry, yield* SkillRegistry.SkillRegistry)
      })),
      status: Effect.forEach(followers, (follower) => follower.status),
      inventory: Effect.map(
        Effect.forEach(followers, (follower) => follower.inventory),
        (entries): AdmitList.AdmitList => ({ version: 1, skills: entries.flat() })
      )
    } satisfies Upstreams
  })
