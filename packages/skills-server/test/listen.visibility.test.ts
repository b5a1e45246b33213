/**
 * Visibility covers 2026-07-28 `subscriptions/listen` streams (issue 11 item 3): a listener hears
 * `list_changed` only for changes to skills it can see (before or after the change), and
 * `resources/updated` only for files of skills it can see; notifications about the server's own
 * effect resources are untouched.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SkillRegistry, SkillsServer } from "../src/index.js"
import { simple } from "./support/fixtures.js"
import { wellFormed } from "./support/twins.js"
import { httpServer, ServerUrl } from "./support/wire.js"

/** Both skills, each at a version of its notes file. */
const catalogue = (versions: { readonly seen: number; readonly hidden: number }) =>
  (["seen", "hidden"] as const).map((name) => simple(name, { "notes.md": `${name} ${versions[name]}\n` }))

/** A listen stream as a caller seeing `visible`, subscribed to list changes and to both notes files. */
const listen = (url: string, visible: string) =>
  Effect.gen(function*() {
    const abort = new AbortController()
    yield* Effect.addFinalizer(() => Effect.sync(() => abort.abort()))
    const request = wellFormed("subscriptions/listen", {
      notifications: {
        resourcesListChanged: true,
        resourceSubscriptions: ["skill://seen/notes.md", "skill://hidden/notes.md"]
      }
    })
    const response = yield* Effect.promise(() =>
      fetch(url, { method: "POST", signal: abort.signal, headers: { ...request.headers, "x-visible": visible }, body: request.body })
    )
    const reader = response.body!.getReader()
    const state = { text: "" }
    const whenever = (holds: () => boolean) =>
      Effect.promise(async () => {
        while (!holds()) {
          const { done, value } = await reader.read()
          if (done) break
          state.text += new TextDecoder().decode(value)
        }
      })
    const until = (pattern: string) => whenever(() => state.text.includes(pattern))
    yield* until("notifications/subscriptions/acknowledged")
    return { state, until, whenever }
  })

describe("visibility of subscriptions/listen notifications", () => {
  it.live("a listener hears only of the skills it can see", () =>
    Effect.gen(function*() {
      let registry: SkillRegistry.SkillRegistry["Service"] | undefined
      const Skills = SkillsServer.layer({
        skills: catalogue({ seen: 0, hidden: 0 }),
        visibility: ({ headers }) => {
          const visible = new Set((headers["x-visible"] ?? "").split(","))
          return Effect.succeed((skill) => visible.has(skill.name))
        }
      })
      const Capture = Layer.effectDiscard(Effect.gen(function*() {
        registry = yield* SkillRegistry.SkillRegistry
      }))
      const url = Context.get(yield* Layer.build(httpServer(Layer.merge(Skills, Capture.pipe(Layer.provide(Skills))))), ServerUrl)
      const stream = yield* listen(url, "seen")
      const everything = yield* listen(url, "seen,hidden")
      const told = (text: string) =>
        text.split("\n").filter((line) => line.startsWith("data:")).map((line) => JSON.parse(line.slice(5)))
          .filter((message) => message.method !== "notifications/subscriptions/acknowledged")
          .map((message) => message.params?.uri ?? message.method)
      // A change to the hidden skill only, then two to the seen skill. effect delivers
      // resources/updated in the order of the changes, so a listener that heard of both seen
      // changes would have heard of the hidden one before them, were it told.
      yield* registry!.replace(catalogue({ seen: 0, hidden: 1 }))
      yield* registry!.replace(catalogue({ seen: 1, hidden: 1 }))
      yield* registry!.replace(catalogue({ seen: 2, hidden: 1 }))
      const updates = (text: string) => told(text).filter((item) => item.startsWith("skill://"))
      yield* everything.whenever(() => updates(everything.state.text).length >= 3)
      assert.deepStrictEqual(updates(everything.state.text), ["skill://hidden/notes.md", "skill://seen/notes.md", "skill://seen/notes.md"])
      yield* stream.whenever(() => updates(stream.state.text).length >= 2)
      assert.deepStrictEqual(updates(stream.state.text), ["skill://seen/notes.md", "skill://seen/notes.md"])
      // And list_changed for the changes it can see.
      yield* stream.until("notifications/resources/list_changed")
    }).pipe(Effect.scoped), { timeout: 30_000 })

  it.live("without a check, a listener hears of every change", () =>
    Effect.gen(function*() {
      let registry: SkillRegistry.SkillRegistry["Service"] | undefined
      const Skills = SkillsServer.layer({ skills: catalogue({ seen: 0, hidden: 0 }) })
      const Capture = Layer.effectDiscard(Effect.gen(function*() {
        registry = yield* SkillRegistry.SkillRegistry
      }))
      const url = Context.get(yield* Layer.build(httpServer(Layer.merge(Skills, Capture.pipe(Layer.provide(Skills))))), ServerUrl)
      const stream = yield* listen(url, "")
      yield* registry!.replace(catalogue({ seen: 0, hidden: 1 }))
      yield* stream.until("skill://hidden/notes.md")
      yield* stream.until("notifications/resources/list_changed")
    }).pipe(Effect.scoped), { timeout: 30_000 })
})
