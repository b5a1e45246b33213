/**
 * Publishes skills from an effect `McpServer` (the Skills extension, SEP-2640), on protocol
 * 2026-07-28 and 2025-11-25, over any effect MCP transport (`layerHttp`, `layerStdio`, `layer`).
 *
 * Two pieces, both needed:
 *
 * - `SkillsServer.protocols(adapters, options?)` wraps effect's protocol adapters. The wrapped
 *   adapters add `skills/list`, `skills/get` and `resources/directory/read`, declare
 *   `capabilities.extensions["io.modelcontextprotocol/skills"]` (and `resources`) in
 *   `server/discover` and `initialize`, and answer `resources/read` / `resources/list` for skill
 *   URIs from the registry while every other resource keeps going to effect.
 * - `SkillsServer.layer(options)` is a registration layer: it validates and hashes the skills once
 *   (`SkillRegistry`), attaches the registry and the request policy (visibility, cache hint, page
 *   size) to the `McpServer`, and provides `SkillRegistry` (for `replace`).
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
 * The layer may also be provided on top of the server
 * (`Skills.pipe(Layer.provide(McpServer.layerHttp(...)))`); the adapters find it through the
 * `McpServer` service.
 *
 * **Visibility.** `visibility` runs once per request and decides which skills that request may see:
 * `true`, `false`, or a predicate over skills (evaluated at most once per skill per request). The same
 * decision governs `skills/list`, `skills/get`, `resources/list`, `resources/read` of every file of a
 * skill and directory reads; a hidden skill looks exactly like an absent one, and results computed
 * under a check are `cacheScope: "private"`. The check receives the method, headers (HTTP), the
 * session id (2025-11-25 HTTP) and `McpRequestContext`, and may read services that the user's own
 * middleware provides:
 *
 * - an `HttpRouter.middleware` in front of `layerHttp` (the service is in every request's context);
 * - an `McpServer.middleware`, provided to this layer (`Layer.provide(Auth.layer)`) or globally
 *   (`Auth.layerGlobal`). Because effect runs its middleware only around its own registrations,
 *   the check runs as the read of a hidden effect resource (`urn:mcp-skills:visibility`): the
 *   middleware sees `method: "resources/read"` with that URI as `target`. An `McpServer.visibility`
 *   provided to this layer that hides that resource hides every skill.
 *
 * A check that fails with an MCP error (`{ code, message }`) fails the request with that error;
 * any other failure is an internal error (-32603).
 *
 * **Errors.** Client mistakes get -32602 with a message naming the URI (unknown skill, non-`SKILL.md`
 * URI, missing or hidden file, not a directory, garbled cursor: "Unknown or expired cursor"), on both
 * revisions (a legacy `resources/read` of a skill URI also answers -32602, not -32002, matching
 * `skills/get`; spec §7 item 5). With `directoryRead: false` the method does not exist (-32601, HTTP
 * 404 on 2026-07-28).
 *
 * **Caching.** On 2026-07-28, `skills/list`, `skills/get`, `resources/read` of skill files and
 * `resources/list` carry `resultType: "complete"`, `ttlMs` and `cacheScope` from `cacheHint`
 * (default `{ ttl: 0, scope: "private" }`); `resources/list` takes the stricter of that hint and
 * effect's `cacheHints.resources` when the user also registered effect resources. Directory reads
 * carry them too: the spec does not make that result cacheable, but the official TypeScript SDK
 * client (2.4.0) rejects it without them. 2025-11-25 results carry none of these fields (spec §7
 * item 1).
 *
 * **Listing.** `resources/list` lists the `SKILL.md` of every listed, visible skill (R25: `name`,
 * `description`, `mimeType: text/markdown`, `size`); supporting files are reachable through
 * `resources/read` and directory reads. Unlisted skills stay out of both listings.
 *
 * **Per-skill cache hints.** A skill (`Skill.make({ cacheHint })`), a directory root
 * (`DirectorySource.Root.cacheHint`) or a dynamic skill may carry its own hint, which replaces
 * `cacheHint` for results about it. A result about several skills takes the shortest ttl and is
 * `public` only if every one of them is. `skills/list` pages: the ttl is the shortest of the
 * page's entries, but the scope is the whole listing's (R36 requires one scope for every page of a
 * listing, and a page cannot know what later pages hold): `public` only if every listed skill is
 * public and no visibility check applies. A visibility check always makes results `private`.
 *
 * **Rendered skills.** `Skill.rendered` skills are rendered for each request from the request
 * (headers, session, services): the entry in `skills/list` and `skills/get`, `resources/read`,
 * `resources/list` and directory reads all come from one rendering per request, and the digests
 * are those of the bytes that request is served, so a verifying client succeeds for every caller.
 * Their results are `private` unless the skill's own hint says otherwise; renderings are shared
 * across requests only under the author's `shareKey`.
 *
 * **Skill families.** `Skill.family` skills are addressed by a path template
 * (`customers/{customer}/onboarding`): `skills/get`, reads and directory reads resolve a URI
 * against it without enumerating, `skills/list` and `resources/list` ask the family's `list`, and
 * each instance is rendered per request like a rendered skill, with the request's services (those
 * the middleware around this layer provides). See `SkillFamily`.
 *
 * **Runtime registration.** `upsert` and `remove` on the `SkillRegistry` change the catalogue in
 * time proportional to the change and are announced like `reload`; `SkillsServer.skill` and
 * `SkillsServer.family` are layers that add one skill while their scope is open.
 *
 * **Change notifications.** `replace` and `reload` on the `SkillRegistry` this layer provides swap
 * the catalogue atomically (requests in flight finish on the snapshot they began with) and return
 * the `Changes`. When anything a listing shows changed (an entry added or removed, or any field of
 * a listed entry: frontmatter, a file, a digest, a size) the server emits
 * `notifications/resources/list_changed` (there is no skills-specific notification, spec §7 item
 * 13), and `notifications/resources/updated` for every file whose content changed or that
 * disappeared, to the clients subscribed to it. Each listener hears only of skills it may see at
 * the time of the change, decided by the same visibility check as its requests: a `list_changed`
 * caused only by hidden skills is not sent to it, and `resources/updated` names only visible files.
 * The layer tells every listener itself (effect's `McpServer.notifications` would tell all alike).
 * Delivery per transport (effect 4.1.0):
 *
 * - stdio, 2025-11-25: both, judged by the connection's latest skills request (nothing before its
 *   first one when a check is configured); `resources/subscribe` is also honoured by effect.
 * - HTTP, 2025-11-25 sessions: effect answers the session's GET stream with 405 and refuses
 *   `resources/subscribe`, so this layer adds both (when the server has an `HttpRouter`): a GET
 *   with `Mcp-Session-Id` and `Accept: text/event-stream` opens a stream carrying `list_changed`
 *   and `updated` for the files the session subscribed to. Sessions are not authenticated by
 *   this stream beyond their id; it carries URIs the session subscribed to and nothing else.
 *   A session ends on DELETE (effect's `allowSessionTermination`) or after `sessions.idleTimeout`
 *   (default 30 minutes) without a request or an open stream: its subscriptions go, its streams
 *   close, effect's record of it ends, and its id gets 404 from then on, as does an id that never
 *   was a session. Sessions are capped (`sessions.maxSessions`, `maxSessionsPerClient`: 503 past
 *   them), and a stream whose reader stops reading is cut past `sessions.maxPendingBytes`.
 *
 * **Subscriptions.** `resources/subscribe` (2025-11-25, HTTP and stdio) accepts a skill URI only
 * for a file that exists and that the request may see (otherwise the same -32602 "Resource not
 * found" as a read), refuses URIs over 8,192 characters, and holds at most
 * `sessions.maxSubscriptions` (default 1,000) per HTTP session.
 * - 2026-07-28 (HTTP and stdio): a `subscriptions/listen` stream with `resourcesListChanged` and
 *   `resourceSubscriptions` (effect's implementation), judged by the listen request itself.
 * - `McpServer.layerHttpRequestScoped` (serverless) delivers no broadcast notification at all.
 *
 * **Stateless 2026-07-28 HTTP clients** that hold no `subscriptions/listen` stream are never told
 * of a change. They must treat every result as fresh for `ttlMs` only (`0`, the default, means
 * revalidate on every use): re-list or re-get after the ttl, re-get a skill's entry before reusing
 * files cached from an older one (files are keyed by digest, so unchanged files stay valid), and
 * read a digest or size mismatch on `resources/read` as "the entry is stale": get the entry again
 * and retry once, rather than failing. Servers whose skills change should keep `ttl` short; a
 * static catalogue can use a long ttl and, without visibility checks, `scope: "public"`.
 *
 * **Fast route.** With an `HttpRouter`, the layer installs a global router middleware that answers
 * stateless 2026-07-28 reads of static skills (`skills/list`, `skills/get`, `resources/read`,
 * `resources/directory/read`) from answers encoded once per snapshot, ahead of effect's dispatch,
 * with the same results; everything it is not sure effect would admit and answer alike goes to
 * effect (see `internal/fastRoute.ts` for the admission rules it mirrors). It steps aside where
 * an `McpServer.middleware` runs around the visibility check, and is not installed when the layer
 * sees `HttpRouter` route middleware other than `HttpAdmission` around it, or is not the server's
 * `registrations` (then it cannot see that middleware). Global `HttpRouter`
 * middleware built after this layer runs inside it. `fastRoute: false` turns it off.
 *
 * **Admission.** With an `HttpRouter` and no `HttpAdmission` provided to its endpoint, the layer
 * puts `HttpAdmission`'s admission (4 MiB body limit, nesting bound, JSON-RPC bodies on refusals)
 * in front of every MCP POST of the router, so no body is read unbounded (see `HttpAdmission`).
 *
 * **Gotchas.** effect's `McpServer.middleware`/`visibility` reach the skills only when a
 * `visibility` option is set (even `() => Effect.succeed(true)`): that option is what routes the
 * decision through effect's middleware. An open 2025-11-25 session stream holds an HTTP server's
 * graceful shutdown until the client leaves (the `mcp-skills-server` CLI cuts connections one
 * second after closing).
 *
 * @since 0.1.0
 */
