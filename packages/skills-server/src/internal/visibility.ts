/**
 * Visibility: what a check sees of a request (`requestOf`, the one builder), what it decides
 * (`Decision`), and what one request may then see (`visibleFor`, the one `Visible`). Every
 * surface, the fast route and the notices read visibility through this module, so one decision
 * per request feeds them all.
 *
 * The check runs inside effect's middleware (so services user middleware provides reach it) by
 * reading a hidden effect resource (`VisibilityResourceUri`) whose handler the skills layer
 * registers; `Slot` carries the request in and the decision out.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as SkillRegistry from "../SkillRegistry.js"
import type { Method, VisibilityRequest } from "../Visibility.js"
import * as Registry from "./registry.js"
import type { RequestInfo, WireError } from "./effect/port.js"

export type { Method, VisibilityRequest }

/** The request a check sees: the effect path passes its `RequestInfo`, the fast route what it decoded. */
export const requestOf = (
  method: Method,
  request: Pick<RequestInfo, "protocolVersion" | "headers" | "sessionId" | "requestContext">
): VisibilityRequest => ({
  method,
  protocolVersion: request.protocolVersion,
  headers: request.headers,
  sessionId: request.sessionId,
  requestContext: request.requestContext
})

/** What a visibility check decides: everything, nothing, or a predicate over skills. */
export type Decision = boolean | ((skill: SkillRegistry.ServedSkill) => boolean)

/** A check's decision, and the request's services as the check saw them. */
export interface Verdict {
  readonly decision: Decision
  readonly services: Context.Context<never> | undefined
}

/** What one request may see of one snapshot: each skill is decided at most once. */
export interface Visible {
  readonly skill: (index: number) => boolean
  /** Whether a family instance is visible (decided once per instance URI per request). */
  readonly instance: (skill: SkillRegistry.InstanceSkill) => boolean
  /** Whether any of these skills (by index) is visible: a directory holding files of several is. */
  readonly any: (owners: ReadonlyArray<number>) => boolean
  /**
   * Whether a file listed by these skills' manifests is visible: its innermost owner decides, so a
   * hidden nested skill's files are carved out of every skill that contains it.
   */
  readonly file: (owners: ReadonlyArray<number>) => boolean
  /** Whether a visibility check ran: results then depend on the caller, and are `private`. */
  readonly checked: boolean
}

/** What a request without a check sees: everything, and nothing depends on the caller. */
export const everyone: Visible = {
  skill: () => true,
  instance: () => true,
  any: (owners) => owners.length > 0,
  file: (owners) => owners.length > 0,
  checked: false
}

/** What one request may see of `snapshot` under `decision`. */
export const visibleFor = (snapshot: SkillRegistry.Snapshot, decision: Decision, checked: boolean): Visible => {
  if (typeof decision === "boolean") {
    if (decision && !checked) return everyone
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

/** The URI of the hidden effect resource whose read runs the visibility check inside effect's middleware. */
export const VisibilityResourceUri = "urn:mcp-skills:visibility"

/** The message the visibility resource fails with when probed. */
export const ProbeMarker = "mcp-skills: probing for McpServer middleware"

/**
 * Carries the request into the visibility resource's handler, and its decision and services back
 * out.
 */
export type Slot =
  /** Runs the check (`Decide`) or only captures the services middleware provides (`Capture`). */
  | { readonly _tag: "Decide" | "Capture"; readonly request: VisibilityRequest; readonly out: SlotOut }
  /** Only probes for middleware: the handler fails with `ProbeMarker`. */
  | { readonly _tag: "Probe" }

/** What the handler of the visibility resource hands back. */
export interface SlotOut {
  decision: Decision | undefined
  services: Context.Context<never> | undefined
}

/** The slot of the request being decided. */
export const CurrentSlot = Context.Reference<Slot | undefined>("@mcp-skills/server/VisibilitySlot", {
  defaultValue: () => undefined
})

// Reads the visibility resource for one request, so effect's middleware runs around its handler.
const throughEffect = Effect.fnUntraced(function*(request: RequestInfo, method: Method, check: boolean) {
  const out: SlotOut = { decision: undefined, services: undefined }
  const slot: Slot = { _tag: check ? "Decide" : "Capture", request: requestOf(method, request), out }
  const read = yield* Effect.provideService(request.readRegisteredResource(VisibilityResourceUri), CurrentSlot, slot)
  return Option.isSome(read) ? out : { decision: false, services: out.services }
})

/** The services effect's and `HttpRouter`'s middleware provide to this request. */
export const servicesOf = (request: RequestInfo, method: Method): Effect.Effect<Context.Context<never>, WireError> =>
  Effect.map(throughEffect(request, method, false), (out) => out.services ?? Context.empty())

/** Whether effect runs `McpServer` middleware around the visibility check of this server. */
export const probeMiddleware = (request: RequestInfo) =>
  Effect.provideService(request.middlewareAround(VisibilityResourceUri, ProbeMarker), CurrentSlot, { _tag: "Probe" })

/** Runs the configured check for one request inside effect's middleware (see `VisibilityResourceUri`). */
export const decideThroughEffect = (request: RequestInfo, method: Method): Effect.Effect<Verdict, WireError> =>
  // Not found: an `McpServer.visibility` provided to the skills layer hid it, which hides every skill.
  Effect.map(throughEffect(request, method, true), (out) => ({ decision: out.decision ?? false, services: out.services }))
