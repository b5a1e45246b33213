/**
 * Keeping a folder in sync with a server for as long as a scope lasts: the server is followed
 * (`Follow`: its notifications on either revision, its cache hints where it sends none, a restart
 * bridged with backoff), and each look pulls what changed (`Pull`): every file verified, the
 * change committed all or nothing, the lock file recording origin, digests, signer and time.
 *
 * - A change that fails a check (a digest, a signature, a name, a folder another server's skill
 *   holds) is `Refused`: nothing of it is installed, the installed version stays, and the look
 *   after the next change tries again. So is a change over files edited here (`LocalChanges`),
 *   unless `overwriteLocal`: a sync never overwrites an edit unnoticed. With `all`, a skill that
 *   fails verification is refused alone, and the other changes are installed.
 * - Skills the server serves no more are `Gone`, and removed with `prune`.
 * - Interrupted (Ctrl-C), a sync stops between changes or after the commit under way: the folder
 *   holds the old version of a skill or the new one, never a mix (`Pull.commit`).
 *
 * @since 0.1.0
 */
import type { CacheHint } from "@mcp-skills/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as HttpClient from "effect/http/HttpClient"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Follow from "./Follow.js"
import { outcomeLine } from "./internal/lines.js"
import { prefixProblem } from "./internal/pull/names.js"
import { readLock } from "./internal/pull/paths.js"
import { plan, selectFrom } from "./internal/pull/plan.js"
import * as Pull from "./Pull.js"
import * as PullError from "./PullError.js"
import type * as PullModel from "./PullModel.js"
import type * as SkillsClient from "./SkillsClient.js"

/**
 * What a sync installs: a pull's choices, but for `acceptChanges` (a sync takes every verified
 * change) and `unlisted` (a sync finds them itself). `prune` works with `uris` too: a skill named
 * that the server no longer serves is removed.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = Omit<PullModel.Choices, "acceptChanges" | "unlisted">

/**
 * What happens while a folder is kept in sync, as it happens: `Connected` (the server answered),
 * `Changed` (one skill added, updated, restored, gone or pruned), `Refused` (a change not installed,
 * and why; the installed version stays), `Notifications` (heard, not offered, or broken) and
 * `Disconnected` (the server is gone; tried again after `retryIn`).
 *
 * @since 0.1.0
 * @category models
 */
export type Event =
  | { readonly _tag: "Connected"; readonly server: string; readonly protocolVersion: string }
  | { readonly _tag: "Changed"; readonly server: string; readonly outcome: Pull.Outcome }
  | { readonly _tag: "Refused"; readonly server: string; readonly error: PullError.PullError }
  | { readonly _tag: "Notifications"; readonly server: string; readonly state: Follow.Notifications; readonly reason: string | undefined }
  | { readonly _tag: "Disconnected"; readonly server: string; readonly reason: string; readonly retryIn: Duration.Duration }

/**
 * How a sync runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly transport: Follow.Transport
  /** How its client is made (`server` defaults to the URL or the command line). */
  readonly client?: Follow.ClientOptions | undefined
  readonly pull: Options
  /** Bounds of the re-check after the server's `ttlMs` (default 5 seconds to 10 minutes). */
  readonly recheck?: Follow.Settings<never, never>["recheck"]
  /** Reconnection backoff (default from 500 ms, doubling up to 30 s). */
  readonly backoff?: Follow.Settings<never, never>["backoff"]
  /** Quiet time after a notification before looking (default 50 ms). */
  readonly settle?: Duration.Input | undefined
  /** Told of every {@link Event}. */
  readonly onEvent?: ((event: Event) => Effect.Effect<void>) | undefined
}

// Failures that say the server cannot be spoken to now, not that a change is wrong: the
// connection is made again (with backoff) rather than the change refused.
const Unreachable: ReadonlySet<PullError.Check> = new Set(["transport", "timeout", "auth"])

/**
 * One look: what the server lists is pulled into the folder as one commit; a change that cannot
 * be installed is refused (reported), and only a server that cannot be spoken to fails.
 *
 * @since 0.1.0
 * @category running
 */
export const look = (
  client: SkillsClient.Service,
  options: Options,
  onEvent: (event: Event) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<CacheHint.CacheHint, PullError.PullError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const listing = yield* client.listSkills().pipe(Effect.mapError((e) => PullError.toPullError(e)))
    const attempt = Effect.gen(function*() {
      const { missing, refused, selected } = yield* selectFrom(client, listing, { ...options, missing: "gone" })
      const planned = yield* plan(client, selected, { ...options, acceptChanges: true, unlisted: missing }, refused)
      return yield* Pull.apply(client, planned)
    })
    const done = yield* attempt.pipe(
      Effect.mapError((e) => PullError.toPullError(e)),
      Effect.catchIf(
        (error) => !Unreachable.has(error.check),
        (error) => Effect.as(onEvent({ _tag: "Refused", server: client.server, error }), undefined)
      )
    )
    for (const outcome of done?.skills ?? []) {
      if (outcome._tag !== "Unchanged" && outcome._tag !== "Nested") yield* onEvent({ _tag: "Changed", server: client.server, outcome })
    }
    // After the changes: a skill left out (with `all`) is refused while the others went in.
    for (const { error } of done?.refused ?? []) yield* onEvent({ _tag: "Refused", server: client.server, error })
    return listing.cacheHint
  })

