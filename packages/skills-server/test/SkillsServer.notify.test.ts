/**
 * Who is told of a change: every listener is judged with the services its own
 * requests get (an `HttpRouter` middleware's for a `subscriptions/listen` over HTTP, an
 * `McpServer.middleware`'s for a stdio connection), and what effect itself broadcasts (a change
 * to the user's own resources) still reaches every listener.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpProtocol, McpSchema, McpServer } from "effect/ai"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { SkillRegistry, SkillsServer, Visibility } from "../src/index.js"
import { simple } from "./support/fixtures.js"
import { listenEvents, poll } from "./support/session.js"
import { legacyStdio, serveApp, ServerUrl, StdioPipe, stdioServer } from "./support/wire.js"

class CurrentUser extends Context.Service<CurrentUser, { readonly admin: boolean }>()("test/CurrentUser") {}

const adminOnly = () =>
  Effect.gen(function*() {
    const user = yield* CurrentUser
    return (skill: Visibility.SkillInfo) => user.admin || skill.path[0] !== "admin"
  })

const v1 = [simple("public/handbook", { "guide.md": "v1\n" }), simple("admin/ops", { "runbook.md": "v1\n" })]
// Only the admin skill changes, then only the public one.
const adminChanged = [simple("public/handbook", { "guide.md": "v1\n" }), simple("admin/ops", { "runbook.md": "v2\n" })]
const publicChanged = [simple("public/handbook", { "guide.md": "v2\n" }), simple("admin/ops", { "runbook.md": "v2\n" })]
const files = ["skill://public/handbook/guide.md", "skill://admin/ops/runbook.md"]

const ListChanged = "notifications/resources/list_changed"
const Updated = "notifications/resources/updated"

const captured: { registry?: SkillRegistry.SkillRegistry["Service"]; server?: McpServer.McpServer["Service"] } = {}
const Capture = Layer.effectDiscard(Effect.gen(function*() {
  captured.registry = yield* SkillRegistry.SkillRegistry
  captured.server = yield* McpServer.McpServer
}))
const withCapture = <E, R>(skills: Layer.Layer<SkillRegistry.SkillRegistry, E, R>) => Layer.merge(skills, Capture.pipe(Layer.provide(skills)))

const HttpAuth = HttpRouter.middleware<{ provides: CurrentUser }>()((effect) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* Effect.provideService(effect, CurrentUser, { admin: request.headers["x-user"] === "root" })
  }))

const WithHttpRouterAuth = McpServer.layerHttp({
  name: "docs",
  version: "1.0.0",
  path: "/mcp",
  protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
  registrations: withCapture(SkillsServer.layer({ skills: v1, visibility: adminOnly }))
}).pipe(Layer.provide(HttpAuth.layer))

const McpAuth = McpServer.middleware<{ provides: CurrentUser }>()((effect, { requestContext }) =>
  Effect.provideService(effect, CurrentUser, { admin: requestContext.clientInfo?.name === "root" }))

/** What was told, as `[method, uri?]`. */
const summary = (told: ReadonlyArray<any>) =>
  told.map((message) => message.method === Updated ? [message.method, message.params.uri] : [message.method])

/** What was told, once `count` list changes arrived. */
const settled = (told: () => ReadonlyArray<any>, count: number) =>
  Effect.map(
    poll(`${count} list changes`, Effect.sync(() => told().filter((message) => message.method === ListChanged).length >= count ? true : undefined)),
    () => summary(told())
  )

/** What a stdio connection was told of `change`: polled until something came, then a while longer. */
const toldOf = (pipe: StdioPipe["Service"], client: { readonly call: (method: string) => Effect.Effect<unknown> }, change: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    const start = pipe.notifications.length
    yield* Effect.orDie(change)
    // stdio hands over notifications as it reads an answer: ping until they are in.
    yield* poll("the change", Effect.map(client.call("ping"), () => pipe.notifications.length > start ? true : undefined))
    for (let i = 0; i < 20; i++) yield* client.call("ping")
    return summary(pipe.notifications.slice(start))
  })

