/**
 * The registry's one change intake: changes applied one at a time, each commit's `before` the
 * snapshot it replaced (a reload racing an update or an upsert, made deterministic with a gate in
 * the source Effect), reload requests coalesced and paced (on the `TestClock`), callers learning
 * their own change's outcome, and every change counted by source and outcome in the reload series.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { McpTelemetry } from "@mcp-skills/core"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Latch from "effect/Latch"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as fs from "node:fs"
import * as path from "node:path"
import { DirectorySource, Skill, SkillRegistry, Snapshot } from "../src/index.js"
import * as Telemetry from "../src/internal/telemetry.js"
import { simple, skillMd } from "./support/fixtures.js"
import { tree } from "./support/tree.js"

/** A source whose reads wait at `gate` (open unless closed), telling `entered` each time one starts. */
const gated = (initial: ReadonlyArray<Skill.Definition>) =>
  Effect.gen(function*() {
    const gate = yield* Latch.make(true)
    const entered = yield* Queue.unbounded<void>()
    const source = { current: initial, loads: 0 }
    const load = Effect.gen(function*() {
      source.loads++
      yield* Queue.offer(entered, undefined)
      yield* gate.await
      return source.current
    })
    return { gate, entered, source, load }
  })

/** The next `n` commits, collected from now on. */
const nextCommits = (registry: SkillRegistry.SkillRegistry["Service"], n: number) =>
  Effect.flatMap(registry.commits, (commits) => Effect.forkChild(Stream.runCollect(Stream.take(commits, n))))

const uris = (snapshot: Snapshot.Snapshot) => snapshot.skills.map((skill) => skill.uri).sort()

const a = simple("a")
const b = simple("b")
const c = simple("c")

describe("one change at a time", () => {
  it.effect("a reload racing an update: the reload's commit names the update's snapshot as its before", () =>
    Effect.gen(function*() {
      const { entered, gate, load } = yield* gated([a, b])
      const registry = yield* SkillRegistry.make(load)
      yield* Queue.take(entered)
      const commits = yield* nextCommits(registry, 2)
      yield* gate.close
      const reloading = yield* Effect.forkChild(registry.reload)
      yield* Queue.take(entered)
      // The source is being read: a change of it (a watched file) is not held up by the read.
      const added = yield* registry.update({ upsert: [c], remove: [] }, "watch")
      assert.deepStrictEqual(added.added, ["skill://c/SKILL.md"])
      yield* gate.open
      const reloaded = yield* Fiber.join(reloading)
      // The source read before the update never had `c`: the reload takes it out, and says so.
      assert.deepStrictEqual(reloaded.removed, ["skill://c/SKILL.md"])
      const [update, reload] = yield* Fiber.join(commits)
      assert.strictEqual(update!._tag, "Source")
      assert.strictEqual(reload!._tag, "Source")
      assert.strictEqual(reload!.before, update!.after)
      assert.deepStrictEqual(uris(reload!.before), ["skill://a/SKILL.md", "skill://b/SKILL.md", "skill://c/SKILL.md"])
      assert.deepStrictEqual(reload!.changes, reloaded)
      assert.deepStrictEqual(update!._tag === "Source" ? update!.trigger : undefined, "watch")
      assert.deepStrictEqual(reload!._tag === "Source" ? reload!.trigger : undefined, "reload")
    }))

  it.effect("a reload racing an upsert: the upsert survives it, and each commit follows the one before", () =>
    Effect.gen(function*() {
      const { entered, gate, load, source } = yield* gated([a, b])
      const registry = yield* SkillRegistry.make(load)
      yield* Queue.take(entered)
      const commits = yield* nextCommits(registry, 2)
      yield* gate.close
      source.current = [a, simple("b", { "notes.md": "two" })]
      const reloading = yield* Effect.forkChild(registry.reload)
      yield* Queue.take(entered)
      yield* registry.upsert([c])
      yield* gate.open
      const reloaded = yield* Fiber.join(reloading)
      assert.deepStrictEqual(reloaded.changed.map((change) => change.uri), ["skill://b/SKILL.md"])
      const [upsert, reload] = yield* Fiber.join(commits)
      assert.strictEqual(upsert!._tag, "Edit")
      assert.strictEqual(reload!.before, upsert!.after)
      assert.deepStrictEqual(uris(reload!.after), ["skill://a/SKILL.md", "skill://b/SKILL.md", "skill://c/SKILL.md"])
    }))

  it.effect("concurrent callers each learn their own change's outcome", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([a])
      // Its name is not its folder's.
      const invalid = Skill.make({ path: "d", files: { "SKILL.md": skillMd("other") } })
      const [good, bad] = yield* Effect.all([
        Effect.exit(registry.upsert([b])),
        Effect.exit(registry.upsert([invalid]))
      ], { concurrency: "unbounded" })
      assert.isTrue(Exit.isSuccess(good))
      assert.deepStrictEqual(Exit.isSuccess(good) ? good.value.added : [], ["skill://b/SKILL.md"])
      assert.isTrue(Exit.isFailure(bad) && Cause.squash(bad.cause) instanceof SkillRegistry.RegistrationError)
      assert.deepStrictEqual(uris(yield* registry.snapshot), ["skill://a/SKILL.md", "skill://b/SKILL.md"])
    }))

  it.effect("a change whose caller is interrupted before its turn is withdrawn; the intake goes on", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([a])
      // A dynamic skill without frontmatter has its SKILL.md read when it is registered: a read
      // that waits at a gate holds the intake.
      const gate = yield* Latch.make(false)
      const reading = yield* Deferred.make<void>()
      const slow = Skill.dynamic({
        path: "slow",
        read: () => Effect.andThen(Deferred.succeed(reading, undefined), Effect.as(gate.await, skillMd("slow")))
      })
      const holding = yield* Effect.forkChild(registry.upsert([slow]))
      yield* Deferred.await(reading)
      const withdrawn = yield* Effect.forkChild(registry.upsert([b]))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(withdrawn)
      yield* gate.open
      yield* Fiber.join(holding)
      yield* registry.upsert([c])
      assert.deepStrictEqual(uris(yield* registry.snapshot), ["skill://a/SKILL.md", "skill://c/SKILL.md", "skill://slow/SKILL.md"])
    }))
})

