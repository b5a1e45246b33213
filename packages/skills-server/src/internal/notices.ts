/**
 * What each listener hears of a catalogue change: a stdio connection, a 2026-07-28
 * `subscriptions/listen` request, or a 2025-11-25 HTTP session stream. Each change is judged
 * when it happens, with the listener's own visibility (`visibleChange`), so a listener never
 * hears of a skill it may not see.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as SkillFamily from "../SkillFamily.js"
import * as SkillRegistry from "../SkillRegistry.js"
import { familyKey } from "../Snapshot.js"
import { attached } from "./effectMcp.js"
import type { Listener, RequestInfo } from "./port.js"
import type { Notice } from "./listenPacing.js"
import { begin, eachInstance } from "./surface/request.js"
import type { Change, State } from "./surface/request.js"

interface Told {
  readonly listChanged: boolean
  readonly updated: ReadonlyArray<string>
}

const nothing: Told = { listChanged: false, updated: [] }

/**
 * What of `change` a listener may hear, decided with its latest skills request at the time of the
 * change: `list_changed` only when a skill it can see (before or after) changed, `updated` only
 * for subscribed files of skills it can see. With a check configured and no skills request from
 * the listener yet, nothing is told; a failing check tells nothing either.
 */
export const visibleChange = (
  state: State,
  latest: unknown,
  change: Change,
  subscribed: (uri: string) => boolean
): Effect.Effect<Told> => {
  const { after, before, changes } = change
  if (change.family !== undefined) return familyChange(state, latest, after, change.family)
  if (state.decide === undefined) {
    return Effect.succeed({ listChanged: changes.listChanged, updated: changes.updated.filter(subscribed) })
  }
  if (latest === undefined) return Effect.succeed(nothing)
  const request = latest as RequestInfo
  return Effect.gen(function*() {
    // One decision for both sides of the change: the check runs once per listener and change.
    const { call } = yield* begin(request, "resources/read", { state, snapshot: after })
    const now = call.visible
    const then = call.visibleIn(before)
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
  }).pipe(Effect.catchCause(() => Effect.succeed(nothing)))
}

// A listed family's instances changed: told to a listener that may see one of them now (its
// `list` run for that listener, stopping at the first visible instance).
const familyChange = (state: State, latest: unknown, snapshot: SkillRegistry.Snapshot, key: string): Effect.Effect<Told> => {
  const family = snapshot.families.find((candidate) => familyKey(candidate) === key)
  if (family === undefined || !family.listed) return Effect.succeed(nothing)
  if (state.decide === undefined) return Effect.succeed({ listChanged: true, updated: [] })
  if (latest === undefined) return Effect.succeed(nothing)
  return Effect.gen(function*() {
    const { call } = yield* begin(latest as RequestInfo, "resources/list", { state, snapshot })
    const seen = !(yield* eachInstance(call, family, undefined, () => false))
    return { listChanged: seen, updated: [] }
  }).pipe(Effect.catchCause(() => Effect.succeed(nothing)))
}

/**
 * The notices one listener may hear from now on (until the scope closes): a `subscriptions/listen`
 * request judged by its own headers and context, a connection or session by its latest skills
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

/** `notices` for a listener of the wrapped adapters (see `Port.Extension.notices`). */
export const listen = (listener: Listener): Effect.Effect<Stream.Stream<Notice>, never, Scope.Scope> => {
  const state = attached<State>(listener._tag === "Listen" ? listener.request.server : listener.server)
  if (state === undefined) return Effect.succeed(Stream.empty)
  return listener._tag === "Listen"
    ? notices(state, () => listener.request, () => true)
    : notices(state, listener.connection.latest, listener.connection.subscribed)
}

// Each family of the catalogue that says when its instances changed (`SkillFamily.changes`) is
// heard for as long as it is in the catalogue; each change goes to every listener, which judges
// whether it may see an instance (`visibleChange`).
export const announceFamilyChanges = (registry: SkillRegistry.SkillRegistry["Service"], hub: PubSub.PubSub<Change>) =>
  Effect.gen(function*() {
    const heard = yield* FiberMap.make<string>()
    const running = new Map<string, SkillFamily.Family<any>>()
    const changed: SkillRegistry.Changes = { added: [], removed: [], changed: [], listChanged: true, updated: [] }
    const follow = (snapshot: SkillRegistry.Snapshot) =>
      Effect.gen(function*() {
        const present = new Set<string>()
        for (const family of snapshot.families) {
          const key = familyKey(family)
          const changes = family.definition.changes
          if (changes === undefined) continue
          present.add(key)
          if (running.get(key) === family.definition) continue
          running.set(key, family.definition)
          yield* FiberMap.run(
            heard,
            key,
            Stream.runForEach(changes, () =>
              Effect.flatMap(registry.snapshot, (now) =>
                PubSub.publish(hub, { changes: changed, before: now, after: now, family: key }))).pipe(
                Effect.catchCause((cause) => Effect.logWarning(`the changes of the family ${key} failed; no more are heard`, cause))
              )
          )
        }
        for (const key of [...running.keys()]) {
          if (present.has(key)) continue
          running.delete(key)
          yield* FiberMap.remove(heard, key)
        }
      })
    yield* Effect.forkScoped(Stream.runForEach(SubscriptionRef.changes(registry.ref), follow))
  })
