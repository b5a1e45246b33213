/**
 * The value every skills surface computes (`Answer`: the result's own fields, its cache hint,
 * whether a visibility check ran) and its two serializers, side by side: `toObject`, the result
 * effect encodes, and `toBytes`, the UTF-8 JSON the fast route sends. `toBytes` writes exactly
 * `JSON.stringify(toObject(answer))` for a 2026-07-28 request, only reusing the encoding of each
 * list item (a skill entry, a directory child) and of each answer that depends on the snapshot
 * alone.
 *
 * @internal
 */
import { Lru } from "../lru.js"
import type * as Snapshot from "../../Snapshot.js"
import * as ServerLimits from "../../ServerLimits.js"

/**
 * Where the envelope (`resultType`, the cache fields, `_meta`) stands in a result, as effect's
 * encoding of the method's result schema puts it: the extension's own schemas (`Protocol`) open
 * with `resultType` and end with the cache fields and `_meta` (`"Trailing"`); effect's `McpSchema`
 * results (`resources/read`) open with `_meta` and the cache fields (`"Leading"`). The bytes
 * follow the same order, so both paths send the same bytes, not merely equal JSON.
 */
export type Envelope = "Trailing" | "Leading"

/** One surface's answer for one request: the result's fields, in the order they are sent. */
export interface Answer<Body extends object = object> {
  readonly body: Body
  readonly hint: Snapshot.Hint
  /** A visibility check ran: the answer depends on the caller, so it is `private`. */
  readonly checked: boolean
  readonly envelope: Envelope
}

/** The answer whose result is `body`. */
export const make = <Body extends object>(
  body: Body,
  hint: Snapshot.Hint,
  checked: boolean,
  envelope: Envelope = "Trailing"
): Answer<Body> => ({ body, hint, checked, envelope })

/** How a request receives its result: 2025-11-25 results carry no cache fields (spec §7 item 1). */
export interface Target {
  readonly modern: boolean
  /** The server's `Implementation`, for `_meta["io.modelcontextprotocol/serverInfo"]`. */
  readonly serverInfo: Readonly<Record<string, unknown>>
}

/** The result effect encodes. */
export const toObject = <Body extends object>(
  answer: Answer<Body>,
  target: Target
): Body & { readonly resultType?: "complete"; readonly ttlMs?: number; readonly cacheScope?: "public" | "private" } =>
  !target.modern
    ? answer.body
    : answer.envelope === "Leading"
    ? {
      _meta: { "io.modelcontextprotocol/serverInfo": target.serverInfo },
      resultType: "complete",
      ttlMs: answer.hint.ttlMs,
      cacheScope: scopeOf(answer),
      ...answer.body
    }
    : {
      resultType: "complete",
      ...answer.body,
      ttlMs: answer.hint.ttlMs,
      cacheScope: scopeOf(answer),
      _meta: { "io.modelcontextprotocol/serverInfo": target.serverInfo }
    }

const scopeOf = (answer: Answer) => answer.checked ? "private" : answer.hint.cacheScope

/** Largest answer whose bytes are kept with it (see `ServerLimits.MaxKeptAnswerBytes`). */
export const MaxKeptBytes = ServerLimits.MaxKeptAnswerBytes

const encoder = new TextEncoder()
const comma = encoder.encode(",")

/**
 * The byte serializer of one endpoint (whose `serverInfo` it writes): `toBytes(answer)` is the
 * UTF-8 of `JSON.stringify(toObject(answer, { modern: true, serverInfo }))`. Item encodings are
 * kept by item (items belong to a snapshot and go with it); a whole answer's bytes are kept
 * with the answer when it is the same for every caller and small.
 */
