/**
 * One request to the skills surfaces: the layer's settings (`State`), and `begin`, the one
 * dispatch point every surface handler and the notices go through. It reads ONE snapshot for the
 * whole request and makes ONE visibility decision, so every answer of a request agrees.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { McpSchema } from "effect/ai"
import * as PathTemplate from "../../PathTemplate.js"
import * as SkillRegistry from "../../SkillRegistry.js"
import type * as SkillResolver from "../../SkillResolver.js"
import { familyKey } from "../../Snapshot.js"
import * as Registry from "../registry.js"
import type * as Context from "effect/Context"
import { attached } from "../effect/port.js"
import type { RequestInfo, WireError } from "../effect/port.js"
import type * as Faults from "../faults.js"
import * as Kind from "../kind.js"
import type { Call } from "../kind.js"
import type * as Sessions from "../sessions.js"
import * as Visibility from "../visibility.js"
import type * as Search from "../search.js"
import type * as Answer from "./answer.js"
import type * as Snapshot from "../../Snapshot.js"
import * as ServerLimits from "../../ServerLimits.js"

/** Per-server settings, fixed when the layer is built. */
export interface State {
  /** How errors name this registry. */
  readonly label: string
  readonly registry: SkillRegistry.SkillRegistry["Service"]
  /** The reload readers of files changed on disk share (`OnDemand.rescan`). */
  readonly rescan: Call["rescan"]
  readonly pageSize: number
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
  /** Present when a visibility check is configured: runs it once for the request. */
  readonly decide:
    | ((request: RequestInfo, method: Visibility.Method) => Effect.Effect<Visibility.Verdict, WireError>)
    | undefined
  /** The services the middleware around the endpoint provides to this request (for a family's callbacks). */
  readonly services: (request: RequestInfo) => Effect.Effect<Context.Context<never>, WireError>
  /**
   * 2025-11-25 HTTP sessions and their `resources/subscribe` URIs: effect keeps subscriptions only
   * for stdio connections, so the session stream filters updates with these.
   */
  readonly sessions: Sessions.Sessions
  readonly renderings: Kind.RenderCache
  /** Failures of the authors' code, logged one line per skill at most so often. */
  readonly faults: Faults.Faults
  /** Answers that depend on the snapshot alone, kept with it (`answer.ts`). */
  readonly answers: Answer.Memo
  /** The search index of a snapshot, kept with it (`search.ts`). */
  readonly searchIndex: (snapshot: Snapshot.Snapshot) => Search.Index
  /** Asked for a `skills/get` URI no snapshot holds (`SkillResolver`), when one is provided. */
  readonly resolver: SkillResolver.SkillResolver["Service"] | undefined
}

/** The state of the skills layer serving this request's server (see `Port.attach`). */
export const stateFor = (request: RequestInfo): State | undefined => attached<State>(request.server)

/** Whether a skills layer serves `server` (and so whether it declares the extension). */
export const serves = (server: object): boolean => attached<State>(server) !== undefined

/** A -32602 naming what was wrong. */
export const invalidParams = (message: string, data?: unknown): WireError =>
  data === undefined
    ? { code: McpSchema.INVALID_PARAMS_ERROR_CODE, message }
    : { code: McpSchema.INVALID_PARAMS_ERROR_CODE, message, data }

// Without the layer the server does not declare the extension (R82): its methods are unknown.
const notConfigured: WireError = { code: McpSchema.METHOD_NOT_FOUND_ERROR_CODE, message: "Method not found" }

// A cursor is a position (the last URI served), not a handle on a snapshot: every replica honours
// it, across catalogue revisions too. One we cannot read tells the client how to recover.
export const unknownCursor = invalidParams("Unknown or expired cursor: list again from the start, without a cursor")

const stateOf = (request: RequestInfo): Effect.Effect<State, WireError> => {
  const state = stateFor(request)
  return state === undefined ? Effect.fail(notConfigured) : Effect.succeed(state)
}

/**
 * Starts one request: its snapshot (unless the caller read it already) and its one visibility
 * decision.
 */
