/**
 * Every method and every error code over real transports: loopback HTTP (raw JSON-RPC with the
 * 2026-07-28 headers and `_meta`, and the 2025-11-25 initialize + session flow) and in-process
 * stdio (NDJSON), on both revisions.
 */
import { assert, describe, layer } from "@effect/vitest"
import type { Vitest } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpServer } from "effect/ai"
import { Skill, SkillsServer } from "../src/index.js"
import { bytesOf, catalogue, dynamicReads, latin1, listedUris, sha256, withBom } from "./support/catalogue.js"
import { invoiceMd, pdfExpected, pdfSkillMd } from "./support/fixtures.js"
import type { Client, Revision } from "./support/wire.js"
import { httpServer, legacyHttp, legacyStdio, modernHttp, modernStdio, ServerUrl, StdioPipe, stdioServer } from "./support/wire.js"

// A resource the user registers with effect itself: it must keep working next to the skills.
const UserResource = McpServer.resource({
  uri: "file:///readme.txt",
  name: "readme",
  mimeType: "text/plain",
  content: Effect.succeed("hello from effect")
})

// A dynamic skill whose generator breaks: a server fault (-32603), never blamed on the client.
const broken = Skill.dynamic({
  path: "broken",
  frontmatter: { name: "broken", description: "Its generator fails" },
  read: (path) => path === "SKILL.md" ? Effect.succeed(undefined) : Effect.die("generator bug"),
  list: Effect.fail("listing bug")
})

const Registrations = Layer.mergeAll(SkillsServer.layer({ skills: [...catalogue, broken] }), UserResource)

type It = Vitest.MethodsNonLive<any>
type GetClient = (revision: Revision) => Effect.Effect<Client, never, any>

const isModern = (client: Client) => client.revision === "2026-07-28"

const assertCacheFields = (client: Client, result: any) => {
  if (isModern(client)) {
    assert.strictEqual(result.resultType, "complete")
    assert.strictEqual(result.ttlMs, 0)
    assert.strictEqual(result.cacheScope, "private")
  } else {
    // spec §7 item 1: none of the 2026-07-28 result fields on 2025-11-25.
    assert.isUndefined(result.resultType)
    assert.isUndefined(result.ttlMs)
    assert.isUndefined(result.cacheScope)
  }
}

const capabilities = (client: Client & { readonly initialize?: any }) =>
  isModern(client)
    ? Effect.map(client.call("server/discover"), (result) => result.capabilities)
    : Effect.succeed(client.initialize.capabilities)

