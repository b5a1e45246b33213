/**
 * Following one upstream in virtual time (`TestClock`), against a stand-in client: the look again
 * after `ttlMs` within its bounds (a ttl of 0 waits the minimum, a day waits the maximum); an
 * upstream that stops answering keeps its last verified skills, is logged once and reconnected
 * with doubling backoff up to its cap; a flood of notifications costs one look.
 */
import { assert, describe, it } from "@effect/vitest"
import { Manifest, SkillUri, type Skill as CoreSkill } from "@mcp-skills/core"
import type { SkillsClient } from "@mcp-skills/client"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { McpClientError, TransportError } from "effect/ai/McpClientError"
import * as Follow from "../src/internal/upstream/follow.js"
import type { FollowChannel } from "@mcp-skills/client"

const bytes = new TextEncoder().encode("---\nname: notes\ndescription: Notes\n---\n")
const manifest = Result.getOrThrow(Manifest.make({
  uri: Result.getOrThrow(SkillUri.skillMd("skill", ["notes"])),
  files: [{ path: "SKILL.md", bytes }]
}))
const entry: CoreSkill.Skill = Manifest.entry(manifest)

const down = new McpClientError({ reason: new TransportError({ description: "connect ECONNREFUSED" }) })

// A client serving one skill, whose listing says `ttlMs`, counting listings; `failing` makes it unreachable.
const standIn = (state: { ttlMs: number; failing: boolean; listings: number }): SkillsClient.Service => ({
  server: "stand-in",
  protocolVersion: "2026-07-28",
  capability: {},
  mcp: undefined as never,
  listSkills: () =>
    Effect.suspend(() => {
      state.listings++
      return state.failing
        ? Effect.fail(down)
        : Effect.succeed({ skills: [entry], invalid: [], cacheHint: { ttlMs: state.ttlMs, cacheScope: "private" as const } })
    }),
  getSkill: () => Effect.fail(down),
  readResourceDirectory: () => Effect.fail(down),
  checkEntry: (skill) => Effect.succeed({ skill, byUri: new Map(), signers: undefined }),
  readSkillResource: () => Effect.fail(down),
  loadSkill: (skill) =>
    Effect.succeed({
      skill,
      skillMd: { skill: skill.uri, uri: skill.uri, mimeType: "text/markdown", bytes, digest: manifest.files.digest(0), verified: true },
      frontmatter: { name: "notes", description: "Notes" },
      body: ""
    })
})

const settings = (overrides: Partial<Follow.Settings> & Pick<Follow.Settings, "connect">) =>
  Effect.map(Semaphore.make(1), (intake): Follow.Settings => ({
    name: "up",
    prefix: ["up"],
    limits: { maxResources: 512, maxTotalBytes: 16_777_216 },
    recheck: { min: Duration.seconds(5), max: Duration.minutes(10) },
    backoff: { base: Duration.millis(500), cap: Duration.seconds(30) },
    settle: Duration.millis(50),
    maxUnlisted: 16,
    log: () => Effect.void,
    intake,
    admission: undefined,
    ...overrides
  }))

// The gateway's registry, taking every change (what it does with them is not under test here).
const registryOf = Effect.gen(function*() {
  const registry = yield* Deferred.make<any>()
  const changes = { added: [], removed: [], changed: [], listChanged: false, updated: [] }
  yield* Deferred.succeed(registry, { update: () => Effect.succeed(changes), snapshot: Effect.succeed({ skills: [] }) })
  return registry
})

// Lets the followed upstream's fibers run what the clock made due.
const yieldMany = Effect.repeat(Effect.yieldNow, { times: 50 })

const advance = (duration: Duration.Input) => Effect.andThen(TestClock.adjust(duration), yieldMany)

describe("UpstreamSource following, in virtual time", () => {
  it.effect("looks again after ttlMs, no sooner than the minimum and no later than the maximum", () =>
    Effect.gen(function*() {
      const state = { ttlMs: 0, failing: false, listings: 0 }
      const registry = yield* registryOf
      yield* Follow.make(yield* settings({ connect: () => Effect.succeed({ client: standIn(state), signals: () => Stream.never }) }), registry)
      yield* yieldMany
      assert.strictEqual(state.listings, 1)
      yield* advance("5 seconds")
      assert.strictEqual(state.listings, 1, "a ttl of 0 waits the minimum, then the quiet time")
      yield* advance("50 millis")
      assert.strictEqual(state.listings, 2)
      state.ttlMs = 24 * 3600_000
      yield* advance("5050 millis")
      assert.strictEqual(state.listings, 3)
      yield* advance("9 minutes")
      assert.strictEqual(state.listings, 3, "a ttl of a day waits the maximum")
      yield* advance("1 minute")
      yield* advance("50 millis")
      assert.strictEqual(state.listings, 4)
    }))

  it.effect("an unreachable upstream keeps its last verified skills, is logged once, and is reconnected with capped backoff", () =>
    Effect.gen(function*() {
      const state = { ttlMs: 0, failing: false, listings: 0 }
      const lines: Array<string> = []
      const connects: Array<number> = []
      const registry = yield* registryOf
      const follower = yield* Follow.make(
        yield* settings({
          log: (line) => Effect.sync(() => lines.push(line)),
          connect: () =>
            Effect.gen(function*() {
              connects.push(yield* Effect.clockWith((clock) => clock.currentTimeMillis))
              return state.failing && connects.length > 1
                ? yield* Effect.fail(down)
                : { client: standIn(state), signals: () => Stream.never }
            })
        }),
        registry
      )
      yield* yieldMany
      assert.strictEqual((yield* follower.definitions).length, 1)
      state.failing = true
      yield* advance("5050 millis")
      assert.deepStrictEqual(connects, [0])
      assert.strictEqual(lines.filter((line) => /unreachable: .*ECONNREFUSED.*still serving its 1 verified skills/.test(line)).length, 1)
      assert.strictEqual((yield* follower.definitions).length, 1)
      assert.isFalse((yield* follower.status).reachable)
      // Doubling from 500 ms, capped at 30 s.
      for (let i = 0; i < 10; i++) yield* advance("30 seconds")
      const gaps = connects.slice(1).map((at, i) => at - (i === 0 ? 5050 : connects[i]!))
      assert.deepStrictEqual(gaps.slice(0, 7), [500, 1000, 2000, 4000, 8000, 16000, 30000])
      assert.strictEqual(lines.length, 1, "said once while it stays down")
      state.failing = false
      yield* advance("30 seconds")
      assert.isTrue((yield* follower.status).reachable)
      assert.match(lines.at(-1)!, /upstream up is back; serving its 1 verified skills/)
    }))

  it.effect("a flood of notifications costs one look", () =>
    Effect.gen(function*() {
      const state = { ttlMs: 0, failing: false, listings: 0 }
      const flood = yield* Deferred.make<void>()
      const registry = yield* registryOf
      yield* Follow.make(
        yield* settings({
          connect: () =>
            Effect.succeed({
              client: standIn(state),
              signals: () =>
                Stream.fromEffect(Deferred.await(flood)).pipe(
                  Stream.flatMap(() => Stream.fromIterable(Array.from({ length: 10_000 }, (): FollowChannel.Signal => ({ _tag: "ListChanged" })))),
                  Stream.concat(Stream.never)
                )
            })
        }),
        registry
      )
      yield* yieldMany
      assert.strictEqual(state.listings, 1)
      yield* Deferred.succeed(flood, undefined)
      yield* yieldMany
      yield* advance("50 millis")
      yield* advance("50 millis")
      assert.strictEqual(state.listings, 2)
    }))
})
