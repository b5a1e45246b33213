/**
 * Fuzz: arbitrary params for `skills/list`, `skills/get`, `resources/directory/read` and
 * `resources/read` over loopback HTTP on both revisions: arbitrary JSON (non-objects as params
 * included), and URI-like strings mixing `skill://`, `..`, `%2e`, `//`, backslashes, queries,
 * unicode, NUL and huge segments around the served skills' real paths. The server answers every one
 * with a result or a client error (-32602, or -32601), never -32603 or an HTTP 5xx, and keeps
 * answering: a valid request after the fuzzing succeeds.
 *
 * Two other client-error codes are allowed where they are the right answer: -32020 (the 2026-07-28
 * `Mcp-Name` header check) for a `resources/read` whose `uri` no header can carry (not a string, or
 * with lone surrogates, which UTF-8 cannot encode), and -32002 (effect's own "resource not found",
 * 2025-11-25) for a `resources/read` of a URI outside the `skill://` scheme, which the skills layer
 * hands to effect unchanged.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Skill, SkillsServer } from "../src/index.js"
import { constants, oneOf } from "./support/arbitraries.js"
import { pdfProcessing } from "./support/fixtures.js"
import { httpServer, legacyHttp, modernRequest, postText, ServerUrl } from "./support/wire.js"

const Registrations = SkillsServer.layer({
  skills: [
    pdfProcessing,
    Skill.make({
      path: "acme/billing/refunds",
      files: {
        "SKILL.md": "---\nname: refunds\ndescription: Issue refunds\n---\n\n# Refunds\n",
        "references/policy.md": "# Policy\n",
        "references/deep/ünï cødé.md": "unicode path\n"
      }
    })
  ],
  pageSize: 1
})

const methods = ["skills/list", "skills/get", "resources/directory/read", "resources/read"] as const
type Method = typeof methods[number]


const huge = "a".repeat(1500)
const prefixes = constants([
  "skill://",
  "SKILL://",
  "skill:/",
  "skill:///",
  "file:///",
  "",
  "skill://pdf-processing/",
  "skill://acme/billing/refunds/",
  "skill://acme/billing/refunds/references/",
  "skill:\\\\"
])
const segment = oneOf(
  constants([
    "..", ".", "%2e", "%2E%2e", ".%2e", "%2F", "%5C", "", "\\", "a\\b", "..\\..", "SKILL.md", "skill.md", "Skill.MD",
    "pdf-processing", "acme", "billing", "refunds", "references", "deep", "policy.md", "ünï cødé.md", "%C3%BCn%C3%AF",
    "templates", "invoice.md", "assets", "logo.png", "日本語", "🎉", "\u0000", "%00", "?q=1", "#frag", "a b", " ", "\t",
    "%", "%zz", "\ud800", "a\udfff", huge
  ]),
  Arbitrary.schema(Schema.String)
)
const uriLike = Arbitrary.map(
  Arbitrary.all([prefixes, Arbitrary.array(segment, { maxLength: 6 }), constants(["/", "//", "\\"]), constants(["", "/", "?x", "#y"])]),
  ([prefix, segments, separator, suffix]) => prefix + segments.join(separator) + suffix
)
/** Huge strings go where no HTTP header carries them (Node refuses headers over 16 KiB with 431). */
const hugeUri = constants(["skill://" + "x/".repeat(60_000) + "SKILL.md", "skill://pdf-processing/" + "é".repeat(100_000)])

const json = Arbitrary.schema(Schema.Json)
const objectParams = Arbitrary.map(
  Arbitrary.all({ uri: oneOf<unknown>(uriLike, uriLike, json), cursor: oneOf<unknown>(Arbitrary.Constant(undefined), Arbitrary.schema(Schema.String), json), extra: json }),
  ({ uri, cursor, extra }) => ({ uri, ...(cursor === undefined ? {} : { cursor }), extra })
)
/** Params: mostly objects with URI-like `uri`, sometimes arbitrary JSON (arrays, strings, null, numbers). */
const params = (method: Method) =>
  oneOf<unknown>(
    objectParams,
    objectParams,
    objectParams,
    Arbitrary.map(uriLike, (uri) => ({ uri })),
    ...(method === "resources/read" ? [] : [Arbitrary.map(hugeUri, (uri) => ({ uri }))]),
    Arbitrary.map(Arbitrary.schema(Schema.String), (cursor) => ({ cursor })),
    json
  )

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const modern = (url: string, method: string, input: unknown) => {
  const request = modernRequest(method, input)
  return postText(url, request.headers, request.body)
}

const parse = (text: string): any => {
  const data = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).filter((l) => l.length > 0)
  return data.length > 0 ? JSON.parse(data.at(-1)!) : JSON.parse(text)
}

/** The answer is a result or a client error; returns a description of anything else. */
const judge = (revision: "2026-07-28" | "2025-11-25", method: string, input: unknown, status: number, text: string): string | undefined => {
  let message: any
  try {
    message = parse(text)
  } catch {
    return `HTTP ${status}, not JSON: ${text.slice(0, 200)}`
  }
  if (status >= 500) return `HTTP ${status}: ${text.slice(0, 200)}`
  if (message?.result !== undefined) return status === 200 ? undefined : `result with HTTP ${status}`
  const code = message?.error?.code
  if (code === -32602 || code === -32601) return undefined
  const uri = isRecord(input) ? input["uri"] : undefined
  if (code === -32020 && method === "resources/read" && (typeof uri !== "string" || !uri.isWellFormed())) return undefined
  if (code === -32002 && revision === "2025-11-25" && method === "resources/read" && !(typeof uri === "string" && uri.startsWith("skill://"))) {
    return undefined
  }
  return `${method} ${JSON.stringify(input)?.slice(0, 200)}: HTTP ${status} ${JSON.stringify(message?.error ?? message).slice(0, 300)}`
}

const Runs = 150

describe("fuzz", () => {
  layer(httpServer(Registrations))((it) => {
    for (const method of methods) {
      it.effect.prop(`2026-07-28 ${method}: a result or -32602/-32601, never -32603`, [params(method)], ([input]) =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const { status, text } = yield* modern(url, method, input)
          const problem = judge("2026-07-28", method, input, status, text)
          assert.isUndefined(problem, problem)
        }), { timeout: 60_000, arbitrary: { runs: Runs } })

      it.effect.prop(`2025-11-25 ${method}: a result or -32602/-32601, never -32603`, [params(method)], ([input]) =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const client = yield* legacyHttp(url)
          // The session's `send` puts params on the wire as they are, objects or not.
          const response = yield* client.send(method, input as Record<string, unknown>)
          const problem = judge("2025-11-25", method, input, response.status, JSON.stringify(response.body ?? null))
          assert.isUndefined(problem, problem)
        }), { timeout: 60_000, arbitrary: { runs: Math.floor(Runs / 3) } })
    }

    it.effect("keeps answering after the fuzzing, on both revisions", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const read = yield* modern(url, "resources/read", { uri: "skill://pdf-processing/templates/invoice.md" })
        assert.strictEqual(read.status, 200)
        assert.strictEqual(parse(read.text).result.contents[0].text, "# Invoice template\n\nTotal: {{amount}}\n")
        const legacy = yield* legacyHttp(url)
        const got = yield* legacy.call("skills/get", { uri: "skill://acme/billing/refunds/SKILL.md" })
        assert.strictEqual(got.skill.uri, "skill://acme/billing/refunds/SKILL.md")
      }))
  })
})
