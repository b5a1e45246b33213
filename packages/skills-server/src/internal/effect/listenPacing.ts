/**
 * How many skill notices one 2026-07-28 `subscriptions/listen` stream has waiting, and what happens
 * past its bound.
 *
 * effect 4.1.0 keeps at most 64 projected notifications per listen stream (a dropping queue in the
 * `subscriptions/listen` handler) and ends the stream once one more arrives, so a bulk change
 * handed to it at once (a `git pull` touching 70 subscribed files) would be dropped whole. The
 * pacer hands effect at most `ServerLimits.ListenWindow` notices at a time, each counted back when effect has sent it,
 * and keeps the rest itself: one pending `list_changed` at most, and the updated URIs (each once).
 * When the waiting notices would pass `ServerLimits.ListenBound`, and the listen asked for `resourcesListChanged`,
 * they are coalesced into one `list_changed` (the client re-lists; digests tell it what changed),
 * which also absorbs further `updated` notices until it has been sent. A listen that did not ask
 * for `list_changed` keeps every waiting URI, at most one per URI it subscribed to.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Telemetry from "../telemetry.js"
import * as ServerLimits from "../../ServerLimits.js"

/** A change one listener is told of: effect's canonical notification tags. */
export type Notice =
  | { readonly _tag: "ResourcesChanged" }
  | { readonly _tag: "ResourceUpdated"; readonly uri: string }

/** What the listen asked for (effect drops anything else, so the pacer never hands it out). */
export interface Asked {
  readonly listChanged: boolean
  readonly subscribed: (uri: string) => boolean
}

/** One listen's pacer: `offer` every notice the listen may hear. */
export interface Pacer {
  readonly offer: (notice: Notice) => Effect.Effect<void>
}

/**
 * A pacer handing notices out with `hand` (which must not suspend); `sent` must run once the
 * notice it comes with has been sent (or could not be).
 */
export const make = (asked: Asked, hand: (notice: Notice, sent: Effect.Effect<void>) => Effect.Effect<void>): Pacer => {
  let handedOut = 0
  let listChanged = false
  // A coalesced list_changed is waiting or on its way: it stands for every update until sent.
  let coalesced = false
  const updated = new Set<string>()
  const pump: Effect.Effect<void> = Effect.suspend(() => {
    const next: Array<readonly [Notice, Effect.Effect<void>]> = []
    while (handedOut + next.length < ServerLimits.ListenWindow) {
      if (listChanged) {
        listChanged = false
        next.push([{ _tag: "ResourcesChanged" }, coalesced ? coalescedSent : sent])
        continue
      }
      const first = updated.values().next()
      if (first.done === true) break
      updated.delete(first.value)
      next.push([{ _tag: "ResourceUpdated", uri: first.value }, sent])
    }
    handedOut += next.length
    return Effect.forEach(next, ([notice, done]) => hand(notice, done), { discard: true })
  })
  const sent = Effect.andThen(Effect.sync(() => void handedOut--), pump)
  const coalescedSent = Effect.andThen(Effect.sync(() => void (coalesced = false)), sent)
  // How many updates `notice` folded into a list_changed (for telemetry).
  const hold = (notice: Notice): number => {
    if (notice._tag === "ResourcesChanged") {
      if (asked.listChanged) listChanged = true
      return 0
    }
    if (!asked.subscribed(notice.uri) || updated.has(notice.uri)) return 0
    if (coalesced) return 1
    if (asked.listChanged && handedOut + updated.size + (listChanged ? 1 : 0) >= ServerLimits.ListenBound) {
      const folded = updated.size + 1
      updated.clear()
      listChanged = true
      coalesced = true
      return folded
    }
    updated.add(notice.uri)
    return 0
  }
  return {
    offer: (notice) =>
      Effect.flatMap(Effect.sync(() => hold(notice)), (folded) =>
        folded === 0 ? pump : Effect.andThen(Telemetry.count(Telemetry.metrics.notifications, { outcome: "coalesced" }, folded), pump))
  }
}
