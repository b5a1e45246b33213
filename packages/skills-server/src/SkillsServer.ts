/**
 * Publishes skills from an effect `McpServer` (the Skills extension, SEP-2640) on 2026-07-28 and
 * 2025-11-25, over any effect MCP transport. Two pieces, both needed: `protocols` wraps effect's
 * protocol adapters so they serve the extension's methods, and `layer` registers the skills and
 * the request policy (visibility, cache hints, page size) with the server. The guides of
 * `docs/` (serve a folder, skills in code, visibility and auth) are the user guide.
 *
 * @since 0.1.0
 */
import { EffectSupport, Extension } from "@mcp-skills/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { HttpRouter } from "effect/http"
import * as Schema from "effect/Schema"
import type { McpProtocol } from "effect/ai"
import { McpServer } from "effect/ai"
import * as ServerLimits from "./ServerLimits.js"
import type * as Skill from "./Skill.js"
import * as SkillRegistry from "./SkillRegistry.js"
import type * as Snapshot from "./Snapshot.js"
import type * as Visibility from "./Visibility.js"
import * as SkillResolver from "./SkillResolver.js"
import * as Admission from "./internal/admission.js"
import * as Build from "./internal/build.js"
import * as Registry from "./internal/registry.js"
import * as Port from "./internal/effect/port.js"
import * as Faults from "./internal/faults.js"
import * as FastRoute from "./internal/fastRoute.js"
import * as Kind from "./internal/kind.js"
import * as RouterAdmission from "./internal/routerAdmission.js"
import * as Notices from "./internal/notices.js"
import * as OnDemand from "./internal/onDemand.js"
import * as SessionRoute from "./internal/sessionRoute.js"
import * as Sessions from "./internal/sessions.js"
import * as Answer from "./internal/surface/answer.js"
import * as GetSkillSurface from "./internal/surface/getSkill.js"
import * as ListResources from "./internal/surface/listResources.js"
import * as ListSkillsSurface from "./internal/surface/listSkills.js"
import * as NativeSurface from "./internal/surface/native.js"
import * as ReadDirectory from "./internal/surface/readDirectory.js"
import * as ReadResource from "./internal/surface/readResource.js"
import * as Request from "./internal/surface/request.js"
import * as Subscriptions from "./internal/surface/subscriptions.js"
import * as Tools from "./internal/surface/tools.js"
import * as Search from "./internal/search.js"
import * as Visible from "./internal/visibility.js"
import * as Telemetry from "./internal/telemetry.js"

/**
 * Options of `layer`.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options<E extends Visibility.CheckError, R, SE, SR> {
  /**
   * The skills, or an Effect producing them (e.g. loading a directory). An Effect runs again on
   * every `SkillRegistry.reload`.
   */
  readonly skills: Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, SE, SR>
  readonly visibility?: Visibility.Check<E, R> | undefined
  /**
   * Freshness hint of 2026-07-28 results (SEP-2549); `scope: "public"` is honoured only without a
   * visibility check.
   */
  readonly cacheHint?: Skill.CacheHint | undefined
  /** Entries per page of `skills/list` and `resources/directory/read` (default `ServerLimits.PageSize`). */
  readonly pageSize?: number | undefined
  /** Per-skill limits; the spec's 512 files / 16 MiB unless raised explicitly. */
  readonly limits?: SkillRegistry.Options["limits"]
  /**
   * Serve only skills whose signature verifies against the files served; the others are left out
   * of the catalogue with one log line each (see `SkillRegistry.Options.requireSigned`).
   */
  readonly requireSigned?: boolean | undefined
  /**
   * 2025-11-25 HTTP sessions: a session ends on DELETE (with effect's `allowSessionTermination`)
   * or after `idleTimeout` without a request or an open stream, and holds at most
   * `maxSubscriptions` `resources/subscribe` URIs. At most `maxSessions` live at once,
   * `maxSessionsPerClient` per remote address; an `initialize` past either is answered 503 with
   * `Retry-After`. A session stream whose reader leaves more than `maxPendingBytes` untaken is cut.
   */
  readonly sessions?: SessionOptions | undefined
  /** How errors name this registry (default: its skill count and first skill URIs). */
  readonly name?: string | undefined
  /**
   * Answer stateless 2026-07-28 HTTP reads of static skills (`skills/list`, `skills/get`,
   * `resources/read`, `resources/directory/read`) from answers encoded once per catalogue, ahead
   * of effect's dispatch (default `true`). Results are the same either way; see "Fast route".
   */
  readonly fastRoute?: boolean | undefined
  /**
   * Also serve the catalogue as read-only tools (`search_skills`, `load_skill`, `read_skill_file`)
   * for hosts without the extension, under the same visibility (default `false`); see "Tools".
   */
  readonly tools?: boolean | undefined
}

