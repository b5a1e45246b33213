/**
 * The catalogue as tools (`tools: true`) over real transports, loopback HTTP and in-process stdio,
 * on both revisions: the tools are listed with descriptions and read-only hints, answer with the
 * skills' URIs, page and bound their answers, and make the one visibility decision of the method
 * they stand for, so a hidden skill is as absent through them as through `skills/list`; and the
 * official SDK client uses them as a host without the extension would.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Client as SdkClient, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import type { Vitest } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Skill, SkillsServer, ToolLimits, Visibility } from "../src/index.js"
import { catalogue } from "./support/catalogue.js"
import { pdfExpected } from "./support/fixtures.js"
import type { Client, Revision } from "./support/wire.js"
import { httpServer, legacyHttp, legacyStdio, modernHttp, modernStdio, ServerUrl, StdioPipe, stdioServer, withHeaders } from "./support/wire.js"

const long = "x".repeat(ToolLimits.MaxFileChars + 10)
const skills = [
  ...catalogue,
  Skill.make({
    path: "big/long-notes",
    files: {
      "SKILL.md": `---\nname: long-notes\ndescription: A skill with a long file\n---\n`,
      "long.txt": long,
      "blob.bin": new Uint8Array(ToolLimits.MaxFileChars + 3).fill(0xff)
    }
  }),
  Skill.make({
    path: "admin/payroll",
    files: { "SKILL.md": `---\nname: payroll\ndescription: Run the payroll of the month\n---\n`, "rates.md": "secret\n" }
  })
]

// Anonymous callers do not see admin/; an `x-user: root` sees everything.
const adminHidden: Visibility.Check<never, never> = (request) =>
  Effect.succeed(request.headers["x-user"] === "root" || ((skill: Visibility.SkillInfo) => skill.path[0] !== "admin"))

const Registrations = SkillsServer.layer({ skills, tools: true, visibility: adminHidden })

type It = Vitest.MethodsNonLive<any>
type GetClient = (revision: Revision) => Effect.Effect<Client, never, any>

const tool = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.map(client.call("tools/call", { name, arguments: args }), (result) => result as {
    readonly isError?: boolean
    readonly structuredContent?: any
    readonly content: ReadonlyArray<{ readonly text?: string }>
  })

const ok = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.flatMap(tool(client, name, args), (result) =>
    result.isError === true
      ? Effect.die(new Error(`${name} failed: ${result.content[0]?.text}`))
      : Effect.succeed(result.structuredContent))

const refused = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.flatMap(tool(client, name, args), (result) =>
    result.isError === true
      ? Effect.succeed(result.content[0]?.text ?? "")
      : Effect.die(new Error(`${name} unexpectedly answered: ${JSON.stringify(result.structuredContent)}`)))

const suite = (it: It, getClient: GetClient) => {
  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    describe(revision, () => {
      it.effect("tools/list: the three tools, read-only, each telling when to use it", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const { tools } = yield* client.call("tools/list")
          assert.deepStrictEqual(tools.map((t: any) => t.name).sort(), ["load_skill", "read_skill_file", "search_skills"])
          for (const t of tools) {
            assert.isTrue(t.annotations.readOnlyHint, t.name)
            assert.isFalse(t.annotations.destructiveHint, t.name)
            assert.match(t.description, /skill/)
          }
          const search = tools.find((t: any) => t.name === "search_skills")
          assert.include(search.description, "load_skill")
          assert.deepStrictEqual(search.inputSchema.required, ["query"])
        }))

      it.effect("search, load and read: the same URIs skills/get and resources/read serve", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const found = yield* ok(client, "search_skills", { query: "pdf" })
          assert.strictEqual(found.skills[0].uri, pdfExpected.uri)
          assert.deepStrictEqual(Object.keys(found.skills[0]).sort(), ["description", "name", "uri"])
          const loaded = yield* ok(client, "load_skill", { uri: pdfExpected.uri })
          assert.strictEqual(loaded.name, "pdf-processing")
          const md = (yield* client.call("resources/read", { uri: pdfExpected.uri })).contents[0].text
          assert.strictEqual(loaded.text, md)
          assert.deepStrictEqual(
            loaded.files.map((file: any) => file.uri),
            pdfExpected.resources.map((resource) => resource.uri).filter((uri) => uri !== pdfExpected.uri).sort()
          )
          const invoice = loaded.files.find((file: any) => file.path === "templates/invoice.md")
          const byUri = yield* ok(client, "read_skill_file", { uri: invoice.uri })
          const byPath = yield* ok(client, "read_skill_file", { skill: pdfExpected.uri, path: "templates/invoice.md" })
          assert.deepStrictEqual(byPath, byUri)
          assert.strictEqual(byUri.text, (yield* client.call("resources/read", { uri: invoice.uri })).contents[0].text)
          assert.strictEqual(byUri.size, invoice.size)
          const logo = yield* ok(client, "read_skill_file", { skill: pdfExpected.uri, path: "assets/logo.png" })
          assert.strictEqual(logo.mimeType, "image/png")
          assert.isUndefined(logo.text)
          assert.strictEqual(logo.blob, (yield* client.call("resources/read", { uri: logo.uri })).contents[0].blob)
        }))

      it.effect("a dynamic skill loads, its files read on request", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const daily = yield* ok(client, "load_skill", { uri: "skill://reports/daily/SKILL.md" })
          assert.isTrue(daily.dynamic)
          assert.deepStrictEqual(daily.files, [])
          const today = yield* ok(client, "read_skill_file", { skill: "skill://reports/daily/SKILL.md", path: "data/today.json" })
          assert.match(today.text, /^\{"day":\d+\}$/)
        }))

      it.effect("a hidden skill is as absent through the tools as through skills/list", () =>
        Effect.gen(function*() {
          const anonymous = yield* getClient(revision)
          const root = withHeaders(anonymous, { "x-user": "root" })
          const payroll = "skill://admin/payroll/SKILL.md"
          const absent = "skill://admin/absent/SKILL.md"
          const listed = (client: Client) => Effect.map(client.call("skills/list"), (r) => r.skills.map((s: any) => s.uri))
          if (anonymous.transport === "http") {
            assert.include(yield* listed(root), payroll)
            assert.include((yield* ok(root, "search_skills", { query: "payroll" })).skills.map((s: any) => s.uri), payroll)
            assert.strictEqual((yield* ok(root, "load_skill", { uri: payroll })).name, "payroll")
          }
          assert.notInclude(yield* listed(anonymous), payroll)
          assert.deepStrictEqual((yield* ok(anonymous, "search_skills", { query: "payroll" })).skills, [])
          assert.notInclude(
            (yield* ok(anonymous, "search_skills", { query: "month" })).skills.map((s: any) => s.uri),
            payroll
          )
          // Hidden and absent get the same words, as skills/get gives them.
          assert.strictEqual(
            yield* refused(anonymous, "load_skill", { uri: payroll }),
            (yield* refused(anonymous, "load_skill", { uri: absent })).replace(absent, payroll)
          )
          assert.include(yield* refused(anonymous, "load_skill", { uri: payroll }), "no skill is served at")
          const hiddenFile = yield* refused(anonymous, "read_skill_file", { skill: payroll, path: "rates.md" })
          const absentFile = yield* refused(anonymous, "read_skill_file", { skill: absent, path: "rates.md" })
          assert.strictEqual(hiddenFile, absentFile.replace("absent", "payroll"))
        }))

      it.effect("bounds: a long file comes in parts by offset; files and queries past their bounds are refused", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const skill = "skill://big/long-notes/SKILL.md"
          const first = yield* ok(client, "read_skill_file", { skill, path: "long.txt" })
          assert.strictEqual(first.text.length, ToolLimits.MaxFileChars)
          assert.strictEqual(first.size, long.length)
          assert.strictEqual(first.nextOffset, ToolLimits.MaxFileChars)
          const rest = yield* ok(client, "read_skill_file", { skill, path: "long.txt", offset: first.nextOffset })
          assert.strictEqual(first.text + rest.text, long)
          assert.isUndefined(rest.nextOffset)
          const blob = yield* ok(client, "read_skill_file", { skill, path: "blob.bin" })
          assert.strictEqual(Buffer.from(blob.blob, "base64").byteLength, ToolLimits.MaxFileChars)
          const tail = yield* ok(client, "read_skill_file", { skill, path: "blob.bin", offset: blob.nextOffset })
          assert.strictEqual(Buffer.from(tail.blob, "base64").byteLength, 3)
          assert.include(yield* refused(client, "read_skill_file", { skill, path: "long.txt", offset: long.length }), "past the end")
          assert.include(yield* refused(client, "read_skill_file", { skill, path: "../escape.md" }), "..")
          assert.include(yield* refused(client, "read_skill_file", { uri: `${skill}x`, skill }), "not both")
          // A query past its bound is refused by the tool's schema, before any search.
          const tooLong = yield* client.send("tools/call", { name: "search_skills", arguments: { query: "q".repeat(ToolLimits.MaxQueryLength + 1) } })
          assert.isTrue(tooLong.body.error !== undefined || tooLong.body.result.isError === true)
          assert.include(yield* refused(client, "search_skills", { query: "pdf", cursor: "garbage" }), "Unknown or expired cursor")
        }))

      it.effect("search pages: every hit once, in rank order, a cursor of another query refused", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const seen: Array<string> = []
          let cursor: string | undefined
          do {
            const page = yield* ok(client, "search_skills", { query: "skill", ...(cursor === undefined ? {} : { cursor }) })
            seen.push(...page.skills.map((s: any) => s.uri))
            cursor = page.nextCursor
          } while (cursor !== undefined)
          assert.strictEqual(new Set(seen).size, seen.length)
          const first = yield* ok(client, "search_skills", { query: "a" })
          if (first.nextCursor !== undefined) {
            assert.include(yield* refused(client, "search_skills", { query: "b", cursor: first.nextCursor }), "Unknown or expired cursor")
          }
        }))
    })
  }
}

const clientOverHttp = (revision: Revision) =>
  Effect.gen(function*() {
    const url = yield* ServerUrl
    return revision === "2026-07-28" ? modernHttp(url) : yield* legacyHttp(url)
  })

const clientOverStdio = (revision: Revision) =>
  Effect.gen(function*() {
    const pipe = yield* StdioPipe
    return revision === "2026-07-28" ? modernStdio(pipe) : yield* legacyStdio(pipe)
  })

layer(httpServer(Registrations))("skills tools over loopback HTTP", (it) => suite(it, clientOverHttp))
layer(stdioServer(Registrations))("skills tools over stdio", (it) => suite(it, clientOverStdio))

// The official SDK client (`@modelcontextprotocol/client`), as a host without the extension uses
// the server: it lists the tools, searches, loads a skill and reads one of its files.
layer(httpServer(Registrations))("skills tools with the official SDK client", (it) => {
  for (const mode of ["legacy", { pin: "2026-07-28" }] as const) {
    it.effect(`${mode === "legacy" ? "2025-11-25" : "2026-07-28"}: lists the tools and loads a skill through them`, () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const client = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new SdkClient({ name: "tools-interop", version: "0.0.0" }, { versionNegotiation: { mode } })
            await client.connect(new StreamableHTTPClientTransport(new URL(url)))
            return client
          }),
          (client) => Effect.promise(() => client.close())
        )
        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(tools.map((t) => t.name).sort(), ["load_skill", "read_skill_file", "search_skills"])
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.map(Effect.promise(() => client.callTool({ name, arguments: args })), (result) => {
            assert.notStrictEqual(result.isError, true, JSON.stringify(result.content))
            return result.structuredContent as any
          })
        const found = yield* call("search_skills", { query: "pdf procesing" })
        assert.strictEqual(found.skills[0].uri, pdfExpected.uri)
        const loaded = yield* call("load_skill", { uri: found.skills[0].uri })
        assert.include(loaded.text, "name: pdf-processing")
        const file = yield* call("read_skill_file", { uri: loaded.files[0].uri })
        assert.strictEqual(file.uri, loaded.files[0].uri)
      }))
  }
})

// A generated catalogue of 50,000 skills (in memory): the expected skill is the first hit over the
// wire, its name mistyped, and the index is built once for the snapshot, not per request.
const topics = ["billing", "invoice", "report", "deploy", "review", "audit", "schema", "ledger", "forecast", "triage"]
const large = [
  ...Array.from({ length: 50_000 }, (_, i) =>
    Skill.make({
      path: `${topics[i % 10]}/${topics[(i * 7) % 10]}-${topics[(i * 3) % 10]}-${i}`,
      files: { "SKILL.md": `---\nname: ${topics[(i * 7) % 10]}-${topics[(i * 3) % 10]}-${i}\ndescription: ${topics[(i * 11) % 10]} work ${i}\n---\n` }
    })),
  Skill.make({
    path: "finance/quarterly-reconciliation",
    files: { "SKILL.md": "---\nname: quarterly-reconciliation\ndescription: Reconcile the ledger at quarter end\n---\n" }
  })
]

layer(httpServer(SkillsServer.layer({ skills: large, tools: true })), { timeout: 60_000 })("skills tools over 50,000 skills", (it) => {
  it.effect("search_skills finds the expected skill first, mistyped, in milliseconds once the index is built", () =>
    Effect.gen(function*() {
      const client = modernHttp(yield* ServerUrl)
      const first = yield* ok(client, "search_skills", { query: "quartely reconcilation" })
      assert.strictEqual(first.skills[0].uri, "skill://finance/quarterly-reconciliation/SKILL.md")
      const start = performance.now()
      const again = yield* ok(client, "search_skills", { query: "ledger quarter" })
      assert.isBelow(performance.now() - start, 1000)
      assert.strictEqual(again.skills[0].uri, "skill://finance/quarterly-reconciliation/SKILL.md")
      const page = yield* ok(client, "search_skills", { query: "invoice" })
      assert.strictEqual(page.skills.length, ToolLimits.SearchPageSize)
      assert.isDefined(page.nextCursor)
    }), 60_000)
})
