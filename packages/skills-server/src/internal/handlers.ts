/**
 * The five skills surfaces (`skills/list`, `skills/get`, `resources/directory/read`, and the skill
 * part of `resources/read` and `resources/list`), answered from one snapshot with one visibility
 * decision per request.
 *
 * @internal
 */
import { Extension, SkillUri } from "@mcp-skills/core"
import type { Protocol, Skill as CoreSkill } from "@mcp-skills/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type { McpSchema } from "effect/ai"
import * as SkillRegistry from "../SkillRegistry.js"
import * as Cursor from "./cursor.js"
import { isWireError } from "./effectMcp.js"
import type { Interceptor, RequestInfo, WireError } from "./effectMcp.js"
import * as Kind from "./kind.js"
import type { Call, Method, Visible } from "./kind.js"

export type { Method } from "./kind.js"

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
  readonly renderings: Kind.RenderCache
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

const notConfigured: WireError = {
  code: -32603,
  message: "SkillsServer.protocols is used without SkillsServer.layer on this McpServer"
}

const stateOf = (request: RequestInfo): Effect.Effect<State, WireError> => {
  const state = states.get(request.server)
  return state === undefined ? Effect.fail(notConfigured) : Effect.succeed(state)
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

/** The cache hint a result about `skill` alone would carry. */
const hintOf = (state: State, skill: SkillRegistry.SkillEntry): SkillRegistry.Hint =>
  skill.cacheHint ?? { ttlMs: state.ttlMs, cacheScope: Kind.kindOf(skill).perCaller ? "private" : state.cacheScope }

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
  const call: Call = {
    snapshot,
    visible: visibleFor(snapshot, decision, state.decide !== undefined),
    request,
    method,
    renderings: state.renderings,
    renders: new Map()
  }
  return { state, call }
})

/** 2026-07-28 result fields; 2025-11-25 results carry none of them (spec §7 item 1). */
const complete = <A extends object>(
  request: RequestInfo,
  call: Call,
  result: A,
  hint: SkillRegistry.Hint
): A & { readonly resultType?: "complete"; readonly ttlMs?: number; readonly cacheScope?: "public" | "private" } => {
  if (!request.modern) return result
  return {
    resultType: "complete",
    ...result,
    ttlMs: hint.ttlMs,
    // Results computed under a visibility check depend on the caller.
    cacheScope: call.visible.checked ? "private" : hint.cacheScope,
    _meta: { "io.modelcontextprotocol/serverInfo": request.serverInfo }
  }
}

const SkillsScope = "skills"

const unknownCursor = invalidParams("Unknown or expired cursor")

export const listSkills = Effect.fnUntraced(function*(params: { readonly cursor?: string | undefined } | undefined, request: RequestInfo) {
  const { call, state } = yield* begin(request, "skills/list")
  const { snapshot, visible } = call
  let after: string | undefined
  if (params?.cursor !== undefined) {
    after = Cursor.decode(SkillsScope, params.cursor)
    if (after === undefined) return yield* Effect.fail(unknownCursor)
  }
  const listed = snapshot.listed
  const skills: Array<CoreSkill.Skill> = []
  const onPage: Array<SkillRegistry.SkillEntry> = []
  let more = false
  for (let i = Cursor.startAfter(listed, (skill) => skill.uri, after); i < listed.length; i++) {
    const skill = listed[i]!
    if (!visible.skill(skill.index)) continue
    if (skills.length === state.pageSize) {
      more = true
      break
    }
    skills.push(yield* Kind.kindOf(skill).entry(call, skill))
    onPage.push(skill)
  }
  const last = onPage.at(-1)
  // R36: every page of one listing carries the same scope, so the scope is the whole listing's
  // (public only if every listed skill is, and no visibility check applies), while the ttl is the
  // shortest of this page's entries.
  const listingPublic = !snapshot.listing.anyPrivate && (!snapshot.listing.anyDefault || state.cacheScope === "public")
  const result: Protocol.ListSkillsResult = {
    skills,
    ...(more && last !== undefined ? { nextCursor: Cursor.make(SkillsScope, last.uri) } : {})
  }
  return complete(request, call, result, {
    ttlMs: hintOfAll(state, onPage).ttlMs,
    cacheScope: listingPublic ? "public" : "private"
  })
})