/**
 * Bounds of 2025-11-25 HTTP sessions' state (see `Options.sessions`).
 *
 * @since 0.1.0
 * @category options
 */
export interface SessionOptions {
  /** Default `ServerLimits.SessionIdleTimeout` (30 minutes). */
  readonly idleTimeout?: Duration.Input | undefined
  /** Default `ServerLimits.MaxSubscriptions` (1,000). */
  readonly maxSubscriptions?: number | undefined
  /** Sessions held at once; default `ServerLimits.MaxSessions` (10,000). */
  readonly maxSessions?: number | undefined
  /** Sessions one remote address holds at once; default `ServerLimits.MaxSessionsPerClient` (1,000). */
  readonly maxSessionsPerClient?: number | undefined
  /**
   * Bytes of notifications a session stream holds that its reader has not taken; default
   * `ServerLimits.MaxPendingBytes` (1 MiB).
   */
  readonly maxPendingBytes?: number | undefined
}

const count = (name: string, value: number | undefined, fallback: number, least: number) => {
  const chosen = value ?? fallback
  return Number.isSafeInteger(chosen) && chosen >= least
    ? Effect.succeed(chosen)
    : Effect.die(new RangeError(`SkillsServer sessions.${name} must be an integer of at least ${least}, got ${chosen}`))
}

// The session bounds of `options`, checked, the defaults filled in.
const sessionBounds = (options: SessionOptions = {}): Effect.Effect<Sessions.Bounds> =>
  Effect.gen(function*() {
    const idleTimeout = options.idleTimeout === undefined ? ServerLimits.SessionIdleTimeout : Duration.fromInputUnsafe(options.idleTimeout)
    if (!(Duration.toMillis(idleTimeout) > 0)) {
      return yield* Effect.die(new RangeError(`SkillsServer sessions.idleTimeout must be positive, got ${String(options.idleTimeout)}`))
    }
    return {
      idleTimeout,
      maxSubscriptions: yield* count("maxSubscriptions", options.maxSubscriptions, ServerLimits.MaxSubscriptions, 0),
      maxSessions: yield* count("maxSessions", options.maxSessions, ServerLimits.MaxSessions, 1),
      maxSessionsPerClient: yield* count("maxSessionsPerClient", options.maxSessionsPerClient, ServerLimits.MaxSessionsPerClient, 1),
      maxPendingBytes: yield* count("maxPendingBytes", options.maxPendingBytes, ServerLimits.MaxPendingBytes, 1)
    }
  })

/**
 * Options of `protocols`.
 *
 * @since 0.1.0
 * @category options
 */
export interface ProtocolOptions {
  /** Serve `resources/directory/read` and declare `directoryRead: true` (default `true`). */
  readonly directoryRead?: boolean | undefined
}

