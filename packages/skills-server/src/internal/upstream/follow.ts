/**
 * One upstream followed for as long as the gateway runs (the client's `Follow.run`): connect,
 * look at its catalogue, verify what changed, hand the change to the registry; then look again
 * whenever a notification says something may have changed, or its `ttlMs` (bounded) has passed.
 * A look that fails (the upstream unreachable, a listing refused) ends the connection: the
 * upstream keeps its last verified skills, the gateway logs it once, and `Follow` reconnects with
 * capped exponential backoff (time from `Clock`). A skill that fails a check is not served: its previous verified version
 * stays, or it is absent; it is logged with the reason and counted once per version.
 *
 * @internal
 */
import type { CacheHint, Skill as CoreSkill, SkillUri } from "@mcp-skills/core"
import { Follow, type SkillsClient } from "@mcp-skills/client"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import { McpClientError } from "effect/ai/McpClientError"
import * as AdmitList from "../../AdmitList.js"
import type * as Skill from "../../Skill.js"
import type * as SkillRegistry from "../../SkillRegistry.js"
import type { Status } from "../../UpstreamStatus.js"
import * as Namespace from "./namespace.js"
import * as Telemetry from "./telemetry.js"
import * as Verify from "./verify.js"
import * as ServerLimits from "../../ServerLimits.js"

/** How one upstream is followed. */
export interface Settings {
  readonly name: string
  readonly prefix: ReadonlyArray<string>
  readonly limits: Verify.Context["limits"]
  /** Connects anew (the scope owns the connection); held files are the client's cache. */
  readonly connect: (held: (uri: string, digest: string) => Verify.HeldFile | undefined) => Effect.Effect<Follow.Connection, unknown, Scope.Scope>
  readonly recheck: { readonly min: Duration.Duration; readonly max: Duration.Duration }
  readonly backoff: { readonly base: Duration.Duration; readonly cap: Duration.Duration }
  /** Quiet time after a notification before looking, so a burst costs one look. */
  readonly settle: Duration.Duration
  /** Most get-only skills held; past it the least recently asked for is dropped. */
  readonly maxUnlisted: number
  readonly log: (line: string) => Effect.Effect<void>
  /**
   * Serializes every upstream's check and change of the registry, so two upstreams never both
   * take a URI.
   */
  readonly intake: Semaphore.Semaphore
  /** Which verified versions may be served (`AdmitList`); none: every one. */
  readonly admission: Admission | undefined
}

/** The admit list a gateway follows, read anew for each change. */
export interface Admission {
  readonly mode: AdmitList.Mode
  readonly current: Effect.Effect<AdmitList.AdmitList>
}

/** What the gateway asks of one followed upstream. */
export interface Follower {
  readonly name: string
  readonly prefix: ReadonlyArray<string>
  readonly definitions: Effect.Effect<ReadonlyArray<Skill.Static | Skill.Dynamic>>
  /**
   * Waits for the first connection attempt (and its look) to be over, either way, or for `within`:
   * from then on changes go to the registry, which is built from `definitions` as they are then.
   */
  readonly start: (within: Duration.Duration) => Effect.Effect<void>
  readonly resolve: (uri: SkillUri.SkillMdUri, registry: SkillRegistry.SkillRegistry["Service"]) => Effect.Effect<void>
  readonly status: Effect.Effect<Status>
  /** Every verified version, served or not, as an admit list names it. */
  readonly inventory: Effect.Effect<ReadonlyArray<AdmitList.Entry>>
  /** Serves what the admit list now admits (after it changed). */
  readonly readmit: Effect.Effect<void>
}

const sameHint = (a: CacheHint.CacheHint, b: CacheHint.CacheHint) => a.ttlMs === b.ttlMs && a.cacheScope === b.cacheScope

const describeCause = Follow.describeCause

// A message past the client's bound: the upstream was reached, and is refused for what it wrote.
const oversized = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  return error instanceof McpClientError && error.reason._tag === "LimitError"
}

/** One entry the upstream serves now, with the hint of the answer that gave it. */
interface Wanted {
  readonly entry: CoreSkill.Skill
  readonly hint: CacheHint.CacheHint
  readonly listed: boolean
}

/**
 * Follows one upstream in the current scope. Changes wait for `registry` (the gateway's, given
 * once its catalogue is built from `definitions`).
 */
