/**
 * Governance of a gateway: which upstream skill versions may be served. An admit list names skill
 * versions by upstream, skill URI (at the upstream) and digest-set hash: one SHA-256 over what an
 * author's signature covers (`Signing.payload`: name, frontmatter, and every file's path, digest
 * and size), so any change to a skill is a new digest set. `mcp-skills-server inventory` writes the
 * upstreams' current inventory in this same format, so an operator admits by copying or editing it.
 *
 * Two modes: `observe` serves every verified skill and logs each version the list does not name
 * (the inventory keeps them all); `admit` serves only versions the list names, so a skill that
 * changes is hidden until its new digest set is admitted. A `"dynamic"` skill has no digests to
 * pin (R141): it is admitted only by an entry whose `digestSet` is `"dynamic"`, an explicit
 * acceptance of content nobody can verify.
 *
 * ```json
 * { "version": 1, "skills": [
 *   { "upstream": "team", "uri": "skill://notes/SKILL.md", "digestSet": "sha256:3f…", "name": "notes" }
 * ] }
 * ```
 *
 * @since 0.1.0
 */
import { Digest, Signing, type Skill as CoreSkill } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { readConfig } from "./internal/directory/guard.js"
import { watchEntry } from "./internal/directory/watch.js"
import * as ServerLimits from "./ServerLimits.js"

/**
 * The `digestSet` of a `"dynamic"` skill: its content cannot be pinned.
 *
 * @since 0.1.0
 * @category constants
 */
export const Dynamic = "dynamic" as const

/**
 * One skill version: where it comes from, and its digest-set hash. `name` and `description` only
 * help a reader of the file.
 *
 * @since 0.1.0
 * @category models
 */
