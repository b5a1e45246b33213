/**
 * Catalogue revision and the change bus logic, with the in-memory bus. Replicas are
 * registries in one process reading a shared source (as replicas reading one volume do); a flaky
 * view of the bus per replica drops its connection on demand, so messages are missed the way
 * pub/sub misses them. Cursors across replicas are checked over loopback HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Latch from "effect/Latch"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ChangeBus, Revision, Skill, SkillRegistry, SkillsServer } from "../src/index.js"
import { McpTelemetry, Signing } from "@mcp-skills/core"
import * as Telemetry from "../src/internal/telemetry.js"
import { simple, skillMd } from "./support/fixtures.js"
import { makeKey, signed } from "./support/signing.js"
import { listen, poll } from "./support/session.js"
import { httpServer, modernHttp, ServerUrl } from "./support/wire.js"

const revisionOf = (definitions: ReadonlyArray<Skill.Definition>) =>
  Effect.map(SkillRegistry.build(definitions), (snapshot) => snapshot.revision)

/** What every replica reads: one mutable catalogue, as a shared volume. */
const sharedSource = (initial: ReadonlyArray<Skill.Definition>) => {
  const source = { current: initial, loads: 0 }
  return {
    source,
    load: Effect.sync(() => {
      source.loads++
      return source.current
    })
  }
}

/** One replica's connection to a shared bus, which the test can take down and bring back. */
const flaky = (bus: ChangeBus.ChangeBus["Service"]) =>
  Effect.gen(function*() {
    const state = { up: true, cut: yield* Deferred.make<void>() }
    const down = () => new ChangeBus.BusError({ reason: "connection refused (test)" })
    const view = ChangeBus.ChangeBus.of({
      publish: (message) => Effect.suspend(() => state.up ? bus.publish(message) : Effect.fail(down())),
      subscribe: Stream.unwrap(Effect.sync(() =>
        state.up
          ? Stream.merge(
            bus.subscribe,
            Stream.fromEffect(Deferred.await(state.cut)).pipe(Stream.flatMap(() => Stream.fail(down())))
          )
          : Stream.fail(down())
      ))
    })
    return {
      view,
      takeDown: Effect.gen(function*() {
        state.up = false
        yield* Deferred.succeed(state.cut, undefined)
      }),
      bringBack: Effect.gen(function*() {
        state.cut = yield* Deferred.make<void>()
        state.up = true
      })
    }
  })

/**
 * The sentinel of checks that something did NOT happen. A mark is a `Reload` the test publishes on
 * the bus and no replica sees: each replica's view of the bus takes it out and acknowledges it when
 * the replica asks for what follows it, that is once the replica has handled every message heard
 * before it (the bus hands messages on in order, and a replica asks for more only when it is done
 * with the last ones).
 */
interface Mark {
  readonly _tag: "Reload"
  readonly ack: (view: object) => void
}
const isMark = (event: ChangeBus.Event): event is ChangeBus.Event & Mark => "ack" in event

interface Marked {
  readonly view: ChangeBus.ChangeBus["Service"]
  /** Messages (not marks) handed to the replica so far. */
  readonly handed: () => number
  /** Done once the replica first subscribed: a mark published before would not reach it. */
  readonly subscribed: Deferred.Deferred<void>
}

/** `bus` as a replica sees it, marks taken out and acknowledged (see `Mark`). */
const marked = (bus: ChangeBus.ChangeBus["Service"]): Marked => {
  let handed = 0
  const self: Marked = {
    handed: () => handed,
    subscribed: Deferred.makeUnsafe<void>(),
    view: ChangeBus.ChangeBus.of({
      publish: bus.publish,
      subscribe: Stream.transformPull(bus.subscribe, (pull) =>
        Effect.sync(() => {
          // Marks of the chunk last handed on: the replica asking for more has handled it.
          let heard: Array<Mark> = []
          const next: typeof pull = Effect.suspend(() => {
            for (const mark of heard) mark.ack(self)
            heard = []
            return Effect.flatMap(pull, (chunk) => {
              const kept = chunk.filter((event) => isMark(event) ? (heard.push(event), false) : true)
              handed += kept.length
              if (kept.some((event) => event._tag === "Subscribed")) Deferred.doneUnsafe(self.subscribed, Effect.void)
              return Arr.isReadonlyArrayNonEmpty(kept) ? Effect.succeed(kept) : next
            })
          })
          return next
        }))
    })
  }
  return self
}

