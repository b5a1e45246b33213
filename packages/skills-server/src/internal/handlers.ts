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
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Result from "effect/Result"
import { McpSchema } from "effect/ai"
import * as PathTemplate from "../PathTemplate.js"
import * as SkillRegistry from "../SkillRegistry.js"
import type { VisibilityRequest } from "../SkillsServer.js"
import * as Registry from "./registry.js"
import * as Cursor from "./cursor.js"
import { attached, isWireError } from "./effectMcp.js"
import type { Interceptor, Listener, Notice, RequestInfo, WireError } from "./effectMcp.js"
import * as Kind from "./kind.js"
import * as Learning from "./learning.js"
import * as Sessions from "./sessions.js"
import type { Call, Method, Visible } from "./kind.js"

export type { Method } from "./kind.js"
export type { VisibilityRequest }

/** What a visibility check decides: everything, nothing, or a predicate over skills. */
export type Decision = boolean | ((skill: SkillRegistry.ServedSkill) => boolean)

/** A check's decision, and the request's services as the check saw them. */
export interface Verdict {
  readonly decision: Decision
  readonly services: Context.Context<never> | undefined
}

/** Per-server settings, fixed when the layer is built. */
export interface State {
  /** How errors name this registry. */
  readonly label: string
  readonly registry: SkillRegistry.SkillRegistry["Service"]
  /** The reload readers of files changed on disk share (`OnDemand.makeRescan`). */
  readonly rescan: Call["rescan"]
  readonly pageSize: number
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
  /** Present when a visibility check is configured: runs it once for the request. */
  readonly decide: ((request: RequestInfo, method: Method) => Effect.Effect<Verdict, WireError>) | undefined
  /**
   * 2025-11-25 HTTP sessions and their `resources/subscribe` URIs: effect keeps subscriptions only
   * for stdio connections, so the session stream (`SkillsServer`) filters updates with these.
   */
  readonly sessions: Sessions.Sessions
  readonly renderings: Kind.RenderCache
  /** Every catalogue change, for the listeners to judge each for themselves (`notices`). */
  readonly changes: PubSub.PubSub<Change>
}

/** The state of the skills layer serving this request's server (see `EffectMcp.attach`). */
const stateFor = (request: RequestInfo): State | undefined => attached<State>(request.server)

/** The URI of the hidden effect resource whose read runs the visibility check inside effect's middleware. */
export const VisibilityResourceUri = "urn:mcp-skills:visibility"

/**
 * Carries the request into the visibility resource's handler, and its decision and services back
 * out (`check: false` when only the services are wanted).
 */
export interface Slot {
  readonly request: VisibilityRequest
  readonly check: boolean
  decision: Decision | undefined
  services: Context.Context<never> | undefined
  /** The read only probes for middleware (see `probeMiddleware`): the handler fails with `ProbeMarker`. */
  readonly probe?: boolean
}

/** The message the visibility resource fails with when probed. */
export const ProbeMarker = "mcp-skills: probing for McpServer middleware"

/** The slot of the request being decided. */
export const CurrentSlot = Context.Reference<Slot | undefined>("@mcp-skills/server/VisibilitySlot", {
  defaultValue: () => undefined
})

const invalidParams = (message: string, data?: unknown): WireError =>
  data === undefined
    ? { code: McpSchema.INVALID_PARAMS_ERROR_CODE, message }
    : { code: McpSchema.INVALID_PARAMS_ERROR_CODE, message, data }

// Without the layer the server does not declare the extension (R82): its methods are unknown.
const notConfigured: WireError = { code: McpSchema.METHOD_NOT_FOUND_ERROR_CODE, message: "Method not found" }

/** Whether a skills layer serves `server` (and so whether it declares the extension). */
export const serves = (server: object): boolean => attached<State>(server) !== undefined

const stateOf = (request: RequestInfo): Effect.Effect<State, WireError> => {
  const state = stateFor(request)
  return state === undefined ? Effect.fail(notConfigured) : Effect.succeed(state)
}

