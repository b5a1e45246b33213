/**
 * Equivalence of the fast route: generated requests (valid and invalid params,
 * headers, ids and cursors; visible, hidden, unlisted, dynamic, rendered and static skills;
 * unknown URIs and traversal attempts) get the same HTTP status, the same content type and
 * byte-equal bodies from a server with the fast route and the same server without it. The
 * catalogue holds an unlisted skill family too, and cursors that point into a family's instances.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { equivalentJson } from "../src/internal/fastRoute.js"
import { exchange, meta, Twins, twins } from "./support/twins.js"

const cursor = (scope: string, after: string) => Buffer.from(`${scope}\n${after}`).toString("base64url")

const Uri = Schema.Literals([
  "skill://pdf-processing/SKILL.md",
  "skill://pdf-processing/templates/invoice.md",
  "skill://pdf-processing/templates",
  "skill://pdf-processing",
  "skill://acme/billing/refunds",
  "skill://acme/billing/refunds/references",
  "skill://acme/billing/refunds/data/latin1.txt",
  "skill://acme/billing/refunds/data/bom.txt",
  "skill://toolbox/SKILL.md",
  "skill://toolbox/git/cheatsheet.md",
  "skill://toolbox",
  "skill://secret/hidden-gem/SKILL.md",
  "skill://secret/hidden-gem/notes.md",
  "skill://reports/daily/SKILL.md",
  "skill://reports/daily/data/today.json",
  "skill://greeting/SKILL.md",
  "skill://greeting/notes/hello.md",
  "skill://greeting",
  "skill://pages/alpha/ref",
  "skill://pages/alpha/SKILL.md",
  "skill://big/large.md",
  "skill://teams/red/SKILL.md",
  "skill://teams/red/notes.md",
  "skill://teams/red",
  "skill://teams/Not A Name/SKILL.md",
  "skill://nope/SKILL.md",
  "skill://pdf-processing/../toolbox/SKILL.md",
  "skill://pdf-processing/%2e%2e/toolbox/guide.md",
  "skill://toolbox/./guide.md",
  "file:///etc/passwd",
  "urn:mcp-skills:visibility",
  "",
  "not a uri"
])

const Cursor = Schema.Literals([
  "none",
  "garbage",
  "skills-after-big",
  "skills-after-pages",
  "skills-after-end",
  "dir-after-data",
  "dir-of-another-listing",
  "family-position",
  "number"
])

const cursorValue = (kind: typeof Cursor.Type, uri: string): unknown => {
  switch (kind) {
    case "none":
      return undefined
    case "garbage":
      return "%%%"
    case "skills-after-big":
      return cursor("skills", "skill://big/SKILL.md")
    case "skills-after-pages":
      return cursor("skills", "skill://pages/alpha/SKILL.md")
    case "skills-after-end":
      return cursor("skills", "skill://zzz/SKILL.md")
    case "dir-after-data":
      return cursor(`dir ${uri}`, `${uri}/data`)
    case "dir-of-another-listing":
      return cursor("dir skill://toolbox", "skill://toolbox/git")
    case "family-position":
      return cursor("skills", `\u0000${JSON.stringify(["teams/{team}", null, 0])}`)
    case "number":
      return 3
  }
}

const Flaw = Schema.Literals([
  "none",
  "no-accept-events",
  "text-plain",
  "origin",
  "no-version",
  "old-version",
  "meta-version",
  "no-capabilities",
  "method-header",
  "name-header",
  "base64-name",
  "no-id",
  "null-id",
  "batch",
  "uri-number",
  "session"
])

const Request = Schema.Struct({
  method: Schema.Literals([
    "skills/list",
    "skills/get",
    "resources/read",
    "resources/directory/read",
    "resources/list",
    "ping"
  ]),
  uri: Uri,
  cursor: Cursor,
  id: Schema.Union([Schema.Int, Schema.String]),
  flaw: Flaw,
  /** Half the requests have no flaw and a URI that suits their method. */
  clean: Schema.Boolean,
  good: Schema.Literals([0, 1, 2]),
  visible: Schema.Literals(["", "pdf-processing,refunds,toolbox,git,alpha,big", "hidden-gem,daily,greeting,beta,red"]),
  user: Schema.Literals(["ann", "bob"])
})

// URIs each method answers for static skills (and one more kind), for the well-formed half.
const suited: Record<string, ReadonlyArray<string>> = {
  "skills/get": ["skill://pdf-processing/SKILL.md", "skill://toolbox/git/SKILL.md", "skill://teams/red/SKILL.md"],
  "resources/read": ["skill://toolbox/guide.md", "skill://acme/billing/refunds/data/latin1.txt", "skill://teams/red/notes.md"],
  "resources/directory/read": ["skill://acme/billing/refunds", "skill://toolbox", "skill://greeting"]
}

