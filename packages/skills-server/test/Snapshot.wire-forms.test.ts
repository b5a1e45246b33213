/**
 * Files' wire forms are derived on a read and kept for the most recently read files only, up to a
 * byte budget per registry: a client reading a whole catalogue does not leave a second copy of
 * every file behind. Every snapshot of a registry shares them, by the files' bytes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Skill, SkillRegistry, Snapshot } from "../src/index.js"
import * as Build from "../src/internal/build.js"
import * as WireForms from "../src/internal/wireForms.js"
import { skillMd } from "./support/fixtures.js"

const text = (n: number) => `${String(n % 10).repeat(1000)}\n`

describe("wire forms", () => {
  it.effect("are kept up to the budget, the least recently read going first, and equal when derived again", () =>
    Effect.gen(function*() {
      const files: Record<string, string | Uint8Array> = { "SKILL.md": skillMd("big") }
      for (let i = 0; i < 4; i++) files[`f${i}.md`] = text(i)
      files["blob.bin"] = new Uint8Array(3000).fill(0xff)
      // Room for two of the 1,001-character texts, not three.
      const forms = WireForms.make(2500)
      const snapshot = yield* Effect.mapError(
        Build.build([Skill.make({ path: "big", files })], { wireForms: forms }),
        (problems) => new Error(JSON.stringify(problems))
      )
      const file = (name: string) => {
        const entry = snapshot.files.get(`skill://big/${name}`)
        assert(entry?._tag === "InMemory")
        return entry
      }
      const first = file("f0.md").content
      assert.strictEqual(file("f0.md").content, first)
      const second = file("f1.md").content
      // f0 was read before f1: the third read pushes f0 out and keeps f1.
      file("f2.md").content
      assert.strictEqual(file("f1.md").content, second)
      const again = file("f0.md").content
      assert.notStrictEqual(again, first)
      assert.deepStrictEqual(again, { text: text(0) })
      // A wire form heavier than the whole budget is served but never kept.
      const blob = file("blob.bin").content
      assert.deepStrictEqual(blob, Snapshot.wireContent(new Uint8Array(3000).fill(0xff)))
      assert.notStrictEqual(file("blob.bin").content, blob)
    }))

  it.effect("a registry's snapshots share them: a file a full rebuild keeps keeps its wire form", () =>
    Effect.gen(function*() {
      const alpha = Skill.make({ path: "alpha", files: { "SKILL.md": skillMd("alpha"), "notes.md": "alpha notes\n" } })
      const registry = yield* SkillRegistry.make([alpha])
      const before = yield* registry.snapshot
      const read = (snapshot: Snapshot.Snapshot) => {
        const entry = snapshot.files.get("skill://alpha/notes.md")
        assert(entry?._tag === "InMemory")
        return entry.content
      }
      const content = read(before)
      // `replace` builds a whole new snapshot, with new file entries for the same bytes.
      yield* registry.replace([alpha, Skill.make({ path: "beta", files: { "SKILL.md": skillMd("beta") } })])
      const after = yield* registry.snapshot
      assert.notStrictEqual(after.files.get("skill://alpha/notes.md"), before.files.get("skill://alpha/notes.md"))
      assert.strictEqual(read(after), content)
    }))
})