export const Entry = Schema.Struct({
  upstream: Schema.String,
  uri: Schema.String,
  digestSet: Schema.Union([Digest.Digest, Schema.Literal(Dynamic)]),
  name: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * An admit list, or an inventory: the same format.
 *
 * @since 0.1.0
 * @category models
 */
export const AdmitList = Schema.Struct({
  version: Schema.Literal(1),
  skills: Schema.Array(Entry)
})

/**
 * @since 0.1.0
 * @category models
 */
export type AdmitList = typeof AdmitList.Type

/**
 * Serve everything and log what the list does not name (`observe`), or serve only what it names
 * (`admit`).
 *
 * @since 0.1.0
 * @category models
 */
export type Mode = "observe" | "admit"

// The largest admit list read (`ServerLimits.AdmitListMaxBytes`).
const MaxBytes = ServerLimits.AdmitListMaxBytes

/**
 * An admit list that cannot be used: unreadable, too large, or not in the format.
 *
 * @since 0.1.0
 * @category errors
 */
export class AdmitListError extends Schema.TaggedError<AdmitListError>()("AdmitListError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `admit list ${this.path}: ${this.reason}`
  }
}

/**
 * The digest-set hash of an entry (see the module description).
 *
 * @since 0.1.0
 * @category utils
 */
export const digestSet = (entry: CoreSkill.Skill): Entry["digestSet"] => {
  const payload = Signing.payload(entry)
  return payload === undefined ? Dynamic : Digest.make(payload)
}

/**
 * The inventory entry of an upstream skill.
 *
 * @since 0.1.0
 * @category constructors
 */
export const entryOf = (upstream: string, entry: CoreSkill.Skill): Entry => ({
  upstream,
  uri: entry.uri,
  digestSet: digestSet(entry),
  name: entry.frontmatter.name,
  description: entry.frontmatter.description
})

const key = (upstream: string, uri: string, set: string) => JSON.stringify([upstream, uri, set])

/**
 * Whether the list names this version.
 *
 * @since 0.1.0
 * @category utils
 */
export const admits = (list: AdmitList): (upstream: string, entry: CoreSkill.Skill) => boolean => {
  const admitted = new Set(list.skills.map((skill) => key(skill.upstream, skill.uri, skill.digestSet)))
  return (upstream, entry) => admitted.has(key(upstream, entry.uri, digestSet(entry)))
}

const decode = Schema.decodeUnknownResult(Schema.fromJsonString(AdmitList))

/**
 * Reads an admit list's text (`path` names it in errors).
 *
 * @since 0.1.0
 * @category codecs
 */
export const parse = (path: string, text: string): Result.Result<AdmitList, AdmitListError> =>
  Result.mapError(decode(text), (error) => new AdmitListError({ path, reason: error.message.replace(/\s*\n\s*/g, "; ") }))

const byKey = Order.mapInput(Order.String, (entry: Entry) => key(entry.upstream, entry.uri, entry.digestSet))

/**
 * The file text of a list: entries sorted by upstream, URI and digest set, one per line, so that
 * two inventories compare line by line.
 *
 * @since 0.1.0
 * @category utils
 */
export const format = (list: AdmitList): string => {
  const lines = [...list.skills].sort(byKey).map((entry) => `    ${JSON.stringify(entry)}`)
  return `{\n  "version": 1,\n  "skills": [\n${lines.join(",\n")}${lines.length === 0 ? "" : "\n"}  ]\n}\n`
}

/**
 * The list a gateway follows: the current one, and one signal each time it changed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly current: Effect.Effect<AdmitList>
  readonly changes: Stream.Stream<void>
}

/**
 * A list that never changes.
 *
 * @example
 * ```ts
 * import { AdmitList, UpstreamSource } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * // Serve only the upstream skill versions the file names (what `mcp-skills-server inventory` writes);
 * // the file is followed as it is edited.
 * const upstreams = Effect.gen(function*() {
 *   const list = yield* AdmitList.watch("./admit.json")
 *   return yield* UpstreamSource.make(
 *     [{ prefix: "team", transport: UpstreamSource.http("https://skills.team.example/mcp") }],
 *     { admit: { mode: "admit", list } }
 *   )
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fixed = (list: AdmitList): Source => ({ current: Effect.succeed(list), changes: Stream.empty })

// Read through the guard: a FIFO or device of that name is never opened blocking, and nothing past
// the bound is read.
const readBounded = (path: string) =>
  Effect.promise(() => readConfig(path, MaxBytes)).pipe(
    Effect.flatMap((read) =>
      "reason" in read
        ? Effect.fail(new AdmitListError({ path, reason: read.reason }))
        : Effect.fromResult(parse(path, read.text))
    )
  )

/**
 * Follows an admit list file for as long as the scope lives: read now (failing when it cannot be
 * used), then again whenever its folder says it changed (editors replace files by rename, so the
 * folder is watched). An edit that cannot be used keeps the previous list, with one line on `log`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const watch = (
  path: string,
  options: { readonly log?: ((line: string) => Effect.Effect<void>) | undefined } = {}
): Effect.Effect<Source, AdmitListError, Scope.Scope> =>
  Effect.gen(function*() {
    const log = options.log ?? ((line: string) => Effect.logWarning(line))
    const current = yield* SubscriptionRef.make(yield* readBounded(path))
    const events = yield* Queue.sliding<void>(1)
    yield* watchEntry(path, () => Queue.offerUnsafe(events, undefined))
    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      yield* Queue.take(events)
      // A write comes in several events: read once they settle.
      yield* Effect.sleep(ServerLimits.AdmitListSettle)
      yield* Queue.clear(events)
      const read = yield* Effect.result(readBounded(path))
      if (Result.isFailure(read)) return yield* log(`${read.failure.message}; still following the previous list`)
      yield* SubscriptionRef.set(current, read.success)
    })))
    return {
      current: SubscriptionRef.get(current),
      changes: Stream.map(Stream.drop(SubscriptionRef.changes(current), 1), () => undefined)
    }
  })
