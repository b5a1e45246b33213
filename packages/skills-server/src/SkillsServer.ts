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
 * **Gotchas.** effect's `McpServer.middleware`/`visibility` reach the skills only when a
 * `visibility` option is set (even `() => Effect.succeed(true)`): that option is what routes the
 * decision through effect's middleware. `replace` on the `SkillRegistry` this layer provides swaps
 * the catalogue atomically and emits `notifications/resources/list_changed` (there is no
 * skills-specific notification, spec §7 item 13).
 *
 * @since 0.1.0
 */
import { Extension } from "@mcp-skills/core"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { McpProtocol } from "effect/ai"
import { McpSchema, McpServer } from "effect/ai"
import * as Rpc from "effect/rpc/Rpc"
import * as RpcGroup from "effect/rpc/RpcGroup"
import type * as Skill from "./Skill.js"
import * as SkillRegistry from "./SkillRegistry.js"
import * as EffectMcp from "./internal/effectMcp.js"
import * as Handlers from "./internal/handlers.js"

/**
 * The methods a visibility decision is made for.
 *
 * @since 0.1.0
 */
export type Method = Handlers.Method

/**
 * What a visibility check sees of the request.
 *
 * @since 0.1.0
 */
export type VisibilityRequest = Handlers.VisibilityRequest

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
export interface CacheHint {
  readonly ttl: Duration.Input
  readonly scope?: "public" | "private" | undefined
}

/**
 * Options of `layer`.
 *
 * @since 0.1.0
 */
export interface Options<E extends CheckError, R, SE, SR> {
  /** The skills, or an Effect producing them (e.g. loading a directory). */
  readonly skills: Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, SE, SR>
  readonly visibility?: Visibility<E, R> | undefined
  readonly cacheHint?: CacheHint | undefined
  /** Entries per page of `skills/list` and `resources/directory/read` (default 50). */
  readonly pageSize?: number | undefined
  /** Per-skill limits; the spec's 512 files / 16 MiB unless raised explicitly. */
  readonly limits?: SkillRegistry.Options["limits"]
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
 * to the same server.
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
    rpcs: directoryRead ? RpcGroup.make(ListSkills, GetSkill, ReadResourceDirectory) : RpcGroup.make(ListSkills, GetSkill),
    handlers: {
      [Extension.ListSkillsMethod]: Handlers.listSkills,
      [Extension.GetSkillMethod]: Handlers.getSkill,
      ...(directoryRead ? { [Extension.ReadResourceDirectoryMethod]: Handlers.readDirectory } : {})
    },
    intercept: {
      "resources/read": Handlers.readResource,
      "resources/list": Handlers.listResources
    }
  }
  return adapters.map((adapter) => EffectMcp.wrapAdapter(adapter, extension)) as unknown as P
}

const normalizeTtl = (ttl: Duration.Input): number => {
  const millis = Option.match(Duration.fromInput(ttl), {
    onNone: () => NaN,
    onSome: (duration) => Math.floor(Duration.toMillis(duration))
  })
  if (!Number.isSafeInteger(millis) || millis < 0) {
    throw new RangeError(`SkillsServer cacheHint.ttl must be finite and nonnegative, got ${String(ttl)}`)
  }
  return millis
}

/**
 * The registration layer: builds the registry (failing with `RegistrationError` listing every
 * problem) and attaches it to the `McpServer`. Per-request services the visibility check reads
 * are `McpServer.McpRequest<"Requires", R>` requirements, met like those of effect's own
 * registrations (MCP middleware, or `HttpRouter` middleware through `layerHttp`).
 *
 * @since 0.1.0
 */
export const layer = <E extends CheckError = never, R = never, SE = never, SR = never>(
  options: Options<E, R, SE, SR>
): Layer.Layer<
  SkillRegistry.SkillRegistry,
  SkillRegistry.RegistrationError | SE,
  McpServer.McpServer | SR | McpServer.McpRequest.From<"Requires", R>
> =>
  Layer.effect(SkillRegistry.SkillRegistry)(Effect.gen(function*() {
    const pageSize = options.pageSize ?? 50
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
      return yield* Effect.die(new RangeError(`SkillsServer pageSize must be a positive integer, got ${pageSize}`))
    }
    const ttlMs = normalizeTtl(options.cacheHint?.ttl ?? 0)
    const definitions = Effect.isEffect(options.skills) ? yield* options.skills : options.skills
    const server = yield* McpServer.McpServer
    const built = yield* SkillRegistry.make(definitions, { limits: options.limits })
    // Clients learn about a replaced catalogue the way they learn about any resource change.
    const registry = SkillRegistry.SkillRegistry.of({
      ...built,
      replace: (next) =>
        Effect.andThen(built.replace(next), server.notifications["notifications/resources/list_changed"]({}))
    })
    const check = options.visibility
    if (check !== undefined) {
      const handle = Effect.gen(function*() {
        const slot = yield* Handlers.CurrentSlot
        if (slot === undefined) return yield* Effect.die("the skills visibility resource was read outside a skills request")
        slot.decision = yield* check(slot.request)
        return { contents: [] }
      })
      yield* server.addResource({
        resource: new McpSchema.Resource({ uri: Handlers.VisibilityResourceUri, name: "skills-visibility" }),
        annotations: Context.empty(),
        services: yield* Effect.context<never>(),
        // The check's error and service types are carried by this layer's type; effect's
        // registration signature cannot express them.
        handle: handle as unknown as Effect.Effect<McpSchema.ReadResourceResult, McpSchema.InternalError, McpSchema.McpRequestContext>
      })
    }
    const state: Handlers.State = {
      registry,
      pageSize,
      ttlMs,
      cacheScope: options.cacheHint?.scope ?? "private",
      decide: check === undefined ? undefined : Handlers.decideThroughEffect
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => Handlers.states.set(server, state)),
      () => Effect.sync(() => Handlers.states.delete(server))
    )
    return registry
  })) as any