describe("reloads", () => {
  it.effect("1,500 requests while one reload reads its source cost one more reload, whatever their trigger", () =>
    Effect.gen(function*() {
      const { entered, gate, load, source } = yield* gated([a, b])
      const registry = yield* SkillRegistry.make(load)
      yield* Queue.take(entered)
      const before = (yield* registry.stats).builds
      yield* gate.close
      const first = yield* registry.requestReload("bus")
      assert.isFalse(first.joined)
      yield* Queue.take(entered)
      const triggers = ["bus", "rescan", "watch", "reload", "code"] as const
      const asked = yield* Effect.forEach(Array.from({ length: 1_500 }, (_, i) => triggers[i % triggers.length]!), registry.requestReload)
      // The first of them starts the next reload; every other one joins it.
      assert.deepStrictEqual(asked.filter((request) => !request.joined).length, 1)
      yield* gate.open
      yield* first.result
      yield* Effect.forEach(asked, (request) => request.result, { discard: true })
      assert.strictEqual((yield* registry.stats).builds - before, 2)
      assert.strictEqual(source.loads, 3)
    }))

  it.effect("the next reload starts no sooner after the last one ended than that one took", () =>
    Effect.gen(function*() {
      const source = { loads: 0 }
      const registry = yield* SkillRegistry.make(Effect.gen(function*() {
        source.loads++
        // Reading the source takes ten seconds (on the test clock) after the first time.
        if (source.loads > 1) yield* Effect.sleep("10 seconds")
        return [a]
      }))
      const first = yield* registry.requestReload("bus")
      yield* TestClock.adjust("10 seconds")
      yield* first.result
      const second = yield* registry.requestReload("bus")
      yield* TestClock.adjust("9 seconds")
      assert.strictEqual(source.loads, 2, "not started before the pause is over")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(source.loads, 3)
      yield* TestClock.adjust("10 seconds")
      yield* second.result
    }))

  it.effect("a failed reload is the outcome of every request it covered; the catalogue stays", () =>
    Effect.gen(function*() {
      const state = { broken: false }
      const registry = yield* SkillRegistry.make(Effect.suspend(() => state.broken ? Effect.fail("disk gone") : Effect.succeed([a])))
      state.broken = true
      const [one, two] = yield* Effect.all([registry.requestReload("bus"), registry.requestReload("rescan")])
      assert.isTrue(two.joined)
      const outcomes = yield* Effect.all([Effect.flip(one.result), Effect.flip(two.result)])
      assert.deepStrictEqual(outcomes.map((error) => error._tag), ["ReloadError", "ReloadError"])
      assert.deepStrictEqual(uris(yield* registry.snapshot), ["skill://a/SKILL.md"])
    }))
})