import { EffectSupport, Extension } from "@mcp-skills/core"
import * as Context from "effect/Context"
import { Sse } from "effect/encoding"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type * as Headers from "effect/http/Headers"
import * as Schema from "effect/Schema"
import type { McpProtocol } from "effect/ai"
import { McpSchema, McpServer } from "effect/ai"
import * as Rpc from "effect/rpc/Rpc"
import * as RpcGroup from "effect/rpc/RpcGroup"
import * as HttpAdmission from "./HttpAdmission.js"
import type * as Skill from "./Skill.js"
import type * as SkillFamily from "./SkillFamily.js"
import * as SkillRegistry from "./SkillRegistry.js"
import * as Admission from "./internal/admission.js"
import * as Registry from "./internal/registry.js"
import * as EffectMcp from "./internal/effectMcp.js"
import * as EventStreams from "./internal/eventStreams.js"
import * as FastRoute from "./internal/fastRoute.js"
import * as Handlers from "./internal/handlers.js"
import * as Kind from "./internal/kind.js"
import * as Learning from "./internal/learning.js"
import * as OnDemand from "./internal/onDemand.js"
import * as Sessions from "./internal/sessions.js"
import * as Telemetry from "./internal/telemetry.js"

/**
 * The methods a visibility decision is made for.
 *
 * @since 0.1.0
 */
