/**
 * A caller's request is answered, never logged as a crash. A family's `render` and `list` saying
 * `NoSuchInstance` or `NotAllowed` answer exactly what a server without that instance answers, on
 * every surface and both revisions (effect's path, and the fast route where it answers), and our
 * client sees `SkillNotFound`; nothing is logged. Any other failure of authors' code answers
 * -32603 and logs one line, without a stack trace, at most so often per skill. Garbage from
 * clients never puts a stack trace in the log (the server's logger is captured).
 */
import { assert, describe, it } from "@effect/vitest"
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import * as Array from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as TestClock from "effect/testing/TestClock"
import { ServerLimits, Skill, SkillFamily, SkillsServer } from "../src/index.js"
import * as Faults from "../src/internal/faults.js"
import { pdfProcessing, skillMd } from "./support/fixtures.js"
import type { Client } from "./support/wire.js"
import { httpServer, legacyHttp, modernHttp, modernRequest, postText, ServerUrl, withHeaders } from "./support/wire.js"

/** Every line a server logged: its text, and whether it carried a cause or a stack. */
interface Line {
  readonly text: string
  readonly cause: boolean
}

const capture = (into: Array<Line>) =>
  Logger.layer([Logger.make(({ cause, message }) =>
    void into.push({
      text: Array.ensure(message).map((part) => typeof part === "string" ? part : `<${typeof part}> ${String((part as any)?.stack ?? part)}`).join(" "),
      cause: cause.reasons.length > 0
    })
  )])

const stackTraces = (lines: ReadonlyArray<Line>) => lines.filter((line) => line.cause || /\n\s+at |<object>/.test(line.text))

const rendered = (customer: string) => ({
  "SKILL.md": skillMd("onboarding", `Onboarding ${customer}`),
  "references/contacts.md": `# Contacts of ${customer}\n`
})

// The CRM knows acme; guests may not have it; the CRM fails for `broken` and crashes for `dies`.
const onboarding = Skill.family({
  path: "customers/{customer}/onboarding",
  list: ({ headers }) =>
    headers["x-user"] === "guest"
      ? Effect.fail(new SkillFamily.NotAllowed())
      : headers["x-user"] === "stranger"
      ? Effect.fail(new SkillFamily.NoSuchInstance())
      : Effect.succeed([{ customer: "acme" }]),
  render: ({ customer }, { headers }) =>
    customer === "broken"
      ? Effect.fail(new Error("the CRM is down"))
      : customer === "dies"
      ? Effect.sync(() => {
        throw new Error("a bug in the template")
      })
      : customer !== "acme"
      ? Effect.fail(new SkillFamily.NoSuchInstance())
      : headers["x-user"] === "guest"
      ? Effect.fail(new SkillFamily.NotAllowed())
      : Effect.succeed(rendered(customer))
})

const acme = "skill://customers/acme/onboarding"
const ghost = "skill://customers/ghost/onboarding"

/** Every request about one instance, on every surface. */
const aboutInstance = (root: string): ReadonlyArray<readonly [string, Record<string, unknown>]> => [
  ["skills/get", { uri: `${root}/SKILL.md` }],
  ["resources/read", { uri: `${root}/SKILL.md` }],
  ["resources/read", { uri: `${root}/references/contacts.md` }],
  ["resources/directory/read", { uri: root }],
  ["resources/directory/read", { uri: `${root}/references` }]
]

const errorOf = (client: Client, method: string, params: Record<string, unknown>) =>
  Effect.map(client.send(method, params), (response) => response.body.error)

const listed = (client: Client) =>
  Effect.gen(function*() {
    const skills = (yield* client.call("skills/list")).skills.map((skill: any) => skill.uri)
    const resources = (yield* client.call("resources/list")).resources.map((resource: any) => resource.uri)
    return { skills, resources }
  })

/** `skills` served over loopback HTTP for the test's scope, what it logs collected in `log`. */
const serve = (skills: ReadonlyArray<Skill.Definition>, log: Array<Line>) =>
  Effect.map(
    Layer.build(httpServer(SkillsServer.layer({ skills })).pipe(Layer.provide(capture(log)))),
    (context) => Context.get(context, ServerUrl)
  )

