/**
 * The five skills surfaces (`skills/list`, `skills/get`, `resources/directory/read`, and the skill
 * part of `resources/read` and `resources/list`), answered from one snapshot with one visibility
 * decision per request.
 *
 * @internal
 */
import { Extension, Manifest, SkillUri } from "@mcp-skills/core"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type { McpSchema } from "effect/ai"
import * as MimeType from "../MimeType.js"
import * as Skill from "../Skill.js"
import * as SkillRegistry from "../SkillRegistry.js"
import * as Cursor from "./cursor.js"
import { isWireError } from "./effectMcp.js"
import type { Interceptor, RequestInfo, WireError } from "./effectMcp.js"

/** The methods a visibility decision is made for. */
export type Method =
  | "skills/list"
  | "skills/get"
  | "resources/read"
  | "resources/list"
  | "resources/directory/read"

/** What a visibility check sees of a request. */
export interface VisibilityRequest {
  readonly method: Method
  readonly protocolVersion: string
  readonly headers: RequestInfo["headers"]
  readonly sessionId: string | undefined
  readonly requestContext: McpSchema.McpRequestContext["Service"]
}

/** What a visibility check decides: everything, nothing, or a predicate over skills. */
export type Decision = boolean | ((skill: SkillRegistry.SkillEntry) => boolean)

/** Per-server settings, fixed when the layer is built. */
export interface State {
  readonly registry: SkillRegistry.SkillRegistry["Service"]
  readonly pageSize: number
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
  /** Present when a visibility check is configured: runs it once for the request. */
  readonly decide: ((request: RequestInfo, method: Method) => Effect.Effect<Decision, WireError>) | undefined
  /**
   * `resources/subscribe` of 2025-11-25 HTTP sessions, by session id: effect keeps subscriptions
   * only for stdio connections, so the session stream (`SkillsServer`) filters updates with these.
   */
  readonly sessionSubscriptions: Map<string, Set<string>>
}

/** Layer state by `McpServer` service, so wrapped adapters find the registry of their server. */
export const states = new WeakMap<object, State>()

/** The URI of the hidden effect resource whose read runs the visibility check inside effect's middleware. */
export const VisibilityResourceUri = "urn:mcp-skills:visibility"

/** Carries the request into the visibility resource's handler and its decision back out. */
export interface Slot {
  readonly request: VisibilityRequest
  decision: Decision | undefined
}

/** The slot of the request being decided. */
export const CurrentSlot = Context.Reference<Slot | undefined>("@mcp-skills/server/VisibilitySlot", {
  defaultValue: () => undefined
})

const invalidParams = (message: string, data?: unknown): WireError =>
  data === undefined ? { code: -32602, message } : { code: -32602, message, data }

const internalError: WireError = { code: -32603, message: "Internal error" }

