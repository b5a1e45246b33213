/**
 * Skill families. A family's instances are listed through its `list` callback (across
 * its own pages and ours), got, read and directory-read on both revisions over HTTP and stdio;
 * every instance verifies for two callers who receive different bytes; invalid parameters answer
 * -32602 and reach no render; a failing or slow render breaks only its own instance.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import { Context, Effect, Layer } from "effect"
import { McpServer } from "effect/ai"
import { HttpRouter, HttpServerRequest } from "effect/http"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { Skill, SkillRegistry, SkillsServer, Visibility } from "../src/index.js"
import { pdfProcessing, skillMd } from "./support/fixtures.js"
import type { Client } from "./support/wire.js"
import {
  adapters,
  httpServer,
  legacyHttp,
  legacyStdio,
  modernHttp,
  modernStdio,
  serveApp,
  ServerUrl,
  StdioPipe,
  stdioServer,
  withHeaders
} from "./support/wire.js"

// Which customers each caller may see, in the order the CRM returns them.
const customers: Record<string, ReadonlyArray<string>> = {
  ann: ["acme", "globex", "initech"],
  bob: ["acme", "hooli"],
  you: ["acme", "globex", "initech", "hooli", "umbrella"]
}

const renders: Array<string> = []
const userOf = (headers: Readonly<Record<string, string | undefined>>) => headers["x-user"] ?? "you"

const onboarding = Skill.family({
  path: "customers/{customer}/onboarding",
  // The CRM pages by two: the family's own cursor is the offset of the next page.
  list: ({ cursor, headers }) =>
    Effect.sync(() => {
      const all = customers[userOf(headers)] ?? []
      const start = cursor === undefined ? 0 : Number(cursor)
      const next = start + 2
      return {
        instances: all.slice(start, next).map((customer) => ({ customer })),
        nextCursor: next < all.length ? String(next) : undefined
      }
    }),
  render: ({ customer }, { headers }) =>
    Effect.sync(() => {
      renders.push(customer)
      const user = userOf(headers)
      return {
        "SKILL.md": `---\nname: onboarding\ndescription: Onboarding ${customer} for ${user}\n---\n\n# ${customer}\n`,
        "references/contacts.md": `# Contacts of ${customer}, as ${user} sees them\n`,
        "references/deep/plan.md": `# Plan for ${customer}\n`
      }
    })
})

const runbooks = Skill.family({
  path: "services/{service}/{runbook}",
  list: () => Effect.succeed([{ service: "db", runbook: "failover" }, { service: "db", runbook: "backup" }]),
  render: ({ runbook, service }) =>
    Effect.succeed({ "SKILL.md": `---\nname: ${runbook}\ndescription: ${runbook} of ${service}\n---\n` })
})

const statics = [pdfProcessing, Skill.make({ path: "zeta", files: { "SKILL.md": skillMd("zeta") } })]

const Skills = SkillsServer.layer({ skills: [...statics, onboarding, runbooks], pageSize: 2 })

const instanceUris = (user: string) => customers[user]!.map((customer) => `skill://customers/${customer}/onboarding/SKILL.md`)

const allPages = (client: Client) =>
  Effect.gen(function*() {
    const uris: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = yield* client.call("skills/list", cursor === undefined ? {} : { cursor })
      assert.isAtMost(page.skills.length, 2)
      uris.push(...page.skills.map((skill: any) => skill.uri))
      cursor = page.nextCursor
      pages++
    } while (cursor !== undefined && pages < 50)
    return uris
  })

// Every surface of every listed instance, for one client.
const exercise = (client: Client, user: string) =>
  Effect.gen(function*() {
    const listed = yield* allPages(client)
    expect(listed).toEqual([
      "skill://pdf-processing/SKILL.md",
      "skill://zeta/SKILL.md",
      ...instanceUris(user),
      "skill://services/db/failover/SKILL.md",
      "skill://services/db/backup/SKILL.md"
    ])
    for (const customer of customers[user]!) {
      const root = `skill://customers/${customer}/onboarding`
      const got = (yield* client.call("skills/get", { uri: `${root}/SKILL.md` })).skill
      expect(got.frontmatter).toEqual({ name: "onboarding", description: `Onboarding ${customer} for ${user}` })
      expect(got.resources.map((resource: any) => resource.uri)).toEqual([
        `${root}/SKILL.md`,
        `${root}/references/contacts.md`,
        `${root}/references/deep/plan.md`
      ])
      const read = yield* client.call("resources/read", { uri: `${root}/references/contacts.md` })
      expect(read.contents[0].text).toBe(`# Contacts of ${customer}, as ${user} sees them\n`)
      const top = yield* client.call("resources/directory/read", { uri: root })
      expect(top.resources.map((resource: any) => [resource.name, resource.mimeType])).toEqual([
        ["SKILL.md", "text/markdown"],
        ["references", "inode/directory"]
      ])
      const references = yield* client.call("resources/directory/read", { uri: `${root}/references` })
      expect(references.resources.map((resource: any) => resource.uri)).toEqual([
        `${root}/references/contacts.md`,
        `${root}/references/deep`
      ])
    }
    const resources = (yield* client.call("resources/list")).resources.map((resource: any) => resource.uri)
    expect(resources).toEqual(expect.arrayContaining([...instanceUris(user), "skill://services/db/backup/SKILL.md"]))
    // A customer the caller's list does not give still resolves by URI (listing is not access control).
    const other = (yield* client.call("skills/get", { uri: "skill://customers/wayne/onboarding/SKILL.md" })).skill
    expect(other.frontmatter.description).toBe(`Onboarding wayne for ${user}`)
  })

const invalidUris = [
  "skill://customers/../onboarding/SKILL.md",
  "skill://customers/%2E%2E/onboarding/SKILL.md",
  "skill://customers/a%2Fb/onboarding/SKILL.md",
  "skill://customers//onboarding/SKILL.md",
  `skill://customers/${"a".repeat(256)}/onboarding/SKILL.md`,
  "skill://customers/%61cme/onboarding/SKILL.md",
  "skill://services/db/Fail%20Over/SKILL.md"
]

const refusesInvalid = (client: Client) =>
  Effect.gen(function*() {
    const before = renders.length
    for (const uri of invalidUris) {
      const got = yield* client.fail("skills/get", { uri })
      expect(got.code).toBe(-32602)
      expect(got.message).toMatch(/invalid value|no skill/)
      const file = uri.replace(/SKILL\.md$/, "references/contacts.md")
      expect((yield* client.fail("resources/read", { uri: file })).code).toBe(-32602)
      expect((yield* client.fail("resources/directory/read", { uri: uri.replace(/\/SKILL\.md$/, "") })).code).toBe(-32602)
    }
    expect(renders.length).toBe(before)
  })

describe("skill families over HTTP", () => {
  layer(httpServer(Skills))((it) => {
    it.effect("instances are listed across pages, got, read and directory-read (2026-07-28)", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        yield* exercise(withHeaders(modernHttp(url), { "x-user": "ann" }), "ann")
        yield* exercise(withHeaders(modernHttp(url), { "x-user": "bob" }), "bob")
      }))

    it.effect("instances are listed across pages, got, read and directory-read (2025-11-25)", () =>
      Effect.gen(function*() {
        yield* exercise(yield* legacyHttp(yield* ServerUrl, { "x-user": "ann" }), "ann")
      }))

    it.effect("an invalid parameter answers -32602 naming it and reaches no render", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        yield* refusesInvalid(modernHttp(url))
        yield* refusesInvalid(yield* legacyHttp(url))
        const error = yield* modernHttp(url).fail("skills/get", { uri: "skill://customers/../onboarding/SKILL.md" })
        expect(error.message).toContain(`parameter "customer"`)
        expect(error.message).toContain("dot segment")
      }))

    it.effect("a cursor into the families' part is checked like any other", () =>
      Effect.gen(function*() {
        const client = withHeaders(modernHttp(yield* ServerUrl), { "x-user": "ann" })
        const first = yield* client.call("skills/list")
        const second = yield* client.call("skills/list", { cursor: first.nextCursor })
        const text = Buffer.from(second.nextCursor, "base64url").toString("utf8")
        expect(text).toBe(`skills\n\u0000${JSON.stringify(["skill://customers/{customer}/onboarding", null, 2])}`)
        for (const forged of [`skills\n\u0000[1,2`, `skills\n\u0000["x",null,-1]`, `skills\n\u0000["x",3,0]`]) {
          const cursor = Buffer.from(forged, "utf8").toString("base64url")
          expect(yield* client.fail("skills/list", { cursor })).toMatchObject({ code: -32602, message: "Unknown or expired cursor: list again from the start, without a cursor" })
        }
        // A family that is gone: the listing goes on with the next one (keyset, like removed skills).
        const gone = Buffer.from(`skills\n\u0000${JSON.stringify(["skill://a/{gone}", "7", 1])}`, "utf8").toString("base64url")
        expect((yield* client.call("skills/list", { cursor: gone })).skills[0].uri).toBe("skill://customers/acme/onboarding/SKILL.md")
      }))

    it.effect("a URI below an instance that names no file is absent, not a render failure", () =>
      Effect.gen(function*() {
        const client = modernHttp(yield* ServerUrl)
        const root = "skill://customers/acme/onboarding"
        expect((yield* client.fail("resources/read", { uri: `${root}/missing.md` })).code).toBe(-32602)
        expect((yield* client.fail("resources/read", { uri: root })).code).toBe(-32602)
        expect((yield* client.fail("resources/directory/read", { uri: `${root}/SKILL.md` })).code).toBe(-32602)
        expect((yield* client.fail("skills/get", { uri: `${root}/references/contacts.md` })).code).toBe(-32602)
      }))

    it.effect("results about instances are private and carry the digests of the bytes served", () =>
      Effect.gen(function*() {
        const client = withHeaders(modernHttp(yield* ServerUrl), { "x-user": "bob" })
        const got = yield* client.call("skills/get", { uri: "skill://customers/hooli/onboarding/SKILL.md" })
        expect(got.cacheScope).toBe("private")
        const listed = yield* client.call("skills/list")
        expect(listed.cacheScope).toBe("private")
      }))

    it.effect("our SkillsClient verifies every instance for two callers who receive different bytes, on both revisions", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const load = (user: string, protocolVersion: "2026-07-28" | "2025-11-25") =>
          SkillsClient.SkillsClient.use((client) =>
            Effect.gen(function*() {
              const texts: Record<string, string> = {}
              let cursor: string | undefined
              do {
                const page = yield* client.listSkills(cursor === undefined ? undefined : { cursor })
                for (const skill of page.skills) {
                  if (!skill.uri.startsWith("skill://customers/")) continue
                  for (const resource of skill.resources === "dynamic" ? [] : skill.resources) {
                    const file = yield* client.readSkillResource(skill, resource.uri)
                    assert.isTrue(file.verified)
                    texts[resource.uri] = new TextDecoder().decode(file.bytes)
                  }
                }
                cursor = page.nextCursor
              } while (cursor !== undefined)
              return texts
            })
          ).pipe(
            Effect.provide(
              SkillsClient.layerHttp({ url, protocolVersion, headers: { "x-user": user } }).pipe(
                Layer.provide([FetchHttpClient.layer, SkillCache.layerMemory()])
              )
            )
          )
        for (const revision of ["2026-07-28", "2025-11-25"] as const) {
          const ann = yield* load("ann", revision)
          const bob = yield* load("bob", revision)
          const contacts = "skill://customers/acme/onboarding/references/contacts.md"
          expect(ann[contacts]).toBe("# Contacts of acme, as ann sees them\n")
          expect(bob[contacts]).toBe("# Contacts of acme, as bob sees them\n")
          expect(Object.keys(ann).length).toBe(9)
          expect(Object.keys(bob).length).toBe(6)
        }
      }))
  })
})

describe("skill families over stdio", () => {
  layer(stdioServer(Skills))((it) => {
    it.effect("both revisions: listed, got, read, directory-read; invalid parameters refused", () =>
      Effect.gen(function*() {
        const pipe = yield* StdioPipe
        const legacy = yield* legacyStdio(pipe)
        yield* exercise(modernStdio(pipe), "you")
        yield* exercise(legacy, "you")
        yield* refusesInvalid(modernStdio(pipe))
        yield* refusesInvalid(legacy)
      }))
  })
})

let slowStarted = 0
const fragile = Skill.family({
  path: "reports/{report}",
  timeout: "200 millis",
  list: () => Effect.succeed(["daily", "broken", "slow", "invalid", "weekly"].map((report) => ({ report }))),
  render: ({ report }) =>
    report === "broken"
      ? Effect.fail(new Error("the report database is down"))
      : report === "slow"
      ? Effect.andThen(Effect.sync(() => slowStarted++), Effect.never)
      : report === "invalid"
      ? Effect.succeed({ "SKILL.md": "---\nname: not-invalid\ndescription: wrong name\n---\n" })
      : Effect.succeed({ "SKILL.md": `---\nname: ${report}\ndescription: The ${report} report\n---\n` })
})

// The server runs on the real clock, so the time limit passes (the render never ends by itself).
layer(httpServer(SkillsServer.layer({ skills: [fragile] })), { excludeTestServices: true })("render failures", (it) => {
  it.effect("a failing, slow or invalid render answers a clear error for that instance only", () =>
    Effect.gen(function*() {
      const client = modernHttp(yield* ServerUrl)
      const listed = yield* client.call("skills/list")
      expect(listed.skills.map((skill: any) => skill.uri)).toEqual([
        "skill://reports/daily/SKILL.md",
        "skill://reports/weekly/SKILL.md"
      ])
      expect(slowStarted).toBeGreaterThan(0)
      const broken = yield* client.fail("skills/get", { uri: "skill://reports/broken/SKILL.md" })
      expect(broken.code).toBe(-32603)
      expect(broken.message).toBe("the skill skill://reports/broken/SKILL.md could not be rendered: it failed")
      const slow = yield* client.fail("resources/read", { uri: "skill://reports/slow/SKILL.md" })
      expect(slow.message).toContain("did not finish within")
      const invalid = yield* client.fail("skills/get", { uri: "skill://reports/invalid/SKILL.md" })
      expect(invalid.message).toContain("rendered an invalid skill")
      const resources = yield* client.call("resources/list")
      expect(resources.resources.map((resource: any) => resource.uri)).toEqual([
        "skill://reports/daily/SKILL.md",
        "skill://reports/weekly/SKILL.md"
      ])
    }))
})

describe("family registration", () => {
  const refused = (definitions: ReadonlyArray<Skill.Definition>) =>
    Effect.flip(SkillRegistry.make(definitions)).pipe(Effect.map((error) => error.problems.map((problem) => problem.reason).join("\n")))

  it.effect("an invalid template, hint or timeout is a RegistrationError", () =>
    Effect.gen(function*() {
      const render = () => Effect.succeed({})
      expect(yield* refused([Skill.family({ path: "customers/{customer}/{customer}", render })])).toContain("appears twice")
      expect(yield* refused([Skill.family({ path: "customers/onboarding", render })])).toContain("no parameter")
      expect(yield* refused([Skill.family({ path: "a/{b}/c", render, timeout: "0 millis" })])).toContain("timeout")
      expect(yield* refused([Skill.family({ path: "a/{b}/c", render, cacheHint: { ttl: -1 } })])).toContain("ttl")
    }))

  it.effect("a family may not name, enclose or sit inside another skill or family", () =>
    Effect.gen(function*() {
      const render = () => Effect.succeed({})
      const skill = (path: string) => Skill.make({ path, files: { "SKILL.md": skillMd(path.split("/").at(-1)!) } })
      expect(yield* refused([onboarding, skill("customers/acme/onboarding")])).toContain("can name the same skill as")
      expect(yield* refused([onboarding, skill("customers/acme")])).toContain("can sit inside the skill")
      expect(yield* refused([onboarding, skill("customers/acme/onboarding/faq")])).toContain("can enclose the skill")
      expect(yield* refused([onboarding, Skill.family({ path: "customers/{id}/onboarding", render })])).toContain(
        "can name the same skill as the family"
      )
      // Disjoint: a sibling skill and a skill whose segment no parameter value could be.
      const fine = yield* SkillRegistry.make([onboarding, skill("customers/acme/offboarding"), skill("partners/acme/onboarding")])
      assert.strictEqual((yield* fine.snapshot).families.length, 1)
    }))
})

// The caller's services: what the application's own middleware provides reaches `list` and
// `render`, as it reaches a visibility check.
class CurrentUser extends Context.Service<CurrentUser, { readonly name: string }>()("test/CurrentUser") {}

const personal = SkillsServer.family(Skill.family({
  path: "people/{person}",
  list: () =>
    Effect.gen(function*() {
      const user = yield* CurrentUser
      return [{ person: user.name }]
    }),
  render: ({ person }) =>
    Effect.gen(function*() {
      const user = yield* CurrentUser
      return { "SKILL.md": `---\nname: ${person}\ndescription: Rendered for ${user.name}\n---\n` }
    })
}))

const McpAuth = McpServer.middleware<{ provides: CurrentUser }>()((effect, { headers }) =>
  Effect.provideService(effect, CurrentUser, { name: headers["x-user"] ?? "anonymous" })
)
const HttpAuth = HttpRouter.middleware<{ provides: CurrentUser }>()((effect) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* Effect.provideService(effect, CurrentUser, { name: request.headers["x-user"] ?? "anonymous" })
  })
)

// (1) McpServer.middleware provided to the skills layer; the family comes from its own layer.
const SkillsWithMcpAuth = SkillsServer.layer({ skills: [] }).pipe(Layer.provide(McpAuth.layer))
const PeopleWithMcpAuth = Layer.mergeAll(SkillsWithMcpAuth, personal.pipe(Layer.provide([SkillsWithMcpAuth, McpAuth.layer])))

// (2) HttpRouter middleware in front of layerHttp, with a visibility check that reads it too.
const SkillsForHttpAuth = SkillsServer.layer({
  skills: [],
  visibility: () =>
    Effect.gen(function*() {
      const user = yield* CurrentUser
      return (skill: Visibility.SkillInfo) => user.name !== "nobody" || skill.path[0] !== "people"
    })
})
const WithHttpAuth = McpServer.layerHttp({
  name: "people",
  version: "1.0.0",
  path: "/mcp",
  protocols: adapters(),
  registrations: Layer.mergeAll(SkillsForHttpAuth, personal.pipe(Layer.provide(SkillsForHttpAuth)))
}).pipe(Layer.provide(HttpAuth.layer))

const seesItself = (client: Client, name: string) =>
  Effect.gen(function*() {
    const listed = yield* client.call("skills/list")
    expect(listed.skills.map((skill: any) => [skill.uri, skill.frontmatter.description])).toEqual([
      [`skill://people/${name}/SKILL.md`, `Rendered for ${name}`]
    ])
    const got = yield* client.call("skills/get", { uri: "skill://people/zed/SKILL.md" })
    expect(got.skill.frontmatter.description).toBe(`Rendered for ${name}`)
  })

describe("a family's callbacks see the caller's services", () => {
  layer(httpServer(PeopleWithMcpAuth))("McpServer.middleware provided to the skills layer", (it) => {
    it.effect("over HTTP, both revisions", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        yield* seesItself(withHeaders(modernHttp(url), { "x-user": "ann" }), "ann")
        yield* seesItself(yield* legacyHttp(url, { "x-user": "bob" }), "bob")
      }))
  })

  layer(stdioServer(PeopleWithMcpAuth))("McpServer.middleware over stdio", (it) => {
    it.effect("both revisions", () =>
      Effect.gen(function*() {
        const pipe = yield* StdioPipe
        yield* seesItself(modernStdio(pipe), "anonymous")
        yield* seesItself(yield* legacyStdio(pipe), "anonymous")
      }))
  })

  layer(serveApp(WithHttpAuth))("HttpRouter middleware in front of layerHttp", (it) => {
    it.effect("the family and the visibility check read the same service", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        yield* seesItself(withHeaders(modernHttp(url), { "x-user": "cy" }), "cy")
        const nobody = withHeaders(modernHttp(url), { "x-user": "nobody" })
        expect((yield* nobody.call("skills/list")).skills).toEqual([])
        expect((yield* nobody.fail("skills/get", { uri: "skill://people/nobody/SKILL.md" })).code).toBe(-32602)
      }))
  })
})

let circlingCalls = 0
const circling = Skill.family({
  path: "circles/{circle}",
  // Empty pages whose cursors go round: a to b to a...
  list: ({ cursor }) =>
    Effect.sync(() => {
      circlingCalls++
      return { instances: [], nextCursor: cursor === "a" ? "b" : "a" }
    }),
  render: () => Effect.succeed({})
})

layer(httpServer(SkillsServer.layer({ skills: [pdfProcessing, circling] })))("a family whose cursors go round", (it) => {
  it.effect("is asked for at most 1,000 pages by one request, and the listing ends", () =>
    Effect.gen(function*() {
      const listed = yield* modernHttp(yield* ServerUrl).call("skills/list")
      expect(listed.skills.map((skill: any) => skill.uri)).toEqual(["skill://pdf-processing/SKILL.md"])
      expect(listed.nextCursor).toBeUndefined()
      expect(circlingCalls).toBe(1000)
    }))
})
