/**
 * The fast route: a global `HttpRouter` middleware, installed by the skills layer, that answers
 * single stateless 2026-07-28 POSTs of the skills reads ahead of effect's generic dispatch
 * (Schema decode, RPC, fibers, stringify). It is admission (`fastAdmission.ts`) plus the byte
 * serializer of the surfaces' own answers (`surface/answer.ts`): the answer is the one effect's
 * path would compute, from the same functions. Whatever it cannot answer statically goes to
 * effect untouched.
 *
 * **Learning the endpoint.** The layer cannot see `layerHttp`'s path, so a path is trusted only
 * after a 2026-07-28 request on it reached this server's skills handlers through effect's route
 * (`Port.learn`), with the same request object (a router that rewrites the request, e.g. a
 * prefix, keeps effect's path) and, when `HttpAdmission` guards it, its body limit.
 *
 * **Visibility.** The route runs the server's check itself, with the services of this request's
 * context (those `HttpRouter` middleware outside this one provides), only where effect runs no
 * `McpServer` middleware around the check (probed when learning the endpoint); a request it then
 * leaves to effect carries the decision along (`Port.withDecision`), so the check runs once; a
 * check that fails leaves the request to effect, which runs it again and answers its error.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { McpSchema } from "effect/ai"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import * as FastAdmission from "./fastAdmission.js"
import * as Port from "./effect/port.js"
import * as Nesting from "./nesting.js"
import * as Answer from "./surface/answer.js"
import * as GetSkill from "./surface/getSkill.js"
import * as ListSkills from "./surface/listSkills.js"
import * as ReadDirectory from "./surface/readDirectory.js"
import * as ReadResource from "./surface/readResource.js"
import type { State } from "./surface/request.js"
import type * as Snapshot from "../Snapshot.js"
import type { Check, CheckError } from "../Visibility.js"
import * as Visibility from "./visibility.js"
import * as Telemetry from "./telemetry.js"
import * as ServerLimits from "../ServerLimits.js"

const MaxProfiles = ServerLimits.FastRouteProfiles

const MaxRoutes = ServerLimits.FastRouteEndpoints

interface Route extends FastAdmission.Endpoint {
  /** effect runs `McpServer` middleware around the visibility check: requests under it are effect's. */
  readonly middleware: boolean
  readonly profile: (metadata: unknown) => Effect.Effect<unknown, unknown>
  readonly toBytes: (answer: Answer.Answer) => Uint8Array
}

/**
 * Whether two values of `JSON.parse` have the same JSON: equal primitives, arrays of the same
 * items, objects of the same keys and values in any order (as equal JSON keys one profile: its
 * decoding does not depend on the order). The depth is the admission's (`Nesting`).
 */
export const equivalentJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!equivalentJson(a[i], b[i])) return false
    return true
  }
  // Counted with `for...in` rather than compared as `Object.keys` arrays: run on every request,
  // it allocates nothing (parsed JSON inherits no enumerable keys).
  let count = 0
  for (const key in a) {
    if (!Object.hasOwn(b, key) || !equivalentJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false
    count++
  }
  // Every key of `a` is in `b`: `b` has no other when it has no more.
  for (const _ in b) if (--count < 0) return false
  return true
}

/** The path of a request URL (its query left out). */
export const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const head = encoder.encode(`{"jsonrpc":"2.0","id":`)
const middle = encoder.encode(`,"result":`)
// effect's HTTP serialization ends every message with a newline.
const tail = encoder.encode("}\n")

// One buffer (from Node's pool when small), the id written into it rather than encoded apart.
const respond = (id: string | number, result: Uint8Array) => {
  const idJson = JSON.stringify(id)
  const out = Buffer.allocUnsafe(head.length + Buffer.byteLength(idJson) + middle.length + result.length + tail.length)
  out.set(head)
  let at = head.length
  at += out.write(idJson, at)
  out.set(middle, at)
  at += middle.length
  out.set(result, at)
  out.set(tail, at + result.length)
  return HttpServerResponse.uint8Array(out, { contentType: "application/json" })
}

// effect numbers its clients per connection; a request the fast route answers never becomes one.
const FastClientId = -1

/**
 * The middleware of one skills layer, for the server `server`. `state` is the layer's; the route
 * reads the current snapshot once per request.
 */
