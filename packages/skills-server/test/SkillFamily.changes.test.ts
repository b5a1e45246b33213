/**
 * A family says when its instances changed (`SkillFamily.changes`): every listener that may see
 * one of its instances is told `list_changed`; a listener that may see none is told nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer, PubSub, Stream } from "effect"
import { Skill, SkillRegistry, SkillsServer } from "../src/index.js"
import { skillMd } from "./support/fixtures.js"
import { listen, poll } from "./support/session.js"
import { httpServer, ServerUrl } from "./support/wire.js"

const ListChanged = "notifications/resources/list_changed"
const Updated = "notifications/resources/updated"

describe("family instance changes", () => {
  it.live("are announced to listeners that may see an instance, and only to them", () =>
    Effect.gen(function*() {
      const changes = yield* PubSub.unbounded<void>()
      const customers = ["acme"]
      const onboarding = Skill.family({
        path: "customers/{customer}/onboarding",
        list: () => Effect.sync(() => customers.map((customer) => ({ customer }))),
        render: ({ customer }) => Effect.succeed({ "SKILL.md": skillMd("onboarding", `Onboarding ${customer}`) }),
        changes: Stream.fromPubSub(changes)
      })
      // The sentinel: an edit of a file every listener sees and subscribes to. Each listener judges
      // the registry's changes in order and is told in order: once told the file was updated, it
      // has been told all it will be of the family's change before it.
      const notes = (text: string) => Skill.make({ path: "public/notes", files: { "SKILL.md": skillMd("notes"), "notes.md": text } })
      const file = "skill://public/notes/notes.md"
      const registry = yield* Deferred.make<SkillRegistry.SkillRegistry["Service"]>()
      const Skills = SkillsServer.layer({
        skills: [onboarding, notes("one")],
        visibility: ({ headers }) => Effect.succeed(headers["x-who"] !== "nobody" || ((skill) => skill.path[0] === "public"))
      })
      const Capture = Layer.effectDiscard(Effect.gen(function*() {
        yield* Deferred.succeed(registry, yield* SkillRegistry.SkillRegistry)
      }))
      const url = Context.get(yield* Layer.build(httpServer(Layer.merge(Skills, Capture.pipe(Layer.provide(Skills))))), ServerUrl)
      const options = { resourcesListChanged: true, resourceSubscriptions: [file] }
      const seeing = yield* listen(url, { "x-who": "staff" }, options)
      const blind = yield* listen(url, { "x-who": "nobody" }, options)
      const told = (listener: typeof seeing, method: string) => listener.events().filter((message) => message.method === method).length
      customers.push("globex")
      yield* PubSub.publish(changes, undefined)
      yield* poll("list_changed", Effect.sync(() => told(seeing, ListChanged) === 1 ? true : undefined))
      yield* (yield* Deferred.await(registry)).upsert([notes("two")])
      yield* poll("the sentinel", Effect.sync(() => told(seeing, Updated) === 1 && told(blind, Updated) === 1 ? true : undefined))
      // The edit is told the same to both (with or without a list_changed); the family's change
      // only to the listener that may see an instance.
      assert.strictEqual(told(blind, ListChanged), told(seeing, ListChanged) - 1, JSON.stringify(blind.events()))
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