export type Method =
  | "skills/list"
  | "skills/get"
  | "resources/read"
  | "resources/list"
  | "resources/directory/read"

/**
 * What a visibility check sees of the request.
 *
 * @since 0.1.0
 */
export interface VisibilityRequest {
  readonly method: Method
  readonly protocolVersion: string
  readonly headers: Headers.Headers
  readonly sessionId: string | undefined
  readonly requestContext: McpSchema.McpRequestContext["Service"]
}

/**
 * What the check may look at for each skill.
 *
 * @since 0.1.0
 */
export type SkillInfo = Pick<SkillRegistry.SkillEntry, "uri" | "root" | "path" | "name" | "frontmatter" | "listed">

/**
 * The decision for one request: all skills, none, or a predicate (called at most once per skill).
 *
 * @since 0.1.0
 */
export type Decision = boolean | ((skill: SkillInfo) => boolean)

/**
 * An error a visibility check may fail with; it is sent as this JSON-RPC error.
 *
 * @since 0.1.0
 */
export interface CheckError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/**
 * A visibility check. `R` are per-request services (from `HttpRouter` or `McpServer` middleware).
 *
 * @since 0.1.0
 */
export type Visibility<E extends CheckError, R> = (request: VisibilityRequest) => Effect.Effect<Decision, E, R>