// What can be wrong with the settings themselves, found before connecting.
const usage = (settings: Settings): Effect.Effect<void, PullError.PullError> => {
  const problem = settings.pull.layout === undefined ? undefined : prefixProblem(settings.pull.layout)
  return problem === undefined ? Effect.void : Effect.fail(new PullError.PullError({ check: "usage", detail: problem }))
}

/**
 * Keeps `settings.pull.into` in sync until interrupted (see the module description). It never
 * fails: a failure is a `Refused` or `Disconnected` event, and the sync goes on; its only typed
 * error is a usage one found before connecting (a bad `prefix`).
 *
 * @example
 * ```ts
 * import { Follow, PullModel, Sync } from "@mcp-skills/client"
 * import { Console, Effect } from "effect"
 *
 * const sync = Sync.run({
 *   transport: Follow.http("http://127.0.0.1:3000/mcp"),
 *   pull: { into: ".claude/skills", all: true, prune: true, layout: PullModel.flat() },
 *   onEvent: (event) => Console.log(Sync.describe(event))
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run = (
  settings: Settings
): Effect.Effect<
  never,
  PullError.PullError,
  FileSystem.FileSystem | HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner
> =>
  Effect.gen(function*() {
    yield* usage(settings)
    const fs = yield* FileSystem.FileSystem
    const server = settings.client?.server ??
      (settings.transport._tag === "Http" ? settings.transport.url : [settings.transport.command, ...settings.transport.args].join(" "))
    const tell = settings.onEvent ?? (() => Effect.void)
    // A refusal, or a skill gone and kept, is found again by every look: each is said once,
    // until something else happens to it.
    const refused = new Set<string>()
    const gone = new Set<string>()
    const onEvent = (event: Event) => {
      if (event._tag === "Refused") {
        if (refused.has(event.error.message)) return Effect.void
        refused.add(event.error.message)
      } else if (event._tag === "Changed") {
        refused.clear()
        const { _tag, uri } = event.outcome
        if (_tag === "Gone" && gone.has(uri)) return Effect.void
        if (_tag === "Gone") gone.add(uri)
        else gone.delete(uri)
      }
      return tell(event)
    }
    const into = settings.pull.into
    return yield* Follow.run<PullError.PullError, FileSystem.FileSystem | HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner>({
      connect: Follow.connect(settings.transport, { ...settings.client, server }),
      look: (client) => look(client, settings.pull, onEvent),
      // `updated` of the skills this server put in the folder (a 2025-11-25 session needs them).
      subscriptions: readLock(into).pipe(
        Effect.map((lock) => lock.skills.filter((skill) => skill.origin === server).map((skill) => skill.uri)),
        Effect.orElseSucceed(() => []),
        Effect.provideService(FileSystem.FileSystem, fs)
      ),
      recheck: settings.recheck,
      backoff: settings.backoff,
      settle: settings.settle,
      onEvent: (event) => {
        switch (event._tag) {
          case "Connected":
            return onEvent({ _tag: "Connected", server, protocolVersion: event.client.protocolVersion })
          case "Looked":
            return Effect.void
          case "Notifications":
            return onEvent({ _tag: "Notifications", server, state: event.state, reason: event.reason })
          case "Disconnected":
            return onEvent({ _tag: "Disconnected", server, reason: event.reason, retryIn: event.retryIn })
        }
      }
    })
  })

/**
 * A sync as a layer: it runs from when the layer is built until its scope closes; building it
 * fails only with a usage error (a bad `prefix`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  settings: Settings
): Layer.Layer<
  never,
  PullError.PullError,
  FileSystem.FileSystem | HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner
> =>
  Layer.effectDiscard(Effect.andThen(usage(settings), Effect.forkScoped(Effect.ignore(run(settings)))))

/**
 * The line a person reads of an event (`mcp-skills sync` prints one per event).
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (event: Event): string => {
  switch (event._tag) {
    case "Connected":
      return `connected to ${event.server} (${event.protocolVersion})`
    case "Changed":
      return outcomeLine(event.outcome)
    case "Refused":
      return `refused: ${event.error.message} (what is installed stays)`
    case "Notifications":
      return event.state === "open"
        ? `listening for changes of ${event.server}`
        : event.state === "unsupported"
        ? `${event.server} sends no change notifications${event.reason === undefined ? "" : ` (${event.reason})`}; re-checking by its cache hints`
        : `change notifications of ${event.server} stopped${event.reason === undefined ? "" : `: ${event.reason}`}`
    case "Disconnected":
      return `lost ${event.server}: ${event.reason}; retrying in ${Duration.format(event.retryIn)}`
  }
}