/**
 * Wraps effect protocol adapters so they serve the Skills extension. Pass the result as
 * `protocols` to `McpServer.layerHttp`, `layerStdio`, `layer` or `run`, and add `SkillsServer.layer`
 * to the same server. A server without that layer does not declare the extension and answers its
 * methods as unknown (-32601): declaring it would commit the server to methods it cannot serve (R82).
 *
 * **Details**
 *
 * The wrapped adapters add `skills/list`, `skills/get` and (unless `directoryRead: false`, then
 * -32601, HTTP 404 on 2026-07-28) `resources/directory/read`, declare
 * `capabilities.extensions["io.modelcontextprotocol/skills"]` and `resources`, and answer
 * `resources/read`, `resources/list` and the 2025-11-25 `resources/subscribe` for skill URIs from
 * the registry while every other resource keeps going to effect.
 *
 * ```ts
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { McpProtocol, McpServer } from "effect/ai"
 * import { HttpRouter } from "effect/http"
 * import { createServer } from "node:http"
 * import { Skill, SkillsServer } from "@mcp-skills/server"
 *
 * const Skills = SkillsServer.layer({
 *   skills: [Skill.make({ path: "pdf-processing", files: { "SKILL.md": "---\nname: pdf-processing\ndescription: PDFs\n---\n" } })]
 * })
 *
 * const Server = McpServer.layerHttp({
 *   name: "docs", version: "1.0.0", path: "/mcp",
 *   protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
 *   registrations: Skills
 * })
 *
 * HttpRouter.serve(Server).pipe(Layer.provide(NodeHttpServer.layer(createServer, { port: 3000 })), Layer.launch)
 * ```
 *
 * @since 0.1.0
 * @category protocols
 */
export const protocols = <const P extends ReadonlyArray<McpProtocol.ProtocolAdapter>>(
  adapters: P,
  options?: ProtocolOptions
): P => {
  const directoryRead = options?.directoryRead ?? true
  const extension: Port.Extension = {
    id: Extension.ExtensionId,
    capability: directoryRead ? { directoryRead: true } : {},
    served: Request.serves,
    handlers: {
      [Extension.ListSkillsMethod]: ListSkillsSurface.listSkills,
      [Extension.GetSkillMethod]: GetSkillSurface.getSkill,
      ...(directoryRead ? { [Extension.ReadResourceDirectoryMethod]: ReadDirectory.readDirectory } : {})
    },
    intercept: {
      "resources/read": ReadResource.readResource,
      "resources/list": ListResources.listResources,
      "resources/subscribe": Subscriptions.subscribe,
      "resources/unsubscribe": Subscriptions.unsubscribe
    },
    seen: Notices.remember,
    claimed: (server, effectSkills) => {
      const state = Request.stateFor({ server } as Port.RequestInfo)
      if (state === undefined || effectSkills.length === 0) return Effect.void
      return Effect.flatMap(state.registry.snapshot, (snapshot) => {
        const problems = NativeSurface.clashes(snapshot, effectSkills)
        if (problems.length === 0) return Effect.void
        const error = new SkillRegistry.RegistrationError({ problems })
        // A defect of the server's start: said in the log too, as the run may not report it.
        return Effect.andThen(Effect.logError(error.message), Effect.die(error))
      })
    },
    notices: Notices.listen
  }
  return adapters.map((adapter) => Port.wrapAdapter(adapter, extension, answeredElsewhere)) as unknown as P
}

const normalizeTtl = (ttl: Skill.CacheHint["ttl"]): number => {
  const hint = Registry.normalizeHint({ ttl })
  if (Result.isFailure(hint)) throw new RangeError(`SkillsServer ${hint.failure}`)
  return hint.success.ttlMs
}

/**
 * A second skills registry was added to an `McpServer` that already serves one. effect keeps one
 * set of handlers per method, so two registries cannot both answer `skills/list`; rather than
 * silently serve only one catalogue, the server refuses to start, naming both. Serve code skills
 * and folders from one registry with `combine`.
 *
 * @since 0.1.0
 * @category errors
 */
export class DuplicateRegistryError extends Schema.TaggedError<DuplicateRegistryError>()("DuplicateRegistryError", {
  first: Schema.String,
  second: Schema.String
}) {
  override get message(): string {
    return `one McpServer serves one skills registry, but two were added: ${this.first}, and ${this.second}; ` +
      `put their skills in one SkillsServer.layer({ skills: SkillsServer.combine(...) })`
  }
}

/**
 * The `McpServer` already answers the Skills extension's methods through a protocol adapter other
 * than effect's own (effect's own adapters answer from effect's skills, which the skills layer
 * serves with its own), such as an adapter wrapped twice. Two answerers of `skills/list` on one
 * server would each hide the other's catalogue, so the skills layer refuses to be the second,
 * naming the first. Raised when the layer is built (it sees the server's adapters when it is one
 * of the server's `registrations`), and as a defect when the server starts otherwise.
 *
 * @since 0.1.0
 * @category errors
 */
