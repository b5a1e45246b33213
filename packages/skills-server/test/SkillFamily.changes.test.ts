/**
 * A family says when its instances changed (`SkillFamily.changes`): every listener that may see
 * one of its instances is told `list_changed`; a listener that may see none is told nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, PubSub, Stream } from "effect"
import { Skill, SkillsServer } from "../src/index.js"
import { skillMd } from "./support/fixtures.js"
import { listen, poll } from "./support/session.js"
import { httpServer, ServerUrl } from "./support/wire.js"

const ListChanged = "notifications/resources/list_changed"

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
      const Skills = SkillsServer.layer({
        skills: [onboarding],
        visibility: ({ headers }) => Effect.succeed(headers["x-who"] !== "nobody")
      })
      const url = Context.get(yield* Layer.build(httpServer(Skills)), ServerUrl)
      const seeing = yield* listen(url, { "x-who": "staff" }, { resourcesListChanged: true })
      const blind = yield* listen(url, { "x-who": "nobody" }, { resourcesListChanged: true })
      customers.push("globex")
      yield* PubSub.publish(changes, undefined)
      yield* poll("list_changed", Effect.sync(() => seeing.events().some((message) => message.method === ListChanged) ? true : undefined))
      yield* Effect.sleep("200 millis")
      assert.isFalse(blind.events().some((message) => message.method === ListChanged), JSON.stringify(blind.events()))
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
