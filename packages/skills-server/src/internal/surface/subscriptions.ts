/**
 * `resources/subscribe` and `resources/unsubscribe` of the session revisions. effect refuses
 * subscriptions on HTTP sessions, so ours are kept with the session (`Sessions`); stdio goes on
 * to effect, and a skill URI effect accepted is also kept with the connection, which the skills
 * layer tells of changes itself (`EffectMcp.Connection`).
 *
 * @internal
 */
import { Limits } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import { isWireError } from "../effect/port.js"
import type { Interceptor, WireError } from "../effect/port.js"
import * as Kind from "../kind.js"
import { ownerOf } from "./owner.js"
import { isSkillScheme, notFound } from "./readResource.js"
import { begin, invalidParams, stateFor } from "./request.js"

const refused = (uri: string, reason: string): WireError =>
  invalidParams(reason, { uri: uri.length > 256 ? uri.slice(0, 256) + "..." : uri })

/**
 * A URI longer than `Limits.MaxUriLength` (no skill's URI is) is refused; a skill URI must name a file that exists
 * and that this request may see (otherwise the same -32602 as a read of a missing resource); an
 * HTTP session holds at most `maxSubscriptions`.
 */
export const subscribe: Interceptor = Effect.fnUntraced(function*(params: { readonly uri: string }, request, next) {
  const state = stateFor(request)
  if (state === undefined || request.modern) return yield* next
  const uri = params.uri
  if (uri.length > Limits.MaxUriLength) {
    return yield* Effect.fail(refused(uri, `the URI is longer than ${Limits.MaxUriLength} characters`))
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
  const limit = yield* state.sessions.subscribe(request.sessionId, uri)
  if (limit === "limit") {
    return yield* Effect.fail(
      refused(uri, `this session already holds ${state.sessions.maxSubscriptions} subscriptions, the most it may hold`)
    )
  }
  // An unknown session never gets here over HTTP: the session middleware answered 404 already.
  return {}
})

export const unsubscribe: Interceptor = Effect.fnUntraced(function*(params: { readonly uri: string }, request, next) {
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