describe("notifications per listener", () => {
  layer(serveApp(WithHttpRouterAuth))("HttpRouter middleware, subscriptions/listen over HTTP", (it) => {
    it.effect("each listen is judged with the services the middleware gives its own request", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        yield* captured.registry!.replace(v1)
        const notifications = { resourcesListChanged: true, resourceSubscriptions: files }
        const anonymous = yield* listenEvents(url, {}, notifications)
        const root = yield* listenEvents(url, { "x-user": "root" }, notifications)
        yield* captured.registry!.replace(adminChanged)
        yield* captured.registry!.replace(publicChanged)
        assert.deepStrictEqual(yield* settled(root, 2), [
          [ListChanged],
          [Updated, "skill://admin/ops/runbook.md"],
          [ListChanged],
          [Updated, "skill://public/handbook/guide.md"]
        ])
        // The admin-only change told the anonymous listener nothing, not even a list_changed.
        assert.deepStrictEqual(yield* settled(anonymous, 1), [[ListChanged], [Updated, "skill://public/handbook/guide.md"]])
        assert.notInclude(JSON.stringify(anonymous()), "admin")
      }).pipe(Effect.scoped))

    it.effect("a change to the user's own effect resources still reaches every listener", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const anonymous = yield* listenEvents(url, {}, { resourcesListChanged: true })
        yield* captured.server!.addResource({
          resource: new McpSchema.Resource({ uri: "file:///notes.txt", name: "notes" }),
          annotations: Context.empty(),
          handle: Effect.succeed({ contents: [] })
        })
        assert.deepStrictEqual(yield* settled(anonymous, 1), [[ListChanged]])
      }).pipe(Effect.scoped))
  })

  layer(stdioServer(withCapture(SkillsServer.layer({ skills: v1, visibility: adminOnly }).pipe(Layer.provide(McpAuth.layer)))))(
    "McpServer.middleware, stdio 2025-11-25",
    (it) => {
      it.effect("the connection is judged with the services the middleware gives its requests", () =>
        Effect.gen(function*() {
          const pipe = yield* StdioPipe
          yield* captured.registry!.replace(v1)
          const client = yield* legacyStdio(pipe)
          yield* client.call("resources/subscribe", { uri: files[0] })
          const told = yield* toldOf(pipe, client, Effect.andThen(captured.registry!.replace(adminChanged), captured.registry!.replace(publicChanged)))
          // The admin-only change told the connection nothing, not even a list_changed.
          assert.deepStrictEqual(told, [[ListChanged], [Updated, "skill://public/handbook/guide.md"]])
        }))

      it.effect("a stdio connection that unsubscribes is told no more updates of that file", () =>
        Effect.gen(function*() {
          const pipe = yield* StdioPipe
          yield* captured.registry!.replace(v1)
          const client = yield* legacyStdio(pipe)
          yield* client.call("resources/subscribe", { uri: files[0] })
          yield* client.call("resources/unsubscribe", { uri: files[0] })
          assert.deepStrictEqual(yield* toldOf(pipe, client, captured.registry!.replace(publicChanged)), [[ListChanged]])
        }))

      it.effect("a connection that initializes again is told once, as the new connection", () =>
        Effect.gen(function*() {
          const pipe = yield* StdioPipe
          yield* captured.registry!.replace(v1)
          const first = yield* legacyStdio(pipe)
          yield* first.call("resources/subscribe", { uri: files[0] })
          const client = yield* legacyStdio(pipe)
          // The new connection has not subscribed: the subscription of the one it replaced went with it.
          yield* client.call("skills/list")
          assert.deepStrictEqual(yield* toldOf(pipe, client, captured.registry!.replace(publicChanged)), [[ListChanged]])
        }))
    }
  )
})