export const getSkill = Effect.fnUntraced(function*(params: { readonly uri: string }, request: RequestInfo) {
  const { call, state } = yield* begin(request, "skills/get")
  const skill = call.snapshot.byUri.get(params.uri)
  if (skill === undefined || !call.visible.skill(skill.index)) {
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
  const result: Protocol.GetSkillResult = { skill: yield* Kind.kindOf(skill).entry(call, skill) }
  return complete(request, call, result, hintOf(state, skill))
})

/**
 * The skill a file or directory URI belongs to for this request, and every skill whose answers it
 * depends on (a file of a nested skill is in its enclosing skill too): a static file or directory
 * by its owners, anything else by the per-request skill whose root encloses it. Hidden owners do
 * not count; `undefined` when no visible skill holds the URI.
 */
const ownerOf = (
  call: Call,
  uri: string,
  indexed: { readonly owners: ReadonlyArray<number> } | undefined
): { readonly skill: SkillRegistry.SkillEntry; readonly owners: ReadonlyArray<SkillRegistry.SkillEntry> } | undefined => {
  const { snapshot, visible } = call
  if (indexed !== undefined) {
    const first = indexed.owners.find(visible.skill)
    return first === undefined
      ? undefined
      : { skill: snapshot.skills[first]!, owners: indexed.owners.map((index) => snapshot.skills[index]!) }
  }
  const owner = SkillUri.isCanonical(uri) ? SkillRegistry.dynamicOwner(snapshot, uri) : undefined
  return owner !== undefined && visible.skill(owner.index) ? { skill: owner, owners: [owner] } : undefined
}

const notADirectory = (uri: string) => invalidParams(`no directory resource is served at ${uri}`, { uri })

export const readDirectory = Effect.fnUntraced(function*(
  params: { readonly uri: string; readonly cursor?: string | undefined },
  request: RequestInfo
) {
  const { call, state } = yield* begin(request, "resources/directory/read")
  const uri = params.uri
  const owner = ownerOf(call, uri, call.snapshot.directories.get(uri))
  const children = owner === undefined ? undefined : yield* Kind.kindOf(owner.skill).directory(call, owner.skill, uri)
  if (owner === undefined || children === undefined) return yield* Effect.fail(notADirectory(uri))
  const scope = `dir ${uri}`
  let after: string | undefined
  if (params.cursor !== undefined) {
    after = Cursor.decode(scope, params.cursor)
    if (after === undefined) return yield* Effect.fail(unknownCursor)
  }
  const start = Cursor.startAfter(children, (child) => child.uri, after)
  const page = children.slice(start, start + state.pageSize)
  const more = start + page.length < children.length
  const last = page.at(-1)
  const result: Protocol.ReadResourceDirectoryResult = {
    resources: page.map((child) => child.resource),
    ...(more && last !== undefined ? { nextCursor: Cursor.make(scope, last.uri) } : {})
  }
  // The spec types this result without cache fields (§1.7), but the official TypeScript SDK
  // (2.4.0) rejects a 2026-07-28 directory result without them, so they are sent too.
  return complete(request, call, result, hintOfAll(state, owner.owners))
})

const schemeOf = (uri: string) => {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)
  return match === null ? undefined : match[1]!.toLowerCase()
}

const notFound = (uri: string) => invalidParams("Resource not found", { uri })

/** `resources/read`: skill files from the snapshot (or a per-request skill), everything else to effect. */
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
  const schemeIsOurs = file !== undefined || isSkillScheme(snapshot, uri) ||
    SkillUri.isCanonical(uri) && SkillRegistry.dynamicOwner(snapshot, uri) !== undefined
  if (!schemeIsOurs) return yield* next
  // Decided before the lookup, so a refused caller gets the same answer for present and absent URIs.
  const { call } = yield* begin(request, "resources/read", { state, snapshot })
  const owner = ownerOf(call, uri, file)
  const answer = owner === undefined ? undefined : yield* Kind.kindOf(owner.skill).read(call, owner.skill, uri)
  if (owner !== undefined && answer !== undefined) {
    return complete(request, call, { contents: [{ uri, mimeType: answer.mimeType, ...answer.content }] }, hintOfAll(state, owner.owners))
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
  const { call } = yield* begin(request, "resources/list")
  const own = base.resources.filter((resource) => resource.uri !== VisibilityResourceUri)
  const visible = call.snapshot.listed.filter((skill) => call.visible.skill(skill.index))
  const skills: Array<Protocol.ResourceEntry> = []
  for (const skill of visible) skills.push(yield* Kind.kindOf(skill).resource(call, skill))
  const result = { ...base, resources: [...own, ...skills] }
  if (!request.modern) return result
  const ours = complete(request, call, {}, hintOfAll(state, visible))
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
