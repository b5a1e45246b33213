/**
 * The full example: docs/visibility-and-auth.md "A complete server and client" is
 * `examples/server-and-client.ts` verbatim (asserted here), and that very module's server and client
 * run over loopback HTTP: code skills and a folder in one registry, an `HttpRouter` auth middleware
 * whose service feeds `visibility`, and `SkillsClient.layerHttp` with a bearer header.
 */
import type { SkillsClient } from "@mcp-skills/client"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { exampleUris, examples, repoRoot } from "./support/cli-server.js"
import { deepRequest } from "./support/session.js"
import { errorOf, upload } from "./support/upload.js"
import { legacyHttp, modernHttp, serveApp, ServerUrl, withHeaders } from "./support/wire.js"

const examplePath = Path.join(repoRoot, "examples/server-and-client.ts")

/** What the test uses of the example module. */
interface Example {
  /** An HTTP app (its requirements are the router's, met by `serveApp`). */
  readonly Server: Layer.Layer<any, unknown, any>
  readonly Client: (url: string, token?: string) => Layer.Layer<SkillsClient.SkillsClient, unknown>
  readonly listAndLoad: Effect.Effect<ReadonlyArray<{ readonly uri: string; readonly body: string }>, unknown, SkillsClient.SkillsClient>
}

// Loaded by path: a static import would pull a file outside this project's rootDir into `tsc -b`.
// The example is type-checked as the guide's block it equals (test/codeBlocks.test.ts).
const example: Example = await import(/* @vite-ignore */ pathToFileURL(examplePath).href)

const token = "token-of-ada"
const oncallUri = "skill://internal/oncall/SKILL.md"
const everyUri = [...exampleUris, oncallUri].sort()
const publicUris = exampleUris.filter((uri) => !uri.startsWith("skill://acme/"))

describe("docs/visibility-and-auth.md: A complete server and client", () => {
  it("the guide's block is examples/server-and-client.ts, verbatim", () => {
    const guide = Fs.readFileSync(Path.join(repoRoot, "docs", "visibility-and-auth.md"), "utf8")
    const section = guide.slice(guide.indexOf("\n## A complete server and client\n"))
    assert.isAbove(guide.indexOf("\n## A complete server and client\n"), 0, "the guide has the section")
    const block = /^```ts\n([\s\S]*?)^```$/m.exec(section)
    assert.isNotNull(block, "the section has a ts block")
    assert.strictEqual(block![1], Fs.readFileSync(examplePath, "utf8"))
  })

  layer(serveApp(example.Server), { excludeTestServices: true })("served over HTTP", (it) => {
    const loadAs = (tokenSent?: string) =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        return yield* Effect.provide(example.listAndLoad, example.Client(url, tokenSent))
      })

    it.effect("with the token: the code skill and every skill of the folder, each SKILL.md verified", () =>
      Effect.gen(function*() {
        const loaded = yield* loadAs(token)
        assert.deepStrictEqual(loaded.map(({ uri }) => uri).sort(), everyUri)
        for (const { body, uri } of loaded) {
          if (uri === oncallUri) {
            assert.strictEqual(body, "# On call\n")
            continue
          }
          const onDisk = Fs.readFileSync(Path.join(examples, uri.slice("skill://".length)), "utf8")
          assert.isAbove(body.trim().length, 0, uri)
          assert.isTrue(onDisk.endsWith(body), `${uri}: the body is the file's`)
        }
      }))

    it.effect("without a header: only the skills visibility allows anonymous callers", () =>
      Effect.gen(function*() {
        const loaded = yield* loadAs(undefined)
        assert.deepStrictEqual(loaded.map(({ uri }) => uri).sort(), publicUris)
      }))

    it.effect("a token nobody issued: the middleware answers 401 before the server sees it", () =>
      Effect.gen(function*() {
        // Names every object has are no tokens either.
        for (const forged of ["forged", "constructor", "__proto__", "toString", ""]) {
          const refused = yield* Effect.flip(loadAs(forged))
          assert.strictEqual((refused as { _tag: string })._tag, "McpClientError", forged)
          assert.deepInclude((refused as { reason: unknown }).reason, { _tag: "HttpError", status: 401 }, forged)
        }
      }))

    it.effect("with no extra line, a 100 MB body gets 413 while other clients keep being answered", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const chunk = new Uint8Array(1024 * 1024).fill(0x20)
        const before = process.memoryUsage()
        const [chunked, declared, loaded] = yield* Effect.all([
          upload(url, { chunk, count: 100 }),
          upload(url, { chunk, count: 100, declareLength: true }),
          Effect.forEach(Array.from({ length: 6 }), () => loadAs(token), { concurrency: 2 })
        ], { concurrency: "unbounded" })
        for (const raw of [chunked, declared]) {
          assert.strictEqual(raw.status, 413)
          const error = errorOf(raw)
          assert.strictEqual(error.code, -32600)
          assert.strictEqual(error.data.maxBodySize, 4 * 1024 * 1024)
          assert.isBelow(raw.sent, 100 * 1024 * 1024)
        }
        for (const skills of loaded) assert.deepStrictEqual(skills.map(({ uri }) => uri).sort(), everyUri)
        // The server held at most the limit of each body, never the 100 MB.
        const after = process.memoryUsage()
        assert.isBelow(after.arrayBuffers + after.heapUsed - before.arrayBuffers - before.heapUsed, 64 * 1024 * 1024)
      }))

    it.effect("a message nested 5,000 levels deep is answered -32600 with its id", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const raw = yield* upload(url, {
          headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "skills/list" },
          chunk: new TextEncoder().encode(deepRequest("2026-07-28", "deep", 5_000)),
          count: 1,
          declareLength: true
        })
        assert.strictEqual(raw.status, 200)
        assert.strictEqual(errorOf(raw, "deep").code, -32600)
      }))

    it.effect("on both revisions, hidden skills look absent to an anonymous caller on every surface asked", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const authorized = { authorization: `Bearer ${token}` }
        const pairs = [
          [modernHttp(url), withHeaders(modernHttp(url), authorized)],
          [yield* legacyHttp(url), yield* legacyHttp(url, authorized)]
        ] as const
        for (const [anonymous, ada] of pairs) {
          const listed = (result: { skills: Array<{ uri: string }> }) => result.skills.map(({ uri }) => uri).sort()
          assert.deepStrictEqual(listed(yield* anonymous.call("skills/list")), publicUris, anonymous.revision)
          assert.deepStrictEqual(listed(yield* ada.call("skills/list")), everyUri, ada.revision)
          const hidden = ["skill://internal/oncall/references/rota.md", "skill://acme/billing/refunds/references/POLICY.md"]
          for (const uri of hidden) {
            const refused = yield* anonymous.fail("resources/read", { uri })
            assert.strictEqual(refused.code, -32602, `${anonymous.revision} ${uri}`)
            const read = yield* ada.call("resources/read", { uri })
            assert.strictEqual(read.contents[0].uri, uri)
          }
          assert.strictEqual((yield* anonymous.fail("skills/get", { uri: oncallUri })).code, -32602)
          assert.strictEqual((yield* ada.call("skills/get", { uri: oncallUri })).skill.uri, oncallUri)
          assert.strictEqual((yield* ada.call("resources/read", { uri: "skill://internal/oncall/references/rota.md" })).contents[0].text, "# Rota\n\nWeek 1: ada\n")
        }
      }))
  })
})