export const begin = Effect.fnUntraced(function*(request: RequestInfo, method: Visibility.Method, read?: {
  readonly state: State
  readonly snapshot: Snapshot.Snapshot
}) {
  const state = read?.state ?? (yield* stateOf(request))
  const snapshot = read?.snapshot ?? (yield* state.registry.snapshot)
  const verdict: Visibility.Verdict = state.decide === undefined
    ? { decision: true, services: undefined }
    : yield* state.decide(request, method)
  // Only a family's callbacks need the services: without a check they are captured on first use.
  let services = verdict.services
  const checked = state.decide !== undefined
  const call: Call = {
    snapshot,
    registry: state.registry,
    rescan: state.rescan,
    visibleIn: (other) => Visibility.visibleFor(other, verdict.decision, checked),
    visible: Visibility.visibleFor(snapshot, verdict.decision, checked),
    request,
    method,
    renderings: state.renderings,
    faults: state.faults,
    renders: new Map(),
    services: Effect.suspend(() =>
      services !== undefined
        ? Effect.succeed(services)
        : Effect.map(state.services(request), (captured) => (services = captured))
    ),
    admits: (skill) => {
      const decision = verdict.decision
      // A check reads the fields `SkillInfo` names, which every skill has.
      return typeof decision === "boolean" ? decision : decision(skill as Snapshot.ServedSkill)
    }
  }
  return { state, call }
})

/** The cache hint a result about `skill` alone would carry. */
export const hintOf = (state: State, skill: Snapshot.ServedSkill): Snapshot.Hint =>
  skill.cacheHint ?? { ttlMs: state.ttlMs, cacheScope: Kind.kindOf(skill).perCaller ? "private" : state.cacheScope }

/** The hint of a result about several skills: the shortest ttl, public only if every one is. */
export const hintOfAll = (state: State, skills: Iterable<Snapshot.ServedSkill>): Snapshot.Hint => {
  let ttlMs = Infinity
  let cacheScope: "public" | "private" = "public"
  for (const skill of skills) {
    const hint = hintOf(state, skill)
    ttlMs = Math.min(ttlMs, hint.ttlMs)
    if (hint.cacheScope === "private") cacheScope = "private"
  }
  return ttlMs === Infinity ? { ttlMs: state.ttlMs, cacheScope: state.cacheScope } : { ttlMs, cacheScope }
}

/** The skills of `owners` (indexes into `snapshot.skills`). */
export const skillsOf = (snapshot: Snapshot.Snapshot, owners: ReadonlyArray<number>) =>
  owners.map((index) => snapshot.skills[index]!)

/** A position in a family's listing: the family, its own cursor of the page, the offset in it. */
export interface Position {
  readonly key: string
  readonly cursor: string | null
  readonly offset: number
}

/**
 * Calls `visit` with each instance of a listed family the caller may see, in the family's order,
 * from `from` on, with the position after it, until `visit` says stop (`false`). A `list` that fails
 * or times out ends that family (logged) and never the listing; an instance whose parameters do
 * not fit the template is skipped (logged).
 */
export const eachInstance = Effect.fnUntraced(function*(
  call: Call,
  family: Snapshot.FamilyEntry,
  from: Position | undefined,
  visit: (skill: Snapshot.InstanceSkill, after: Position) => boolean
) {
  const key = familyKey(family)
  let cursor = from?.cursor ?? null
  let offset = from?.offset ?? 0
  for (let pages = 0; pages < ServerLimits.MaxFamilyPages; pages++) {
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
  yield* Effect.logWarning(`the family ${key} gave ${ServerLimits.MaxFamilyPages} pages in one request; the rest is not listed`)
  return true
})

/**
 * What a listing shows of each skill, rendered concurrently; a family instance that cannot be
 * rendered is left out (`undefined`, its error logged), never failing the listing.
 */
export const eachListed = <A>(
  skills: ReadonlyArray<Snapshot.ServedSkill>,
  answer: (skill: Snapshot.ServedSkill) => Effect.Effect<A, WireError>
) =>
  Effect.forEach(
    skills,
    (skill) => skill._tag === "Instance" ? Effect.map(Effect.option(answer(skill)), Option.getOrUndefined) : answer(skill),
    { concurrency: ServerLimits.RenderConcurrency }
  )
