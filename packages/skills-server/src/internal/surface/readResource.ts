/**
 * `resources/read` of skill files: from the snapshot, or from the skill's kind per request;
 * every other URI goes to effect. `answerStatic` is the read of a file held in memory, a pure
 * function of the snapshot, the visibility and the URI (the fast route sends it as bytes).
 *
 * @internal
 */
import { SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import { McpSchema } from "effect/ai"
import * as Registry from "../registry.js"
import { isWireError } from "../effect/port.js"
import type { Interceptor } from "../effect/port.js"
import * as Kind from "../kind.js"
import * as Visibility from "../visibility.js"
import * as Answer from "./answer.js"
import { ownerOf } from "./owner.js"
import { begin, hintOfAll, invalidParams, skillsOf, stateFor } from "./request.js"
import type { State } from "./request.js"
import type * as Snapshot from "../../Snapshot.js"

/** The one answer to a skill URI that is absent, hidden or malformed: they are indistinguishable. */
export const notFound = (uri: string) => invalidParams("Resource not found", { uri })

const schemeOf = (uri: string) => {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)
  return match === null ? undefined : match[1]!.toLowerCase()
}

/** Whether `uri` is ours to answer: a URI without a scheme is no URI at all, and gets the same -32602. */
export const isSkillScheme = (snapshot: Snapshot.Snapshot, uri: string) => {
  const scheme = schemeOf(uri)
  return scheme === undefined || snapshot.schemes.has(scheme)
}

// What effect answers on the session revisions for a resource it does not have (no constant for it).
const LegacyResourceNotFound = -32002

/** The read of a static skill's file held in memory; `undefined` when `readResource` must answer. */
export const answerStatic = (
  state: State,
  snapshot: Snapshot.Snapshot,
  visible: Visibility.Visible,
  uri: string
) =>
  // Unchecked, the answer is the snapshot's alone: kept by URI, a repeated read finds it without
  // looking the file up in its skill's manifest again (large files' answers are not kept).
  visible.checked ? lookUp(state, snapshot, visible, uri) : state.answers.keep(snapshot, `read ${uri}`, () => lookUp(state, snapshot, visible, uri))

const lookUp = (state: State, snapshot: Snapshot.Snapshot, visible: Visibility.Visible, uri: string) => {
  const file = snapshot.files.get(uri)
  // A file served on demand is read and verified per request (`onDemand.ts`).
  if (file === undefined || file._tag !== "InMemory" || !visible.file(file.owners)) return undefined
  if (snapshot.skills[Registry.innermost(snapshot.skills, file.owners)]!._tag !== "Static") return undefined
  return Answer.make(
    { contents: [{ uri, mimeType: file.mimeType, ...file.content }] },
    hintOfAll(state, skillsOf(snapshot, file.owners)),
    visible.checked,
    "Leading"
  )
}

export const readResource: Interceptor = Effect.fnUntraced(function*(
  params: { readonly uri: string },
  request,
  next
) {
  const uri = params.uri
  const state = stateFor(request)
  if (state === undefined) return yield* next
  const snapshot = yield* state.registry.snapshot
  const file = snapshot.files.get(uri)
  const ours = file !== undefined || isSkillScheme(snapshot, uri) ||
    SkillUri.isCanonical(uri) && Registry.enclosing(snapshot, uri) !== undefined
  if (!ours) return yield* next
  // Decided before the lookup, so a refused caller gets the same answer for present and absent URIs.
  const { call } = yield* begin(request, "resources/read", { state, snapshot })
  const known = answerStatic(state, snapshot, call.visible, uri)
  if (known !== undefined) return Answer.toObject(known, request)
  const owner = ownerOf(call, uri, file)
  if (isWireError(owner)) return yield* Effect.fail(owner)
  const answer = owner === undefined ? undefined : yield* Kind.kindOf(owner.skill).read(call, owner.skill, uri)
  if (owner !== undefined && answer !== undefined) {
    return Answer.toObject(
      Answer.make(
        { contents: [{ uri, mimeType: answer.mimeType, ...answer.content }] },
        hintOfAll(state, owner.owners),
        call.visible.checked,
        "Leading"
      ),
      request
    )
  }
  // A resource the user registered with effect under the same scheme still answers.
  return yield* Effect.catch(next, (error) =>
    isWireError(error) && (error.code === LegacyResourceNotFound || error.code === McpSchema.INVALID_PARAMS_ERROR_CODE)
      ? Effect.fail(notFound(uri))
      : Effect.fail(error))
})
