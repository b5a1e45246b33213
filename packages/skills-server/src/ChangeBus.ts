/**
 * Keeps replicas of a skills server on one catalogue: each announces its catalogue revision on a
 * shared bus when its catalogue changes, and a replica that hears a revision it does not serve
 * reloads its own source (then tells its own clients, as any reload does).
 *
 * - `ChangeBus` is the transport: `publish` a message, `subscribe` to the messages. `layerMemory`
 *   (replicas in one process, and tests) and `layerRedis` (Redis pub/sub, for replicas on several
 *   processes or machines) implement it.
 * - `layerReplica` connects a `SkillRegistry` to the bus: it publishes the revision after every
 *   change of the catalogue's source (a watched file, `reload`, `replace` from code), reloads on a
 *   revision it does not serve or on an operator's `Reload`, and logs the revision at start-up and
 *   after every change. An edit made in code (`SkillRegistry.upsert` / `remove`) travels whole
 *   instead: every other replica makes the same edit (no source reloads), then checks that it
 *   serves the revision the edit named, reloading as for a source change if it does not.
 *
 * Reloads go through the registry's intake, and the messages heard while one runs are judged
 * together once it is done, against the revision then served: a flood of announcements (however
 * many) costs one more reload, and an announcement of a revision a reload just brought costs none.
 *
 * Pub/sub drops messages (a subscriber that was disconnected misses what was said meanwhile), so
 * the bus also keeps the last revision announced: every (re)subscription starts with it, and a
 * replica whose revision differs reloads, then announces its own if it still differs. A bus that
 * is down never stops serving: the replica logs it once, subscribes again with capped exponential
 * backoff, and re-checks the revision when it is back.
 *
 * A replica serves what its own source holds (a shared volume, or a checkout per replica): for
 * source changes the bus carries revisions, never skills, and reloading when a revision is unknown
 * converges every replica reading the same files. Edits in code carry their static skills (files
 * and all); rendered, dynamic and family skills are code, so they cannot travel: each replica
 * serves them only if it makes the same edit itself (a warning says so). A replica that starts
 * after an edit does not hear it: pub/sub keeps no history. Replicas whose sources really differ stop after one reload each
 * (a replica announces only when its own catalogue changed), rather than reloading forever.
 *
 * @since 0.1.0
 */
import { Signing } from "@mcp-skills/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Revision from "./Revision.js"
import * as ServerLimits from "./ServerLimits.js"
import * as Skill from "./Skill.js"
import * as SkillRegistry from "./SkillRegistry.js"
import { normalizeHint } from "./internal/registry.js"
import * as Redis from "./internal/redis.js"
import * as Telemetry from "./internal/telemetry.js"
import type * as Snapshot from "./Snapshot.js"

const RevisionString = Schema.String.check(Schema.isPattern(/^[0-9a-f]{24}$/))

/**
 * A static skill as an edit carries it: everything `Skill.make` needs, its files' bytes included.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EditedSkill = Schema.Struct({
  scheme: Schema.String,
  path: Schema.Array(Schema.String),
  listed: Schema.Boolean,
  cacheHint: Schema.optional(Schema.Struct({ ttlMs: Schema.Number, scope: Schema.Literals(["public", "private"]) })),
  files: Schema.Array(Schema.Struct({ path: Schema.String, bytes: Schema.Uint8ArrayFromBase64 })),
  /** Its authors' signatures, which every replica relays as the one that made the edit does. */
  signatures: Schema.optional(Schema.Array(Signing.Signature))
})

/**
 * What travels on the bus: a replica now serves `revision` after a change of its source; an edit
 * made in code (`SkillRegistry.upsert` / `remove`) that leaves it serving `revision`, which every
 * other replica makes too; or an operator asks every replica to reload its source (after a deploy).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Union([
  Schema.TaggedStruct("Revision", { revision: RevisionString }),
  Schema.TaggedStruct("Edit", { revision: RevisionString, upsert: Schema.Array(EditedSkill), remove: Schema.Array(Schema.String) }),
  Schema.TaggedStruct("Reload", {})
])

/**
 * @since 0.1.0
 * @category models
 */