// A failure of the author's own code (a dynamic skill's read or list): logged, and -32603 on the wire.
const serverFault = (what: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, WireError, R> =>
  Effect.catchCause(effect, (cause) => Effect.andThen(Effect.logError(what, cause), Effect.fail(internalError)))

const notConfigured: WireError = {
  code: -32603,
  message: "SkillsServer.protocols is used without SkillsServer.layer on this McpServer"
}

const stateOf = (request: RequestInfo): Effect.Effect<State, WireError> => {
  const state = states.get(request.server)
  return state === undefined ? Effect.fail(notConfigured) : Effect.succeed(state)
}

/** Visibility of skills for one request: each skill's decision is computed at most once. */
interface Visible {
  readonly skill: (index: number) => boolean
  readonly any: (owners: ReadonlyArray<number>) => boolean
  readonly checked: boolean
}

const visibleFor = (snapshot: SkillRegistry.Snapshot, decision: Decision, checked: boolean): Visible => {
  if (typeof decision === "boolean") {
    return { skill: () => decision, any: (owners) => decision && owners.length > 0, checked }
  }
  const memo = new Int8Array(snapshot.skills.length)
  const skill = (index: number) => {
    let known = memo[index]!
    if (known === 0) {
      known = decision(snapshot.skills[index]!) ? 1 : 2
      memo[index] = known
    }
    return known === 1
  }
  return { skill, any: (owners) => owners.some(skill), checked }
}

/** One rendering of a rendered skill for one request (or for callers sharing its `shareKey`). */
interface Rendering {
  readonly manifest: Manifest.Manifest
  readonly entry: Readonly<Record<string, unknown>>
  readonly files: ReadonlyMap<string, Manifest.ManifestFile>
}

interface Context {
  readonly state: State
  readonly snapshot: SkillRegistry.Snapshot
  readonly visible: Visible
  readonly request: RequestInfo
  readonly method: Method
  /** Renderings made for this request, by skill index: each rendered skill is rendered once. */
  readonly renders: Map<number, Rendering>
}

const MaxShared = 1024

// Renderings shared between requests with the same `shareKey`, per definition (at most MaxShared).
const shared = new WeakMap<Skill.Rendered, Map<string, { readonly expires: number; readonly rendering: Rendering }>>()

const renderRequest = (context: Context): Skill.RenderRequest => ({
  method: context.method,
  protocolVersion: context.request.protocolVersion,
  headers: context.request.headers,
  sessionId: context.request.sessionId,
  requestContext: context.request.requestContext
})

const shareMillis = (input: Duration.Input | undefined) =>
  input === undefined ? 0 : Option.match(Duration.fromInput(input), { onNone: () => 0, onSome: Duration.toMillis })

/** The skill rendered for this request's caller (once per request). */
const render = Effect.fnUntraced(function*(context: Context, skill: SkillRegistry.SkillEntry) {
  const known = context.renders.get(skill.index)
  if (known !== undefined) return known
  const definition = skill.rendered!
  const request = renderRequest(context)
  const key = definition.shareKey?.(request)
  const keep = key === undefined ? 0 : shareMillis(definition.shareFor)
  const cache = keep > 0 ? shared.get(definition) : undefined
  const cached = key === undefined ? undefined : cache?.get(key)
  if (cached !== undefined && cached.expires > Date.now()) {
    context.renders.set(skill.index, cached.rendering)
    return cached.rendering
  }
  const files = yield* serverFault(`rendering the skill ${skill.uri} failed`)(definition.render(request))
  const manifest = Manifest.make({
    uri: skill.uri,
    files: Object.entries(files).map(([path, content]) => ({ path, bytes: Skill.toBytes(content) })),
    limits: context.snapshot.limits
  })
  if (Result.isFailure(manifest)) {
    yield* Effect.logError(`the skill ${skill.uri} rendered an invalid skill: ${manifest.failure.message}`)
    return yield* Effect.fail(internalError)
  }
  const rendering: Rendering = {
    manifest: manifest.success,
    entry: { uri: skill.uri, frontmatter: manifest.success.frontmatter, resources: manifest.success.skill.resources },
    files: new Map(manifest.success.files.map((file) => [file.uri as string, file]))
  }
  context.renders.set(skill.index, rendering)
  if (key !== undefined && keep > 0) {
    let byKey = shared.get(definition)
    if (byKey === undefined) {
      byKey = new Map()
      shared.set(definition, byKey)
    }
    if (byKey.size >= MaxShared) {
      const now = Date.now()
      for (const [stale, entry] of byKey) if (entry.expires <= now) byKey.delete(stale)
      // Still full: the oldest rendering goes (a Map iterates in insertion order).
      if (byKey.size >= MaxShared) byKey.delete(byKey.keys().next().value!)
    }
    byKey.set(key, { expires: Date.now() + keep, rendering })
  }
  return rendering
})

/** The wire entry of a skill for this request's caller. */
const entryOf = (context: Context, skill: SkillRegistry.SkillEntry) =>
  skill.rendered === undefined ? Effect.succeed(skill.entry) : Effect.map(render(context, skill), (r) => r.entry)

/** The cache hint a result about `skill` alone would carry. */
const hintOf = (state: State, skill: SkillRegistry.SkillEntry): SkillRegistry.Hint =>
  skill.cacheHint ?? { ttlMs: state.ttlMs, cacheScope: skill.rendered === undefined ? state.cacheScope : "private" }

/** The hint of a result about several skills: the shortest ttl, public only if every one is. */
const hintOfAll = (state: State, skills: Iterable<SkillRegistry.SkillEntry>): SkillRegistry.Hint => {
  let ttlMs = Infinity
  let cacheScope: "public" | "private" = "public"
  for (const skill of skills) {
    const hint = hintOf(state, skill)
    ttlMs = Math.min(ttlMs, hint.ttlMs)
    if (hint.cacheScope === "private") cacheScope = "private"
  }
  return ttlMs === Infinity ? { ttlMs: state.ttlMs, cacheScope: state.cacheScope } : { ttlMs, cacheScope }
}

// Reads ONE snapshot for the whole request (unless the caller already did) and decides visibility once.
const begin = Effect.fnUntraced(function*(request: RequestInfo, method: Method, read?: {
  readonly state: State
  readonly snapshot: SkillRegistry.Snapshot
}) {
  const state = read?.state ?? (yield* stateOf(request))
  const snapshot = read?.snapshot ?? (yield* state.registry.snapshot)
  const decision = state.decide === undefined ? true : yield* state.decide(request, method)
  return {
    state,
    snapshot,
    visible: visibleFor(snapshot, decision, state.decide !== undefined),
    request,
    method,
    renders: new Map()
  } satisfies Context
})

/** 2026-07-28 result fields; 2025-11-25 results carry none of them (spec §7 item 1). */
const complete = (
  request: RequestInfo,
  result: Record<string, unknown>,
  cache?: { readonly context: Context; readonly hint: SkillRegistry.Hint }
): Record<string, unknown> => {
  if (!request.modern) return result
  return {
    resultType: "complete",
    ...result,
    ...(cache === undefined ? {} : {
      ttlMs: cache.hint.ttlMs,
      // Results computed under a visibility check depend on the caller.
      cacheScope: cache.context.visible.checked ? "private" : cache.hint.cacheScope
    }),
    _meta: { "io.modelcontextprotocol/serverInfo": request.serverInfo }
  }
}

// A cursor belongs to one listing of one catalogue revision: every replica serving that revision
// honours it, and any other answers -32602 telling the client to list again.
const expiredCursor = invalidParams("Unknown or expired cursor: list again from the start, without a cursor")

export const listSkills = Effect.fnUntraced(function*(params: { readonly cursor?: string | undefined } | undefined, request: RequestInfo) {
  const context = yield* begin(request, "skills/list")
  const { snapshot, state, visible } = context
  let after: string | undefined
  if (params?.cursor !== undefined) {
    after = Cursor.decode(`skills ${snapshot.revision}`, params.cursor)
    if (after === undefined) return yield* Effect.fail(expiredCursor)
  }
  const listed = snapshot.listed
  const skills: Array<unknown> = []
  const onPage: Array<SkillRegistry.SkillEntry> = []
  let last: string | undefined
  let more = false
  for (let i = Cursor.startAfter(listed, (skill) => skill.uri, after); i < listed.length; i++) {
    const skill = listed[i]!
    if (!visible.skill(skill.index)) continue
    if (skills.length === state.pageSize) {
      more = true
      break
    }
    skills.push(yield* entryOf(context, skill))
    onPage.push(skill)
    last = skill.uri
  }
  // R36: every page of one listing carries the same scope, so the scope is the whole listing's
  // (public only if every listed skill is, and no visibility check applies), while the ttl is the
  // shortest of this page's entries.
  const listingPublic = !snapshot.listing.anyPrivate && (!snapshot.listing.anyDefault || state.cacheScope === "public")
  return complete(request, {
    skills,
    ...(more && last !== undefined ? { nextCursor: Cursor.make(`skills ${snapshot.revision}`, last) } : {})
  }, {
    context,
    hint: { ttlMs: hintOfAll(state, onPage).ttlMs, cacheScope: listingPublic ? "public" : "private" }
  })
})

export const getSkill = Effect.fnUntraced(function*(params: { readonly uri: string }, request: RequestInfo) {
  const context = yield* begin(request, "skills/get")
  const skill = context.snapshot.byUri.get(params.uri)
  if (skill === undefined || !context.visible.skill(skill.index)) {
    const isSkillMd = Result.isSuccess(SkillUri.parseSkillMd(params.uri))
    return yield* Effect.fail(
      invalidParams(
        isSkillMd
          ? `no skill is served at ${params.uri}`
          : `${params.uri} is not the URI of a ${Extension.SkillFileName} of a served skill`,
        { uri: params.uri }
      )
    )
  }
  return complete(request, { skill: yield* entryOf(context, skill) }, { context, hint: hintOf(context.state, skill) })
})

const notADirectory = (uri: string) => invalidParams(`no directory resource is served at ${uri}`, { uri })

const directoryPage = Effect.fnUntraced(function*(
  request: RequestInfo,
  context: Context,
  uri: string,
  children: ReadonlyArray<{ readonly uri: string; readonly resource: unknown }>,
  cursor: string | undefined,
  hint: SkillRegistry.Hint
) {
  const scope = `dir ${context.snapshot.revision} ${uri}`
  let after: string | undefined
  if (cursor !== undefined) {
    after = Cursor.decode(scope, cursor)
    if (after === undefined) return yield* Effect.fail(expiredCursor)
  }
  const start = Cursor.startAfter(children, (child) => child.uri, after)
  const page = children.slice(start, start + context.state.pageSize)
  const more = start + page.length < children.length
  // The spec types this result without cache fields (§1.7), but the official TypeScript SDK
  // (2.4.0) rejects a 2026-07-28 directory result without them, so they are sent too.
  return complete(request, {
    resources: page.map((child) => child.resource),
    ...(more ? { nextCursor: Cursor.make(scope, page[page.length - 1]!.uri) } : {})
  }, { context, hint })
})

// The children of `directory` in a skill whose files are known per request (dynamic or rendered).
const perRequestChildren = Effect.fnUntraced(function*(context: Context, skill: SkillRegistry.SkillEntry, directory: string) {
  const rendering = skill.rendered === undefined ? undefined : yield* render(context, skill)
  const sizes = new Map(rendering?.manifest.files.map((file) => [file.path, file.size]))
  const paths = rendering !== undefined
    ? [...sizes.keys()]
    : skill.dynamic!.list === undefined
    ? [Extension.SkillFileName]
    : yield* serverFault(`listing the dynamic skill ${skill.uri} failed`)(skill.dynamic!.list)
  const relative = directory === skill.root ? "" : SkillUri.relativePath(skill.uri, directory)
  if (relative === undefined) return undefined
  const prefix = relative === "" ? "" : relative + "/"
  const children = new Map<string, { uri: string; resource: Record<string, unknown> }>()
  let exists = relative === ""
  for (const path of paths) {
    if (!path.startsWith(prefix)) continue
    exists = true
    const rest = path.slice(prefix.length)
    const slash = rest.indexOf("/")
    const name = slash === -1 ? rest : rest.slice(0, slash)
    const uri = SkillUri.file(skill.uri, prefix + name)
    if (name.length === 0 || Result.isFailure(uri) || children.has(uri.success)) continue
    const size = slash === -1 ? sizes.get(path) : undefined
    children.set(uri.success, {
      uri: uri.success,
      resource: {
        uri: uri.success,
        name,
        mimeType: slash !== -1
          ? Extension.DirectoryMimeType
          : name === Extension.SkillFileName && prefix === ""
          ? Extension.MarkdownMimeType
          : MimeType.fromPath(name),
        ...(size === undefined ? {} : { size })
      }
    })
  }
  if (!exists) return undefined
  return [...children.values()].sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0))
})

