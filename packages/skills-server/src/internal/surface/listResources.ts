/**
 * `resources/list`: effect's own resources and the `SKILL.md` of every visible listed skill (R25),
 * on one page.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type { Interceptor } from "../effect/port.js"
import * as Kind from "../kind.js"
import * as Answer from "./answer.js"
import { begin, eachInstance, eachListed, hintOfAll, stateFor } from "./request.js"
import type * as Snapshot from "../../Snapshot.js"

export const listResources: Interceptor = Effect.fnUntraced(function*(_params, request, next) {
  const base = (yield* next) as Record<string, unknown> & { readonly resources: ReadonlyArray<{ readonly uri: string }> }
  const state = stateFor(request)
  if (state === undefined) return base
  const { call } = yield* begin(request, "resources/list")
  const own = base.resources
  const visible: Array<Snapshot.ServedSkill> = call.snapshot.listed.filter((skill) => call.visible.skill(skill.index))
  for (const family of call.snapshot.families) {
    if (family.listed) yield* eachInstance(call, family, undefined, (skill) => visible.push(skill) > 0)
  }
  const resources = yield* eachListed(visible, (skill) => Kind.kindOf(skill).resource(call, skill))
  const skills = resources.filter((resource) => resource !== undefined)
  const result = { ...base, resources: [...own, ...skills] }
  if (!request.modern) return result
  const ours = Answer.toObject(Answer.make({}, hintOfAll(state, visible), call.visible.checked), request)
  // One page mixes effect's resources and skills: the stricter hint of the two applies.
  return own.length === 0 ? { ...result, ttlMs: ours.ttlMs, cacheScope: ours.cacheScope } : {
    ...result,
    ttlMs: Math.min(Number(base.ttlMs ?? 0), Number(ours.ttlMs)),
    cacheScope: base.cacheScope === "public" && ours.cacheScope === "public" ? "public" : "private"
  }
})
