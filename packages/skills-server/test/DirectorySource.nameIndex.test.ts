/**
 * The index under the loader's folders and files (`internal/directory/nameIndex`): whatever the
 * order of entries indexed, taken out, named again and of its rebuilding, it answers as a map from
 * owner and name to id would, through every growth of its table.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { NameIndex } from "../src/internal/directory/nameIndex.js"

// Few owners and names, so that operations meet the same entries again; ids are handed out as the
// loader does, new ones in a row and freed ones again.
const Owner = Schema.Int.check(Schema.isBetween({ minimum: -1, maximum: 3 }))
const Name = Schema.Literals(["", "a", "b", "SKILL.md", "references", "a-name-longer-than-most"])
const Operation = Schema.Union([
  Schema.TaggedStruct("Insert", { owner: Owner, name: Name }),
  Schema.TaggedStruct("Remove", { pick: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 99 })) }),
  Schema.TaggedStruct("Rehash", { room: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 64 })) })
])

const key = (owner: number, name: string) => `${owner}/${name}`

// Every entry of `model` is found under its owner and name, and nothing else is.
const agree = (index: NameIndex, model: Map<string, number>) => {
  assert.strictEqual(index.count, model.size)
  for (let owner = -1; owner <= 3; owner++) {
    for (const name of Name.literals) {
      const text = `x/${name}`
      assert.strictEqual(index.find(owner, text, 2, text.length), model.get(key(owner, name)) ?? -1, key(owner, name))
    }
  }
}

describe("NameIndex", () => {
  it.prop("answers as a map from owner and name to id, whatever is indexed, taken out and rebuilt", [
    Schema.Array(Operation).check(Schema.isMinLength(60), Schema.isMaxLength(200))
  ], ([operations]) => {
    const index = new NameIndex()
    const model = new Map<string, number>()
    const free: Array<number> = []
    let next = 0
    for (const operation of operations) {
      switch (operation._tag) {
        case "Insert": {
          if (model.has(key(operation.owner, operation.name))) break
          let id = free.pop()
          if (id === undefined) {
            id = next++
            if (id >= index.owner.length) index.resize(Math.max(8, id * 2))
          }
          index.insert(id, operation.owner, operation.name)
          model.set(key(operation.owner, operation.name), id)
          break
        }
        case "Remove": {
          const entries = [...model]
          if (entries.length === 0) break
          const [name, id] = entries[operation.pick % entries.length]!
          index.remove(id)
          // The loader forgets a folder's name once it is out, and frees its id for another.
          index.names[id] = undefined
          model.delete(name)
          free.push(id)
          break
        }
        case "Rehash":
          index.rehash(Math.max(operation.room, index.count))
          break
      }
      agree(index, model)
    }
  }, { arbitrary: { runs: 300 } })

  it("indexes an entry once when inserting it grows the table", () => {
    const index = new NameIndex()
    index.resize(16)
    // Six entries fill eight places to three quarters: the seventh grows the table first.
    for (let id = 0; id < 7; id++) index.insert(id, 0, `name-${id}`)
    assert.strictEqual(index.count, 7)
    index.remove(6)
    index.names[6] = undefined
    assert.strictEqual(index.count, 6)
    for (let id = 0; id < 6; id++) assert.strictEqual(index.find(0, `name-${id}`, 0, `name-${id}`.length), id)
    assert.strictEqual(index.find(0, "name-6", 0, 6), -1)
  })
})