export const readDirectory = Effect.fnUntraced(function*(
  params: { readonly uri: string; readonly cursor?: string | undefined },
  request: RequestInfo
) {
  const context = yield* begin(request, "resources/directory/read")
  const { snapshot, visible } = context
  const directory = snapshot.directories.get(params.uri)
  if (directory !== undefined) {
    if (!visible.any(directory.owners)) return yield* Effect.fail(notADirectory(params.uri))
    const children = directory.children.filter((child) => visible.any(child.owners))
    const hint = hintOfAll(context.state, directory.owners.map((index) => snapshot.skills[index]!))
    return yield* directoryPage(request, context, params.uri, children, params.cursor, hint)
  }
  const owner = SkillUri.isCanonical(params.uri) ? SkillRegistry.dynamicOwner(snapshot, params.uri) : undefined
  if (owner !== undefined && visible.skill(owner.index)) {
    const children = yield* perRequestChildren(context, owner, params.uri)
    if (children !== undefined) {
      return yield* directoryPage(request, context, params.uri, children, params.cursor, hintOf(context.state, owner))
    }
  }
  return yield* Effect.fail(notADirectory(params.uri))
})

const schemeOf = (uri: string) => {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)
  return match === null ? undefined : match[1]!.toLowerCase()
}

const notFound = (uri: string) => invalidParams("Resource not found", { uri })

