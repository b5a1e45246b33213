/**
 * A snapshot's directories, derived on first use from the manifest of the innermost skill around
 * them: the same entries as a listing of every file of the catalogue, nested skills included,
 * and kept in a bounded cache (as the answers a layer keeps per snapshot are).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Skill, SkillRegistry, Snapshot } from "../src/index.js"
import * as Directories from "../src/internal/directories.js"
import * as Answer from "../src/internal/surface/answer.js"
import { skillMd } from "./support/fixtures.js"

// The oracle: every directory at or below a skill root that holds a file of the catalogue, its
// children and owners, computed from the whole file map (not from any one manifest).
const listing = (snapshot: Snapshot.Snapshot) => {
  const owner = (file: Snapshot.FileEntry) =>
    file.owners.reduce((best, index) => snapshot.skills[index]!.root.length > snapshot.skills[best]!.root.length ? index : best)
  const roots = snapshot.skills.filter((skill) => skill._tag === "Static").map((skill) => skill.root)
  const directories = new Map<string, { owners: Set<number>; children: Map<string, { owners: Set<number>; file?: Snapshot.FileEntry }> }>()
  for (const file of snapshot.files.all()) {
    const holder = owner(file)
    let child = file.uri
    for (let end = child.lastIndexOf("/"); end > 0; end = child.lastIndexOf("/", end - 1)) {
      const parent = child.slice(0, end)
      if (!roots.some((root) => parent === root || parent.startsWith(root + "/"))) break
      const entry = directories.get(parent) ?? { owners: new Set(), children: new Map() }
      directories.set(parent, entry)
      entry.owners.add(holder)
      const known = entry.children.get(child) ?? { owners: new Set<number>(), ...(child === file.uri ? { file } : {}) }
      entry.children.set(child, known)
      known.owners.add(holder)
      child = parent
    }
  }
  return [...directories].sort(([a], [b]) => (a < b ? -1 : 1)).map(([uri, entry]) => ({
    uri,
    owners: [...entry.owners].sort((a, b) => a - b),
    children: [...entry.children].sort(([a], [b]) => (a < b ? -1 : 1)).map(([child, { file, owners }]) => ({
      uri: child,
      owners: [...owners].sort((a, b) => a - b),
      resource: file === undefined
        ? { uri: child, name: decodeURIComponent(child.slice(child.lastIndexOf("/") + 1)), mimeType: "inode/directory" }
        : { uri: child, name: file.name, mimeType: file.mimeType, size: file.size }
    }))
  }))
}

const Segment = Schema.Literals(["a", "b", "c d", "é"])
const Catalogue = Schema.Array(Schema.Struct({
  // A skill at one of a few paths, so that some nest in others (R10).
  path: Schema.Array(Schema.Literals(["x", "y"])).check(Schema.isMinLength(1), Schema.isMaxLength(3)),
  files: Schema.Array(Schema.Array(Segment).check(Schema.isMinLength(1), Schema.isMaxLength(3))).check(Schema.isMaxLength(5))
})).check(Schema.isMaxLength(5))

// Definitions of the drawn skills; a nested skill's files are also its parents' (same bytes).
const definitionsOf = (drawn: typeof Catalogue.Type) => {
  const byPath = new Map<string, Record<string, string>>()
  for (const skill of drawn) {
    const path = skill.path.join("/")
    const files = byPath.get(path) ?? { "SKILL.md": skillMd(skill.path.at(-1)!) }
    for (const segments of skill.files) files[`f/${segments.join("/")}.md`] = `${segments.join("/")}\n`
    byPath.set(path, files)
  }
  for (const [path, files] of byPath) {
    for (const [parent, outer] of byPath) {
      if (!path.startsWith(parent + "/")) continue
      for (const [file, content] of Object.entries(files)) outer[`${path.slice(parent.length + 1)}/${file}`] = content
    }
  }
  return [...byPath].map(([path, files]) => Skill.make({ path, files }))
}

describe("Snapshot.directories", () => {
  it.effect.prop("every directory is the one a listing of all files gives, nested skills included", { drawn: Catalogue }, ({ drawn }) =>
    Effect.gen(function*() {
      const built = yield* Effect.exit(SkillRegistry.build(definitionsOf(drawn)))
      // Drawn catalogues a build refuses (a file where a nested skill's folder is) have no directories to compare.
      if (built._tag === "Failure") return
      const snapshot = built.value
      const expected = listing(snapshot)
      expect(expected.map(({ uri }) => snapshot.directories.get(uri))).toEqual(expected)
      expect([...snapshot.directories.all()].sort((a, b) => (a.uri < b.uri ? -1 : 1))).toEqual(expected)
      for (const file of snapshot.files.all()) assert.isUndefined(snapshot.directories.get(file.uri), file.uri)
      assert.isUndefined(snapshot.directories.get("skill://x/nothing-here"))
    }), { arbitrary: { runs: 200 } })

  it.effect("keeps the most recently read directories, and derives the others again", () =>
    Effect.gen(function*() {
      const skills = Array.from({ length: Directories.Kept + 1 }, (_, i) =>
        Skill.make({ path: `s${i}`, files: { "SKILL.md": skillMd(`s${i}`), "notes/a.md": `${i}\n` } }))
      const snapshot = yield* SkillRegistry.build(skills)
      const first = snapshot.directories.get("skill://s0")!
      assert.strictEqual(snapshot.directories.get("skill://s0"), first)
      const recent = snapshot.directories.get("skill://s1")!
      for (let i = 2; i <= Directories.Kept; i++) snapshot.directories.get(`skill://s${i}`)
      // Kept directories read, s1 again among them: s0 is the least recently read and goes.
      assert.strictEqual(snapshot.directories.get("skill://s1"), recent)
      const again = snapshot.directories.get("skill://s0")!
      assert.notStrictEqual(again, first)
      expect(again).toEqual(first)
    }))

  it("answers carrying content weigh what they carry, up to MemoBytes; more than MaxKeptBytes of it is never kept", () => {
    const memo = Answer.makeMemo()
    const snapshot = {} as Snapshot.Snapshot
    // Each weighs its AnswerWeight plus twice what it carries.
    const text = "x".repeat(Answer.MaxKeptBytes / 2)
    const fits = Math.floor(Answer.MemoBytes / (Answer.AnswerWeight + Answer.MaxKeptBytes))
    let computed = 0
    const read = (key: string, content = text) =>
      memo.keep(snapshot, key, () => {
        computed++
        return Answer.make({ contents: [{ uri: key, text: content }] }, { ttlMs: 0, cacheScope: "public" }, false)
      })
    const first = read("r0")
    for (let i = 1; i < fits; i++) read(`r${i}`)
    assert.strictEqual(read("r0"), first)
    read(`r${fits}`)
    assert.strictEqual(computed, fits + 1)
    // r1 was the least recently used: it went to make room; r0 stayed.
    assert.strictEqual(read("r0"), first)
    read("r1")
    assert.strictEqual(computed, fits + 2)
    // A large file's answer is made per request: keeping it would push out many small ones.
    const large = "x".repeat(Answer.MaxKeptBytes + 1)
    read("large", large)
    read("large", large)
    assert.strictEqual(computed, fits + 4)
  })

  it("a layer keeps at most MemoSize answers per snapshot, forgetting the least recently used", () => {
    const memo = Answer.makeMemo()
    const snapshot = {} as Snapshot.Snapshot
    let computed = 0
    const answer = (key: string) =>
      memo.keep(snapshot, key, () => {
        computed++
        return Answer.make({ key }, { ttlMs: 0, cacheScope: "public" }, false)
      })
    const first = answer("k0")
    for (let i = 1; i < Answer.MemoSize; i++) answer(`k${i}`)
    assert.strictEqual(answer("k0"), first)
    answer("one more")
    assert.strictEqual(computed, Answer.MemoSize + 1)
    // k1 was the least recently used: computed again; k0 was kept.
    answer("k1")
    assert.strictEqual(computed, Answer.MemoSize + 2)
    assert.strictEqual(answer("k0"), first)
  })
})
