/**
 * `skills/get`: the entry of one `SKILL.md` URI. `answerStatic` is a static skill's answer, a pure
 * function of the snapshot, the visibility and the URI (the fast route sends it as bytes).
 *
 * @internal
 */
import { Extension, SkillUri } from "@mcp-skills/core"
import type { Protocol } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RequestInfo } from "../effect/port.js"
import * as Kind from "../kind.js"
import type { Call } from "../kind.js"
import type * as Visibility from "../visibility.js"
import * as Answer from "./answer.js"
import * as Native from "./native.js"
import { resolveInstance } from "./owner.js"
import { begin, hintOf, invalidParams, stateFor } from "./request.js"
import type { State } from "./request.js"
import type * as Snapshot from "../../Snapshot.js"

/** A static skill's answer; `undefined` when `getSkill` must answer (any other kind, or no such skill). */
export const answerStatic = (
  state: State,
  snapshot: Snapshot.Snapshot,
  visible: Visibility.Visible,
  uri: string
): Answer.Answer<Protocol.GetSkillResult> | undefined => {
  const skill = snapshot.byUri.get(uri)
  if (skill === undefined || skill._tag !== "Static" || !visible.skill(skill.index)) return undefined
  const compute = () => Answer.make({ skill: Kind.carvedEntry(snapshot, visible, skill) }, hintOf(state, skill), visible.checked)
  return visible.checked ? compute() : state.answers.keep(snapshot, `get ${skill.index}`, compute)
}

// A skill no snapshot holds may be one a source serves without listing it (`SkillResolver`): it is
// asked before the request reads its snapshot, so the answer (and its one visibility decision)
// sees what it registered.
export const resolveMissing = Effect.fnUntraced(function*(request: RequestInfo, uri: string) {
  const state = stateFor(request)
  if (state?.resolver === undefined || (yield* state.registry.snapshot).byUri.has(uri)) return
  const parsed = SkillUri.parseSkillMd(uri)
  if (Result.isSuccess(parsed)) yield* state.resolver.resolve(parsed.success, state.registry)
})

/**
 * The skill of the registry at the `SKILL.md` URI `uri` this request may see, with its entry;
 * `undefined` when none is (absent, hidden, or an instance its family says does not exist).
 */
export const skillAt = Effect.fnUntraced(function*(call: Call, uri: string) {
  const indexed = call.snapshot.byUri.get(uri)
  let skill: Snapshot.ServedSkill | undefined = indexed !== undefined && call.visible.skill(indexed.index) ? indexed : undefined
  if (indexed === undefined) {
    const resolved = resolveInstance(call, uri)
    if (resolved._tag === "Invalid") return yield* Effect.fail(resolved.error)
    if (resolved._tag === "Found" && resolved.file.length === 1 && resolved.file[0] === Extension.SkillFileName) {
      skill = resolved.skill
    }
  }
  const entry = skill === undefined ? undefined : yield* Kind.kindOf(skill).entry(call, skill)
  return skill === undefined || entry === undefined ? undefined : { skill, entry }
})

export const getSkill = Effect.fnUntraced(function*(params: { readonly uri: string }, request: RequestInfo) {
  yield* resolveMissing(request, params.uri)
  const { call, state } = yield* begin(request, "skills/get")
  const known = answerStatic(state, call.snapshot, call.visible, params.uri)
  if (known !== undefined) return Answer.toObject(known, request)
  const found = yield* skillAt(call, params.uri)
  if (found === undefined) {
    const theirs = call.snapshot.byUri.has(params.uri) ? undefined : yield* Native.get(call, params.uri)
    if (theirs !== undefined) return Answer.toObject(theirs, request)
    return yield* Effect.fail(absent(params.uri))
  }
  return Answer.toObject(Answer.make({ skill: found.entry }, hintOf(state, found.skill), call.visible.checked), request)
})

/** The one answer for a URI no skill this caller may see serves, whatever the reason. */
export const absent = (uri: string) =>
  invalidParams(
    Result.isSuccess(SkillUri.parseSkillMd(uri))
      ? `no skill is served at ${uri}`
      : `${uri} is not the URI of a ${Extension.SkillFileName} of a served skill`,
    { uri }
  )