/**
 * Waits until the bus is quiet for `replicas`: a mark published on `bus` was handled by each, and
 * no other message reached any of them meanwhile (an announcement a reload made, say).
 */
const settled = (bus: ChangeBus.ChangeBus["Service"], ...replicas: ReadonlyArray<{ readonly marked: Marked }>) =>
  Effect.gen(function*() {
    for (const replica of replicas) yield* Deferred.await(replica.marked.subscribed)
    for (;;) {
      const before = replicas.map((replica) => replica.marked.handed())
      const done = yield* Deferred.make<void>()
      const left = new Set(replicas.map((replica) => replica.marked as object))
      const mark: Mark = {
        _tag: "Reload",
        ack: (view) => {
          left.delete(view)
          if (left.size === 0) Deferred.doneUnsafe(done, Effect.void)
        }
      }
      yield* bus.publish(mark)
      yield* Deferred.await(done)
      if (replicas.every((replica, i) => replica.marked.handed() === before[i])) return
    }
  })

interface Replica {
  readonly registry: SkillRegistry.SkillRegistry["Service"]
  readonly lines: Array<string>
  readonly problems: Array<string>
  readonly revision: Effect.Effect<string>
  readonly marked: Marked
}

const replica = (
  load: Effect.Effect<Iterable<Skill.Definition>, unknown>,
  bus: ChangeBus.ChangeBus["Service"],
  scope: Scope.Scope
): Effect.Effect<Replica> =>
  Effect.gen(function*() {
    const registry = yield* SkillRegistry.make(load).pipe(Effect.orDie, Effect.provideService(Scope.Scope, scope))
    const view = marked(bus)
    const lines: Array<string> = []
    const problems: Array<string> = []
    yield* Layer.buildWithScope(
      ChangeBus.layerReplica({
        log: (line) => Effect.sync(() => lines.push(line)),
        logProblem: (line) => Effect.sync(() => problems.push(line)),
        retryBase: "10 millis",
        retryCap: "50 millis"
      }).pipe(
        Layer.provide(Layer.succeed(ChangeBus.ChangeBus)(view.view)),
        Layer.provide(Layer.succeed(SkillRegistry.SkillRegistry)(registry))
      ),
      scope
    )
    return { registry, lines, problems, revision: Effect.map(registry.snapshot, (snapshot) => snapshot.revision), marked: view }
  })

/** Three replicas reading one shared source, on one in-memory bus. */
const trio = (initial: ReadonlyArray<Skill.Definition>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const bus = yield* ChangeBus.makeMemory
    const { source, load } = sharedSource(initial)
    const [a, b, c] = [yield* replica(load, bus, scope), yield* replica(load, bus, scope), yield* replica(load, bus, scope)]
    return { a, b, c, bus, scope, source }
  })

/** Polls (real time, generous bound) until `check` holds. */
const eventually = (what: string, check: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      if (yield* check) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    assert.fail(`never happened: ${what}`)
  })

const v1 = [simple("alpha"), simple("beta", { "notes.md": "one" })]
const v2 = [simple("alpha"), simple("beta", { "notes.md": "two" })]