export type Message = typeof Message.Type

/**
 * What a subscriber sees: `Subscribed` at the start of every (re)subscription, with the last
 * revision announced on the bus (if any), then the messages.
 *
 * @since 0.1.0
 * @category models
 */
export type Event = { readonly _tag: "Subscribed"; readonly latest: Revision.Revision | undefined } | Message

/**
 * The bus cannot be reached (or dropped the connection).
 *
 * @since 0.1.0
 * @category errors
 */
export class BusError extends Schema.TaggedError<BusError>()("BusError", {
  reason: Schema.String
}) {
  override get message(): string {
    return `change bus unavailable: ${this.reason}`
  }
}

/**
 * A Redis bus was asked for, but the optional peer dependency `@redis/client` cannot be loaded
 * (not installed next to this package).
 *
 * @since 0.1.0
 * @category errors
 */
export class RedisClientMissing extends Schema.TaggedError<RedisClientMissing>()("RedisClientMissing", {
  reason: Schema.String
}) {
  override get message(): string {
    return `a Redis change bus needs the optional peer dependency @redis/client (npm install @redis/client@^6.3.1): ${this.reason}`
  }
}

/**
 * The transport between replicas.
 *
 * @since 0.1.0
 * @category services
 */
export class ChangeBus extends Context.Service<ChangeBus, {
  /**
   * Sends a message to every subscriber (a `Revision` also becomes the bus's last revision) and
   * returns how many subscribers received it.
   */
  readonly publish: (message: Message) => Effect.Effect<number, BusError>
  /**
   * Subscribes while the stream runs: `Subscribed` first, then every message. Fails when the
   * connection is lost; running it again subscribes again.
   */
  readonly subscribe: Stream.Stream<Event, BusError>
}>()("@mcp-skills/server/ChangeBus") {}

/**
 * An in-process bus: replicas built with the same service share it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<ChangeBus["Service"]> = Effect.gen(function*() {
  const hub = yield* PubSub.unbounded<Message>()
  const latest = yield* Ref.make<Revision.Revision | undefined>(undefined)
  const subscribers = yield* Ref.make(0)
  return ChangeBus.of({
    publish: (message) =>
      Effect.gen(function*() {
        if (message._tag !== "Reload") yield* Ref.set(latest, message.revision)
        yield* PubSub.publish(hub, message)
        return yield* Ref.get(subscribers)
      }),
    subscribe: Stream.unwrap(Effect.gen(function*() {
      const subscription = yield* PubSub.subscribe(hub)
      yield* Effect.acquireRelease(Ref.update(subscribers, (n) => n + 1), () => Ref.update(subscribers, (n) => n - 1))
      const subscribed: Event = { _tag: "Subscribed", latest: yield* Ref.get(latest) }
      return Stream.concat(Stream.make(subscribed), Stream.fromSubscription(subscription))
    }))
  })
})

/**
 * The in-memory bus, the default of a single server.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ChangeBus> = Layer.effect(ChangeBus)(makeMemory)

/**
 * Options of `layerRedis`.
 *
 * @since 0.1.0
 * @category options
 */
export interface RedisOptions {
  /** `redis://[[user]:password@]host[:port][/db]` (or `rediss://` for TLS). */
  readonly url: string
  /** Pub/sub channel; the last revision is kept at the key `<channel>:revision` (default `mcp-skills:changes`). */
  readonly channel?: string | undefined
}

const defaultChannel = "mcp-skills:changes"

const encodeMessage = Schema.encodeSync(Schema.fromJsonString(Message))
const decodeMessage = Schema.decodeUnknownOption(Schema.fromJsonString(Message))

const createClient = Redis.load((reason) => new RedisClientMissing({ reason }))