export class AnswererConflictError extends Schema.TaggedError<AnswererConflictError>()("AnswererConflictError", {
  answerer: Schema.String,
  methods: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.methods.join(", ")} ${this.methods.length === 1 ? "is" : "are"} already answered on this McpServer by ` +
      `${this.answerer}, and one server has one answerer of the Skills extension: pass effect's own protocol ` +
      `adapters to SkillsServer.protocols, once`
  }
}

const answeredElsewhere = (other: Port.Answerer) =>
  new AnswererConflictError({ answerer: other.answerer, methods: [...other.methods] })

/**
 * Where skills may come from in `combine`: one definition, a list of them, or an Effect producing
 * them (such as `DirectorySource.definitions(root)` or a `DirectorySource.make(...)` source's
 * `definitions`).
 *
 * @since 0.1.0
 * @category models
 */
export type SkillSource<E = never, R = never> =
  | Skill.Definition
  | Iterable<Skill.Definition>
  | Effect.Effect<Iterable<Skill.Definition>, E, R>

/**
 * Code skills and any number of folders (or other sources) as one source for one registry:
 *
 * ```ts
 * SkillsServer.layer({
 *   skills: SkillsServer.combine(refunds, DirectorySource.definitions("./skills"), DirectorySource.definitions("./team"))
 * })
 * ```
 *
 * The Effect runs every source (concurrently) at start-up and again on every
 * `SkillRegistry.reload`, so folders are rescanned while code skills stay as they are. Two sources
 * publishing the same skill URI fail registration with `RegistrationError` naming it.
 *
 * @since 0.1.0
 * @category utils
 */
export const combine = <const Sources extends ReadonlyArray<SkillSource<any, any>>>(
  ...sources: Sources
): Effect.Effect<ReadonlyArray<Skill.Definition>, Effect.Error<Sources[number]>, Effect.Services<Sources[number]>> =>
  Effect.map(
    Effect.forEach(
      sources as ReadonlyArray<SkillSource<unknown, unknown>>,
      (source): Effect.Effect<Iterable<Skill.Definition>, unknown, unknown> =>
        Effect.isEffect(source)
          ? source
          : Effect.succeed(Symbol.iterator in source ? source : [source]),
      { concurrency: "unbounded" }
    ),
    (groups) => groups.flatMap((group) => [...group])
  ) as Effect.Effect<ReadonlyArray<Skill.Definition>, Effect.Error<Sources[number]>, Effect.Services<Sources[number]>>

const describeRegistry = (snapshot: Snapshot.Snapshot) => {
  const shown = snapshot.skills.slice(0, 3).map((skill) => skill.uri)
  return `the registry of ${snapshot.skills.length} skill${snapshot.skills.length === 1 ? "" : "s"}` +
    (shown.length === 0 ? "" : ` (${shown.join(", ")}${snapshot.skills.length > shown.length ? ", ..." : ""})`)
}