const readContents = (
  request: RequestInfo,
  context: Context,
  uri: string,
  mimeType: string,
  content: SkillRegistry.FileEntry["content"],
  hint: SkillRegistry.Hint
) => complete(request, { contents: [{ uri, mimeType, ...content }] }, { context, hint })

const mimeTypeOf = (path: string) => path === Extension.SkillFileName ? Extension.MarkdownMimeType : MimeType.fromPath(path)

/** `resources/read`: skill files from the snapshot (or a dynamic skill), everything else to effect. */
export const readResource: Interceptor = Effect.fnUntraced(function*(
  params: { readonly uri: string },
  request: RequestInfo,
  next: Effect.Effect<unknown, unknown>
) {
  const uri = params.uri
  if (uri === VisibilityResourceUri) return yield* Effect.fail(notFound(uri))
  const state = states.get(request.server)
  if (state === undefined) return yield* next
  const snapshot = yield* state.registry.snapshot
  const file = snapshot.files.get(uri)
  const owner = file === undefined && SkillUri.isCanonical(uri) ? SkillRegistry.dynamicOwner(snapshot, uri) : undefined
  const schemeIsOurs = file !== undefined || owner !== undefined || isSkillScheme(snapshot, uri)
  if (!schemeIsOurs) return yield* next
  // Decided before the lookup, so a refused caller gets the same answer for present and absent URIs.
  const context = yield* begin(request, "resources/read", { state, snapshot })
  if (file !== undefined && context.visible.any(file.owners)) {
    const hint = hintOfAll(state, file.owners.map((index) => snapshot.skills[index]!))
    return readContents(request, context, uri, file.mimeType, file.content, hint)
  }
  if (owner !== undefined && context.visible.skill(owner.index)) {
    const path = SkillUri.relativePath(owner.uri, uri)!
    const hint = hintOf(state, owner)
    if (owner.rendered !== undefined) {
      // The bytes rendered for this caller, the same ones its entry's digests were computed from.
      const rendered = (yield* render(context, owner)).files.get(uri)
      if (rendered !== undefined) {
        return readContents(request, context, uri, mimeTypeOf(path), SkillRegistry.wireContent(rendered.bytes), hint)
      }
    } else {
      const content = yield* serverFault(`reading ${uri} of a dynamic skill failed`)(owner.dynamic!.read(path))
      if (content !== undefined) {
        return readContents(request, context, uri, mimeTypeOf(path), SkillRegistry.wireContent(Skill.toBytes(content)), hint)
      }
    }
  }
  // Hidden, absent and malformed skill URIs all take this one path, so they are indistinguishable;
  // a resource the user registered with effect under the same scheme still answers.
  return yield* Effect.catch(next, (error) =>
    isWireError(error) && (error.code === -32002 || error.code === -32602) ? Effect.fail(notFound(uri)) : Effect.fail(error))
})