export const make = (
  settings: Settings,
  registry: Deferred.Deferred<SkillRegistry.SkillRegistry["Service"]>
): Effect.Effect<Follower, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { name, prefix, log } = settings
    // The verified skills of this upstream, by upstream URI, and those of them it serves (those the
    // admit list admits); each replaced whole after each change.
    let held = new Map<string, Verify.Held>()
    let served = new Map<string, Verify.Held>()
    let unadmitted = 0
    let looked = false
    // Every held file by upstream URI: the client's cache, so a new version reads only what changed.
    let files = new Map<string, Verify.HeldFile>()
    let current: SkillsClient.Service | undefined
    let problem: string | undefined
    let notifications: Status["notifications"] = "closed"
    // The scheme of the upstream's URIs (get-only skills are asked for under it).
    let scheme = "skill"
    // Each entry refused now, by upstream URI, with what was said of it: said and counted once per
    // version and reason.
    const refused = new Map<string, { readonly refusal: Verify.Refusal; readonly said: string }>()
    // What was said of each version the admit list does not name: said once.
    const unnamed = new Map<string, string>()
    // Get-only skills, least recently asked for first.
    const unlisted = new Map<string, true>()
    const lock = yield* Semaphore.make(1)
    const resolving = yield* Semaphore.make(ServerLimits.UpstreamResolveConcurrency)
    const started = yield* Deferred.make<void>()

    const context: Verify.Context = {
      name,
      prefix,
      limits: settings.limits,
      current: Effect.suspend(() =>
        current === undefined
          ? Effect.fail({ _tag: "Unavailable", reason: `the upstream ${name} is unreachable` } as const)
          : Effect.succeed(current)
      )
    }

    const refuse = (refusal: Verify.Refusal, entry?: CoreSkill.Skill) =>
      Effect.gen(function*() {
        const said = `${entry === undefined ? "" : Verify.canonical(entry)} ${refusal.reason}`
        const before = refused.get(refusal.uri)
        refused.set(refusal.uri, { refusal, said })
        if (before?.said === said) return
        const previous = served.get(refusal.uri)
        yield* Telemetry.refused(name, refusal.check)
        yield* log(
          `upstream ${name}: not serving ${refusal.uri}: ${refusal.reason}` +
            (previous === undefined ? "" : "; still serving its previous verified version")
        )
      })

    // What of `next` the admit list lets be served; each version it does not name is said once.
    const admitted = (next: Map<string, Verify.Held>) =>
      Effect.gen(function*() {
        const admission = settings.admission
        if (admission === undefined) return { serve: next, hidden: 0 }
        const admits = AdmitList.admits(yield* admission.current)
        const serve = new Map<string, Verify.Held>()
        let hidden = 0
        for (const [uri, skill] of next) {
          if (admits(name, skill.entry)) {
            serve.set(uri, skill)
            continue
          }
          hidden++
          if (admission.mode === "observe") serve.set(uri, skill)
          if (unnamed.get(uri) === skill.canonical) continue
          unnamed.set(uri, skill.canonical)
          yield* log(
            `upstream ${name}: ${uri} (${AdmitList.digestSet(skill.entry)}) is not in the admit list; ` +
              (admission.mode === "observe" ? "serving it (observe)" : "not serving it until it is admitted")
          )
        }
        return { serve, hidden }
      })

    // Hands `next` (this upstream's whole verified set) to the registry, as far as the admit list
    // lets it: new URIs are checked against the other origins first, and a change the registry
    // refuses as a whole is applied skill by skill. Before the gateway has started, the registry
    // is yet to be built from `definitions`.
    const commit = (verified: Map<string, Verify.Held>) =>
      Effect.gen(function*() {
        const { serve: next, hidden } = yield* admitted(verified)
        if (yield* Deferred.isDone(started)) yield* settings.intake.withPermits(1)(Effect.gen(function*() {
          const target = Deferred.await(registry)
          const owned = new Set([...served.values()].map((skill) => skill.key))
          const fresh = [...next.values()].filter((skill) => !owned.has(skill.key))
          if (fresh.length > 0) {
            const snapshot = yield* (yield* target).snapshot
            const problems = Namespace.clashes(
              fresh.map((skill) => ({ uri: skill.key, origin: name })),
              snapshot.skills.map((skill) => ({ uri: skill.uri, origin: Namespace.originOfEntry(skill) }))
            )
            for (const { skill, reason } of problems) {
              const refused = fresh.find((candidate) => candidate.key === skill)!
              next.delete(refused.entry.uri)
              verified.delete(refused.entry.uri)
              yield* refuse({ _tag: "Refusal", uri: refused.entry.uri, check: "Collision", reason }, refused.entry)
            }
          }
          const keys = new Set([...next.values()].map((skill) => skill.key))
          const remove = [...served.values()].filter((skill) => !keys.has(skill.key)).map((skill) => skill.key)
          const upsert = [...next.values()].filter((skill) => served.get(skill.entry.uri) !== skill).map((skill) => skill.definition)
          if (remove.length + upsert.length > 0) {
            const registry = yield* target
            const whole = yield* Effect.exit(registry.update({ upsert, remove }, "upstream"))
            if (Exit.isFailure(whole)) yield* oneByOne(registry, verified, next, remove)
          }
        }))
        held = verified
        served = next
        unadmitted = hidden
        files = new Map([...verified.values()].flatMap((skill) => [...skill.files]))
        yield* Telemetry.skills(name, next.size)
      })

    const oneByOne = (
      target: SkillRegistry.SkillRegistry["Service"],
      verified: Map<string, Verify.Held>,
      next: Map<string, Verify.Held>,
      remove: ReadonlyArray<string>
    ) =>
      Effect.gen(function*() {
        yield* Effect.ignore(target.update({ upsert: [], remove }))
        for (const skill of [...next.values()]) {
          if (served.get(skill.entry.uri) === skill) continue
          const exit = yield* Effect.exit(target.update({ upsert: [skill.definition], remove: [] }))
          if (Exit.isSuccess(exit)) continue
          const previous = served.get(skill.entry.uri)
          for (const set of [next, verified]) {
            if (previous === undefined) set.delete(skill.entry.uri)
            else set.set(skill.entry.uri, previous)
          }
          yield* refuse({ _tag: "Refusal", uri: skill.entry.uri, check: "Registry", reason: describeCause(exit.cause) }, skill.entry)
        }
      })

    // Verifies what is new or changed among `wanted`; with `complete`, what is not wanted goes.
    const apply = (client: SkillsClient.Service, wanted: ReadonlyArray<Wanted>, complete: boolean) =>
      Effect.gen(function*() {
        const next = new Map(complete ? [] : held)
        const keys = new Map<string, string>()
        const changed: Array<Wanted> = []
        for (const want of wanted) {
          const previous = held.get(want.entry.uri)
          if (
            previous !== undefined && previous.listed === want.listed && sameHint(previous.hint, want.hint) &&
            previous.canonical === Verify.canonical(want.entry)
          ) next.set(want.entry.uri, previous)
          else changed.push(want)
        }
        const results = yield* Effect.forEach(changed, (want) => Verify.verify(client, context, want.entry, want.hint, want.listed), {
          concurrency: ServerLimits.UpstreamSkillConcurrency
        })
        for (const [i, result] of results.entries()) {
          const entry = changed[i]!.entry
          if (result._tag === "Refusal") {
            yield* refuse(result, entry)
            const previous = held.get(entry.uri)
            if (previous !== undefined) next.set(entry.uri, previous)
          } else {
            refused.delete(entry.uri)
            next.set(entry.uri, result)
          }
        }
        // Two upstream URIs (of two schemes) under one gateway URI: the first keeps it.
        for (const skill of [...next.values()]) {
          const other = keys.get(skill.key)
          if (other === undefined) keys.set(skill.key, skill.entry.uri)
          else {
            next.delete(skill.entry.uri)
            yield* refuse({ _tag: "Refusal", uri: skill.entry.uri, check: "Collision", reason: `${other} is served at the same URI` })
          }
        }
        yield* commit(next)
      })

    // One look at the whole catalogue: the listing, and each get-only skill asked for again.
    const look = (client: SkillsClient.Service) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const listing = yield* client.listSkills()
        const listed = new Set(listing.skills.map((entry) => entry.uri))
        const invalid = listing.invalid.map((entry) => ({ uri: entry.uri ?? "(an entry without a uri)", reason: entry.message }))
        // An entry the upstream no longer offers is no longer one it is refused.
        const offered = new Set([...listed, ...invalid.map(({ uri }) => uri)])
        for (const uri of refused.keys()) {
          if (!offered.has(uri) && held.get(uri)?.listed !== false) refused.delete(uri)
        }
        for (const { uri, reason } of invalid) yield* refuse({ _tag: "Refusal", uri, check: "InvalidSkillEntry", reason })
        const first = listing.skills[0]?.uri
        if (first !== undefined) scheme = first.slice(0, first.indexOf("://"))
        // A get-only skill the upstream now lists is no longer one to keep within `maxUnlisted`.
        for (const uri of listed) unlisted.delete(uri)
        const wanted: Array<Wanted> = listing.skills.map((entry) => ({ entry, hint: listing.cacheHint, listed: true }))
        for (const skill of held.values()) {
          if (skill.listed || listed.has(skill.entry.uri)) continue
          const got = yield* Effect.result(client.getSkill(skill.entry.uri))
          if (Result.isSuccess(got)) {
            wanted.push({ entry: got.success.skill, hint: got.success.cacheHint, listed: false })
            continue
          }
          const error = got.failure
          if (error._tag === "McpClientError" && error.reason._tag !== "TimeoutError") return yield* error
          if (error._tag === "SkillNotFound") {
            unlisted.delete(skill.entry.uri)
            continue
          }
          // An answer that cannot be taken keeps the version held.
          wanted.push({ entry: skill.entry, hint: skill.hint, listed: false })
          yield* refuse({ _tag: "Refusal", uri: skill.entry.uri, check: error._tag, reason: error.message })
        }
        yield* apply(client, wanted, true)
        return listing.cacheHint
      }))

    const resolve = (uri: SkillUri.SkillMdUri, target: SkillRegistry.SkillRegistry["Service"]) =>
      resolving.withPermits(1)(Effect.gen(function*() {
        const upstream = Namespace.upstreamUri(prefix, scheme, uri)
        const client = current
        if (upstream === undefined || client === undefined || held.has(upstream)) return
        yield* Deferred.succeed(registry, target)
        const got = yield* Effect.option(client.getSkill(upstream))
        if (Option.isNone(got)) return
        yield* lock.withPermits(1)(Effect.gen(function*() {
          const entry = got.value.skill
          yield* apply(client, [{ entry, hint: got.value.cacheHint, listed: held.get(entry.uri)?.listed ?? false }], false)
          if (held.get(entry.uri)?.listed === false) unlisted.set(entry.uri, true)
          if (unlisted.size <= settings.maxUnlisted) return
          const [oldest] = unlisted.keys()
          unlisted.delete(oldest!)
          const next = new Map(held)
          next.delete(oldest!)
          yield* commit(next)
        })).pipe(
          // The connection's failure is the follow loop's to handle; this caller sees an absent skill.
          Effect.catchCause((cause) => log(`upstream ${name}: resolving ${upstream} failed: ${describeCause(cause)}`))
        )
      }))

    // The client package follows the upstream (connections, notifications, re-checks, backoff);
    // what a look does and what the gateway says about it are the gateway's.
    yield* Effect.forkScoped(Follow.run({
      connect: settings.connect((uri, digest) => {
        const file = files.get(uri)
        return file?.digest === digest ? file : undefined
      }),
      look,
      subscriptions: Effect.sync(() => [...held.values()].filter((skill) => skill.listed).map((skill) => skill.entry.uri)),
      recheck: settings.recheck,
      backoff: settings.backoff,
      settle: settings.settle,
      onEvent: (event) =>
        Effect.gen(function*() {
          switch (event._tag) {
            case "Connected":
              current = event.client
              return
            case "Notifications":
              notifications = event.state
              if (event.state === "unsupported") yield* Effect.logDebug(`upstream ${name} sends no notifications (${event.reason})`)
              return
            case "Looked":
              looked = true
              yield* Deferred.succeed(started, undefined)
              if (event.first) {
                if (problem !== undefined) yield* log(`upstream ${name} is back; serving its ${served.size} verified skills`)
                problem = undefined
                yield* Telemetry.up(name, true)
              }
              return yield* Telemetry.synced(name, "success")
            case "Disconnected":
              current = undefined
              notifications = "closed"
              yield* Telemetry.synced(name, "failure")
              yield* Telemetry.up(name, false)
              if (problem === undefined) {
                yield* log(
                  `upstream ${name} is ${oversized(event.cause) ? "refused" : "unreachable"}: ${event.reason}; ` +
                    `still serving its ${served.size} verified skills, reconnecting with backoff`
                )
              }
              problem = event.reason
              return yield* Deferred.succeed(started, undefined)
          }
        })
    }))

    return {
      name,
      prefix,
      definitions: Effect.sync(() => [...served.values()].map((skill) => skill.definition)),
      start: (within) =>
        Effect.andThen(Effect.timeoutOption(Deferred.await(started), within), Deferred.succeed(started, undefined)),
      resolve,
      status: Effect.sync(() => ({
        name,
        reachable: current !== undefined && problem === undefined,
        problem,
        skills: served.size,
        looked,
        unadmitted,
        refused: Array.from(refused.values(), ({ refusal }) => refusal),
        notifications
      })),
      inventory: Effect.sync(() => [...held.values()].map((skill) => AdmitList.entryOf(name, skill.entry))),
      readmit: lock.withPermits(1)(Effect.suspend(() => commit(new Map(held))))
    }
  })