const suite = (it: It, getClient: GetClient) => {
  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    describe(revision, () => {
      it.effect("declares the extension with directoryRead and the resources capability (R81, R83, R84)", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const caps = yield* capabilities(client as any)
          assert.deepStrictEqual(caps.extensions["io.modelcontextprotocol/skills"], { directoryRead: true })
          assert.isDefined(caps.resources)
        }))

      it.effect("skills/list: listed skills by URI, unlisted absent, entries complete (R5, R7, R27)", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const result = yield* client.call("skills/list")
          assert.deepStrictEqual(result.skills.map((skill: any) => skill.uri), listedUris)
          assert.isUndefined(result.nextCursor)
          assertCacheFields(client, result)
          assert.deepStrictEqual(result.skills.find((skill: any) => skill.uri === pdfExpected.uri), pdfExpected)
          const daily = result.skills.find((skill: any) => skill.uri === "skill://reports/daily/SKILL.md")
          assert.strictEqual(daily.resources, "dynamic")
          assert.deepStrictEqual(daily.frontmatter, {
            name: "daily",
            description: "Build today's operations report from live data",
            metadata: { owner: "ops" }
          })
        }))

      it.effect("R10: the enclosing skill lists its nested skill's files; the nested one has its own entry", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const outer = (yield* client.call("skills/get", { uri: "skill://toolbox/SKILL.md" })).skill
          assert.deepStrictEqual(outer.resources.map((r: any) => r.uri), [
            "skill://toolbox/SKILL.md",
            "skill://toolbox/git/SKILL.md",
            "skill://toolbox/git/cheatsheet.md",
            "skill://toolbox/guide.md"
          ])
          const inner = (yield* client.call("skills/get", { uri: "skill://toolbox/git/SKILL.md" })).skill
          assert.deepStrictEqual(inner.resources.map((r: any) => r.uri), [
            "skill://toolbox/git/SKILL.md",
            "skill://toolbox/git/cheatsheet.md"
          ])
          assert.deepStrictEqual(inner.resources[1], outer.resources[2])
        }))

      it.effect("skills/get: the same entry as the listing, and answers for an unlisted skill (R75)", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const result = yield* client.call("skills/get", { uri: "skill://pdf-processing/SKILL.md" })
          assert.deepStrictEqual(result.skill, pdfExpected)
          assert.isUndefined(result.nextCursor)
          assertCacheFields(client, result)
          const unlisted = yield* client.call("skills/get", { uri: "skill://secret/hidden-gem/SKILL.md" })
          assert.strictEqual(unlisted.skill.frontmatter.name, "hidden-gem")
        }))

      it.effect("skills/get: -32602 naming the URI for an unknown skill and for a non-SKILL.md URI", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const unknown = yield* client.fail("skills/get", { uri: "skill://acme/billing/chargebacks/SKILL.md" })
          assert.strictEqual(unknown.code, -32602)
          assert.include(unknown.message, "skill://acme/billing/chargebacks/SKILL.md")
          const file = yield* client.fail("skills/get", { uri: "skill://pdf-processing/templates/invoice.md" })
          assert.strictEqual(file.code, -32602)
          assert.include(file.message, "skill://pdf-processing/templates/invoice.md")
          const missing = yield* client.fail("skills/get", {})
          assert.strictEqual(missing.code, -32602)
        }))

      it.effect("resources/read: spec §8 bytes, digests and sizes; text/markdown for SKILL.md; blob for PNG (R25, R64)", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          for (const resource of pdfExpected.resources) {
            const result = yield* client.call("resources/read", { uri: resource.uri })
            assertCacheFields(client, result)
            assert.strictEqual(result.contents.length, 1)
            const content = result.contents[0]
            assert.strictEqual(content.uri, resource.uri)
            const bytes = bytesOf(content)
            assert.strictEqual(bytes.byteLength, resource.size)
            assert.strictEqual(sha256(bytes), resource.digest)
          }
          const md = (yield* client.call("resources/read", { uri: "skill://pdf-processing/SKILL.md" })).contents[0]
          assert.deepStrictEqual(md, { uri: "skill://pdf-processing/SKILL.md", mimeType: "text/markdown", text: pdfSkillMd })
          const invoice = (yield* client.call("resources/read", { uri: "skill://pdf-processing/templates/invoice.md" })).contents[0]
          assert.strictEqual(invoice.text, invoiceMd)
          const logo = (yield* client.call("resources/read", { uri: "skill://pdf-processing/assets/logo.png" })).contents[0]
          assert.deepStrictEqual(logo, { uri: "skill://pdf-processing/assets/logo.png", mimeType: "image/png", blob: "iVBORw0KGgo=" })
        }))

      it.effect("resources/read: text only when bytes round-trip UTF-8 exactly (Latin-1 blob, BOM kept)", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const entry = (yield* client.call("skills/get", { uri: "skill://acme/billing/refunds/SKILL.md" })).skill
          const latin = (yield* client.call("resources/read", { uri: "skill://acme/billing/refunds/data/latin1.txt" })).contents[0]
          assert.isDefined(latin.blob)
          assert.deepStrictEqual(bytesOf(latin), latin1)
          const bom = (yield* client.call("resources/read", { uri: "skill://acme/billing/refunds/data/bom.txt" })).contents[0]
          assert.isDefined(bom.text)
          assert.deepStrictEqual(bytesOf(bom), withBom)
          for (const resource of entry.resources) {
            const content = (yield* client.call("resources/read", { uri: resource.uri })).contents[0]
            assert.strictEqual(sha256(bytesOf(content)), resource.digest, resource.uri)
          }
        }))

      it.effect("resources/read: unlisted and nested files are readable; dynamic files are produced per request", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const notes = (yield* client.call("resources/read", { uri: "skill://secret/hidden-gem/notes.md" })).contents[0]
          assert.strictEqual(notes.text, "unlisted\n")
          const nested = (yield* client.call("resources/read", { uri: "skill://toolbox/git/cheatsheet.md" })).contents[0]
          assert.strictEqual(nested.text, "git status\n")
          const before = dynamicReads.length
          const data = (yield* client.call("resources/read", { uri: "skill://reports/daily/data/today.json" })).contents[0]
          assert.strictEqual(data.mimeType, "application/json")
          assert.strictEqual(dynamicReads.length, before + 1)
          const md = (yield* client.call("resources/read", { uri: "skill://reports/daily/SKILL.md" })).contents[0]
          assert.strictEqual(md.mimeType, "text/markdown")
          assert.include(md.text, "name: daily")
        }))

      it.effect("resources/read: -32602 with data.uri for unknown skill files, on both revisions (R65, R77)", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          for (
            const uri of [
              "skill://pdf-processing/templates/credit-note.md",
              "skill://nowhere/SKILL.md",
              "skill://reports/daily/missing.md"
            ]
          ) {
            const error = yield* client.fail("resources/read", { uri })
            assert.strictEqual(error.code, -32602, uri)
            assert.deepStrictEqual(error.data, { uri })
          }
        }))

      it.effect("a failing dynamic skill is a server fault: -32603 (R78), nothing else breaks", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const read = yield* client.fail("resources/read", { uri: "skill://broken/data.md" })
          assert.deepStrictEqual([read.code, read.message], [-32603, "Internal error"])
          const dir = yield* client.fail("resources/directory/read", { uri: "skill://broken" })
          assert.strictEqual(dir.code, -32603)
          const absent = yield* client.fail("resources/read", { uri: "skill://broken/SKILL.md" })
          assert.strictEqual(absent.code, -32602)
        }))

      it.effect("resources/read and resources/list: the user's own effect resources keep working", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const readme = (yield* client.call("resources/read", { uri: "file:///readme.txt" })).contents[0]
          assert.strictEqual(readme.text, "hello from effect")
          const list = yield* client.call("resources/list")
          assert.isTrue(list.resources.some((resource: any) => resource.uri === "file:///readme.txt"))
        }))

      it.effect("resources/list: each listed SKILL.md with name, description, text/markdown (R25); no unlisted", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const list = yield* client.call("resources/list")
          const skills = list.resources.filter((resource: any) => resource.uri.startsWith("skill://"))
          assert.deepStrictEqual(skills.map((resource: any) => resource.uri), listedUris)
          assert.deepStrictEqual(skills.find((resource: any) => resource.uri === pdfExpected.uri), {
            uri: "skill://pdf-processing/SKILL.md",
            name: "pdf-processing",
            description: "Extract, fill, and assemble PDF documents",
            mimeType: "text/markdown",
            size: 149
          })
          assert.isFalse(list.resources.some((resource: any) => resource.uri.startsWith("urn:mcp-skills")))
          if (isModern(client)) {
            assert.strictEqual(list.resultType, "complete")
            assert.strictEqual(list.cacheScope, "private")
          }
        }))

      it.effect("resources/directory/read: direct children, directories as inode/directory without slash (R76)", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          const root = yield* client.call("resources/directory/read", { uri: "skill://pdf-processing" })
          assert.deepStrictEqual(root.resources, [
            { uri: "skill://pdf-processing/SKILL.md", name: "SKILL.md", mimeType: "text/markdown", size: 149 },
            { uri: "skill://pdf-processing/assets", name: "assets", mimeType: "inode/directory" },
            { uri: "skill://pdf-processing/templates", name: "templates", mimeType: "inode/directory" }
          ])
          assert.isUndefined(root.nextCursor)
          if (isModern(client)) assert.strictEqual(root.resultType, "complete")
          else assert.isUndefined(root.resultType)
          const sub = yield* client.call("resources/directory/read", { uri: "skill://acme/billing/refunds/references" })
          assert.deepStrictEqual(sub.resources.map((r: any) => [r.name, r.mimeType]), [
            ["deep", "inode/directory"],
            ["policy.md", "text/markdown"]
          ])
          const outer = yield* client.call("resources/directory/read", { uri: "skill://toolbox" })
          assert.deepStrictEqual(outer.resources.map((r: any) => r.uri), [
            "skill://toolbox/SKILL.md",
            "skill://toolbox/git",
            "skill://toolbox/guide.md"
          ])
          const dynamic = yield* client.call("resources/directory/read", { uri: "skill://reports/daily" })
          assert.deepStrictEqual(dynamic.resources.map((r: any) => [r.name, r.mimeType]), [
            ["SKILL.md", "text/markdown"],
            ["data", "inode/directory"]
          ])
          const dynamicSub = yield* client.call("resources/directory/read", { uri: "skill://reports/daily/data" })
          assert.deepStrictEqual(dynamicSub.resources.map((r: any) => r.uri), ["skill://reports/daily/data/today.json"])
        }))

      it.effect("resources/directory/read: -32602 for a file, a missing path and a prefix above skills (R76)", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          for (
            const uri of [
              "skill://pdf-processing/SKILL.md",
              "skill://pdf-processing/nope",
              "skill://acme/billing",
              "skill://reports/daily/data/today.json"
            ]
          ) {
            const error = yield* client.fail("resources/directory/read", { uri })
            assert.strictEqual(error.code, -32602, uri)
            assert.include(error.message, uri)
          }
        }))

      it.effect("cursors: garbled, foreign and cross-listing cursors get -32602 Unknown or expired cursor", () =>
        Effect.gen(function*() {
          const client = yield* getClient(revision)
          for (const cursor of ["opaque-page-2", "", "%%%", Buffer.from("dir skill://x\nskill://y").toString("base64url")]) {
            const list = yield* client.fail("skills/list", { cursor })
            assert.deepStrictEqual([list.code, list.message], [-32602, "Unknown or expired cursor: list again from the start, without a cursor"])
            const dir = yield* client.fail("resources/directory/read", { uri: "skill://pdf-processing", cursor })
            assert.deepStrictEqual([dir.code, dir.message], [-32602, "Unknown or expired cursor: list again from the start, without a cursor"])
          }
        }))
    })
  }
}