/** Both revisions over HTTP, as `x-user`; the first request of the modern one teaches the fast route. */
const clients = (url: string, user: string) =>
  Effect.gen(function*() {
    const modern = withHeaders(modernHttp(url), { "x-user": user })
    yield* modern.call("skills/get", { uri: "skill://pdf-processing/SKILL.md" })
    return [modern, yield* legacyHttp(url, { "x-user": user })] as const
  })

describe("a family's NoSuchInstance and NotAllowed", () => {
  it.live("are answered on every surface, both revisions, exactly as by a server without the instance; nothing is logged", () =>
    Effect.gen(function*() {
      const log: Array<Line> = []
      const withFamily = yield* serve([pdfProcessing, onboarding], log)
      const without = yield* serve([pdfProcessing], [])
      for (const user of ["you", "guest"]) {
        const ours = yield* clients(withFamily, user)
        const absent = yield* clients(without, user)
        for (const [i, client] of ours.entries()) {
          // Another customer than the CRM knows, for everyone; acme, for a guest.
          const asked = user === "guest" ? [...aboutInstance(ghost), ...aboutInstance(acme)] : aboutInstance(ghost)
          for (const [method, params] of asked) {
            const error = yield* errorOf(client, method, params)
            assert.deepStrictEqual(error, yield* errorOf(absent[i]!, method, params), `${user} ${client.revision} ${method} ${JSON.stringify(params)}`)
            assert.strictEqual(error.code, -32602)
          }
        }
      }
      // Listings: a guest may not list the family, a stranger has no instance in it.
      for (const user of ["guest", "stranger"]) {
        for (const [i, client] of (yield* clients(withFamily, user)).entries()) {
          assert.deepStrictEqual(yield* listed(client), yield* listed((yield* clients(without, user))[i]!))
        }
      }
      // The family is there for whoever it says may have it.
      const [you] = yield* clients(withFamily, "you")
      assert.include((yield* listed(you)).skills, `${acme}/SKILL.md`)
      assert.strictEqual((yield* you.call("resources/read", { uri: `${acme}/references/contacts.md` })).contents[0].text, "# Contacts of acme\n")
      assert.deepStrictEqual(log, [])
    }).pipe(Effect.scoped), 60_000)

  it.live("are SkillNotFound to our client, on both revisions", () =>
    Effect.gen(function*() {
      const url = yield* serve([pdfProcessing, onboarding], [])
      for (const protocolVersion of ["2026-07-28", "2025-11-25"] as const) {
        const error = yield* SkillsClient.SkillsClient.use((client) => Effect.flip(client.getSkill(`${ghost}/SKILL.md`))).pipe(
          Effect.provide(
            SkillsClient.layerHttp({ url, protocolVersion }).pipe(Layer.provide([FetchHttpClient.layer, SkillCache.layerMemory()]))
          )
        )
        assert.strictEqual(error._tag, "SkillNotFound", protocolVersion)
      }
    }).pipe(Effect.scoped), 60_000)
})

describe("other failures of authors' code", () => {
  it.live("answer -32603 and log one line per skill, without a stack trace, however often they are asked", () =>
    Effect.gen(function*() {
      const log: Array<Line> = []
      const daily = Skill.dynamic({
        path: "reports/daily",
        frontmatter: { name: "daily", description: "Today's report" },
        read: () => Effect.die(new Error("the report store is gone"))
      })
      const url = yield* serve([pdfProcessing, onboarding, daily], log)
      for (const client of yield* clients(url, "you")) {
        for (let i = 0; i < 5; i++) {
          const broken = yield* errorOf(client, "skills/get", { uri: "skill://customers/broken/onboarding/SKILL.md" })
          assert.deepStrictEqual(broken, {
            code: -32603,
            message: "the skill skill://customers/broken/onboarding/SKILL.md could not be rendered: it failed"
          })
          assert.strictEqual((yield* errorOf(client, "resources/read", { uri: "skill://customers/dies/onboarding/SKILL.md" })).code, -32603)
          assert.strictEqual((yield* errorOf(client, "resources/read", { uri: "skill://reports/daily/notes.md" })).code, -32603)
        }
      }
      assert.deepStrictEqual(stackTraces(log), [])
      // One line for the family (both customers are one family), one for the dynamic skill.
      assert.deepStrictEqual(log.map((line) => line.text).sort(), [
        "reading skill://reports/daily/notes.md of a dynamic skill failed: the report store is gone",
        "the skill skill://customers/broken/onboarding/SKILL.md could not be rendered: it failed: the CRM is down"
      ])
    }).pipe(Effect.scoped), 60_000)

  it.effect("a skill's next line, after the interval, counts the failures left out", () =>
    Effect.gen(function*() {
      const faults = yield* Faults.make
      const report = (n: number) => faults.report("skill://a/SKILL.md", `failure ${n}`)
      yield* report(1)
      yield* report(2)
      yield* report(3)
      yield* faults.report("skill://b/SKILL.md", "failure of b\n    at a stack frame")
      yield* TestClock.adjust(ServerLimits.FaultInterval)
      yield* report(4)
      yield* report(5)
      assert.deepStrictEqual(faultLog.map((line) => line.text), [
        "failure 1",
        "failure of b     at a stack frame",
        "failure 4 (2 more failures of it since the last line)"
      ])
    }).pipe(Effect.provide(capture(faultLog))))
})

