/**
 * Reload at scale. On a generated 2,000-skill catalogue, one edited file is the
 * only file read and hashed again, by a full `reload` and by a reload `watch` runs; the watched one
 * looks again only at the path its event named, so its cost does not grow with the catalogue.
 */
import { assert, describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { DirectorySource, SkillRegistry, Snapshot } from "../src/index.js"
import { tree, write } from "./support/tree.js"
import { live, sleep, watchReloads } from "./support/watched.js"

const Skills = 2_000

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`

// A catalogue whose files are older than the racy window, so a scan trusts their stamps alone.
const catalogue = () => {
  const files: Record<string, string> = {}
  for (let i = 0; i < Skills; i++) {
    const name = `s${String(i).padStart(4, "0")}`
    files[`team-${i % 20}/${name}/SKILL.md`] = skillMd(name)
    files[`team-${i % 20}/${name}/references/guide.md`] = `# Guide ${i}\n`
  }
  const root = tree(files)
  const past = new Date(Date.now() - 3_600_000)
  for (const relative of Object.keys(files)) fs.utimesSync(path.join(root, relative), past, past)
  return root
}

const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 400 && !done(); attempt++) yield* sleep(50)
    assert(done(), "the watched reload happened")
  })

const guideOf = (snapshot: Snapshot.Snapshot, uri: string) => {
  const skill = snapshot.byUri.get(uri)
  assert(skill?._tag === "Static", `${uri} is a static skill`)
  return new TextDecoder().decode(skill.manifest.files.bytes(skill.manifest.files.indexOf("references/guide.md")))
}

describe("reload at scale", () => {
  live("2,000 skills: one edited file is the only file re-read and re-hashed, by reload and by watch", () =>
    Effect.gen(function*() {
      const root = catalogue()
      const source = yield* DirectorySource.make([{ path: root }], { log: () => Effect.void })
      const registry = yield* SkillRegistry.make(source.definitions)
      const first = yield* source.stats
      expect(first).toMatchObject({ readFiles: 2 * Skills, hashedFiles: 2 * Skills })

      // A full reload: every entry looked at again, one file read.
      write(root, "team-7/s0507/references/guide.md", "# Guide 507, edited\n")
      expect((yield* registry.reload).changed.map((change) => change.uri)).toEqual(["skill://team-7/s0507/SKILL.md"])
      const afterReload = yield* source.stats
      expect(afterReload.readFiles - first.readFiles).toBe(1)
      expect(afterReload.hashedFiles - first.hashedFiles).toBe(1)
      expect(afterReload.lookedAt - first.lookedAt).toBeGreaterThan(2 * Skills)

      // A watched reload: only the path the event named is looked at, and the registry is handed
      // only the changed skill (the full reload above went through all 2,000).
      const reloads = yield* watchReloads(source, registry)
      const before = yield* source.stats
      const registryBefore = yield* registry.stats
      write(root, "team-11/s1011/references/guide.md", "# Guide 1011, edited while watched\n")
      yield* until(() => reloads.length === 1)
      expect(guideOf(yield* registry.snapshot, "skill://team-11/s1011/SKILL.md")).toBe("# Guide 1011, edited while watched\n")
      const after = yield* source.stats
      expect(after.readFiles - before.readFiles).toBe(1)
      expect(after.readBytes - before.readBytes).toBe("# Guide 1011, edited while watched\n".length)
      expect(after.hashedFiles - before.hashedFiles).toBe(1)
      expect(after.lookedAt - before.lookedAt).toBeLessThanOrEqual(2)
      const registryAfter = yield* registry.stats
      expect(registryAfter.builtSkills - registryBefore.builtSkills).toBe(1)
      // The source hashed the file once; the registry takes its manifest as it is.
      expect(registryAfter.hashedFiles - registryBefore.hashedFiles).toBe(0)
      expect(reloads[0]).toEqual({
        added: [],
        removed: [],
        changed: [{
          uri: "skill://team-11/s1011/SKILL.md",
          filesAdded: [],
          filesRemoved: [],
          filesChanged: ["skill://team-11/s1011/references/guide.md"]
        }],
        listChanged: true,
        updated: ["skill://team-11/s1011/references/guide.md"]
      })

      // A skill that goes away is removed, one that appears is added, each alone.
      fs.rmSync(path.join(root, "team-3/s0003"), { recursive: true })
      yield* until(() => reloads.length === 2)
      expect(reloads[1]).toMatchObject({ added: [], removed: ["skill://team-3/s0003/SKILL.md"], changed: [] })
      write(root, "team-3/fresh/SKILL.md", skillMd("fresh"))
      yield* until(() => reloads.length === 3)
      expect(reloads[2]).toMatchObject({ added: ["skill://team-3/fresh/SKILL.md"], removed: [], changed: [] })
      expect((yield* registry.stats).builtSkills - registryBefore.builtSkills).toBe(2)
      const snapshot = yield* registry.snapshot
      expect(snapshot.skills.length).toBe(Skills)
      expect(snapshot.byUri.has("skill://team-3/s0003/SKILL.md")).toBe(false)

      // A scan from elsewhere leaves the registry behind the source's last scan: the next watched
      // reload is a full one, and the one after hands over only what changed again.
      yield* source.scan
      const resync = yield* registry.stats
      write(root, "team-5/s0005/references/guide.md", "# Guide 5, edited after a scan\n")
      yield* until(() => reloads.length === 4)
      expect(reloads[3]!.changed.map((change) => change.uri)).toEqual(["skill://team-5/s0005/SKILL.md"])
      expect((yield* registry.stats).builtSkills - resync.builtSkills).toBe(Skills)
      write(root, "team-6/s0006/references/guide.md", "# Guide 6, edited\n")
      yield* until(() => reloads.length === 5)
      expect(reloads[4]!.changed.map((change) => change.uri)).toEqual(["skill://team-6/s0006/SKILL.md"])
      expect((yield* registry.stats).builtSkills - resync.builtSkills).toBe(Skills + 1)

      // The same catalogue a full build of the source's definitions makes.
      const full = yield* SkillRegistry.build(yield* source.definitions)
      const digestsOf = (of: Snapshot.Snapshot) =>
        new Map(of.files.all().map((file) => [file.uri, file.digest]))
      const final = yield* registry.snapshot
      const mine = digestsOf(final)
      const theirs = digestsOf(full)
      expect([...mine].filter(([uri, digest]) => theirs.get(uri) !== digest)).toEqual([])
      expect([...theirs].filter(([uri, digest]) => mine.get(uri) !== digest)).toEqual([])
      expect(final.revision).toEqual(full.revision)
      expect(final.listed.map((skill) => skill.uri)).toEqual(full.listed.map((skill) => skill.uri))
    }))
})