const build = (request: typeof Request.Type) => {
  const { method } = request
  const flaw = request.clean ? "none" : request.flaw
  const uri = request.clean ? (suited[method]?.[request.good] ?? request.uri) : request.uri
  const params: Record<string, unknown> = { _meta: meta }
  if (method !== "skills/list" && method !== "resources/list" && method !== "ping") {
    params.uri = flaw === "uri-number" ? 42 : uri
  }
  const cursorValueOf = cursorValue(request.cursor, uri)
  if (cursorValueOf !== undefined && method !== "skills/get" && method !== "resources/read") params.cursor = cursorValueOf
  if (flaw === "meta-version") params._meta = { ...meta, "io.modelcontextprotocol/protocolVersion": "2025-11-25" }
  if (flaw === "no-capabilities") params._meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" }
  const message: Record<string, unknown> = { jsonrpc: "2.0", method, params }
  if (flaw !== "no-id") message.id = flaw === "null-id" ? null : request.id
  const headers: Record<string, string> = {
    "content-type": flaw === "text-plain" ? "text/plain" : "application/json",
    accept: flaw === "no-accept-events" ? "application/json" : "application/json, text/event-stream",
    "mcp-method": flaw === "method-header" ? "skills/get" : method,
    "x-visible": request.visible,
    "x-user": request.user
  }
  if (flaw !== "no-version") headers["mcp-protocol-version"] = flaw === "old-version" ? "2025-11-25" : "2026-07-28"
  if (flaw === "origin") headers.origin = "https://example.com"
  if (flaw === "session") headers["mcp-session-id"] = "s-1"
  if (method === "resources/read" && typeof params.uri === "string" && flaw !== "name-header") {
    headers["mcp-name"] = flaw === "base64-name"
      ? `=?base64?${Buffer.from(params.uri, "utf8").toString("base64")}?=`
      : /^[\x20-\x7e]*$/.test(params.uri) ? params.uri : `=?base64?${Buffer.from(params.uri, "utf8").toString("base64")}?=`
  }
  const body = JSON.stringify(flaw === "batch" ? [message] : message)
  return { headers, body }
}

// The same request to the server with the route and to the one without: equal answers. Whether
// the route answered it (effect's route never reached).
const equivalent = Effect.fnUntraced(function*(request: typeof Request.Type) {
  const { off, on, reached } = yield* Twins
  const { body, headers } = build(request)
  const before = reached.count
  const fast = yield* exchange(on, headers, body)
  const answeredFast = reached.count === before
  const slow = yield* exchange(off, headers, body)
  assert.deepStrictEqual(fast, slow, `${JSON.stringify(headers)} ${body}`)
  return answeredFast
})

// The property proves nothing of the route if the route never answers: a sample of the same
// requests (its own, so the test stands alone) is answered partly by the route, partly not.
const exercised = (it: { readonly effect: (name: string, self: () => Effect.Effect<void, unknown, Twins>) => void }) =>
  it.effect("the generated requests exercise the fast route", () =>
    Effect.gen(function*() {
      const sample = yield* Arbitrary.sampleEffect(Arbitrary.schema(Request), { count: 150, seed: 28 })
      let fast = 0
      for (const request of sample) if (yield* equivalent(request)) fast++
      assert.isAbove(fast, sample.length / 30, `${fast} of ${sample.length} answered by the fast route`)
      assert.isBelow(fast, sample.length, "every request was answered by the fast route")
    }))

describe("fast route equivalence", () => {
  layer(twins())((it) => {
    it.effect.prop("route on and off answer alike (no visibility check)", [Request], ([request]) => Effect.asVoid(equivalent(request)), {
      timeout: 120_000,
      arbitrary: { runs: 300 }
    } as any)

    exercised(it)
  })

  layer(twins({
    visibility: ({ headers }) => {
      const visible = new Set((headers["x-visible"] ?? "").split(","))
      return Effect.succeed((skill) => visible.has(skill.name))
    }
  }))((it) => {
    it.effect.prop("route on and off answer alike (visibility check)", [Request], ([request]) => Effect.asVoid(equivalent(request)), {
      timeout: 120_000,
      arbitrary: { runs: 300 }
    } as any)
    exercised(it)
  })
})

// JSON with every object's keys sorted: equal exactly when two values are the same up to key order.
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === "object" && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner)

// The same value with every object's keys in reverse order.
const reversed = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(reversed)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).reverse().map(([key, inner]) => [key, reversed(inner)]))
    : value

// The same value with its first leaf (depth first) replaced by `by`; unchanged without a leaf.
const withFirstLeaf = (value: unknown, by: unknown): unknown => {
  if (typeof value !== "object" || value === null) return by
  const entries = Object.entries(value)
  const at = entries.findIndex(([, inner]) => canonical(withFirstLeaf(inner, by)) !== canonical(inner))
  if (at === -1) return value
  const changed = entries.map(([key, inner], i) => [key, i === at ? withFirstLeaf(inner, by) : inner] as const)
  return Array.isArray(value) ? changed.map(([, inner]) => inner) : Object.fromEntries(changed)
}

describe("the route's comparison of _meta", () => {
  it.prop("equivalentJson is equality of JSON up to key order", [Schema.Json, Schema.Json], ([a, b]) => {
    const parsed = JSON.parse(JSON.stringify(a)) as unknown
    assert.strictEqual(equivalentJson(parsed, b), canonical(a) === canonical(b))
    assert.isTrue(equivalentJson(parsed, reversed(a)))
    const changed = withFirstLeaf(a, { changed: true })
    assert.strictEqual(equivalentJson(parsed, changed), canonical(a) === canonical(changed))
    assert.strictEqual(equivalentJson(changed, parsed), canonical(a) === canonical(changed))
    // One key more, in a nested object or at the top: not the same, either way round.
    const grown = { a, more: { added: true } }
    assert.isFalse(equivalentJson({ a: parsed, more: {} }, grown))
    assert.isFalse(equivalentJson(grown, { a: parsed, more: {} }))
    if (typeof a === "object" && a !== null && !Array.isArray(a)) {
      const wider = { ...a, "extra key": 0 }
      assert.strictEqual(equivalentJson(parsed, wider), "extra key" in a && canonical(a) === canonical(wider))
      assert.strictEqual(equivalentJson(wider, parsed), "extra key" in a && canonical(a) === canonical(wider))
    }
  })
})