/** Visibility of skills for one request under `decision`, each skill decided at most once. */
export const visibleFor = (snapshot: SkillRegistry.Snapshot, decision: Decision, checked: boolean): Visible => {
  if (typeof decision === "boolean") {
    return {
      skill: () => decision,
      instance: () => decision,
      any: (owners) => decision && owners.length > 0,
      file: (owners) => decision && owners.length > 0,
      checked
    }
  }
  const instances = new Map<string, boolean>()
  const instance = (skill: SkillRegistry.InstanceSkill) => {
    const known = instances.get(skill.uri)
    if (known !== undefined) return known
    const visible = decision(skill)
    instances.set(skill.uri, visible)
    return visible
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
  return {
    skill,
    instance,
    any: (owners) => owners.some(skill),
    file: (owners) => owners.length > 0 && skill(Registry.innermost(snapshot.skills, owners)),
    checked
  }
}

/** The cache hint a result about `skill` alone would carry. */
export const hintOf = (state: State, skill: SkillRegistry.ServedSkill): SkillRegistry.Hint =>
  skill.cacheHint ?? { ttlMs: state.ttlMs, cacheScope: Kind.kindOf(skill).perCaller ? "private" : state.cacheScope }

/** The hint of a result about several skills: the shortest ttl, public only if every one is. */
export const hintOfAll = (state: State, skills: Iterable<SkillRegistry.ServedSkill>): SkillRegistry.Hint => {
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
  const decided = state.decide === undefined ? undefined : yield* Learning.Decided
  const verdict: Verdict = state.decide === undefined
    ? { decision: true, services: undefined }
    : decided !== undefined && decided.method === method
    ? { decision: decided.decision as Decision, services: undefined }
    : yield* state.decide(request, method)
  // A request the fast route learns from tells it whether effect's middleware wraps the check.
  const learning = yield* Learning.CurrentSlot
  if (learning !== undefined && state.decide !== undefined && request.modern && learning.middleware === undefined) {
    learning.middleware = yield* probeMiddleware(request)
  }
  if (!request.modern && state.decide !== undefined) {
    if (request.sessionId !== undefined) yield* state.sessions.remember(request.sessionId, request)
    else request.connection?.remember(request)
  }
  // Only a family's callbacks need the services: without a check they are captured on first use.
  let services = verdict.services
  const call: Call = {
    snapshot,
    registry: state.registry,
    rescan: state.rescan,
    visibleIn: (other) => visibleFor(other, verdict.decision, state.decide !== undefined),
    visible: visibleFor(snapshot, verdict.decision, state.decide !== undefined),
    request,
    method,
    renderings: state.renderings,
    renders: new Map(),
    services: Effect.suspend(() =>
      services !== undefined
        ? Effect.succeed(services)
        : Effect.map(throughEffect(request, method, false), (slot) => (services = slot.services ?? Context.empty()))
    )
  }
  return { state, call }
})

/** A catalogue change as one session's stream may tell it. */
export interface Change {
  readonly changes: SkillRegistry.Changes
  readonly before: SkillRegistry.Snapshot
  readonly after: SkillRegistry.Snapshot
  /** The family (by `familyKey`) that said its instances changed, when that is the change. */
  readonly family?: string | undefined
}

/**
 * What of `change` a 2025-11-25 session stream may carry, decided with the session's latest
 * skills request at the time of the change (issue 11 item 3): `list_changed` only when a skill it
 * can see (before or after) changed, `updated` only for subscribed files of skills it can see.
 * With a check configured and no skills request from the session yet, nothing is told; a failing
 * check tells nothing either.
 */
export const visibleChange = (
  state: State,
  latest: unknown,
  change: Change,
  subscribed: (uri: string) => boolean
): Effect.Effect<{ readonly listChanged: boolean; readonly updated: ReadonlyArray<string> }> => {
  const { after, before, changes } = change
  if (change.family !== undefined) return familyChange(state, latest, after, change.family)
  if (state.decide === undefined) {
    return Effect.succeed({ listChanged: changes.listChanged, updated: changes.updated.filter(subscribed) })
  }
  if (latest === undefined) return Effect.succeed({ listChanged: false, updated: [] })
  const request = latest as RequestInfo
  return Effect.gen(function*() {
    const now = (yield* begin(request, "resources/read", { state, snapshot: after })).call.visible
    const then = (yield* begin(request, "resources/read", { state, snapshot: before })).call.visible
    const seen = (uri: string) => {
      const current = after.byUri.get(uri)
      const previous = before.byUri.get(uri)
      return current !== undefined && current.listed && now.skill(current.index) ||
        previous !== undefined && previous.listed && then.skill(previous.index)
    }
    const listChanged = changes.listChanged &&
      (changes.added.some(seen) || changes.removed.some(seen) || changes.changed.some((skill) => seen(skill.uri)))
    const updated = changes.updated.filter((uri) => {
      if (!subscribed(uri)) return false
      const current = after.files.get(uri)
      if (current !== undefined) return now.file(current.owners)
      const previous = before.files.get(uri)
      return previous !== undefined && then.file(previous.owners)
    })
    return { listChanged, updated }
  }).pipe(Effect.catchCause(() => Effect.succeed({ listChanged: false, updated: [] })))
}