/**
 * Freshness hint for 2026-07-28 results (SEP-2549). `scope: "public"` is honoured only without a
 * visibility check.
 *
 * @since 0.1.0
 */
export type CacheHint = Skill.CacheHint

/**
 * Options of `layer`.
 *
 * @since 0.1.0
 */
export interface Options<E extends CheckError, R, SE, SR> {
  /**
   * The skills, or an Effect producing them (e.g. loading a directory). An Effect runs again on
   * every `SkillRegistry.reload`.
   */
  readonly skills: Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, SE, SR>
  readonly visibility?: Visibility<E, R> | undefined
  readonly cacheHint?: CacheHint | undefined
  /** Entries per page of `skills/list` and `resources/directory/read` (default 50). */
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
   * or after `idleTimeout` (default 30 minutes) without a request or an open stream, and holds at
   * most `maxSubscriptions` (default 1,000) `resources/subscribe` URIs. At most `maxSessions`
   * (default 10,000) live at once, `maxSessionsPerClient` (default 1,000) per remote address; an
   * `initialize` past either is answered 503 with `Retry-After`. A session stream whose reader
   * leaves more than `maxPendingBytes` (default 1 MiB) untaken is cut.
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
}

/**
 * Bounds of 2025-11-25 HTTP sessions' state (see `Options.sessions`).
 *
 * @since 0.1.0
 */
export interface SessionOptions {
  readonly idleTimeout?: Duration.Input | undefined
  readonly maxSubscriptions?: number | undefined
  /** Sessions held at once (default 10,000). */
  readonly maxSessions?: number | undefined
  /** Sessions one remote address holds at once (default 1,000). */
  readonly maxSessionsPerClient?: number | undefined
  /** Bytes of notifications a session stream holds that its reader has not taken (default 1 MiB). */
  readonly maxPendingBytes?: number | undefined
}

/**
 * Options of `protocols`.
 *
 * @since 0.1.0
 */
export interface ProtocolOptions {
  /** Serve `resources/directory/read` and declare `directoryRead: true` (default `true`). */
  readonly directoryRead?: boolean | undefined
}

const WireError = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optionalKey(Schema.Unknown)
})
const Meta = Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
const Cursor = Schema.optionalKey(Schema.String)

// Params are optional on 2025-11-25 (every field of skills/list is), as for effect's own list methods.
const ListSkills = Rpc.make(Extension.ListSkillsMethod, {
  payload: Schema.UndefinedOr(Schema.Struct({ cursor: Cursor, _meta: Meta })),
  success: Schema.Unknown,
  error: WireError
})
const GetSkill = Rpc.make(Extension.GetSkillMethod, {
  payload: { uri: Schema.String, _meta: Meta },
  success: Schema.Unknown,
  error: WireError
})
const ReadResourceDirectory = Rpc.make(Extension.ReadResourceDirectoryMethod, {
  payload: { uri: Schema.String, cursor: Cursor, _meta: Meta },
  success: Schema.Unknown,
  error: WireError
})

/**
 * Wraps effect protocol adapters so they serve the Skills extension. Pass the result as
 * `protocols` to `McpServer.layerHttp`, `layerStdio`, `layer` or `run`, and add `SkillsServer.layer`
 * to the same server. A server without that layer does not declare the extension and answers its
 * methods as unknown (-32601): declaring it would commit the server to methods it cannot serve (R82).
 *
 * @since 0.1.0
 */
export const protocols = <const P extends ReadonlyArray<McpProtocol.ProtocolAdapter>>(
  adapters: P,
  options?: ProtocolOptions
): P => {
  const directoryRead = options?.directoryRead ?? true
  const extension: EffectMcp.Extension = {
    id: Extension.ExtensionId,
    capability: directoryRead ? { directoryRead: true } : {},
    served: Handlers.serves,
    rpcs: directoryRead ? RpcGroup.make(ListSkills, GetSkill, ReadResourceDirectory) : RpcGroup.make(ListSkills, GetSkill),
    handlers: {
      [Extension.ListSkillsMethod]: Handlers.listSkills,
      [Extension.GetSkillMethod]: Handlers.getSkill,
      ...(directoryRead ? { [Extension.ReadResourceDirectoryMethod]: Handlers.readDirectory } : {})
    },
    intercept: {
      "resources/read": Handlers.readResource,
      "resources/list": Handlers.listResources,
      "resources/subscribe": Handlers.subscribe,
      "resources/unsubscribe": Handlers.unsubscribe
    },
    notices: Handlers.listen
  }
  return adapters.map((adapter) => EffectMcp.wrapAdapter(adapter, extension)) as unknown as P
}