// An edit names the revision it leaves, which becomes the bus's last one as a source change's does.
const send = (client: Redis.RedisClient, channel: string, message: Message) =>
  Redis.send(client, channel, encodeMessage(message), message._tag === "Reload" ? undefined : message.revision)

// Not effect's `persistence/Redis` (with `NodeRedis.layer`), checked against 4.1.0: its
// subscriber reconnects by itself, so what is published meanwhile is a gap nobody is told of,
// where a replica must know it was cut off to re-check the bus's last revision; and its layer
// fails when Redis is down at start, where a replica starts and serves without its bus.
/**
 * A bus over Redis pub/sub. Publishing uses one connection that reconnects by itself and refuses
 * (rather than queues) commands while it is down; each subscription uses its own connection,
 * which ends the subscription when it drops so that the replica subscribes again and re-checks
 * the revision. Messages that do not decode are ignored.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRedis = (options: RedisOptions): Effect.Effect<ChangeBus["Service"], RedisClientMissing, Scope.Scope> =>
  Effect.gen(function*() {
    const create = yield* createClient
    const channel = options.channel ?? defaultChannel
    const publisher = yield* Effect.acquireRelease(
      Effect.sync(() => Redis.publisher(create, options.url)),
      (client) => Effect.sync(() => client.destroy())
    )
    const command = <A>(what: string, run: () => Promise<A>) =>
      publisher.isReady
        ? Effect.tryPromise({ try: run, catch: (error) => new BusError({ reason: `${what}: ${Redis.reasonOf(error)}` }) })
        : Effect.fail(new BusError({ reason: `${what}: not connected to ${Redis.where(options.url)}` }))
    // The two connections come up independently: a subscription that is ready first waits a
    // moment for the publishing one rather than report the bus down.
    const connected = Effect.callback<void>((resume) => {
      if (publisher.isReady) return resume(Effect.void)
      const done = () => resume(Effect.void)
      const timer = setTimeout(done, Redis.connectMillis)
      publisher.once("ready", done)
      return Effect.sync(() => {
        clearTimeout(timer)
        publisher.off("ready", done)
      })
    })
    return ChangeBus.of({
      publish: (message) =>
        command("publish", () => send(publisher, channel, message)),
      subscribe: Stream.callback<Event, BusError>((queue) =>
        Effect.gen(function*() {
          const lost = (error: unknown) => Queue.failCauseUnsafe(queue, Cause.fail(new BusError({ reason: Redis.reasonOf(error) })))
          const subscriber = yield* Effect.acquireRelease(
            Effect.sync(() => {
              const client = Redis.once(create, options.url)
              client.on("error", lost)
              client.on("end", () => lost(new Error("connection closed")))
              return client
            }),
            (client) =>
              Effect.sync(() => {
                client.removeAllListeners("end")
                client.destroy()
              })
          )
          yield* Effect.tryPromise({
            try: async () => {
              await subscriber.connect()
              await subscriber.subscribe(channel, (payload) => {
                const message = decodeMessage(payload)
                if (message._tag === "Some") Queue.offerUnsafe(queue, message.value)
              })
            },
            catch: (error) => new BusError({ reason: `subscribe: ${Redis.reasonOf(error)}` })
          })
          // Read after subscribing: a revision announced in between is then both read and heard.
          yield* connected
          const latest = yield* command("get", () => publisher.get(Redis.revisionKey(channel)))
          Queue.offerUnsafe(queue, { _tag: "Subscribed", latest: Revision.isRevision(latest) ? latest : undefined })
        })
      )
    })
  })

/**
 * Publishes one message on a Redis bus over a connection of its own, and returns how many replicas
 * received it: the operator's `mcp-skills-server reload --redis URL` after a deploy.
 *
 * @since 0.1.0
 * @category utils
 */