// A listed family's instances changed: told to a listener that may see one of them now (its
// `list` run for that listener, stopping at the first visible instance).
const familyChange = (
  state: State,
  latest: unknown,
  snapshot: SkillRegistry.Snapshot,
  key: string
): Effect.Effect<{ readonly listChanged: boolean; readonly updated: ReadonlyArray<string> }> => {
  const family = snapshot.families.find((candidate) => SkillRegistry.familyKey(candidate) === key)
  if (family === undefined || !family.listed) return Effect.succeed({ listChanged: false, updated: [] })
  if (state.decide === undefined) return Effect.succeed({ listChanged: true, updated: [] })
  if (latest === undefined) return Effect.succeed({ listChanged: false, updated: [] })
  return Effect.gen(function*() {
    const { call } = yield* begin(latest as RequestInfo, "resources/list", { state, snapshot })
    const seen = !(yield* eachInstance(call, family, undefined, () => false))
    return { listChanged: seen, updated: [] }
  }).pipe(Effect.catchCause(() => Effect.succeed({ listChanged: false, updated: [] })))
}

/**
 * The notices one listener may hear from now on (until the scope closes), each change judged when
 * it happens by `visibleChange`: a `subscriptions/listen` request by its own headers and context
 * (effect then keeps what the listen asked for), a connection or session by its latest skills
 * request and its subscriptions.
 */
export const notices = (
  state: State,
  latest: () => unknown,
  subscribed: (uri: string) => boolean
): Effect.Effect<Stream.Stream<Notice>, never, Scope.Scope> =>
  Effect.map(PubSub.subscribe(state.changes), (subscription) =>
    Stream.flatMap(Stream.fromSubscription(subscription), (change) =>
      Stream.unwrap(Effect.map(visibleChange(state, latest(), change, subscribed), (told) =>
        Stream.fromIterable<Notice>([
          ...(told.listChanged ? [{ _tag: "ResourcesChanged" } as const] : []),
          ...told.updated.map((uri) => ({ _tag: "ResourceUpdated", uri }) as const)
        ])))))

/** `notices` for a listener of the wrapped adapters (see `EffectMcp.Extension.notices`). */
export const listen = (listener: Listener): Effect.Effect<Stream.Stream<Notice>, never, Scope.Scope> => {
  const state = attached<State>(listener._tag === "Listen" ? listener.request.server : listener.server)
  if (state === undefined) return Effect.succeed(Stream.empty)
  return listener._tag === "Listen"
    ? notices(state, () => listener.request, () => true)
    : notices(state, listener.connection.latest, listener.connection.subscribed)
}

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

/** The cursor scope of `skills/list`. */
export const SkillsScope = "skills"

/** The cursor scope of one directory's listing. */
export const directoryScope = (uri: string) => `dir ${uri}`

// A cursor is a position (the last URI served), not a handle on a snapshot: every replica honours
// it, across catalogue revisions too. One we cannot read tells the client how to recover.
const unknownCursor = invalidParams("Unknown or expired cursor: list again from the start, without a cursor")

/**
 * R36: every page of one listing carries the same scope, so the scope is the whole listing's
 * (public only if every listed skill is, and no visibility check applies), while the ttl is the
 * shortest of the page's entries.
 */
export const listingScope = (state: State, snapshot: SkillRegistry.Snapshot): "public" | "private" =>
  !snapshot.listing.anyPrivate && (!snapshot.listing.anyDefault || state.cacheScope === "public") ? "public" : "private"

// How many skills of one listing render at once: a page of slow renders takes a fraction of their
// sum, without starting a whole page's renders at the same moment.
const RenderConcurrency = 8