export const make = <E extends CheckError, R>(server: object, state: State, check: Check<E, R> | undefined) => {
  const routes = new Map<string, Route | null>()

  const learn = (
    request: HttpServerRequest.HttpServerRequest,
    path: string,
    httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
  ) =>
    Effect.map(Port.learn(httpEffect), ([response, learnt]) => {
      const seen = learnt.seen
      if (seen._tag === "Nothing" || seen.endpoint.server !== server || response.status !== 200 || routes.size >= MaxRoutes) {
        return response
      }
      // Not yet probed (the request reached no skills handler that decides visibility).
      if (check !== undefined && seen.middleware === undefined) return response
      const endpoint = seen.endpoint
      if (endpoint.request !== request) {
        routes.set(path, null)
        return response
      }
      routes.set(path, {
        middleware: seen.middleware === true,
        protocolVersion: endpoint.protocolVersion,
        profile: endpoint.profile,
        directoryRead: endpoint.directoryRead,
        maxBody: Math.min(ServerLimits.FastRouteMaxBody, learnt.maxBodySize ?? ServerLimits.FastRouteMaxBody),
        toBytes: Answer.bytesFor(endpoint.serverInfo)
      })
      return response
    })

  // Clients send the same `_meta` on every request: effect's decoding of it is kept (successes
  // only, up to `MaxProfiles` distinct ones), keyed by its JSON. The last one found is compared
  // with the next request's as it is, which spares a client sending one `_meta` the key's JSON.
  const profiles = new Map<string, unknown>()
  let last: { readonly meta: object; readonly profile: unknown } | undefined
  const decodedProfile = (route: Route, meta: object): Effect.Effect<unknown> | { readonly profile: unknown } => {
    if (last !== undefined && equivalentJson(last.meta, meta)) return last
    const key = JSON.stringify(meta)
    const known = profiles.get(key)
    if (known !== undefined) {
      last = { meta, profile: known }
      return last
    }
    return Effect.map(Effect.exit(route.profile(meta)), (profile) => {
      if (Exit.isFailure(profile)) return undefined
      if (profiles.size < MaxProfiles) profiles.set(key, profile.value)
      last = { meta, profile: profile.value }
      return profile.value
    })
  }

  // What the route does with a request: its answer, the decision it leaves to effect with the
  // request, or nothing (effect's, untouched).
  type Outcome = HttpServerResponse.HttpServerResponse | { readonly method: string; readonly decision: Visibility.Decision } | undefined
  const none = Effect.succeed<Outcome>(undefined)

  const answerFor = (route: Route, admitted: FastAdmission.Admitted, decision: Visibility.Decision): Outcome => {
    const snapshot = SubscriptionRef.getUnsafe(state.registry.ref)
    const visible = Visibility.visibleFor(snapshot, decision, check !== undefined)
    // A listing or a folder may hold skills of effect's own (`McpServer.skill`), which effect's
    // visibility decides per request on effect's path; `skills/get` and reads of the layer's
    // skills are the layer's alone.
    const mixed = (admitted.method === "skills/list" || admitted.method === "resources/directory/read") && Port.holdsNative(server)
    const result = mixed ? undefined : staticAnswer(admitted, snapshot, visible)
    if (result !== undefined) return respond(admitted.id, route.toBytes(result))
    // effect answers, with the decision made here: the check runs once per request.
    return check === undefined ? undefined : { method: admitted.method, decision }
  }

  const staticAnswer = (
    admitted: FastAdmission.Admitted,
    snapshot: Snapshot.Snapshot,
    visible: Visibility.Visible
  ): Answer.Answer | undefined => {
    switch (admitted.method) {
      case "skills/list":
        return ListSkills.answerStatic(state, snapshot, visible, admitted.cursor)
      case "skills/get":
        return GetSkill.answerStatic(state, snapshot, visible, admitted.uri)
      case "resources/read":
        return ReadResource.answerStatic(state, snapshot, visible, admitted.uri)
      case "resources/directory/read":
        return ReadDirectory.answerStatic(state, snapshot, visible, admitted.uri, admitted.cursor)
    }
  }

  const decide = (
    route: Route,
    request: HttpServerRequest.HttpServerRequest,
    admitted: FastAdmission.Admitted,
    profile: unknown
  ): Effect.Effect<Outcome> => {
    if (profile === undefined) return none
    if (check === undefined) return Effect.succeed(answerFor(route, admitted, true))
    if (route.middleware) return none
    return Effect.map(
      Effect.exit(check(Visibility.requestOf(admitted.method, {
        protocolVersion: route.protocolVersion,
        // The check sees effect's `Headers`, as on effect's path.
        headers: request.headers,
        sessionId: undefined,
        requestContext: McpSchema.McpRequestContext.of({
          ...(profile as Omit<McpSchema.McpRequestContext["Service"], "clientId">),
          clientId: FastClientId
        })
      })) as Effect.Effect<Visibility.Decision, E>),
      (decided) => Exit.isFailure(decided) ? undefined : answerFor(route, admitted, decided.value)
    )
  }

  // Plain steps rather than a generator: a request the route answers takes one asynchronous step
  // (its body) and, with a `_meta` seen before and no check configured, no other.
  const answer = (route: Route, request: HttpServerRequest.HttpServerRequest): Effect.Effect<Outcome> => {
    const headers = Port.requestHeaders(request)
    if (!FastAdmission.admitsHeaders(route, headers)) return none
    return Effect.flatMap(Port.readBody(request, Number(headers["content-length"])), (bytes) => {
      // A message nested deeper than the admission allows is its to refuse (and keying `_meta` by
      // its JSON would recurse that deep).
      if (bytes === undefined || Nesting.tooDeep(bytes)) return none
      let message: unknown
      try {
        message = JSON.parse(decoder.decode(bytes))
      } catch {
        return none
      }
      const admitted = FastAdmission.admitsMessage(headers, message)
      if (admitted === undefined) return none
      const profile = decodedProfile(route, admitted.meta)
      return Effect.isEffect(profile)
        ? Effect.flatMap(profile, (decoded) => decide(route, request, admitted, decoded))
        : decide(route, request, admitted, profile.profile)
    })
  }

  return (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request: HttpServerRequest.HttpServerRequest) => {
      if (request.method !== "POST") return httpEffect
      const path = pathOf(request.url)
      const route = routes.get(path)
      if (route === undefined) return learn(request, path, httpEffect)
      if (route === null) return httpEffect
      return Effect.flatMap(Telemetry.fastRoute(request, answer(route, request), HttpServerResponse.isHttpServerResponse), (answered) =>
        answered === undefined
          ? httpEffect
          : HttpServerResponse.isHttpServerResponse(answered)
          ? Effect.succeed(answered)
          : Port.withDecision(httpEffect, answered))
    })
}