const normalizeTtl = (ttl: CacheHint["ttl"]): number => {
  const hint = Registry.normalizeHint({ ttl })
  if (Result.isFailure(hint)) throw new RangeError(`SkillsServer ${hint.failure}`)
  return hint.success.ttlMs
}

const encoder = new TextEncoder()

const event = (method: string, params: Record<string, unknown>) =>
  encoder.encode(
    Sse.encoder.write({ _tag: "Event", event: "message", id: undefined, data: JSON.stringify({ jsonrpc: "2.0", method, params }) })
  )

const isEventStreamGet = (request: HttpServerRequest.HttpServerRequest) => {
  const version = request.headers["mcp-protocol-version"]
  return request.method === "GET" && (request.headers.accept ?? "").includes("text/event-stream") &&
    (version === undefined || version === "2025-11-25")
}

const notFound = HttpServerResponse.empty({ status: 404 })

// 2025-11-25 HTTP sessions (see internal/sessions.ts). effect 4.1.0 answers a session's GET (the
// standalone SSE stream) with 405, so its HTTP sessions would never hear of a changed catalogue:
// where effect says 405 to such a GET, this stream carries list_changed and resources/updated (for
// the session's subscriptions) until the session ends or the client leaves. Sessions are learnt
// from effect's initialize answers, on the paths those answers came from; a request on such a
// path with an id that is not (or no longer) a session gets 404, like effect's own answer.
const sessionMiddleware = (state: Handlers.State, mcpPaths: Set<string>, maxPendingBytes: number) =>
(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>) =>
  Effect.gen(function*() {
    const sessions = state.sessions
    const request = yield* HttpServerRequest.HttpServerRequest
    const session = request.headers["mcp-session-id"]
    if (session === undefined) {
      const response = yield* httpEffect
      if (request.method !== "POST") return response
      // effect names a new session in a pre-response handler of its own; this one runs after it.
      yield* HttpEffect.appendPreResponseHandler((_request, final) => {
        const created = final.headers["mcp-session-id"]
        if (created === undefined || final.status !== 200) return Effect.succeed(final)
        mcpPaths.add(FastRoute.pathOf(request.url))
        return Effect.flatMap(
          sessions.open(created, Sessions.clientOf(request)),
          (full) => full === undefined ? Effect.succeed(final) : Sessions.refusal(request, sessions, full)
        )
      })
      // 2026-07-28 `subscriptions/listen` answers are event streams that a buffering proxy would hold.
      return EventStreams.noProxyBuffering(response)
    }
    if (!mcpPaths.has(FastRoute.pathOf(request.url))) return yield* httpEffect
    if (!(yield* sessions.touch(session))) return isEventStreamGet(request) || request.method !== "GET" ? notFound : yield* httpEffect
    const response = yield* httpEffect
    if (request.method === "DELETE") {
      if (response.status >= 200 && response.status < 300) yield* sessions.end(session)
      return response
    }
    if (response.status !== 405 || !isEventStreamGet(request)) return response
    const writer = yield* Effect.withFiber((fiber) => Effect.succeed(fiber))
    const events = Stream.unwrap(Effect.gen(function*() {
      const opened = yield* sessions.stream(session)
      if (Option.isNone(opened)) return Stream.empty
      const notices = yield* Handlers.notices(state, opened.value.latest, opened.value.subscribed)
      return Stream.concat(
        // Sent at once, so the client has its headers (and is subscribed) before any change.
        Stream.make(encoder.encode(": skills session stream\n\n")),
        Stream.map(notices, (notice) =>
          notice._tag === "ResourcesChanged"
            ? event("notifications/resources/list_changed", {})
            : event("notifications/resources/updated", { uri: notice.uri }))
      ).pipe(Stream.interruptWhen(opened.value.ended))
    }))
    const dropped = Effect.andThen(
      Telemetry.count(Telemetry.metrics.notifications, { outcome: "dropped" }),
      Effect.logWarning(
        `a 2025-11-25 session stream was cut: its reader left more than ${maxPendingBytes} bytes of notifications untaken`,
        { client: Sessions.clientOf(request) }
      )
    )
    return HttpServerResponse.stream(EventStreams.withKeepAlive(EventStreams.bounded(events, maxPendingBytes, writer, dropped)), {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "mcp-session-id": session, "x-accel-buffering": "no" }
    })
  })

