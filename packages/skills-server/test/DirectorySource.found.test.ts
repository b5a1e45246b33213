/**
 * What the loader keeps of each file between scans (`internal/directory/found`): columns indexed by
 * slot behind an index by path of its own. Whatever the order of files found, taken out, put back,
 * released and read, it answers as a map from path to file would, through the growth of its
 * columns, the rebuilding of its index and the giving back of room after a full walk.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { FoundFiles } from "../src/internal/directory/found.js"

const stamp = (size: number, mtimeMs = 1_000) => ({ dev: 1, ino: size + 7, size, mtimeMs, ctimeMs: mtimeMs })

// Few paths, so that operations meet the same files again; some share a folder, one is long.
const Path = Schema.Literals([
  "a/SKILL.md",
  "a/b.md",
  "a/c/d.md",
  "b/SKILL.md",
  "b/x",
  "c",
  "deep/er/and/deeper/than/most/file.md",
  "é/ü.md",
  "z/SKILL.md",
  "z/1",
  "z/2",
  "z/3"
])
const Operation = Schema.Union([
  Schema.TaggedStruct("Add", { path: Path, size: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 })) }),
  Schema.TaggedStruct("Remove", { path: Path }),
  Schema.TaggedStruct("Put", { path: Path, size: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 })) }),
  Schema.TaggedStruct("Release", { path: Path }),
  Schema.TaggedStruct("Keep", { path: Path, byte: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 255 })) }),
  Schema.TaggedStruct("Trim", {})
])

interface Model {
  slot: number
  size: number
  bytes: Uint8Array | undefined
}

// Every answer of `found` agrees with `indexed` (the files by path) and `removed` (slots out).
const agree = (found: FoundFiles, indexed: Map<string, Model>, removed: Map<string, Model>) => {
  assert.strictEqual(found.count, indexed.size)
  const listed = new Map<string, number>()
  found.forEach((slot, relative) => listed.set(relative, slot))
  assert.deepStrictEqual(listed, new Map([...indexed].map(([path, file]) => [path, file.slot])))
  for (const path of Path.literals) {
    const file = indexed.get(path)
    assert.strictEqual(found.slot(path), file?.slot)
  }
  for (const [path, file] of [...indexed, ...removed]) {
    assert.strictEqual(found.relative(file.slot), path)
    assert.strictEqual(found.size(file.slot), file.size)
    assert.deepStrictEqual(found.bytes(file.slot), file.bytes)
  }
}

describe("FoundFiles", () => {
  it.prop("answers as a map from path to file, whatever is added, taken out, put back and released", [
    Schema.Array(Operation).check(Schema.isMaxLength(200))
  ], ([operations]) => {
    const found = new FoundFiles()
    const indexed = new Map<string, Model>()
    const removed = new Map<string, Model>()
    for (const operation of operations) {
      switch (operation._tag) {
        case "Add": {
          if (indexed.has(operation.path) || removed.has(operation.path)) break
          const slot = found.add(operation.path, stamp(operation.size))
          for (const file of [...indexed.values(), ...removed.values()]) assert.notStrictEqual(file.slot, slot)
          indexed.set(operation.path, { slot, size: operation.size, bytes: undefined })
          break
        }
        case "Remove": {
          const file = indexed.get(operation.path)
          assert.strictEqual(found.remove(operation.path), file?.slot)
          if (file === undefined) break
          indexed.delete(operation.path)
          removed.set(operation.path, file)
          break
        }
        case "Put": {
          const file = removed.get(operation.path)
          if (file === undefined) break
          found.put(operation.path, file.slot, stamp(operation.size))
          removed.delete(operation.path)
          // Seen with another stamp, what was read is kept but not trusted.
          if (file.size !== operation.size) assert.strictEqual(found.trust(file.slot), "Stale")
          indexed.set(operation.path, { ...file, size: operation.size })
          break
        }
        case "Release": {
          const file = removed.get(operation.path) ?? indexed.get(operation.path)
          if (file === undefined) break
          found.release(file.slot)
          // An indexed file is not released.
          removed.delete(operation.path)
          break
        }
        case "Keep": {
          const file = indexed.get(operation.path)
          if (file === undefined) break
          const bytes = new Uint8Array(file.size).fill(operation.byte)
          // Read long after its last write: sound.
          found.keep(file.slot, stamp(file.size), bytes, 60_000)
          assert.strictEqual(found.trust(file.slot), "Sound")
          file.bytes = bytes
          break
        }
        case "Trim":
          found.trim()
          break
      }
      agree(found, indexed, removed)
    }
  }, { arbitrary: { runs: 300 } })

  it("keeps tens of thousands of files through the growth of its columns, a full walk's trim and removals", () => {
    const found = new FoundFiles()
    const slots = new Map<string, number>()
    for (let index = 0; index < 20_000; index++) {
      const path = `team-${index % 17}/skill-${index}/references/file-${index % 8}.md`
      slots.set(path, found.add(path, stamp(index % 1000, 1_000 + index)))
    }
    found.trim()
    let removed = 0
    for (const [path, slot] of slots) {
      if (slot % 3 !== 0) continue
      assert.strictEqual(found.remove(path), slot)
      found.release(slot)
      slots.delete(path)
      removed++
    }
    assert.strictEqual(found.count, 20_000 - removed)
    for (const [path, slot] of slots) {
      assert.strictEqual(found.slot(path), slot)
      assert.isTrue(found.sameStamp(slot, stamp(slot % 1000, 1_000 + slot)))
    }
    // Released slots are taken again before the columns grow.
    const again = found.add("new/SKILL.md", stamp(1))
    assert.strictEqual(again % 3, 0)
    assert.strictEqual(found.slot("new/SKILL.md"), again)
    assert.strictEqual(found.slot("missing"), undefined)
  })
})