export const publishRedis = (
  options: RedisOptions,
  message: Message
): Effect.Effect<number, BusError | RedisClientMissing> =>
  Effect.acquireUseRelease(
    Effect.map(createClient, (create) => {
      const client = Redis.once(create, options.url, Duration.toMillis(ServerLimits.BusCommandTimeout))
      client.on("error", () => {})
      return client
    }),
    (client) =>
      Effect.tryPromise({
        try: async () => {
          await client.connect()
          return send(client, options.channel ?? defaultChannel, message)
        },
        catch: (error) => new BusError({ reason: `${Redis.where(options.url)}: ${Redis.reasonOf(error)}` })
      }),
    (client) => Effect.sync(() => client.destroy())
  )

/**
 * The Redis bus as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRedis = (options: RedisOptions): Layer.Layer<ChangeBus, RedisClientMissing> =>
  Layer.effect(ChangeBus)(makeRedis(options))

/**
 * Options of `layerReplica`.
 *
 * @since 0.1.0
 * @category options
 */
export interface ReplicaOptions {
  /** What happened, one line each: the revision at start-up and after every change, bus-driven reloads. */
  readonly log?: ((line: string) => Effect.Effect<void>) | undefined
  /** Problems, one line each: the bus down (once per outage), a failed reload or announcement. */
  readonly logProblem?: ((line: string) => Effect.Effect<void>) | undefined
  /** Delay before subscribing again after the bus is lost: doubles from this (default `ServerLimits.BusRetry.base`, 200 ms)… */
  readonly retryBase?: Duration.Input | undefined
  /** …up to this (default `ServerLimits.BusRetry.cap`, 5 s). */
  readonly retryCap?: Duration.Input | undefined
}

// The static skills of an edit, as the bus carries them, and the keys of those it cannot carry.
const carriedSkills = (definitions: ReadonlyArray<Skill.Definition>) => {
  const carried: Array<typeof EditedSkill.Type> = []
  const left: Array<string> = []
  for (const definition of definitions) {
    const hint = definition._tag === "Static" && definition.cacheHint !== undefined
      ? normalizeHint(definition.cacheHint)
      : undefined
    if (definition._tag !== "Static" || (definition.onDisk?.length ?? 0) > 0 || (hint !== undefined && Result.isFailure(hint))) {
      left.push(SkillRegistry.keyOf(definition))
      continue
    }
    carried.push({
      scheme: definition.scheme,
      path: definition.path,
      listed: definition.listed,
      ...(hint === undefined || Result.isFailure(hint) ? {} : { cacheHint: { ttlMs: hint.success.ttlMs, scope: hint.success.cacheScope } }),
      files: definition.files.map((file) => ({ path: file.path, bytes: file.bytes })),
      ...(definition.signatures === undefined ? {} : { signatures: definition.signatures })
    })
  }
  return { carried, left }
}