/**
 * A second skills registry was added to an `McpServer` that already serves one. effect keeps one
 * set of handlers per method, so two registries cannot both answer `skills/list`; rather than
 * silently serve only one catalogue, the server refuses to start, naming both. Serve code skills
 * and folders from one registry with `combine`.
 *
 * @since 0.1.0
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
 * Where skills may come from in `combine`: one definition, a list of them, or an Effect producing
 * them (such as `DirectorySource.definitions(root)` or a `DirectorySource.make(...)` source's
 * `definitions`).
 *
 * @since 0.1.0
 */
export type SkillSource<E = never, R = never> =
  | Skill.Definition
  | Iterable<Skill.Definition>
  | Effect.Effect<Iterable<Skill.Definition>, E, R>

type SourceError<S> = S extends Effect.Effect<any, infer E, any> ? E : never
type SourceContext<S> = S extends Effect.Effect<any, any, infer R> ? R : never

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
 */
export const combine = <const Sources extends ReadonlyArray<SkillSource<any, any>>>(
  ...sources: Sources
): Effect.Effect<ReadonlyArray<Skill.Definition>, SourceError<Sources[number]>, SourceContext<Sources[number]>> =>
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
  ) as Effect.Effect<ReadonlyArray<Skill.Definition>, SourceError<Sources[number]>, SourceContext<Sources[number]>>

const describeRegistry = (snapshot: SkillRegistry.Snapshot) => {
  const shown = snapshot.skills.slice(0, 3).map((skill) => skill.uri)
  return `the registry of ${snapshot.skills.length} skill${snapshot.skills.length === 1 ? "" : "s"}` +
    (shown.length === 0 ? "" : ` (${shown.join(", ")}${snapshot.skills.length > shown.length ? ", ..." : ""})`)
}

/**
 * The registration layer: checks that the installed effect has the hooks the server relies on
 * (failing with `EffectSupport.UnsupportedEffect` naming the missing ones), builds the registry
 * (failing with `RegistrationError` listing every problem) and attaches it to the `McpServer`. Per-request services the visibility check reads
 * are `McpServer.McpRequest<"Requires", R>` requirements, met like those of effect's own
 * registrations (MCP middleware, or `HttpRouter` middleware through `layerHttp`).
 *
 * @since 0.1.0
 */
export const layer = <E extends CheckError = never, R = never, SE = never, SR = never>(
  options: Options<E, R, SE, SR>
): Layer.Layer<
  SkillRegistry.SkillRegistry,
  SkillRegistry.RegistrationError | DuplicateRegistryError | EffectSupport.UnsupportedEffect | SE,
  McpServer.McpServer | SR | McpServer.McpRequest.From<"Requires", R>