/**
 * The registration layer: checks that the installed effect has the hooks the server relies on
 * (failing with `EffectSupport.UnsupportedEffect` naming the missing ones) and that nothing else
 * answers the extension's methods on the server (`AnswererConflictError`), builds the registry
 * (failing with `RegistrationError` listing every problem) and attaches it to the `McpServer`.
 * Per-request services the visibility check reads are `McpServer.McpRequest<"Requires", R>`
 * requirements, met like those of effect's own registrations (MCP middleware, or `HttpRouter`
 * middleware through `layerHttp`). It may also be provided on top of the server
 * (`Skills.pipe(Layer.provide(McpServer.layerHttp(...)))`).
 *
 * **Details**
 *
 * - Visibility: `visibility` runs once per request and decides what it may see; the one decision
 *   governs `skills/list`, `skills/get`, `resources/list`, reads and directory reads, and the
 *   notifications each listener hears. A hidden skill looks exactly like an absent one. An
 *   `McpServer.middleware` reaches the check because it runs as the read of a hidden effect
 *   resource (`urn:mcp-skills:visibility`); an `McpServer.visibility` hiding that resource hides
 *   every skill. A check failing with an MCP error fails the request with it; any other failure
 *   (a defect too) is -32603, with one line in the log (no stack trace, at most one a minute).
 * - Errors: client mistakes get -32602 naming the URI (unknown skill, non-`SKILL.md` URI, missing
 *   or hidden file, not a directory, "Unknown or expired cursor"), on both revisions.
 * - Caching: 2026-07-28 results carry `resultType`, `ttlMs` and `cacheScope` from `cacheHint`
 *   (default `{ ttl: 0, scope: "private" }`) or a skill's own hint; a result about several skills
 *   takes the shortest ttl and is `public` only if all are; every page of `skills/list` has the
 *   listing's scope (R36); a visibility check makes every result `private`. 2025-11-25 results
 *   carry none of these fields.
 * - Changes: every commit of the provided `SkillRegistry` (`replace`, `reload`, `upsert`,
 *   `remove`, `update`) emits `notifications/resources/list_changed` and
 *   `notifications/resources/updated` (subscribed files), to each listener only about skills it
 *   may see, each decided as the surface it announces would (`skills/list`, `resources/read`):
 *   stdio connections, `subscriptions/listen` streams, and 2025-11-25 HTTP sessions,
 *   whose GET stream (405 in effect) and subscriptions this layer adds, with caps and an idle
 *   timeout (`sessions`).
 * - Tools: `tools: true` registers `search_skills`, `load_skill` and `read_skill_file` (an effect
 *   toolkit), each call decided as the method it stands for (`skills/list`, `skills/get`,
 *   `resources/read`), so a hidden skill is as absent there; `McpServer` middleware provided to
 *   this layer runs around them as around any tool.
 * - Fast route: with an `HttpRouter`, stateless 2026-07-28 reads of static skills are answered
 *   from answers encoded once per snapshot, the same results effect's path gives; `fastRoute:
 *   false` turns it off. Without an `HttpAdmission` on the endpoint, its admission (4 MiB body
 *   limit, nesting bound) guards every MCP POST of the router; without an
 *   `HttpAdmission.layerRouter` provided, every route of a router listening on loopback admits
 *   only loopback `Host` names.
 *
 * **Gotchas**
 *
 * - effect's `McpServer.middleware`/`visibility` reach the skills only when a `visibility` option
 *   is set (even `() => Effect.succeed(true)`).
 * - Stateless 2026-07-28 clients without a `subscriptions/listen` stream are never told of a
 *   change: they must treat results as fresh for `ttlMs` only.
 * - An open 2025-11-25 session stream holds an HTTP server's graceful shutdown until the client
 *   leaves (the `mcp-skills-server` CLI cuts connections one second after closing).
 *
 * @example
 * ```ts
 * import { Skill, SkillsServer } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * // One decision per request: anonymous callers see nothing under internal/.
 * const Skills = SkillsServer.layer({
 *   skills: [Skill.make({ path: "notes", files: { "SKILL.md": "---\nname: notes\ndescription: Notes\n---\n" } })],
 *   visibility: (request) => Effect.succeed(request.headers["authorization"] !== undefined || ((skill) => skill.path[0] !== "internal"))
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E extends Visibility.CheckError = never, R = never, SE = never, SR = never>(
  options: Options<E, R, SE, SR>
): Layer.Layer<
  SkillRegistry.SkillRegistry,
  SkillRegistry.RegistrationError | DuplicateRegistryError | AnswererConflictError | EffectSupport.UnsupportedEffect | SE,
  McpServer.McpServer | SR | McpServer.McpRequest.From<"Requires", R>
> =>
  Layer.effect(SkillRegistry.SkillRegistry)(Effect.gen(function*() {
    yield* Port.verify
    const pageSize = options.pageSize ?? ServerLimits.PageSize
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      return yield* Effect.die(new RangeError(`SkillsServer pageSize must be a positive integer, got ${pageSize}`))
    }
    const ttlMs = normalizeTtl(options.cacheHint?.ttl ?? 0)
    const source = Effect.isEffect(options.skills)
      ? Effect.provideContext(options.skills as Effect.Effect<Iterable<Skill.Definition>, SE, SR>, yield* Effect.context<SR>())
      : options.skills
    const server = yield* McpServer.McpServer
    const other = Port.otherAnswerer(yield* Effect.context<never>(), Port.methods)
    if (other !== undefined) return yield* answeredElsewhere(other)
    // Clients learn about a changed catalogue from the registry's commits, each listener judging
    // what of each it may hear (`Notices`); the registry lives in this layer's scope, so closing
    // it ends every listener (an open stream would hold the HTTP server's graceful shutdown).
    const registry = yield* SkillRegistry.make<SE>(source, {
      limits: options.limits,
      reserved: () => server.resources.map((entry) => entry.resource.uri),
      requireSigned: options.requireSigned
    })
    // Checked before registering anything on the server, and again (atomically) when attaching.
    const present = Port.attached<Request.State>(server)
    if (present !== undefined) {
      return yield* new DuplicateRegistryError({
        first: present.label,
        second: options.name ?? describeRegistry(yield* registry.snapshot)
      })
    }
    // The catalogue gauges read the latest snapshot when metrics are read, measured once per
    // snapshot: a swap (an upsert of one skill too) does not walk every file to report them.
    const measured = new WeakMap<Snapshot.Snapshot, ReturnType<typeof Telemetry.catalogueOf>>()
    yield* Telemetry.observe(
      { skills: Telemetry.metrics.skills, files: Telemetry.metrics.files, bytes: Telemetry.metrics.bytes },
      () => {
        const latest = SubscriptionRef.getUnsafe(registry.ref)
        let sizes = measured.get(latest)
        if (sizes === undefined) measured.set(latest, sizes = Telemetry.catalogueOf(latest))
        return sizes
      }
    )
    const faults = yield* Faults.make
    // `McpServer.visibility(...).layer` (and other MCP middleware) provided to this layer decides
    // each skill too, as it decides effect's own registrations: a check runs for every request.
    const gates = Port.mcpMiddleware(yield* Effect.context<never>())
    // A check that dies, or fails with anything but an MCP error, is the author's: -32603 and a line.
    const visibility: Visibility.Check<E, R> | undefined = options.visibility ??
      (gates.length > 0 ? () => Effect.succeed(true) : undefined)
    const check = visibility === undefined ? undefined : (request: Visibility.VisibilityRequest) =>
      Faults.guard(faults, "the visibility check", "the visibility check failed", undefined, (error: E): error is E => Port.isWireError(error))(
        Telemetry.visibility(visibility)(request)
      )
    // The check runs inside effect's MCP middleware, so the services it provides reach it.
    const bridge = yield* Port.registerVisibility(
      server,
      check === undefined ? undefined : (request, method) => check(Visible.requestOf(method as Visible.Method, request)),
      gates
    )
    const decide = bridge.decide
    const state: Request.State = {
      label: options.name ?? describeRegistry(yield* registry.snapshot),
      registry,
      rescan: OnDemand.rescan(registry),
      pageSize,
      ttlMs,
      cacheScope: options.cacheHint?.scope ?? "private",
      // Hidden by an `McpServer.visibility` around the skills layer: every skill is.
      decide: decide === undefined ? undefined : (request, method) =>
        Effect.map(decide(request, method), (verdict) => ({ decision: verdict.decision ?? false, services: verdict.services })),
      services: bridge.services,
      sessions: yield* Sessions.make(yield* sessionBounds(options.sessions), (id) => Port.endHttpSession(server, id)),
      renderings: yield* Kind.makeRenderCache,
      faults,
      answers: Answer.makeMemo(),
      searchIndex: Search.makeMemo(),
      resolver: Option.getOrUndefined(yield* Effect.serviceOption(SkillResolver.SkillResolver))
    }
    yield* Telemetry.observe(
      { sessions: Telemetry.metrics.sessions, streams: Telemetry.metrics.streams, subscriptions: Telemetry.metrics.subscriptions },
      state.sessions.counts
    )
    const router = yield* Effect.serviceOption(HttpRouter.HttpRouter)
    if (Option.isSome(router)) {
      const endpoint = Port.endpointOf(yield* Effect.context<never>())
      // Every route of the router admits only the Host names its listener is reached by (DNS
      // rebinding), unless an HttpAdmission.layerRouter provided above says more; first, so it
      // runs ahead of the middleware below.
      yield* RouterAdmission.installDefault(router.value)
      // No MCP body is read unbounded: where no HttpAdmission is provided to the endpoint, the
      // same admission guards every MCP POST of the router, ahead of this layer's other middleware.
      if (!endpoint.admission) {
        yield* router.value.addGlobalMiddleware(Admission.guard(ServerLimits.MaxBodySize) as any)
      }
      // Route middleware other than HttpAdmission (auth, logging, ...) must see every request of
      // the endpoint, so its presence keeps the fast route off; a layer outside the server's own
      // (provided on top of it) cannot see that middleware, so it installs no fast route either.
      if (options.fastRoute !== false && endpoint.insideServer && !endpoint.otherMiddleware) {
        yield* router.value.addGlobalMiddleware(FastRoute.make(server, state, check) as any)
      }
      yield* router.value.addGlobalMiddleware(SessionRoute.make(state, new Set()) as any)
    }
    yield* Effect.mapError(
      Port.attach(server, state),
      ({ existing }) => new DuplicateRegistryError({ first: existing.label, second: state.label })
    )
    if (options.tools === true) yield* Tools.register
    // A resource effect registers after the skills layer (a later `McpServer.resource` layer, or
    // `addResource` at run time) at a URI a skill serves is refused too: a read could answer only
    // one of the two, and `resources/list` would list both.
    yield* Port.guardRegistrations(server, (uri) =>
      Effect.flatMap(registry.snapshot, (snapshot) => {
        const problems = Build.collisions(snapshot, [uri])
        return problems.length > 0 ? Effect.die(new SkillRegistry.RegistrationError({ problems })) : Effect.void
      }))
    return registry
  })) as any

/**
 * A skill declared next to the code that owns it: added to the server's registry (provided by
 * `SkillsServer.layer`) when the layer is built, removed when its scope closes. Layers of several
 * modules compose with `Layer.mergeAll`, as effect's `McpServer.resource` and `tool` do; a skill
 * the registry refuses fails the layer with the `RegistrationError`. Clients are told of both
 * changes as of any catalogue change.
 *
 * ```ts
 * import { Layer } from "effect"
 * import { Skill, SkillsServer } from "@mcp-skills/server"
 *
 * const Skills = SkillsServer.layer({ skills: [] })
 * const Refunds = SkillsServer.skill(Skill.make({
 *   path: "billing/refunds",
 *   files: { "SKILL.md": "---\nname: refunds\ndescription: Issue refunds\n---\n" }
 * }))
 * const Registrations = Layer.mergeAll(Skills, Refunds.pipe(Layer.provide(Skills)))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const skill = (
  definition: Skill.Definition
): Layer.Layer<never, SkillRegistry.RegistrationError, SkillRegistry.SkillRegistry> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const registry = yield* SkillRegistry.SkillRegistry
    yield* Effect.acquireRelease(
      registry.upsert([definition]),
      () =>
        Effect.catch(
          registry.remove([SkillRegistry.keyOf(definition)]),
          (error) => Effect.logWarning(`removing the skill ${SkillRegistry.keyOf(definition)} failed`, error)
        )
    )
  }))

/**
 * A skill family declared as a layer (see `skill`). Services its `list` and `render` read are
 * per-request requirements, met like those of a visibility check: by an `HttpRouter` middleware
 * in front of `layerHttp`, or by an effect `McpServer.middleware` provided to `SkillsServer.layer`
 * (or installed globally). The family's callbacks run with the services that middleware provides
 * around the skills layer, so providing it only to this layer satisfies the type but not the run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const family = <R = never>(
  definition: Skill.Family<R>
): Layer.Layer<never, SkillRegistry.RegistrationError, SkillRegistry.SkillRegistry | McpServer.McpRequest.From<"Requires", R>> =>
  // The requirements are carried by the type; at run time the request's services reach the
  // family's callbacks through the capture the surfaces make (`Call.services`).
  skill(definition as Skill.Family)