const faultLog: Array<Line> = []

describe("garbage from clients", () => {
  it.live("never puts a stack trace in the log", () =>
    Effect.gen(function*() {
      const log: Array<Line> = []
      const greeting = Skill.rendered({
        path: "greeting",
        render: (request) =>
          Effect.sync(() => {
            if (request.headers["x-name"] === undefined) throw new TypeError("Cannot read properties of undefined (reading 'trim')")
            return { "SKILL.md": skillMd("greeting", `Hello ${request.headers["x-name"]}`) }
          })
      })
      const url = yield* Effect.map(
        Layer.build(
          httpServer(SkillsServer.layer({
            skills: [pdfProcessing, onboarding, greeting],
            // A check that crashes on a header it did not expect.
            visibility: (request) =>
              request.headers["x-role"] !== undefined && !["staff", "guest"].includes(request.headers["x-role"])
                ? Effect.die(new Error(`unknown role ${request.headers["x-role"]}`))
                : Effect.succeed(true)
          })).pipe(Layer.provide(capture(log)))
        ),
        (context) => Context.get(context, ServerUrl)
      )
      const uris = [
        "skill://customers/ghost/onboarding/SKILL.md",
        "skill://customers/broken/onboarding/SKILL.md",
        "skill://customers/dies/onboarding/SKILL.md",
        "skill://customers/%ZZ/onboarding/SKILL.md",
        "skill://customers/../onboarding/SKILL.md",
        "skill://greeting/SKILL.md",
        `skill://${"a/".repeat(2_000)}SKILL.md`,
        "not a uri",
        ""
      ]
      const params: ReadonlyArray<unknown> = [
        ...uris.map((uri) => ({ uri })),
        { uri: uris[0], cursor: "garbage" },
        { uri: 42 },
        { uri: null },
        { cursor: "\u0000" },
        [],
        null,
        "text",
        {}
      ]
      const methods = ["skills/list", "skills/get", "resources/read", "resources/list", "resources/directory/read", "skills/nope"]
      for (const headers of [{ "x-role": "staff" }, { "x-role": "root" }]) {
        const legacy = yield* legacyHttp(url, headers)
        for (const method of methods) {
          for (const sent of params) {
            const modern = modernRequest(method, sent, { headers })
            yield* postText(url, modern.headers, modern.body)
            yield* legacy.send(method, sent as Record<string, unknown>)
          }
        }
        for (const body of ["not json", "{", "[]", "{\"jsonrpc\":\"2.0\",\"id\":1}", JSON.stringify({ jsonrpc: "2.0", id: {}, method: "skills/list" })]) {
          yield* postText(url, modernRequest("skills/list", {}, { headers }).headers, body)
        }
      }
      // The crashing check is the author's failure: -32603, one line.
      const crashed = yield* withHeaders(modernHttp(url), { "x-role": "root" }).fail("skills/list")
      assert.deepStrictEqual(crashed, { code: -32603, message: "Internal error" })
      assert.deepStrictEqual(stackTraces(log), [])
      assert.include(log.map((line) => line.text), "the visibility check failed: unknown role root")
      // The authors' failures were logged, once each (the check, the two renders).
      assert.isAtMost(log.length, 4)
    }).pipe(Effect.scoped), 120_000)
})