describe("Revision", () => {
  it.effect("is derived from content: equal catalogues agree, whatever their order; any visible change differs", () =>
    Effect.gen(function*() {
      const base = yield* revisionOf(v1)
      assert.isTrue(Revision.isRevision(base))
      assert.strictEqual(yield* revisionOf([...v1].reverse()), base)
      assert.strictEqual(yield* revisionOf([simple("alpha"), simple("beta", { "notes.md": "one" })]), base)
      const variants = [
        v2,
        [simple("alpha"), simple("beta", { "notes.md": "one" }, false)],
        [simple("alpha"), simple("beta", { "notes.md": "one", "more.md": "" })],
        [simple("alpha")],
        [simple("alpha"), Skill.make({ path: "beta", cacheHint: { ttl: "1 minute" }, files: { "SKILL.md": skillMd("beta"), "notes.md": "one" } })],
        [...v1, Skill.dynamic({ path: "gamma", frontmatter: { name: "gamma", description: "g" }, list: Effect.succeed([]), read: () => Effect.succeed(undefined) })]
      ]
      const seen = new Set([base])
      for (const variant of variants) seen.add(yield* revisionOf(variant))
      assert.strictEqual(seen.size, variants.length + 1)
    }))
})

// Small domains, so that equal catalogues are drawn often.
const Catalogue = Schema.Array(Schema.Struct({
  name: Schema.Literals(["a", "b", "c"]),
  notes: Schema.Literals(["", "x", "y"]),
  listed: Schema.Boolean
}))

const definitionsOf = (catalogue: typeof Catalogue.Type) => {
  const byName = new Map(catalogue.map((skill) => [skill.name, skill]))
  return [...byName.values()].map((skill) => simple(skill.name, skill.notes === "" ? {} : { "notes.md": skill.notes }, skill.listed))
}

const canonical = (catalogue: typeof Catalogue.Type) =>
  JSON.stringify([...new Map(catalogue.map((skill) => [skill.name, skill])).values()].sort((x, y) => x.name < y.name ? -1 : 1))

describe("Revision (properties)", () => {
  it.prop("two catalogues have the same revision exactly when they publish the same skills, in any order", [Catalogue, Catalogue], ([one, two]) => {
    const revision = (definitions: ReadonlyArray<Skill.Definition>) => Effect.runSync(revisionOf(definitions))
    const first = definitionsOf(one)
    assert.strictEqual(revision([...first].reverse()), revision(first))
    assert.strictEqual(revision(first) === revision(definitionsOf(two)), canonical(one) === canonical(two))
  }, { arbitrary: { runs: 300 } })
})

