/**
 * What each listener hears of a catalogue change: a stdio connection, a 2026-07-28
 * `subscriptions/listen` request, or a 2025-11-25 HTTP session stream. Each listener follows the
 * registry's commits, and judges each when it happens with its own visibility (`visibleChange`),
 * so a listener never hears of a skill it may not see.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as SkillRegistry from "../SkillRegistry.js"
import { familyKey } from "../Snapshot.js"
import { attached } from "./effect/port.js"
import type { Listener, Notice, RequestInfo } from "./effect/port.js"
import { begin, eachInstance } from "./surface/request.js"
import type { State } from "./surface/request.js"
import type { Method } from "./visibility.js"
import type * as Snapshot from "../Snapshot.js"

interface Told {
  readonly listChanged: boolean
  readonly updated: ReadonlyArray<string>
}

const nothing: Told = { listChanged: false, updated: [] }

/**
 * What of `commit` a listener may hear, decided with its latest skills request at the time of the
 * commit, each notice as the surface it announces would decide it: `list_changed` as this
 * listener's `skills/list` (only when a listed skill it can see, before or after, changed),
 * `updated` as its `resources/read` (only subscribed files of skills it can see). Each runs the
 * check at most once per listener and commit, and only when the commit has such a notice. With a
 * check configured and no skills request from the listener yet, nothing is told; a failing check
 * tells nothing of what it decides.
 */
export const visibleChange = (
  state: State,
  latest: unknown,
  commit: SkillRegistry.Commit,
  subscribed: (uri: string) => boolean
): Effect.Effect<Told> => {
  if (commit._tag === "Family") return familyChange(state, latest, commit.after, commit.key)
  const { after, before, changes } = commit
  const updated = changes.updated.filter(subscribed)
  if (state.decide === undefined) return Effect.succeed({ listChanged: changes.listChanged, updated })
  if (latest === undefined) return Effect.succeed(nothing)
  const request = latest as RequestInfo
  // One decision for both sides of the commit.
  const decide = (method: Method) => Effect.map(begin(request, method, { state, snapshot: after }), ({ call }) => ({ now: call.visible, then: call.visibleIn(before) }))
  const listChanged = !changes.listChanged ? Effect.succeed(false) : Effect.map(decide("skills/list"), ({ now, then }) => {
    const seen = (uri: string) => {
      const current = after.byUri.get(uri)
      const previous = before.byUri.get(uri)
      return current !== undefined && current.listed && now.skill(current.index) ||
        previous !== undefined && previous.listed && then.skill(previous.index)
    }
    return changes.added.some(seen) || changes.removed.some(seen) || changes.changed.some((skill) => seen(skill.uri))
  })
  const told = updated.length === 0 ? Effect.succeed(updated) : Effect.map(decide("resources/read"), ({ now, then }) =>
    updated.filter((uri) => {
      const current = after.files.get(uri)
      if (current !== undefined) return now.file(current.owners)
      const previous = before.files.get(uri)
      return previous !== undefined && then.file(previous.owners)
    }))
  return Effect.all({
    listChanged: Effect.orElseSucceed(listChanged, () => false),
    updated: Effect.orElseSucceed(told, (): ReadonlyArray<string> => [])
  }).pipe(Effect.catchCause(() => Effect.succeed(nothing)))
}

// A listed family's instances changed: told to a listener that may see one of them now (its
// `list` run for that listener, as its `skills/list` would, stopping at the first visible instance).
const familyChange = (state: State, latest: unknown, snapshot: Snapshot.Snapshot, key: string): Effect.Effect<Told> => {
  const family = snapshot.families.find((candidate) => familyKey(candidate) === key)
  if (family === undefined || !family.listed) return Effect.succeed(nothing)
  if (state.decide === undefined) return Effect.succeed({ listChanged: true, updated: [] })
  if (latest === undefined) return Effect.succeed(nothing)
  return Effect.gen(function*() {
    const { call } = yield* begin(latest as RequestInfo, "skills/list", { state, snapshot })
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
  Effect.map(state.registry.commits, (commits) =>
    Stream.flatMap(commits, (commit) =>
      Stream.unwrap(Effect.map(visibleChange(state, latest(), commit, subscribed), (told) =>
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

/**
 * Keeps `request` as its listener's latest (see `Port.Extension.seen`): with a check configured,
 * what a 2025-11-25 HTTP session or a stdio connection hears is decided with the eyes of its latest
 * request. A 2026-07-28 listen is judged by its own request.
 */
export const remember = (request: RequestInfo): Effect.Effect<void> => {
  const state = attached<State>(request.server)
  if (state === undefined || state.decide === undefined || request.modern) return Effect.void
  if (request.sessionId !== undefined) return state.sessions.remember(request.sessionId, request)
  request.connection?.remember(request)
  return Effect.void
}