describe("wire", () => {
  layer(httpServer(Registrations))("http", (it) => {
    suite(it, (revision) =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        return revision === "2026-07-28" ? modernHttp(url) : yield* legacyHttp(url)
      }))

    it.effect("2026-07-28 HTTP: routing headers are required; an unknown method is HTTP 404 / -32601", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const client = modernHttp(url)
        const wrongMethod = yield* client.send("skills/list", {}, { "mcp-method": "skills/get" })
        assert.strictEqual(wrongMethod.status, 400)
        assert.strictEqual(wrongMethod.body.error.code, -32020)
        const wrongName = yield* client.send("resources/read", { uri: "skill://pdf-processing/SKILL.md" }, {
          "mcp-name": "skill://other/SKILL.md"
        })
        assert.strictEqual(wrongName.status, 400)
        const unknown = yield* client.send("skills/activate", {})
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.body.error.code, -32601)
      }))
  })

  layer(stdioServer(Registrations))("stdio 2026-07-28", (it) => {
    suite(it, () => Effect.gen(function*() {
      return modernStdio(yield* StdioPipe)
    }))
  })

  let legacy: Client | undefined
  layer(stdioServer(Registrations))("stdio 2025-11-25", (it) => {
    const getLegacy = Effect.gen(function*() {
      if (legacy === undefined) legacy = yield* legacyStdio(yield* StdioPipe)
      return legacy
    })
    suite(it, () => getLegacy)

    it.effect("params: skills/list may omit them; malformed params of every method get -32602", () =>
      Effect.gen(function*() {
        yield* getLegacy
        const pipe = yield* StdioPipe
        for (const params of [undefined, null]) {
          const response = yield* pipe.request(params === undefined ? { method: "skills/list" } : { method: "skills/list", params })
          assert.strictEqual(response.body.result.skills.length, listedUris.length)
        }
        for (
          const [method, params] of [
            ["skills/list", { cursor: 5 }],
            ["skills/get", {}],
            ["skills/get", { uri: 5 }],
            ["skills/get", []],
            ["resources/read", { uri: null }],
            ["resources/directory/read", {}],
            ["resources/directory/read", { uri: "skill://pdf-processing", cursor: {} }]
          ] as const
        ) {
          const response = yield* pipe.request({ method, params })
          assert.strictEqual(response.body.error?.code, -32602, `${method} ${JSON.stringify(params)}`)
        }
      }))
  })
})
