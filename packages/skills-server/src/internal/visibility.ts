/**
 * Visibility: what a check sees of a request (`requestOf`, the one builder), what it decides
 * (`Decision`), and what one request may then see (`visibleFor`, the one `Visible`). Every
 * surface, the fast route and the notices read visibility through this module, so one decision
 * per request feeds them all. The check itself runs inside effect's middleware, through the port
 * (`Port.registerVisibility`), so the services user middleware provides reach it.
 *
 * @internal
 */
import type * as Context from "effect/Context"
import type { Method, VisibilityRequest } from "../Visibility.js"
import * as Registry from "./registry.js"
import type { RequestInfo } from "./effect/port.js"
import type * as Snapshot from "../Snapshot.js"

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
export type Decision = boolean | ((skill: Snapshot.ServedSkill) => boolean)

/** A check's decision, and the request's services as the check saw them. */
export interface Verdict {
  readonly decision: Decision
  readonly services: Context.Context<never> | undefined
}

/** What one request may see of one snapshot: each skill is decided at most once. */
export interface Visible {
  readonly skill: (index: number) => boolean
  /** Whether a family instance is visible (decided once per instance URI per request). */
  readonly instance: (skill: Snapshot.InstanceSkill) => boolean
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
export const visibleFor = (snapshot: Snapshot.Snapshot, decision: Decision, checked: boolean): Visible => {
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
  const instance = (skill: Snapshot.InstanceSkill) => {
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
