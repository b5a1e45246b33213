/**
 * The two serializers of a surface's answer: `toBytes` writes exactly the JSON of the result
 * `toObject` hands effect, for every body a surface builds (lists of items, cursors, contents),
 * and keeps bytes only for answers that are the same for every caller.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Answer from "../src/internal/surface/answer.js"

const serverInfo = { name: "skills", version: "1.0.0" }
const decoder = new TextDecoder()

const Item = Schema.Struct({
  uri: Schema.String,
  name: Schema.String,
  size: Schema.optionalKey(Schema.Int),
  mimeType: Schema.optionalKey(Schema.String)
})
const Body = Schema.Struct({
  skills: Schema.Array(Item),
  nextCursor: Schema.optionalKey(Schema.String)
})
const Contents = Schema.Struct({
  contents: Schema.Array(Schema.Struct({ uri: Schema.String, mimeType: Schema.String, text: Schema.String }))
})
const Hint = Schema.Struct({ ttlMs: Schema.Int, cacheScope: Schema.Literals(["public", "private"]) })

const same = (answer: Answer.Answer): void => {
  expect(decoder.decode(Answer.bytesFor(serverInfo)(answer))).toBe(
    JSON.stringify(Answer.toObject(answer, { modern: true, serverInfo }))
  )
}

describe("Answer", () => {
  it.prop("toBytes is the JSON of toObject (lists, cursors)", { body: Body, hint: Hint, checked: Schema.Boolean }, ({ body, checked, hint }) =>
    same(Answer.make(body, hint, checked)))

  it.prop("toBytes is the JSON of toObject (contents)", { body: Contents, hint: Hint, checked: Schema.Boolean }, ({ body, checked, hint }) =>
    same(Answer.make(body, hint, checked)))

  it("a checked answer is private; 2025-11-25 results carry no cache fields", () => {
    const answer = Answer.make({ skills: [] }, { ttlMs: 5, cacheScope: "public" }, true)
    expect(Answer.toObject(answer, { modern: true, serverInfo }).cacheScope).toBe("private")
    expect(Answer.toObject(answer, { modern: false, serverInfo })).toEqual({ skills: [] })
  })

  it("keeps the bytes of an answer alike for every caller, never of a checked one", () => {
    const toBytes = Answer.bytesFor(serverInfo)
    const shared = Answer.make({ skills: [{ uri: "skill://a/SKILL.md" }] }, { ttlMs: 0, cacheScope: "public" }, false)
    expect(toBytes(shared)).toBe(toBytes(shared))
    const checked = Answer.make({ skills: [] }, { ttlMs: 0, cacheScope: "public" }, true)
    expect(toBytes(checked)).not.toBe(toBytes(checked))
    const big = Answer.make({ contents: [{ text: "x".repeat(Answer.MaxKeptBytes) }] }, { ttlMs: 0, cacheScope: "public" }, false)
    expect(toBytes(big)).not.toBe(toBytes(big))
  })

  it("keeps one answer per snapshot and key, misses included", () => {
    const memo = Answer.makeMemo()
    const snapshot = {} as never
    let computed = 0
    const compute = () => {
      computed++
      return computed === 1 ? undefined : Answer.make({}, { ttlMs: 0, cacheScope: "public" }, false)
    }
    expect(memo.keep(snapshot, "k", compute)).toBeUndefined()
    expect(memo.keep(snapshot, "k", compute)).toBeUndefined()
    expect(computed).toBe(1)
  })
})