describe("ChangeBus", () => {
  it.live("a change on one replica reaches the others, which reload and serve the same revision", () =>
    Effect.gen(function*() {
      const { a, b, bus, c, scope, source } = yield* trio(v1)
      const start = yield* a.revision
      assert.strictEqual(yield* b.revision, start)
      assert.deepStrictEqual(a.lines, [`catalogue revision ${start} (2 skills)`])
      yield* settled(bus, a, b, c)
      const loadsBefore = source.loads

      // `replace` from code on A (the shared source says the same, as after a deploy).
      source.current = v2
      yield* a.registry.replace(v2)
      const next = yield* a.revision
      assert.notStrictEqual(next, start)
      yield* eventually("B and C serve A's revision", Effect.map(Effect.all([b.revision, c.revision]), (rs) => rs.every((r) => r === next)))
      assert.include(b.lines.join("\n"), `heard revision ${next}, this replica serves ${start}: reloading the skills`)
      assert.include(b.lines.join("\n"), `catalogue revision ${next} (2 skills)`)
      yield* settled(bus, a, b, c)
      // B and C reloaded once each; A never reloads for its own revision, nor for theirs (equal).
      assert.strictEqual(source.loads - loadsBefore, 2)

      // `reload` on A (the source changed back) travels the same way.
      source.current = v1
      yield* a.registry.reload
      yield* eventually("B and C back on the first revision", Effect.map(Effect.all([b.revision, c.revision]), (rs) => rs.every((r) => r === start)))
      assert.deepStrictEqual([a.problems, b.problems, c.problems], [[], [], []])
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("an upsert or remove in code on one replica is made by the others, which reload no source", () =>
    Effect.gen(function*() {
      const { a, b, bus, c, scope, source } = yield* trio(v1)
      yield* settled(bus, a, b, c)
      const loadsBefore = source.loads
      // Signed: its signatures travel with it, so every replica relays them (and agrees on the revision).
      const added = signed(Skill.make({
        path: "gamma",
        cacheHint: { ttl: "1 minute", scope: "public" },
        files: { "SKILL.md": skillMd("gamma"), "logo.bin": new Uint8Array([0xff, 0x00, 0xfe]) }
      }), makeKey().key)
      yield* a.registry.upsert([added])
      const next = yield* a.revision
      yield* eventually("B and C serve the upsert", Effect.map(Effect.all([b.revision, c.revision]), (rs) => rs.every((r) => r === next)))
      const served = (yield* b.registry.snapshot).files.get("skill://gamma/logo.bin")
      assert.strictEqual(served?.digest, (yield* a.registry.snapshot).files.get("skill://gamma/logo.bin")?.digest)
      const entry = (yield* b.registry.snapshot).byUri.get("skill://gamma/SKILL.md")
      assert(entry?._tag === "Static")
      assert.deepStrictEqual(Signing.signaturesOf((yield* b.registry.snapshot).entries.get(entry)).signatures, added.signatures)
      assert.include(b.lines.join("\n"), "edited by another replica")
      yield* a.registry.remove(["skill://beta/SKILL.md"])
      const removed = yield* a.revision
      yield* eventually("B and C took beta out", Effect.map(Effect.all([b.revision, c.revision]), (rs) => rs.every((r) => r === removed)))
      assert.isUndefined((yield* c.registry.snapshot).byUri.get("skill://beta/SKILL.md"))
      yield* settled(bus, a, b, c)
      // No replica reloaded its source for an edit made in code.
      assert.strictEqual(source.loads, loadsBefore)
      assert.notInclude([...a.lines, ...b.lines, ...c.lines].join("\n"), "reloading")
      // A rendered skill is code: it cannot travel, which A says; the others reload nothing either.
      yield* a.registry.upsert([Skill.rendered({ path: "delta", render: () => Effect.succeed({ "SKILL.md": skillMd("delta") }) })])
      yield* settled(bus, a, b, c)
      assert.include(a.problems.join("\n"), "skill://delta/SKILL.md cannot travel on the bus")
      assert.strictEqual(source.loads, loadsBefore)
      assert.deepStrictEqual([b.problems, c.problems], [[], []])
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("an operator's Reload makes every replica reload; replicas with different sources reload once, not forever", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const bus = yield* ChangeBus.makeMemory
      const left = sharedSource(v1)
      const right = sharedSource(v2)
      const a = yield* replica(left.load, bus, scope)
      const b = yield* replica(right.load, bus, scope)
      yield* settled(bus, a, b)
      // B started on another catalogue: it heard A's revision (or A heard B's) and reloaded, once.
      const [aLoads, bLoads] = [left.source.loads, right.source.loads]
      assert.isAtMost(aLoads + bLoads, 4)
      assert.strictEqual(yield* bus.publish({ _tag: "Reload" }), 2)
      yield* eventually("both reloaded", Effect.sync(() => left.source.loads > aLoads && right.source.loads > bLoads))
      yield* settled(bus, a, b)
      assert.deepStrictEqual([left.source.loads - aLoads, right.source.loads - bLoads], [1, 1])
      assert.notStrictEqual(yield* a.revision, yield* b.revision)
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("a replica that missed messages while disconnected re-checks the revision when it subscribes again", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const bus = yield* ChangeBus.makeMemory
      const { source, load } = sharedSource(v1)
      const a = yield* replica(load, bus, scope)
      const link = yield* flaky(bus)
      const b = yield* replica(load, link.view, scope)
      const start = yield* b.revision
      yield* settled(bus, a, b)

      yield* link.takeDown
      // While B is cut off, A changes: B misses the announcement and keeps serving (its own
      // clients are never refused for the bus).
      source.current = v2
      yield* a.registry.replace(v2)
      const next = yield* a.revision
      yield* settled(bus, a)
      assert.strictEqual(yield* b.revision, start)
      assert.strictEqual((yield* b.registry.snapshot).skills.length, 2)
      yield* eventually("B logged the bus down", Effect.sync(() => b.problems.length > 0))
      assert.match(b.problems[0]!, /^change bus unavailable: connection refused \(test\); still serving revision [0-9a-f]{24}/)

      yield* link.bringBack
      yield* eventually("B caught up", Effect.map(b.revision, (revision) => revision === next))
      assert.include(b.lines.join("\n"), "change bus is back")
      assert.include(b.lines.join("\n"), `the bus's last revision is ${next}, this replica serves ${start}: reloading the skills`)
      // Retried many times with backoff, reported once per outage.
      assert.strictEqual(b.problems.length, 1)
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("a change made while the bus is down is announced when it is back", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const bus = yield* ChangeBus.makeMemory
      const { source, load } = sharedSource(v1)
      const link = yield* flaky(bus)
      const a = yield* replica(load, link.view, scope)
      const b = yield* replica(load, bus, scope)
      yield* settled(bus, a, b)
      yield* link.takeDown
      source.current = v2
      yield* a.registry.replace(v2)
      const next = yield* a.revision
      yield* eventually("A could not announce", Effect.sync(() => a.problems.some((line) => line.startsWith(`could not announce revision ${next}`))))
      yield* settled(bus, b)
      assert.notStrictEqual(yield* b.revision, next)
      yield* link.bringBack
      // A subscribes again, finds the bus's last revision is not its own, and announces it.
      yield* eventually("B heard A once the bus was back", Effect.map(b.revision, (revision) => revision === next))
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("a reload that fails keeps the replica serving its revision and is reported", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const bus = yield* ChangeBus.makeMemory
      const broken = { on: false }
      const a = yield* replica(
        Effect.suspend(() => broken.on ? Effect.fail("disk gone") : Effect.succeed(v1)),
        bus,
        scope
      )
      const start = yield* a.revision
      yield* settled(bus, a)
      broken.on = true
      yield* bus.publish({ _tag: "Reload" })
      yield* eventually("the failed reload was reported", Effect.sync(() => a.problems.length > 0))
      assert.match(a.problems[0]!, new RegExp(`^reload failed, still serving revision ${start}`))
      assert.strictEqual(yield* a.revision, start)
      yield* Scope.close(scope, Exit.void)
    }))
})

describe("a flood on the bus", () => {
  const revision = (i: number) => i.toString(16).padStart(24, "0")
  const valueOf = (metric: Metric.Metric<number, any>, labels: Record<string, string>) =>
    Effect.map(Metric.value(Metric.withAttributes(metric, labels)), (state: any) => state.count as number)

  it.live("1,500 Revision messages heard while a reload reads the source cost one more reload", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const memory = yield* ChangeBus.makeMemory
      const gate = yield* Latch.make(true)
      const entered = yield* Queue.unbounded<void>()
      const { source, load } = sharedSource(v1)
      const gated = Effect.andThen(Queue.offer(entered, undefined), Effect.andThen(gate.await, load))
      // The replica's subscription ends after the last message, once every message before it has
      // been handled: `done` is that moment.
      const done = yield* Deferred.make<void>()
      const last = revision(1_500)
      const bus = ChangeBus.ChangeBus.of({
        publish: memory.publish,
        subscribe: memory.subscribe.pipe(
          Stream.takeUntil((event) => event._tag === "Revision" && event.revision === last),
          Stream.concat(Stream.fromEffect(Deferred.succeed(done, undefined)).pipe(Stream.drain))
        )
      })
      const a = yield* replica(gated, bus, scope)
      yield* Queue.take(entered)
      const heard = valueOf(Telemetry.metrics.busMessages, { direction: "received", kind: "Revision", outcome: "success" })
      // Subscribed, it announced its own revision (the bus had none), and heard it.
      yield* eventually("A heard its own announcement", Effect.map(heard, (count) => count === 1))
      const builds = (yield* a.registry.stats).builds
      const loads = source.loads

      yield* gate.close
      yield* memory.publish({ _tag: "Revision", revision: revision(1) })
      yield* Queue.take(entered)
      for (let i = 2; i <= 1_500; i++) yield* memory.publish({ _tag: "Revision", revision: revision(i) })
      yield* gate.open
      yield* Deferred.await(done)

      assert.strictEqual((yield* a.registry.stats).builds - builds, 2)
      assert.strictEqual(source.loads - loads, 2)
      assert.strictEqual(yield* valueOf(Telemetry.metrics.reloads, { source: "bus", outcome: "unchanged" }), 2)
      assert.strictEqual(yield* heard, 1_501)
      const reloading = a.lines.filter((line) => line.endsWith("reloading the skills"))
      assert.strictEqual(reloading.length, 2)
      assert.include(reloading[1]!, "(and 1498 more reasons)")
      assert.deepStrictEqual(a.problems, [])
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(McpTelemetry.layer()), Effect.provideService(Metric.MetricRegistry, new Map())))
})

describe("servers on one bus", () => {
  it.live("a listen stream on one server hears list_changed for a replace made on another", () =>
    Effect.gen(function*() {
      const bus = yield* ChangeBus.makeMemory
      const { source, load } = sharedSource(v1)
      const registries: Array<SkillRegistry.SkillRegistry["Service"]> = []
      const views: Array<{ readonly marked: Marked }> = []
      const replicaServer = () => {
        const view = marked(bus)
        views.push({ marked: view })
        const Skills = SkillsServer.layer({ skills: load })
        const Capture = Layer.effectDiscard(Effect.gen(function*() {
          registries.push(yield* SkillRegistry.SkillRegistry)
        }))
        const Replica = ChangeBus.layerReplica({ log: () => Effect.void }).pipe(
          Layer.provide(Layer.succeed(ChangeBus.ChangeBus)(view.view)),
          Layer.provideMerge(Skills)
        )
        return Effect.map(Layer.build(httpServer(Layer.merge(Replica, Capture.pipe(Layer.provide(Replica))))), (context) =>
          Context.get(context, ServerUrl))
      }
      yield* replicaServer()
      const other = yield* replicaServer()
      // Their start-up (each announces its revision, hears the other's) is over before the listen.
      yield* settled(bus, ...views)
      const stream = yield* listen(other, {}, { resourcesListChanged: true })
      assert.strictEqual(stream.headers.get("x-accel-buffering"), "no")
      source.current = [...v1, simple("gamma")]
      yield* registries[0]!.replace(source.current)
      yield* poll("list_changed", Effect.sync(() =>
        stream.events().some((message) => message.method === "notifications/resources/list_changed") ? true : undefined
      ))
      assert.strictEqual((yield* registries[1]!.snapshot).skills.length, 3)
    }).pipe(Effect.scoped), { timeout: 30_000 })
})

describe("cursors across replicas", () => {
  const Skills = SkillsServer.layer({ skills: [...v1, simple("gamma"), simple("delta")], pageSize: 2 })
  const Other = SkillsServer.layer({ skills: [...v2, simple("gamma"), simple("delta")], pageSize: 2 })
  it.live("a cursor of one replica is honoured by every other: the same page on the same revision, the next position on another", () =>
    Effect.gen(function*() {
      const serve = (skills: typeof Skills) => Effect.map(Layer.build(httpServer(skills)), (context) => modernHttp(Context.get(context, ServerUrl)))
      const one = yield* serve(Skills)
      const same = yield* serve(Skills)
      const other = yield* serve(Other)
      const first = yield* one.call("skills/list")
      assert.strictEqual(first.skills.length, 2)
      const second = yield* same.call("skills/list", { cursor: first.nextCursor })
      assert.deepStrictEqual(second, yield* one.call("skills/list", { cursor: first.nextCursor }))
      // A cursor is a position, not a snapshot handle: a replica on another revision goes on after it.
      const last = first.skills.at(-1).uri
      const others = (yield* other.call("skills/list", { cursor: first.nextCursor })).skills.map((s: any) => s.uri)
      assert.isNotEmpty(others)
      assert.isTrue(others.every((uri: string) => uri > last))
    }).pipe(Effect.scoped))
})
