/**
 * A message nested deeper than the bound (128 levels of arrays and objects) is answered `-32600`
 * with its id over HTTP, on both revisions, by the skills layer's own admission (no extra layer)
 * and by `HttpAdmission` (the CLI), rather than overflowing the stack into an empty 500; at the
 * bound it is served. stdio: StdioFraming.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SkillsServer } from "../src/index.js"
import { examples, httpServer as cliServer } from "./support/cli-server.js"
import { catalogue } from "./support/catalogue.js"
import { deepRequest, open } from "./support/session.js"
import { errorOf, upload } from "./support/upload.js"
import { httpServer, modernHttp, type Revision, ServerUrl } from "./support/wire.js"

const MaxDepth = 128

const sendDeep = (url: string, revision: Revision, id: string | number, depth: number) =>
  Effect.gen(function*() {
    const headers = revision === "2026-07-28"
      ? { "mcp-protocol-version": "2026-07-28", "mcp-method": "skills/list" }
      : (yield* Effect.promise(() => open(url))).headers
    return yield* upload(url, { headers, chunk: new TextEncoder().encode(deepRequest(revision, id, depth)), count: 1, declareLength: true })
  })

const crossesTheBound = (url: string) =>
  Effect.gen(function*() {
    // The first request teaches the fast route the endpoint; deep requests then reach it.
    assert.isArray((yield* modernHttp(url).call("skills/list")).skills)
    for (const revision of ["2026-07-28", "2025-11-25"] as const) {
      const at = yield* sendDeep(url, revision, `${revision}-at`, MaxDepth)
      assert.strictEqual(at.status, 200, at.text)
      assert.isArray(JSON.parse(at.text.split("\n").find((line) => line.startsWith("data:"))?.slice(5) ?? at.text).result.skills)
      for (const depth of [MaxDepth + 1, 5_000]) {
        const id = `${revision}-${depth}`
        const deep = yield* sendDeep(url, revision, id, depth)
        assert.strictEqual(deep.status, 200, `${id}: ${deep.text}`)
        assert.deepStrictEqual(errorOf(deep, id), {
          code: -32600,
          message: `Invalid Request: nested deeper than ${MaxDepth} levels`,
          data: { maxDepth: MaxDepth }
        })
      }
    }
    assert.isArray((yield* modernHttp(url).call("skills/list")).skills)
  })

describe("messages nested deeper than 128 levels, over HTTP", () => {
  it.live("SkillsServer.layer alone: answered -32600 with the id on both revisions", () =>
    Effect.gen(function*() {
      const url = Context.get(yield* Layer.build(httpServer(SkillsServer.layer({ skills: catalogue }))), ServerUrl)
      yield* crossesTheBound(url)
    }).pipe(Effect.scoped))

  it.live("serve (HttpAdmission): answered -32600 with the id on both revisions", () =>
    Effect.gen(function*() {
      const { url } = yield* cliServer(examples)
      yield* crossesTheBound(url)
    }).pipe(Effect.scoped), 30_000)
})
