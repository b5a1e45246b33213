/**
 * Each byte held once. A file's bytes are one array shared by the directory
 * source (what it keeps to tell unchanged files) and the registry's snapshot; the wire form is
 * derived only when the file is read, and a reload of an unchanged skill keeps the same array.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Manifest } from "@mcp-skills/core"
import { Effect } from "effect"
import { DirectorySource, SkillRegistry } from "../src/index.js"
import { tree } from "./support/tree.js"

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`

describe("each byte held once", () => {
  it.effect("the source's bytes are the snapshot's bytes; text is derived on the first read only", () =>
    Effect.gen(function*() {
      const root = tree({
        "a/SKILL.md": skillMd("a"),
        "a/references/guide.md": "# Guide\n",
        "b/SKILL.md": skillMd("b"),
        "b/assets/logo.bin": new Uint8Array([0xff, 0x00, 0x01])
      })
      const source = yield* DirectorySource.make([{ path: root }], { log: () => Effect.void })
      const registry = yield* SkillRegistry.make(source.definitions)
      const loaded = (yield* source.scan).roots[0]!.loaded.skills
      const snapshot = yield* registry.snapshot
      for (const skill of loaded) {
        const entry = snapshot.byUri.get(skill.manifest.uri)
        assert(entry?._tag === "Static")
        expect(entry.manifest).toBe(skill.manifest)
        // A skill's files were read together into one buffer, which the snapshot holds as it is,
        // with the manifest's table in front of them: one allocation a skill.
        const files = entry.manifest.files
        expect(files.buffers()).toHaveLength(1)
        let size = 0
        for (let index = 0; index < files.length; index++) size += files.size(index)
        expect(files.buffers()[0]!.byteLength).toBe(Manifest.tableBytes(files.length) + size)
        expect(files.bytes(0)!.byteOffset).toBe(Manifest.tableBytes(files.length))
      }
      // No wire form is kept as an own field of a file entry: it is derived when first read.
      const guide = snapshot.files.get("skill://a/references/guide.md")
      const logo = snapshot.files.get("skill://b/assets/logo.bin")
      assert(guide?._tag === "InMemory" && logo?._tag === "InMemory")
      expect(Object.keys(guide)).not.toContain("content")
      expect(guide.content).toEqual({ text: "# Guide\n" })
      expect(logo.content).toEqual({ blob: "/wAB" })

      // A rescan with nothing changed hands out the very same arrays.
      yield* registry.reload
      const again = yield* registry.snapshot
      const before = snapshot.byUri.get("skill://a/SKILL.md")
      const after = again.byUri.get("skill://a/SKILL.md")
      assert(before?._tag === "Static" && after?._tag === "Static")
      expect(after.manifest).toBe(before.manifest)
      expect(after.manifest.files.buffers()[0]).toBe(before.manifest.files.buffers()[0])
    }).pipe(Effect.scoped))
})
