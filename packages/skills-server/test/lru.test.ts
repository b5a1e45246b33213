/**
 * The cache the snapshot's derived parts are kept in (`internal/lru`): whatever the order of the
 * keys asked for and the weights of their values, it computes a value exactly when a model that
 * keeps its entries in order of use (the least recently used first out, once the weights pass
 * the capacity) does not hold it, and answers what the model holds otherwise, repeated asks of
 * one key included (which it answers without moving the key again).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { Lru } from "../src/internal/lru.js"

// Few keys, asked for in runs, so that entries are found again, refreshed and pushed out.
const Ask = Schema.Struct({
  key: Schema.Literals(["a", "b", "c", "d", "e", "f"]),
  weight: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 12 })),
  times: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 }))
})

describe("Lru", () => {
  it.prop("computes exactly what a model kept in order of use lacks, and answers what it holds", [
    Schema.Array(Ask).check(Schema.isMinLength(40), Schema.isMaxLength(150)),
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 30 }))
  ], ([asks, capacity]) => {
    const lru = new Lru<string, { readonly weight: number; readonly serial: number }>(capacity, (value) => value.weight)
    // Least recently used first.
    let model: Array<readonly [string, { readonly weight: number; readonly serial: number }]> = []
    let serial = 0
    for (const ask of asks) {
      for (let i = 0; i < ask.times; i++) {
        const fresh = { weight: ask.weight, serial: serial++ }
        let computed = false
        const answer = lru.getOrCompute(ask.key, () => {
          computed = true
          return fresh
        })
        const held = model.find(([key]) => key === ask.key)
        assert.strictEqual(computed, held === undefined, `${ask.key} computed`)
        assert.strictEqual(answer, held === undefined ? fresh : held[1])
        model = model.filter(([key]) => key !== ask.key)
        // A value heavier than the whole capacity is answered, not kept.
        if (held !== undefined || fresh.weight <= capacity) model.push([ask.key, held?.[1] ?? fresh])
        let total = model.reduce((sum, [, value]) => sum + value.weight, 0)
        while (total > capacity) total -= model.shift()![1].weight
      }
    }
  }, { arbitrary: { runs: 300 } })
})
