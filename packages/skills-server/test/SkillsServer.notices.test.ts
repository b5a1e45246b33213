/**
 * What a listener is told comes from the registry's one commit stream, each notice decided as the
 * surface it announces: a reload racing a change of the source (a gate in the source Effect makes
 * the race certain) announces with the snapshot it really replaced, so a listener that could see
 * a skill the reload took out is told; and a visibility check that depends on the method decides
 * a list_changed as the listener's skills/list and an update as its resources/read.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Latch from "effect/Latch"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { SkillRegistry, SkillsServer, Visibility } from "../src/index.js"
import type { Skill } from "../src/index.js"
import { simple } from "./support/fixtures.js"
import { listen, poll } from "./support/session.js"
import { httpServer, ServerUrl } from "./support/wire.js"

const ListChanged = "notifications/resources/list_changed"
const Updated = "notifications/resources/updated"

/** `skills` served over loopback HTTP: its URL and its registry. */
const served = <E, R>(skills: Layer.Layer<SkillRegistry.SkillRegistry, E, R>) =>
  Effect.gen(function*() {
    const captured: Array<SkillRegistry.SkillRegistry["Service"]> = []
    const Capture = Layer.effectDiscard(Effect.gen(function*() {
      captured.push(yield* SkillRegistry.SkillRegistry)
    }))
    const context = yield* Layer.build(httpServer(Layer.merge(skills, Capture.pipe(Layer.provide(skills)))))
    return { url: Context.get(context, ServerUrl), registry: captured[0]! }
  })

/** What was told, as `[method, uri?]`. */
const summary = (told: ReadonlyArray<any>) =>
  told.map((message) => message.method === Updated ? [message.method, message.params.uri] : [message.method])

describe("notices follow the registry's commits", () => {
  it.live("a reload racing a change of its source tells a listener of the skill it took out", () =>
    Effect.gen(function*() {
      const gate = yield* Latch.make(true)
      const entered = yield* Queue.unbounded<void>()
      const current: ReadonlyArray<Skill.Definition> = [simple("a"), simple("b")]
      const load = Effect.andThen(Queue.offer(entered, undefined), Effect.as(gate.await, current))
      // The listener may see `c` alone.
      const { registry, url } = yield* served(SkillsServer.layer({
        skills: load,
        visibility: () => Effect.succeed((skill: Visibility.SkillInfo) => skill.name === "c")
      }))
      yield* Queue.take(entered)
      const stream = yield* listen(url, {}, { resourcesListChanged: true })
      yield* gate.close
      const reloading = yield* Effect.forkChild(registry.reload)
      yield* Queue.take(entered)
      // While the source is read, a watched file adds `c`: the listener is told.
      yield* registry.update({ upsert: [simple("c")], remove: [] }, "watch")
      yield* gate.open
      // The source read before it never had `c`: the reload takes it out. Its `before` is the
      // snapshot with `c` (not the one read when the reload was asked for), so the listener,
      // which saw `c` there, is told again.
      assert.deepStrictEqual((yield* Fiber.join(reloading)).removed, ["skill://c/SKILL.md"])
      yield* poll("two list changes", Effect.sync(() => stream.events().filter((message) => message.method === ListChanged).length === 2 ? true : undefined))
    }).pipe(Effect.scoped), 30_000)

  it.live("a check that depends on the method: list_changed decided as skills/list, updated as resources/read", () =>
    Effect.gen(function*() {
      // Versions of the three skills' notes, one skill changing at a time.
      const catalogue = (open: string, secret: string, unreadable: string) => [
        simple("open", { "notes.md": open }),
        simple("secret", { "notes.md": secret }),
        simple("unreadable", { "notes.md": unreadable })
      ]
      // skills/list hides `secret`, resources/read hides `unreadable`.
      const { registry, url } = yield* served(SkillsServer.layer({
        skills: catalogue("1", "1", "1"),
        visibility: (request) =>
          Effect.succeed((skill: Visibility.SkillInfo) =>
            request.method === "skills/list"
              ? skill.name !== "secret"
              : request.method === "resources/read"
              ? skill.name !== "unreadable"
              : true
          )
      }))
      const files = ["open", "secret", "unreadable"].map((name) => `skill://${name}/notes.md`)
      const stream = yield* listen(url, {}, { resourcesListChanged: true, resourceSubscriptions: files })
      // `secret` changes: its skills/list hides it (no list_changed), its resources/read shows it.
      yield* registry.replace(catalogue("1", "2", "1"))
      // `unreadable` changes: its skills/list shows it, its resources/read hides it (no update).
      yield* registry.replace(catalogue("1", "2", "2"))
      // `open` changes: both are told; the listener has heard everything before this.
      yield* registry.replace(catalogue("2", "2", "2"))
      yield* poll("the update of open/notes.md", Effect.sync(() =>
        stream.events().some((message) => message.method === Updated && message.params.uri === files[0]) ? true : undefined))
      assert.deepStrictEqual(summary(stream.events()), [
        [Updated, "skill://secret/notes.md"],
        [ListChanged],
        [ListChanged],
        [Updated, "skill://open/notes.md"]
      ])
    }).pipe(Effect.scoped), 30_000)
})