export const bytesFor = (serverInfo: Readonly<Record<string, unknown>>): (answer: Answer) => Uint8Array => {
  const items = new WeakMap<object, Uint8Array>()
  const whole = new WeakMap<Answer, Uint8Array>()
  const meta = JSON.stringify({ "io.modelcontextprotocol/serverInfo": serverInfo })
  const itemOf = (item: unknown): Uint8Array => {
    if (typeof item !== "object" || item === null) return encoder.encode(JSON.stringify(item))
    let known = items.get(item)
    if (known === undefined) {
      known = encoder.encode(JSON.stringify(item))
      items.set(item, known)
    }
    return known
  }
  const encode = (answer: Answer) => {
    const cache = `"ttlMs":${answer.hint.ttlMs},"cacheScope":"${scopeOf(answer)}"`
    const leading = answer.envelope === "Leading"
    const parts: Array<Uint8Array> = [
      encoder.encode(leading ? `{"_meta":${meta},"resultType":"complete",${cache}` : `{"resultType":"complete"`)
    ]
    for (const [key, value] of Object.entries(answer.body)) {
      if (value === undefined) continue
      parts.push(encoder.encode(`,${JSON.stringify(key)}:`))
      if (!Array.isArray(value)) {
        parts.push(encoder.encode(JSON.stringify(value)))
        continue
      }
      parts.push(encoder.encode("["))
      for (const [i, item] of value.entries()) {
        if (i > 0) parts.push(comma)
        parts.push(itemOf(item))
      }
      parts.push(encoder.encode("]"))
    }
    parts.push(encoder.encode(leading ? "}" : `,${cache},"_meta":${meta}}`))
    return Buffer.concat(parts)
  }
  return (answer) => {
    if (answer.checked) return encode(answer)
    let known = whole.get(answer)
    if (known === undefined) {
      known = encode(answer)
      if (known.byteLength <= MaxKeptBytes || !("contents" in answer.body)) whole.set(answer, known)
    }
    return known
  }
}

/**
 * Answers that depend on the snapshot alone (no visibility check), kept with the snapshot they
 * were computed from, by surface and key: they go when the snapshot goes. Each snapshot keeps the
 * most recently used up to `MemoBytes`, an answer weighing `AnswerWeight` plus twice the content
 * it carries (its wire form, and its bytes kept beside it), so that a client reading every file
 * of a large catalogue leaves neither every answer nor every file's wire form in memory.
 */
export interface Memo {
  readonly keep: <A extends Answer>(snapshot: Snapshot.Snapshot, key: string, compute: () => A | undefined) => A | undefined
}

/** What the answers kept per snapshot may weigh together (see `ServerLimits.AnswerMemoBytes`). */
export const MemoBytes = ServerLimits.AnswerMemoBytes

/** What an answer weighs besides its content: a page or an entry. */
export const AnswerWeight = ServerLimits.AnswerWeight

/** Answers without content (pages, entries) kept per snapshot. */
export const MemoSize = MemoBytes / AnswerWeight

// An answer carrying more than `MaxKeptBytes` of content weighs more than the memo holds: it is
// computed per request, not kept.
const weightOf = (answer: Answer | undefined) => {
  const contents = answer === undefined ? undefined : (answer.body as { readonly contents?: unknown }).contents
  if (!Array.isArray(contents)) return AnswerWeight
  let carried = 0
  for (const item of contents as ReadonlyArray<{ readonly text?: string; readonly blob?: string }>) {
    carried += (item.text ?? item.blob ?? "").length
  }
  return carried > MaxKeptBytes ? Infinity : AnswerWeight + 2 * carried
}

/** One layer's memo (state lives in the layer, not the module). */
export const makeMemo = (): Memo => {
  const bySnapshot = new WeakMap<Snapshot.Snapshot, Lru<string, Answer | undefined>>()
  return {
    keep: <A extends Answer>(snapshot: Snapshot.Snapshot, key: string, compute: () => A | undefined) => {
      let answers = bySnapshot.get(snapshot)
      if (answers === undefined) {
        answers = new Lru(MemoBytes, weightOf)
        bySnapshot.set(snapshot, answers)
      }
      return answers.getOrCompute(key, compute) as A | undefined
    }
  }
}