// A listing runs through the listed skills (by URI), then each listed family's instances in the
// order its `list` gives them. A cursor is the position after the last entry sent: a skill URI, or
// (FamilyPosition-prefixed) a family, the family's own cursor of the page and the offset in it.
export const FamilyPosition = "\u0000"

// The most pages one request asks of one family: cursors that go round in a circle end here.
const MaxFamilyPages = 1000

interface Position {
  readonly key: string
  readonly cursor: string | null
  readonly offset: number
}

const encodePosition = (position: Position) =>
  FamilyPosition + JSON.stringify([position.key, position.cursor, position.offset])

const decodePosition = (after: string): Position | undefined => {
  try {
    const [key, cursor, offset] = JSON.parse(after.slice(FamilyPosition.length)) as [unknown, unknown, unknown]
    return typeof key === "string" && (cursor === null || typeof cursor === "string") && Number.isSafeInteger(offset) &&
        (offset as number) >= 0
      ? { key, cursor, offset: offset as number }
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Calls `visit` with each instance of a listed family the caller may see, in the family's order,
 * from `from` on, with the position after it, until `visit` says stop (`false`). A `list` that fails
 * or times out ends that family (logged) and never the listing; an instance whose parameters do
 * not fit the template is skipped (logged).
 */
const eachInstance = Effect.fnUntraced(function*(
  call: Call,
  family: SkillRegistry.FamilyEntry,
  from: Position | undefined,
  visit: (skill: SkillRegistry.InstanceSkill, after: Position) => boolean
) {
  const key = SkillRegistry.familyKey(family)
  let cursor = from?.cursor ?? null
  let offset = from?.offset ?? 0
  for (let pages = 0; pages < MaxFamilyPages; pages++) {
    const page = yield* Effect.option(Kind.listInstances(call, family, cursor ?? undefined))
    if (Option.isNone(page)) return true
    const { instances, nextCursor } = page.value
    for (let j = offset; j < instances.length; j++) {
      const expanded = PathTemplate.expand(family.template, instances[j]!)
      if (Result.isFailure(expanded)) {
        yield* Effect.logWarning(`the family ${key} listed an instance that does not fit its template: ${expanded.failure.message}`)
        continue
      }
      const skill = Registry.instance(family, expanded.success)
      if (call.visible.instance(skill) && !visit(skill, { key, cursor, offset: j + 1 })) return false
    }
    // A cursor that does not move would page forever.
    if (nextCursor === undefined || nextCursor === cursor) return true
    cursor = nextCursor
    offset = 0
  }
  yield* Effect.logWarning(`the family ${key} gave ${MaxFamilyPages} pages in one request; the rest is not listed`)
  return true
})

// What a listing shows of each skill, rendered concurrently; a family instance that cannot be
// rendered is left out (`undefined`, its error logged), never failing the listing.
const eachListed = <A>(
  skills: ReadonlyArray<SkillRegistry.ServedSkill>,
  answer: (skill: SkillRegistry.ServedSkill) => Effect.Effect<A, WireError>
) =>
  Effect.forEach(
    skills,
    (skill) => skill._tag === "Instance" ? Effect.map(Effect.option(answer(skill)), Option.getOrUndefined) : answer(skill),
    { concurrency: RenderConcurrency }
  )

export const listSkills = Effect.fnUntraced(function*(params: { readonly cursor?: string | undefined } | undefined, request: RequestInfo) {
  const { call, state } = yield* begin(request, "skills/list")
  const { snapshot, visible } = call
  let after: string | undefined
  let position: Position | undefined
  if (params?.cursor !== undefined) {
    after = Cursor.decode(SkillsScope, params.cursor)
    if (after?.startsWith(FamilyPosition) === true) {
      position = decodePosition(after)
      if (position === undefined) after = undefined
    }
    if (after === undefined) return yield* Effect.fail(unknownCursor)
  }
  const selected: Array<SkillRegistry.ServedSkill> = []
  // The position after the last selected entry, and the next page's start once a further entry exists.
  let last: string | undefined
  let next: string | undefined
  const take = (skill: SkillRegistry.ServedSkill, after: string) => {
    if (selected.length === state.pageSize) {
      next = last
      return false
    }
    selected.push(skill)
    last = after
    return true
  }
  if (position === undefined) {
    const listed = snapshot.listed
    for (let i = Cursor.startAfter(listed, (skill) => skill.uri, after); i < listed.length && next === undefined; i++) {
      const skill = listed[i]!
      if (visible.skill(skill.index)) take(skill, skill.uri)
    }
  }
  for (const family of snapshot.families) {
    if (next !== undefined) break
    const key = SkillRegistry.familyKey(family)
    if (!family.listed || position !== undefined && key < position.key) continue
    const from = position !== undefined && key === position.key ? position : undefined
    yield* eachInstance(call, family, from, (skill, after) => take(skill, encodePosition(after)))
  }
  const rendered = yield* eachListed(selected, (skill) => Kind.kindOf(skill).entry(call, skill))
  const skills: Array<CoreSkill.Skill> = []
  const onPage: Array<SkillRegistry.ServedSkill> = []
  for (const [i, entry] of rendered.entries()) {
    if (entry === undefined) continue
    skills.push(entry)
    onPage.push(selected[i]!)
  }
  const result: Protocol.ListSkillsResult = {
    skills,
    ...(next !== undefined ? { nextCursor: Cursor.make(SkillsScope, next) } : {})
  }
  return complete(request, call, result, {
    ttlMs: hintOfAll(state, onPage).ttlMs,
    cacheScope: listingScope(state, snapshot)
  })
})

/**
 * The family instance `uri` falls in, if the caller may see it, with the decoded path below its
 * root; or, for a URI with a family's shape but an invalid parameter, the refusal (-32602, naming
 * what was wrong unless a visibility check applies, under which it must look like any absent URI).
 * Nothing is rendered here.
 */
const resolveInstance = (
  call: Call,
  uri: string
):
  | { readonly _tag: "None" }
  | { readonly _tag: "Invalid"; readonly error: WireError }
  | { readonly _tag: "Found"; readonly skill: SkillRegistry.InstanceSkill; readonly file: ReadonlyArray<string> } =>
{
  for (const family of call.snapshot.families) {
    const match = PathTemplate.match(family.template, uri)
    if (match._tag === "Outside") continue
    if (match._tag === "Invalid") {
      return call.visible.checked ? none : { _tag: "Invalid", error: invalidParams(match.error.message, { uri }) }
    }
    const skill = Registry.instance(family, match)
    return call.visible.instance(skill) ? { _tag: "Found", skill, file: match.file } : none
  }
  return none
}

const none = { _tag: "None" } as const

export const getSkill = Effect.fnUntraced(function*(params: { readonly uri: string }, request: RequestInfo) {
  const { call, state } = yield* begin(request, "skills/get")
  const known = call.snapshot.byUri.get(params.uri)
  let skill: SkillRegistry.ServedSkill | undefined = known !== undefined && call.visible.skill(known.index) ? known : undefined
  if (known === undefined) {
    const resolved = resolveInstance(call, params.uri)
    if (resolved._tag === "Invalid") return yield* Effect.fail(resolved.error)
    if (resolved._tag === "Found" && resolved.file.length === 1 && resolved.file[0] === Extension.SkillFileName) {
      skill = resolved.skill
    }
  }
  if (skill === undefined) {
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
  indexed: SkillRegistry.FileEntry | SkillRegistry.DirectoryEntry | undefined,
  directory = false
):
  | { readonly skill: SkillRegistry.ServedSkill; readonly owners: ReadonlyArray<SkillRegistry.ServedSkill> }
  | WireError
  | undefined =>
{
  const { snapshot, visible } = call
  if (indexed !== undefined) {
    // A file is its innermost owner's; a directory is any skill's that holds a file below it.
    const first = "children" in indexed
      ? indexed.owners.find(visible.skill)
      : visible.file(indexed.owners)
      ? Registry.innermost(snapshot.skills, indexed.owners)
      : undefined
    return first === undefined
      ? undefined
      : { skill: snapshot.skills[first]!, owners: indexed.owners.map((index) => snapshot.skills[index]!) }
  }
  // Not a static file or directory: the innermost skill around it answers (a static one has no
  // such file or directory). A folder of a hidden nested skill may still lead to a visible skill
  // inside it: the nearest visible skill around it lists what the caller may see there.
  let owner = SkillUri.isCanonical(uri) ? Registry.enclosing(snapshot, uri) : undefined
  if (owner !== undefined) {
    while (directory && owner !== undefined && !visible.skill(owner.index)) {
      owner = Registry.enclosing(snapshot, owner.root.slice(0, owner.root.lastIndexOf("/")))
    }
    return owner !== undefined && owner._tag !== "Static" && visible.skill(owner.index) ? { skill: owner, owners: [owner] } : undefined
  }
  const resolved = resolveInstance(call, uri)
  return resolved._tag === "Invalid"
    ? resolved.error
    : resolved._tag === "Found"
    ? { skill: resolved.skill, owners: [resolved.skill] }
    : undefined
}

const notADirectory = (uri: string) => invalidParams(`no directory resource is served at ${uri}`, { uri })

export const readDirectory = Effect.fnUntraced(function*(
  params: { readonly uri: string; readonly cursor?: string | undefined },
  request: RequestInfo
) {
  const { call, state } = yield* begin(request, "resources/directory/read")
  const uri = params.uri
  const owner = ownerOf(call, uri, call.snapshot.directories.get(uri), true)
  if (isWireError(owner)) return yield* Effect.fail(owner)
  const children = owner === undefined ? undefined : yield* Kind.kindOf(owner.skill).directory(call, owner.skill, uri)
  if (owner === undefined || children === undefined) return yield* Effect.fail(notADirectory(uri))
  const scope = directoryScope(uri)
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

// What effect answers on the session revisions for a resource it does not have (no constant for it).
const LegacyResourceNotFound = -32002

const notFound = (uri: string) => invalidParams("Resource not found", { uri })

/** `resources/read`: skill files from the snapshot (or a per-request skill), everything else to effect. */
export const readResource: Interceptor = Effect.fnUntraced(function*(
  params: { readonly uri: string },
  request: RequestInfo,
  next: Effect.Effect<unknown, unknown>
) {
  const uri = params.uri
  if (uri === VisibilityResourceUri) return yield* Effect.fail(notFound(uri))
  const state = stateFor(request)
  if (state === undefined) return yield* next
  const snapshot = yield* state.registry.snapshot
  const file = snapshot.files.get(uri)
  const schemeIsOurs = file !== undefined || isSkillScheme(snapshot, uri) ||
    SkillUri.isCanonical(uri) && Registry.enclosing(snapshot, uri) !== undefined
  if (!schemeIsOurs) return yield* next
  // Decided before the lookup, so a refused caller gets the same answer for present and absent URIs.
  const { call } = yield* begin(request, "resources/read", { state, snapshot })
  const owner = ownerOf(call, uri, file)
  if (isWireError(owner)) return yield* Effect.fail(owner)
  const answer = owner === undefined ? undefined : yield* Kind.kindOf(owner.skill).read(call, owner.skill, uri)
  if (owner !== undefined && answer !== undefined) {
    return complete(request, call, { contents: [{ uri, mimeType: answer.mimeType, ...answer.content }] }, hintOfAll(state, owner.owners))
  }
  // Hidden, absent and malformed skill URIs all take this one path, so they are indistinguishable;
  // a resource the user registered with effect under the same scheme still answers.
  return yield* Effect.catch(next, (error) =>
    isWireError(error) && (error.code === LegacyResourceNotFound || error.code === McpSchema.INVALID_PARAMS_ERROR_CODE) ? Effect.fail(notFound(uri)) : Effect.fail(error))
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
  const state = stateFor(request)
  if (state === undefined) return base
  const { call } = yield* begin(request, "resources/list")
  const own = base.resources.filter((resource) => resource.uri !== VisibilityResourceUri)
  const visible: Array<SkillRegistry.ServedSkill> = call.snapshot.listed.filter((skill) => call.visible.skill(skill.index))
  for (const family of call.snapshot.families) {
    if (family.listed) yield* eachInstance(call, family, undefined, (skill) => visible.push(skill) > 0)
  }
  const resources = yield* eachListed(visible, (skill) => Kind.kindOf(skill).resource(call, skill))
  const skills = resources.filter((resource) => resource !== undefined)
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

// Reads the visibility resource for one request, so effect's middleware runs around its handler.
const throughEffect = Effect.fnUntraced(function*(request: RequestInfo, method: Method, check: boolean) {
  const slot: Slot = {
    request: {
      method,
      protocolVersion: request.protocolVersion,
      headers: request.headers,
      sessionId: request.sessionId,
      requestContext: request.requestContext
    },
    check,
    decision: undefined,
    services: undefined
  }
  const read = yield* Effect.provideService(request.readRegisteredResource(VisibilityResourceUri), CurrentSlot, slot)
  return Option.isSome(read) ? slot : { ...slot, decision: false }
})

/** Whether effect runs `McpServer` middleware around the visibility check of this server. */
const probeMiddleware = (request: RequestInfo) =>
  Effect.provideService(
    request.middlewareAround(VisibilityResourceUri, ProbeMarker),
    CurrentSlot,
    {
      request: {
        method: "resources/read",
        protocolVersion: request.protocolVersion,
        headers: request.headers,
        sessionId: request.sessionId,
        requestContext: request.requestContext
      },
      check: false,
      decision: undefined,
      services: undefined,
      probe: true
    }
  )

/** Runs the configured check for one request inside effect's middleware (see `VisibilityResourceUri`). */
export const decideThroughEffect = (request: RequestInfo, method: Method): Effect.Effect<Verdict, WireError> =>
  // Not found: an `McpServer.visibility` provided to the skills layer hid it, which hides every skill.
  Effect.map(throughEffect(request, method, true), (slot) => ({ decision: slot.decision ?? false, services: slot.services }))

const subscribeRefused = (uri: string, reason: string): WireError =>
  invalidParams(reason, { uri: uri.length > 256 ? uri.slice(0, 256) + "..." : uri })

/**
 * `resources/subscribe` of the session revisions: a URI longer than `MaxSubscribeUriLength` is
 * refused; a skill URI must name a file that exists and that this request may see (otherwise the
 * same -32602 as a read of a missing resource); an HTTP session holds at most
 * `maxSubscriptions`. effect refuses subscriptions on HTTP sessions, so ours are kept with the
 * session (`Sessions`); stdio goes on to effect, and a skill URI effect accepted is also kept with
 * the connection, which the skills layer tells of changes itself (`EffectMcp.Connection`).
 */
export const subscribe: Interceptor = Effect.fnUntraced(function*(
  params: { readonly uri: string },
  request: RequestInfo,
  next: Effect.Effect<unknown, unknown>
) {
  const state = stateFor(request)
  if (state === undefined || request.modern) return yield* next
  const uri = params.uri
  if (uri.length > Sessions.MaxSubscribeUriLength) {
    return yield* Effect.fail(subscribeRefused(uri, `the URI is longer than ${Sessions.MaxSubscribeUriLength} characters`))
  }
  const snapshot = yield* state.registry.snapshot
  const file = snapshot.files.get(uri)
  const ours = file !== undefined || isSkillScheme(snapshot, uri)
  if (ours) {
    const { call } = yield* begin(request, "resources/read", { state, snapshot })
    const owner = ownerOf(call, uri, file)
    const exists = owner === undefined || isWireError(owner) ? undefined : yield* Kind.kindOf(owner.skill).read(call, owner.skill, uri)
    if (exists === undefined) return yield* Effect.fail(notFound(uri))
  }
  if (request.sessionId === undefined) {
    const answer = yield* next
    if (ours) request.connection?.subscribe(uri)
    return answer
  }
  const refused = yield* state.sessions.subscribe(request.sessionId, uri)
  if (refused === "limit") {
    return yield* Effect.fail(
      subscribeRefused(uri, `this session already holds ${state.sessions.maxSubscriptions} subscriptions, the most it may hold`)
    )
  }
  // An unknown session never gets here over HTTP: the session middleware answered 404 already.
  return {}
})

/** `resources/unsubscribe` of HTTP sessions and stdio connections (see `subscribe`). */
export const unsubscribe: Interceptor = Effect.fnUntraced(function*(
  params: { readonly uri: string },
  request: RequestInfo,
  next: Effect.Effect<unknown, unknown>
) {
  const state = stateFor(request)
  if (state === undefined || request.modern) return yield* next
  if (request.sessionId === undefined) {
    const answer = yield* next
    request.connection?.unsubscribe(params.uri)
    return answer
  }
  yield* state.sessions.unsubscribe(request.sessionId, params.uri)
  return {}
})