// A URI without a scheme is no URI at all: it gets the same -32602 as a skill URI that is not served.
const isSkillScheme = (snapshot: SkillRegistry.Snapshot, uri: string) => {
  const scheme = schemeOf(uri)
  return scheme === undefined || snapshot.schemes.has(scheme)
}

/** `resources/list`: effect's resources (minus the visibility resource) and every visible `SKILL.md`. */
export const listResources: Interceptor = Effect.fnUntraced(function*(
  _params: unknown,
  request: RequestInfo,
  next: Effect.Effect<unknown, unknown>
) {
  const base = (yield* next) as Record<string, unknown> & { readonly resources: ReadonlyArray<{ readonly uri: string }> }
  const state = states.get(request.server)
  if (state === undefined) return base
  const context = yield* begin(request, "resources/list")
  const own = base.resources.filter((resource) => resource.uri !== VisibilityResourceUri)
  const visible = context.snapshot.listed.filter((skill) => context.visible.skill(skill.index))
  const skills: Array<Readonly<Record<string, unknown>>> = []
  for (const skill of visible) {
    if (skill.rendered === undefined) {
      skills.push(skill.resource)
      continue
    }
    const rendering = yield* render(context, skill)
    const description = rendering.manifest.frontmatter.description
    skills.push({
      ...skill.resource,
      name: rendering.manifest.frontmatter.name,
      ...(typeof description === "string" ? { description } : {}),
      size: rendering.manifest.files[0]!.size
    })
  }
  const result: Record<string, unknown> = { ...base, resources: [...own, ...skills] }
  if (!request.modern) return result
  const ours = complete(request, {}, { context, hint: hintOfAll(context.state, visible) })
  // One page mixes effect's resources and skills: the stricter hint of the two applies.
  return own.length === 0 ? { ...result, ttlMs: ours.ttlMs, cacheScope: ours.cacheScope } : {
    ...result,
    ttlMs: Math.min(Number(base.ttlMs ?? 0), Number(ours.ttlMs)),
    cacheScope: base.cacheScope === "public" && ours.cacheScope === "public" ? "public" : "private"
  }
})