> =>
  Layer.effect(SkillRegistry.SkillRegistry)(Effect.gen(function*() {
    yield* EffectMcp.verify
    const pageSize = options.pageSize ?? 50
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      return yield* Effect.die(new RangeError(`SkillsServer pageSize must be a positive integer, got ${pageSize}`))
    }
    const ttlMs = normalizeTtl(options.cacheHint?.ttl ?? 0)
    const source = Effect.isEffect(options.skills)
      ? Effect.provideContext(options.skills as Effect.Effect<Iterable<Skill.Definition>, SE, SR>, yield* Effect.context<SR>())
      : options.skills
    const server = yield* McpServer.McpServer
    const built = yield* SkillRegistry.make<SE>(source, {
      limits: options.limits,
      reserved: () => server.resources.map((entry) => entry.resource.uri),
      requireSigned: options.requireSigned
    })
    // Checked before registering anything on the server, and again (atomically) when attaching.
    const present = EffectMcp.attached<Handlers.State>(server)
    if (present !== undefined) {
      return yield* new DuplicateRegistryError({
        first: present.label,
        second: options.name ?? describeRegistry(yield* built.snapshot)
      })
    }
    // Clients learn about a changed catalogue the way they learn about any resource change:
    // list_changed when anything a listing shows changed (digests included), and resources/updated
    // for every changed or removed file. Not through effect's `server.notifications`, which tells
    // every listener alike: each listener (stdio connection, `subscriptions/listen` request,
    // session stream) takes every change from this hub and judges what of it it may hear
    // (`Handlers.notices`), so it gets both snapshots. Shut down with the server, which ends every
    // listener (an open stream would hold the HTTP server's graceful shutdown).
    const hub = yield* Effect.acquireRelease(PubSub.unbounded<Handlers.Change>(), PubSub.shutdown)
    const published = <E>(swap: Effect.Effect<SkillRegistry.Changes, E>) =>
      Effect.gen(function*() {
        const before = yield* built.snapshot
        const changes = yield* swap
        const after = yield* built.snapshot
        yield* Telemetry.catalogue(after)
        yield* PubSub.publish(hub, { changes, before, after })
        return changes
      })
    const registry = SkillRegistry.SkillRegistry.of({
      ...built,
      replace: (next) => published(built.replace(next)),
      upsert: (next, origin) => published(built.upsert(next, origin)),
      remove: (uris, origin) => published(built.remove(uris, origin)),
      update: (change) => published(built.update(change)),
      reload: published(Telemetry.reload(built.reload))
    })
    yield* Telemetry.catalogue(yield* built.snapshot)
    yield* announceFamilyChanges(built, hub)
    const check = options.visibility === undefined ? undefined : Telemetry.visibility(options.visibility)
    const handle = Effect.gen(function*() {
      const slot = yield* Handlers.CurrentSlot
      if (slot === undefined) return yield* Effect.die("the skills visibility resource was read outside a skills request")
      if (slot.probe === true) return yield* Effect.fail(new Error(Handlers.ProbeMarker))
      // What the middleware provided, for a skill family's callbacks.
      slot.services = yield* Effect.context<never>()
      if (slot.check && check !== undefined) slot.decision = yield* check(slot.request)
      return { contents: [] }
    })
    // Registered even without a check: it makes effect declare (and, over stdio, honour)
    // `resources.subscribe`, which it does only for servers with a resource of its own. It is
    // never listed and never read from outside.
    yield* server.addResource({
      resource: new McpSchema.Resource({ uri: Handlers.VisibilityResourceUri, name: "skills-visibility" }),
      annotations: Context.empty(),
      services: yield* Effect.context<never>(),
      // The check's error and service types are carried by this layer's type; effect's
      // registration signature cannot express them.
      handle: handle as unknown as Effect.Effect<McpSchema.ReadResourceResult, McpSchema.InternalError, McpSchema.McpRequestContext>
    })
    const state: Handlers.State = {
      label: options.name ?? describeRegistry(yield* built.snapshot),
      registry,
      rescan: OnDemand.makeRescan(Effect.andThen(Telemetry.count(Telemetry.metrics.rescans), registry.reload), yield* Effect.scope),
      pageSize,
      ttlMs,
      cacheScope: options.cacheHint?.scope ?? "private",
      decide: check === undefined ? undefined : Handlers.decideThroughEffect,
      sessions: yield* Sessions.make(options.sessions, (id) => EffectMcp.endHttpSession(server, id)),
      renderings: yield* Kind.makeRenderCache,
      changes: hub
    }
    yield* Telemetry.observe(
      { sessions: Telemetry.metrics.sessions, streams: Telemetry.metrics.streams, subscriptions: Telemetry.metrics.subscriptions },
      () => Effect.runSync(state.sessions.size)
    )
    const router = yield* Effect.serviceOption(HttpRouter.HttpRouter)
    if (Option.isSome(router)) {
      const context = yield* Effect.context<never>()
      const middleware = EffectMcp.routeMiddleware(context)
      // No MCP body is read unbounded: where no HttpAdmission is provided to the endpoint, the
      // same admission guards every MCP POST of the router, ahead of this layer's other middleware.
      if (!middleware.some(Learning.isAdmission)) {
        yield* router.value.addGlobalMiddleware(Admission.guard(HttpAdmission.defaultMaxBodySize) as any)
      }
      // Route middleware other than HttpAdmission (auth, logging, ...) must see every request of
      // the endpoint, so its presence keeps the fast route off; a layer outside the server's own
      // (provided on top of it) cannot see that middleware, so it installs no fast route either.
      const guarded = !EffectMcp.isInsideServer(context) || middleware.some((fn) => !Learning.isAdmission(fn))
      if (options.fastRoute !== false && !guarded) {
        yield* router.value.addGlobalMiddleware(FastRoute.make(server, state, check) as any)
      }
      const maxPendingBytes = options.sessions?.maxPendingBytes ?? 1024 * 1024
      if (!Number.isSafeInteger(maxPendingBytes) || maxPendingBytes < 1) {
        return yield* Effect.die(new RangeError(`SkillsServer sessions.maxPendingBytes must be a positive integer, got ${maxPendingBytes}`))
      }
      yield* router.value.addGlobalMiddleware(sessionMiddleware(state, new Set(), maxPendingBytes) as any)
    }
    yield* Effect.mapError(
      EffectMcp.attach(server, state),
      ({ existing }) => new DuplicateRegistryError({ first: existing.label, second: state.label })
    )
    yield* refuseSkillUris(server, built)
    return registry
  })) as any