const definitionOf = (skill: typeof EditedSkill.Type): Skill.Static =>
  Skill.fromFiles({ path: skill.path, files: skill.files, signatures: skill.signatures }, {
    scheme: skill.scheme,
    listed: skill.listed,
    ...(skill.cacheHint === undefined ? {} : { cacheHint: { ttl: skill.cacheHint.ttlMs, scope: skill.cacheHint.scope } })
  })

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/**
 * Keeps the `SkillRegistry` on the bus's catalogue for as long as the layer lives (see the module
 * description). Provide it with the registry the server uses (the one `SkillsServer.layer`
 * provides, so bus-driven reloads notify the server's clients) and a bus.
 *
 * @example
 * ```ts
 * import { ChangeBus, Skill, SkillsServer } from "@mcp-skills/server"
 * import { Layer } from "effect"
 *
 * const Skills = SkillsServer.layer({
 *   skills: [Skill.make({ path: "notes", files: { "SKILL.md": "---\nname: notes\ndescription: Notes\n---\n" } })]
 * })
 *
 * // Announce every change of this replica's catalogue on Redis, and reload on another's.
 * const Replica = ChangeBus.layerReplica().pipe(
 *   Layer.provide(ChangeBus.layerRedis({ url: "redis://127.0.0.1:6379" })),
 *   Layer.provideMerge(Skills)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReplica = (options?: ReplicaOptions): Layer.Layer<never, never, ChangeBus | SkillRegistry.SkillRegistry> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const bus = yield* ChangeBus
    const registry = yield* SkillRegistry.SkillRegistry
    const log = options?.log ?? ((line: string) => Effect.logInfo(line))
    const logProblem = options?.logProblem ?? ((line: string) => Effect.logWarning(line))
    const base = Duration.fromInputUnsafe(options?.retryBase ?? ServerLimits.BusRetry.base)
    const cap = Duration.fromInputUnsafe(options?.retryCap ?? ServerLimits.BusRetry.cap)
    const current = Effect.map(registry.snapshot, (snapshot) => snapshot.revision)

    const announce = (revision: Revision.Revision) =>
      bus.publish({ _tag: "Revision", revision }).pipe(
        Telemetry.busMessage("published", "Revision"),
        Effect.catch((error) =>
          logProblem(`could not announce revision ${revision} (${error.message}); replicas re-check it when the bus is back`)
        )
      )

    const announceEdit = (commit: Extract<SkillRegistry.Commit, { _tag: "Edit" }>) => {
      const { carried, left } = carriedSkills(commit.upsert)
      const warn = left.length === 0 ? Effect.void : logProblem(
        `the edit of ${left.join(", ")} cannot travel on the bus (rendered, dynamic and family skills are code, files on demand are this replica's disk); other replicas serve it only if they make the same edit`
      )
      if (carried.length + commit.remove.length === 0) return warn
      return Effect.andThen(
        warn,
        bus.publish({ _tag: "Edit", revision: commit.after.revision, upsert: carried, remove: commit.remove }).pipe(
          Telemetry.busMessage("published", "Edit"),
          Effect.catch((error) =>
            logProblem(`could not send the edit of revision ${commit.after.revision} (${error.message}); other replicas do not serve it`)
          )
        )
      )
    }

    // Every swap of the snapshot is logged. A change of the source (watch, reload, replace) is
    // announced by its revision, which makes the other replicas reload theirs; an edit in code
    // travels whole, so the others make it too and reload nothing; an edit heard from the bus
    // is not sent back.
    const describeSnapshot = (snapshot: Snapshot.Snapshot) =>
      `catalogue revision ${snapshot.revision} (${plural(snapshot.skills.length, "skill")})`
    const first = yield* registry.snapshot
    yield* log(describeSnapshot(first))
    let served = first.revision
    yield* (yield* registry.commits).pipe(
      Stream.runForEach((commit) => {
        // A family's instances are code: nothing of them travels.
        if (commit._tag === "Family") return Effect.void
        const snapshot = commit.after
        const changed = snapshot.revision !== served
        served = snapshot.revision
        if (!changed) return log(`${describeSnapshot(snapshot)}, unchanged`)
        if (commit._tag === "Source") return Effect.andThen(log(describeSnapshot(snapshot)), announce(snapshot.revision))
        return commit.origin === "replica"
          ? log(`${describeSnapshot(snapshot)}, edited by another replica`)
          : Effect.andThen(log(`${describeSnapshot(snapshot)}, edited in code`), announceEdit(commit))
      }),
      Effect.forkScoped
    )

    // A reload for the bus goes through the registry's intake (joining one already asked for by
    // any channel), and the bus waits for it: what is heard meanwhile is judged against the
    // revision it leaves.
    const reload = (kind: Event["_tag"], why: string) =>
      Effect.andThen(
        log(`${why}: reloading the skills`),
        Effect.flatMap(registry.requestReload("bus"), (asked) => asked.result).pipe(
          Telemetry.busLag(kind),
          Effect.asVoid,
          // Whatever the source does, the replica keeps serving and keeps listening.
          Effect.catchCause((cause) => {
            const error = Cause.squash(cause)
            return logProblem(`reload failed, still serving revision ${served}: ${error instanceof Error ? error.message : String(error)}`)
          })
        )
      )

    // Another replica's edit: made here too. A revision that still differs afterwards means the
    // sources differ: the reason to reload (as for a source change) it returns, if any.
    const applyEdit = (edit: Extract<Message, { _tag: "Edit" }>) =>
      Effect.gen(function*() {
        if (edit.remove.length > 0) yield* registry.remove(edit.remove, "replica")
        if (edit.upsert.length > 0) yield* registry.upsert(edit.upsert.map(definitionOf), "replica")
        const after = yield* current
        return after === edit.revision ? undefined : `an edit from another replica left revision ${after}, not ${edit.revision}`
      }).pipe(
        Effect.catch((error) => Effect.as(logProblem(`could not make an edit from another replica: ${error.message}`), undefined)),
        Telemetry.busLag(edit._tag)
      )

    type Said = Exclude<Event, { readonly _tag: "Subscribed" }>
    // Messages heard in a row, judged together: edits are made in order, then one reload at most,
    // if one was asked for, an edit left another revision than it named, or an announced revision
    // differs from the one served after the edits.
    const judge = (said: ReadonlyArray<Said>) =>
      Effect.gen(function*() {
        const reasons: Array<{ readonly kind: Said["_tag"]; readonly why: string }> = []
        for (const event of said) {
          if (event._tag === "Edit") {
            const why = event.revision === (yield* current) ? undefined : yield* applyEdit(event)
            if (why !== undefined) reasons.push({ kind: event._tag, why })
          } else if (event._tag === "Reload") {
            reasons.push({ kind: event._tag, why: "asked to reload on the bus" })
          }
          yield* Telemetry.count(Telemetry.metrics.busMessages, { direction: "received", kind: event._tag, outcome: "success" })
        }
        const revision = yield* current
        for (const event of said) {
          if (event._tag === "Revision" && event.revision !== revision) {
            reasons.push({ kind: event._tag, why: `heard revision ${event.revision}, this replica serves ${revision}` })
          }
        }
        const first = reasons[0]
        if (first === undefined) return
        yield* reload(first.kind, reasons.length === 1 ? first.why : `${first.why} (and ${plural(reasons.length - 1, "more reason")})`)
      })

    let down = false
    const subscribed = (event: Extract<Event, { readonly _tag: "Subscribed" }>) =>
      Effect.gen(function*() {
        const revision = yield* current
        yield* Telemetry.busConnected(true)
        if (down) yield* log("change bus is back")
        down = false
        if (event.latest === revision) return
        if (event.latest !== undefined) {
          yield* reload(event._tag, `the bus's last revision is ${event.latest}, this replica serves ${revision}`)
        }
        // Whatever was missed, the bus now names a revision this replica serves, and replicas
        // that missed this one's announcement hear it.
        const after = yield* current
        if (after !== event.latest) yield* announce(after)
      }).pipe(Telemetry.busMessage("received", event._tag))

    // The bus hands over, at once, every message that arrived while the last ones were handled:
    // however many there are, they cost one reload at most, and an announcement of the revision a
    // reload just brought costs none.
    const handle = (events: ReadonlyArray<Event>) =>
      Effect.gen(function*() {
        let said: Array<Said> = []
        for (const event of events) {
          if (event._tag !== "Subscribed") {
            said.push(event)
            continue
          }
          if (said.length > 0) yield* judge(said)
          said = []
          yield* subscribed(event)
        }
        if (said.length > 0) yield* judge(said)
      })

    const backoff = Schedule.exponential(base).pipe(
      Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, cap)))
    )
    yield* bus.subscribe.pipe(
      Stream.runForEachArray(handle),
      Effect.tapError((error) =>
        Effect.suspend(() => {
          if (down) return Effect.void
          down = true
          return Effect.andThen(
            Telemetry.busConnected(false),
            logProblem(`${error.message}; still serving revision ${served}, subscribing again with backoff`)
          )
        })
      ),
      Effect.retry(backoff),
      Effect.forkScoped
    )
  }))