/** Runs the configured check for one request inside effect's middleware (see `VisibilityResourceUri`). */
export const decideThroughEffect = Effect.fnUntraced(function*(request: RequestInfo, method: Method) {
  const slot: Slot = {
    request: {
      method,
      protocolVersion: request.protocolVersion,
      headers: request.headers,
      sessionId: request.sessionId,
      requestContext: request.requestContext
    },
    decision: undefined
  }
  const read = yield* Effect.provideService(request.readRegisteredResource(VisibilityResourceUri), CurrentSlot, slot)
  // Not found: an `McpServer.visibility` provided to the skills layer hid it, which hides every skill.
  if (Option.isNone(read)) return false
  return slot.decision ?? false
})

// effect refuses resources/subscribe on HTTP sessions; skills files are announced on the session
// stream instead, so the subscription is kept here. Stdio goes to effect, which filters itself.
const subscription = (add: boolean): Interceptor =>
  Effect.fnUntraced(function*(params: { readonly uri: string }, request: RequestInfo, next: Effect.Effect<unknown, unknown>) {
    const state = states.get(request.server)
    if (state === undefined || request.modern || request.sessionId === undefined) return yield* next
    let uris = state.sessionSubscriptions.get(request.sessionId)
    if (uris === undefined) {
      uris = new Set()
      state.sessionSubscriptions.set(request.sessionId, uris)
    }
    if (add) uris.add(params.uri)
    else uris.delete(params.uri)
    return {}
  })

/** `resources/subscribe` (see `subscription`). */
export const subscribe: Interceptor = subscription(true)

/** `resources/unsubscribe` (see `subscription`). */
export const unsubscribe: Interceptor = subscription(false)