// Each family of the catalogue that says when its instances changed (`SkillFamily.changes`) is
// heard for as long as it is in the catalogue; each change goes to every listener, which judges
// whether it may see an instance (`Handlers.visibleChange`).
const announceFamilyChanges = (registry: SkillRegistry.SkillRegistry["Service"], hub: PubSub.PubSub<Handlers.Change>) =>
  Effect.gen(function*() {
    const heard = yield* FiberMap.make<string>()
    const running = new Map<string, SkillFamily.Family<any>>()
    const changed: SkillRegistry.Changes = { added: [], removed: [], changed: [], listChanged: true, updated: [] }
    const follow = (snapshot: SkillRegistry.Snapshot) =>
      Effect.gen(function*() {
        const present = new Set<string>()
        for (const family of snapshot.families) {
          const key = SkillRegistry.familyKey(family)
          const changes = family.definition.changes
          if (changes === undefined) continue
          present.add(key)
          if (running.get(key) === family.definition) continue
          running.set(key, family.definition)
          yield* FiberMap.run(
            heard,
            key,
            Stream.runForEach(changes, () =>
              Effect.flatMap(registry.snapshot, (now) =>
                PubSub.publish(hub, { changes: changed, before: now, after: now, family: key }))).pipe(
                Effect.catchCause((cause) => Effect.logWarning(`the changes of the family ${key} failed; no more are heard`, cause))
              )
          )
        }
        for (const key of [...running.keys()]) {
          if (present.has(key)) continue
          running.delete(key)
          yield* FiberMap.remove(heard, key)
        }
      })
    yield* Effect.forkScoped(Stream.runForEach(SubscriptionRef.changes(registry.ref), follow))
  })

// A resource effect registers after the skills layer (a later `McpServer.resource` layer, or
// `addResource` at run time) at a URI a skill serves is refused too: a read could answer only
// one of the two, and `resources/list` would list both. effect's `addResource` has no error
// channel, so the refusal is a defect carrying the `RegistrationError`, failing that layer.
const refuseSkillUris = (server: McpServer.McpServer["Service"], registry: SkillRegistry.SkillRegistry["Service"]) => {
  const target = server as { addResource: McpServer.McpServer["Service"]["addResource"] }
  const original = target.addResource
  return Effect.acquireRelease(
    Effect.sync(() => {
      target.addResource = (resource) =>
        Effect.flatMap(registry.snapshot, (snapshot) => {
          const problems = SkillRegistry.collisions(snapshot, [resource.resource.uri])
          return problems.length > 0 ? Effect.die(new SkillRegistry.RegistrationError({ problems })) : original(resource)
        })
    }),
    () =>
      Effect.sync(() => {
        target.addResource = original
      })
  )
}

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
 */
export const family = <R = never>(
  definition: SkillFamily.Family<R>
): Layer.Layer<never, SkillRegistry.RegistrationError, SkillRegistry.SkillRegistry | McpServer.McpRequest.From<"Requires", R>> =>
  // The requirements are carried by the type; at run time the request's services reach the
  // family's callbacks through the capture the handlers make.
  skill(definition as Skill.Family)