const valueOf = (labels: Record<string, string>) =>
  Effect.map(Metric.value(Metric.withAttributes(Telemetry.metrics.reloads, labels)), (state: any) => state.count as number)

describe("the reload series", () => {
  it.effect("counts every change by source and outcome", () =>
    Effect.gen(function*() {
      const state = { broken: false }
      const registry = yield* SkillRegistry.make(Effect.suspend(() => state.broken ? Effect.fail("disk gone") : Effect.succeed([a])))
      yield* registry.upsert([b])
      yield* registry.remove(["skill://b/SKILL.md"], "replica")
      yield* registry.update({ upsert: [c], remove: [] }, "watch")
      yield* registry.reload
      state.broken = true
      yield* Effect.ignore(Effect.flatMap(registry.requestReload("rescan"), (asked) => asked.result))
      assert.strictEqual(yield* valueOf({ source: "code", outcome: "changed" }), 1)
      assert.strictEqual(yield* valueOf({ source: "bus", outcome: "changed" }), 1)
      assert.strictEqual(yield* valueOf({ source: "watch", outcome: "changed" }), 1)
      // The reload takes `c` out again: the source never had it.
      assert.strictEqual(yield* valueOf({ source: "reload", outcome: "changed" }), 1)
      assert.strictEqual(yield* valueOf({ source: "rescan", outcome: "failure" }), 1)
      yield* registry.replace([a])
      assert.strictEqual(yield* valueOf({ source: "code", outcome: "unchanged" }), 1)
    }).pipe(Effect.provide(McpTelemetry.layer()), Effect.provideService(Metric.MetricRegistry, new Map())))

  it.live("counts the reloads of a watched folder, a broken edit as a failure", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "beta/SKILL.md": skillMd("beta") })
      const other = tree({ "gamma/SKILL.md": skillMd("gamma") })
      const source = yield* DirectorySource.make([{ path: root }, { path: other }], { log: () => Effect.void })
      const registry = yield* SkillRegistry.make(source.definitions)
      const reloads = yield* Queue.unbounded<Exit.Exit<Snapshot.Changes, unknown>>()
      yield* DirectorySource.watch(source, { sweep: false, debounce: "20 millis", onReload: (exit) => Queue.offer(reloads, exit) }).pipe(
        Effect.provideService(SkillRegistry.SkillRegistry, registry)
      )
      fs.writeFileSync(path.join(root, "alpha/notes.md"), "notes\n")
      assert.isTrue(Exit.isSuccess(yield* Queue.take(reloads)))
      assert.strictEqual(yield* valueOf({ source: "watch", outcome: "changed" }), 1)
      // The same skill URI in both roots: the source refuses to read, the watch's reload fails.
      fs.mkdirSync(path.join(other, "alpha"))
      fs.writeFileSync(path.join(other, "alpha/SKILL.md"), skillMd("alpha"))
      let failed = false
      for (let i = 0; i < 10 && !failed; i++) failed = Exit.isFailure(yield* Queue.take(reloads))
      assert.isTrue(failed)
      assert.isAtLeast(yield* valueOf({ source: "watch", outcome: "failure" }), 1)
    }).pipe(
      Effect.scoped,
      Effect.provide([McpTelemetry.layer(), NodeServices.layer]),
      Effect.provideService(Metric.MetricRegistry, new Map())
    ), 30_000)
})
