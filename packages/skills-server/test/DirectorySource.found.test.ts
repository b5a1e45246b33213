/**
 * What the loader keeps of each file between scans (`internal/directory/found`): columns indexed by
 * slot, paths as a tree of folders and names, behind an index of its own. Whatever the order of
 * files found, taken out, put back, released and read, and of folders known and forgotten, it
 * answers as a map from path to file (and a set of folders) would, through the growth of its
 * columns, the rebuilding of its indexes and the giving back of room after a full walk.
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
const Folder = Schema.Literals(["a", "a/c", "b", "deep", "deep/er/and", "é", "z", "new", "new/er"])
const Operation = Schema.Union([
  Schema.TaggedStruct("AddFolder", { path: Folder }),
  Schema.TaggedStruct("RemoveFolder", { path: Folder }),
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

// The folders above a path, nearest last.
const ancestors = (path: string) => path.split("/").slice(0, -1).map((_, index, segments) => segments.slice(0, index + 1).join("/"))
const isBelow = (path: string, folder: string) => path.startsWith(`${folder}/`)

// Every answer of `found` agrees with `indexed` (the files by path), `removed` (slots out) and
// `folders` (known folders).
const agree = (found: FoundFiles, indexed: Map<string, Model>, removed: Map<string, Model>, folders: Set<string>) => {
  assert.strictEqual(found.count, indexed.size)
  const listed = new Map<string, number>()
  found.forEach((slot) => listed.set(found.relative(slot), slot))
  assert.deepStrictEqual(listed, new Map([...indexed].map(([path, file]) => [path, file.slot])))
  for (const path of Path.literals) {
    const file = indexed.get(path)
    assert.strictEqual(found.slot(path), file?.slot)
    assert.isFalse(found.isFolder(path))
  }
  for (const folder of [...Folder.literals, "deep/er", "deep/er/and/deeper"]) assert.strictEqual(found.isFolder(folder), folders.has(folder), folder)
  for (const [path, file] of indexed) {
    assert.strictEqual(found.relative(file.slot), path)
    assert.strictEqual(found.name(file.slot), path.slice(path.lastIndexOf("/") + 1))
    assert.strictEqual(found.folderPath(found.folderOf(file.slot)), path.slice(0, Math.max(0, path.lastIndexOf("/"))))
  }
  for (const file of [...indexed.values(), ...removed.values()]) {
    assert.strictEqual(found.size(file.slot), file.size)
    assert.deepStrictEqual(found.bytes(file.slot), file.bytes)
  }
}

describe("FoundFiles", () => {
  it.prop("answers as a map from path to file, whatever is added, taken out, put back and released", [
    Schema.Array(Operation).check(Schema.isMinLength(30), Schema.isMaxLength(200))
  ], ([operations]) => {
    const found = new FoundFiles()
    const indexed = new Map<string, Model>()
    const removed = new Map<string, Model>()
    const folders = new Set<string>()
    for (const operation of operations) {
      switch (operation._tag) {
        case "AddFolder":
          found.addFolder(operation.path)
          for (const folder of [...ancestors(operation.path), operation.path]) folders.add(folder)
          break
        case "RemoveFolder": {
          const below = found.removeFolder(operation.path)
          const expected = new Map<string, number>()
          if (folders.has(operation.path)) {
            for (const [path, file] of indexed) {
              if (!isBelow(path, operation.path)) continue
              expected.set(path, file.slot)
              indexed.delete(path)
              removed.set(path, file)
            }
            for (const folder of folders) if (folder === operation.path || isBelow(folder, operation.path)) folders.delete(folder)
          }
          assert.deepStrictEqual(below, expected)
          break
        }
        case "Add": {
          if (indexed.has(operation.path) || removed.has(operation.path)) break
          const slot = found.add(operation.path, stamp(operation.size))
          for (const file of [...indexed.values(), ...removed.values()]) assert.notStrictEqual(file.slot, slot)
          indexed.set(operation.path, { slot, size: operation.size, bytes: undefined })
          for (const folder of ancestors(operation.path)) folders.add(folder)
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
          for (const folder of ancestors(operation.path)) folders.add(folder)
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
      agree(found, indexed, removed, folders)
    }
  }, { arbitrary: { runs: 300 } })

  // The sequence CI shrank a failure to: adding "z" grew the folders' index, which then held it
  // twice, and forgetting "z" took out one copy of it.
  it("forgets a folder whose adding grew the index", () => {
    const found = new FoundFiles()
    found.addFolder("deep/er/and")
    found.addFolder("a/c")
    const slot = found.add("z/SKILL.md", stamp(1))
    assert.deepStrictEqual(found.removeFolder("z"), new Map([["z/SKILL.md", slot]]))
    assert.isFalse(found.isFolder("z"))
    assert.strictEqual(found.slot("z/SKILL.md"), undefined)
    for (const folder of ["deep", "deep/er", "deep/er/and", "a", "a/c"]) assert.isTrue(found.isFolder(folder), folder)
    assert.strictEqual(found.count, 0)
  })

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
