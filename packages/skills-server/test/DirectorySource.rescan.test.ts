/**
 * What a directory source keeps from scan to scan: one record per file, keyed by its path under the
 * root, its path on disk derived from the root's. A file reached through a symbolic link is read
 * through the link; the files of a skill changed under watch line up with its last version, so a
 * later scan with nothing changed hands out the very same skill; an event naming a folder reads
 * nothing unchanged below it; the periodic check compares every file with its record.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { DirectoryModel, DirectorySource } from "../src/index.js"
import { ChangedPaths } from "../src/internal/directory/source.js"
import { tree, write } from "./support/tree.js"

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`

// Files older than the racy window, so that a scan trusts their stamps alone.
const age = (root: string, ...relative: Array<string>) => {
  const past = new Date(Date.now() - 3_600_000)
  for (const file of relative) fs.utimesSync(path.join(root, file), past, past)
}

const open = (root: string) => DirectorySource.make([{ path: root }], { log: () => Effect.void })

const skillOf = (scan: DirectoryModel.Scan, uri: string) =>
  scan.roots[0]!.loaded.skills.find((skill) => skill.manifest.uri === uri)

const textOf = (scan: DirectoryModel.Scan, uri: string, file: string) => {
  const bytes = Array.from(skillOf(scan, uri)?.manifest.files ?? []).find((each) => each.path === file)?.bytes
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes)
}

// A scan as `watch` runs it after events named `paths` (relative to `root`).
const watched = (source: DirectoryModel.Source, root: string, ...paths: Array<string>) =>
  source.changes.pipe(Effect.provideService(ChangedPaths, new Set(paths.map((relative) => path.join(root, relative)))))

describe("what a directory source keeps between scans", () => {
  it.effect("a link to a file inside the root is read through the link: its target's edits, a new target, a target gone", () =>
    Effect.gen(function*() {
      const root = tree({
        "alpha/SKILL.md": skillMd("alpha"),
        "shared/common.md": "common, first version",
        "shared/other.md": "the other file"
      })
      const link = path.join(root, "alpha/common.md")
      fs.symlinkSync("../shared/common.md", link)
      age(root, "alpha/SKILL.md", "shared/common.md", "shared/other.md")
      const source = yield* open(root)
      const first = yield* source.scan
      expect(textOf(first, "skill://alpha/SKILL.md", "common.md")).toBe("common, first version")

      // Nothing changed: nothing is read, and the skill is the same object.
      const before = yield* source.stats
      const again = yield* source.scan
      expect((yield* source.stats).readFiles).toBe(before.readFiles)
      expect(skillOf(again, "skill://alpha/SKILL.md")).toBe(skillOf(first, "skill://alpha/SKILL.md"))

      write(root, "shared/common.md", "common, second and longer version")
      expect(textOf(yield* source.scan, "skill://alpha/SKILL.md", "common.md")).toBe("common, second and longer version")

      fs.unlinkSync(link)
      fs.symlinkSync(path.join(root, "shared/other.md"), link)
      expect(textOf(yield* source.scan, "skill://alpha/SKILL.md", "common.md")).toBe("the other file")

      fs.unlinkSync(link)
      fs.symlinkSync("../shared/nowhere.md", link)
      const dangling = yield* source.scan
      expect(Array.from(skillOf(dangling, "skill://alpha/SKILL.md")?.manifest.files ?? [], (file) => file.path)).toEqual(["SKILL.md"])
      expect(dangling.roots[0]!.loaded.ignored).toContainEqual({ path: "alpha/common.md", reason: "broken symbolic link" })

      fs.unlinkSync(link)
      fs.symlinkSync(path.join(root, "shared/other.md"), link)
      expect(textOf(yield* source.scan, "skill://alpha/SKILL.md", "common.md")).toBe("the other file")
    }))

  it.effect("files added and removed under watch line up with the skill's last version: a full scan then reads, hashes and changes nothing", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/m.md": "m", "beta/SKILL.md": skillMd("beta") })
      age(root, "alpha/SKILL.md", "alpha/m.md", "beta/SKILL.md")
      const source = yield* open(root)
      expect((yield* source.changes).upsert).toHaveLength(2)

      // Added in an order unlike the manifest's, one of them before `SKILL.md` by code unit.
      for (const file of ["alpha/z.md", "alpha/a.md", "alpha/0.md"]) write(root, file, file)
      age(root, "alpha/z.md", "alpha/a.md", "alpha/0.md")
      const added = yield* watched(source, root, "alpha/z.md", "alpha/a.md", "alpha/0.md")
      expect(added.upsert.map((skill) => skill.path.join("/"))).toEqual(["alpha"])
      expect(Array.from(added.upsert[0]!.manifest?.files ?? [], (file) => file.path)).toEqual(["SKILL.md", "0.md", "a.md", "m.md", "z.md"])

      // Nothing changed: an event on one of its files, then a full scan, hand out the same skill.
      const settled = yield* source.stats
      expect(yield* watched(source, root, "alpha/m.md")).toEqual({ upsert: [], remove: [] })
      expect(yield* source.changes).toEqual({ upsert: [], remove: [] })
      expect(yield* source.stats).toMatchObject({ readFiles: settled.readFiles, hashedFiles: settled.hashedFiles })

      fs.rmSync(path.join(root, "alpha/a.md"))
      expect((yield* watched(source, root, "alpha/a.md")).upsert.map((skill) => skill.path.join("/"))).toEqual(["alpha"])
      const removed = yield* source.stats
      expect(yield* watched(source, root, "alpha/z.md")).toEqual({ upsert: [], remove: [] })
      expect(yield* source.changes).toEqual({ upsert: [], remove: [] })
      expect(yield* source.stats).toMatchObject({ readFiles: removed.readFiles, hashedFiles: removed.hashedFiles })

      // An event naming a folder walks it again, and reads none of its unchanged files.
      expect(yield* watched(source, root, "alpha")).toEqual({ upsert: [], remove: [] })
      expect((yield* source.stats).readFiles).toBe(removed.readFiles)
    }))

  it.effect("the periodic check names the files changed, added and removed since the last scan, and those read too soon", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/a.md": "a", "alpha/b.md": "b" })
      age(root, "alpha/SKILL.md", "alpha/a.md", "alpha/b.md")
      const source = yield* open(root)
      yield* source.scan
      expect(yield* source.check).toEqual({ missed: [], racy: [] })

      write(root, "alpha/a.md", "a, edited")
      fs.rmSync(path.join(root, "alpha/b.md"))
      write(root, "alpha/c.md", "c")
      const { missed, racy } = yield* source.check
      expect([...missed].sort()).toEqual(["alpha/a.md", "alpha/b.md", "alpha/c.md"].map((file) => path.join(root, file)))
      expect(racy).toEqual([])

      // Read within a second of being written: its stamp alone is not trusted.
      yield* source.scan
      expect(yield* source.check).toEqual({
        missed: [],
        racy: expect.arrayContaining(["alpha/a.md", "alpha/c.md"].map((file) => path.join(root, file)))
      })
    }))
})
