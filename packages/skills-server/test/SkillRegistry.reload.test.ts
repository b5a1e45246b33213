/**
 * Incremental reloads. `DirectorySource.make` + `SkillRegistry.make(source.definitions)`:
 * `reload` reports what changed (skills, and files per skill), re-reads only changed files and
 * re-hashes only changed skills (counters), keeps a skill's last good version across a bad edit,
 * serves several roots with their own prefixes, refuses colliding roots, and never publishes a
 * skill whose files were caught mid-change.
 */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { DirectoryModel, DirectorySource, Skill, SkillRegistry, Snapshot } from "../src/index.js"
import { tree, write } from "./support/tree.js"

// Files older than the racy window: a scan trusts their size, mtime and inode alone.
const age = (root: string) => {
  const past = new Date(Date.now() - 3_600_000)
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) visit(full)
      else fs.utimesSync(full, past, past)
    }
  }
  visit(root)
}

const skillMd = (name: string, description = `The ${name} skill.`) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n`

const open = (roots: ReadonlyArray<DirectoryModel.Root>, lines: Array<string> = []) =>
  Effect.gen(function*() {
    const source = yield* DirectorySource.make(roots, { log: (line) => Effect.sync(() => lines.push(line)) })
    const registry = yield* SkillRegistry.make(source.definitions)
    return { source, registry, lines }
  })

layer(NodeServices.layer)("reload", (it) => {
  it.effect("reports added, removed and changed skills and, per skill, files added, removed and changed", () =>
    Effect.gen(function*() {
      const root = tree({
        "alpha/SKILL.md": skillMd("alpha"),
        "alpha/a.md": "a1",
        "alpha/gone.md": "gone",
        "beta/SKILL.md": skillMd("beta"),
        "hidden/SKILL.md": skillMd("hidden")
      })
      const { registry } = yield* open([{ path: root }])
      expect(yield* registry.reload).toEqual({ added: [], removed: [], changed: [], listChanged: false, updated: [] })

      write(root, "alpha/a.md", "a2")
      write(root, "alpha/new.md", "new")
      fs.rmSync(path.join(root, "alpha/gone.md"))
      write(root, "gamma/SKILL.md", skillMd("gamma"))
      fs.rmSync(path.join(root, "beta"), { recursive: true })
      const changes = yield* registry.reload
      expect(changes).toEqual({
        added: ["skill://gamma/SKILL.md"],
        removed: ["skill://beta/SKILL.md"],
        changed: [{
          uri: "skill://alpha/SKILL.md",
          filesAdded: ["skill://alpha/new.md"],
          filesRemoved: ["skill://alpha/gone.md"],
          filesChanged: ["skill://alpha/a.md"]
        }],
        listChanged: true,
        updated: ["skill://alpha/a.md", "skill://alpha/gone.md", "skill://beta/SKILL.md"]
      })
      const snapshot = yield* registry.snapshot
      expect(snapshot.skills.map((skill) => skill.uri)).toEqual([
        "skill://alpha/SKILL.md",
        "skill://gamma/SKILL.md",
        "skill://hidden/SKILL.md"
      ])
    }))

  it.effect("a change only a digest shows (same name and description) still changes the listing (R32)", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha") })
      const { registry } = yield* open([{ path: root }])
      write(root, "alpha/SKILL.md", skillMd("alpha") + "\nMore.\n")
      const changes = yield* registry.reload
      expect(changes.listChanged).toBe(true)
      expect(changes.changed.map((change) => change.filesChanged)).toEqual([["skill://alpha/SKILL.md"]])
    }))

  it.effect("one changed file in a 1,000-skill catalogue: one file read, one skill hashed, nothing else", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = {}
      for (let i = 0; i < 1000; i++) {
        const name = `s${String(i).padStart(4, "0")}`
        files[`${name}/SKILL.md`] = skillMd(name)
        files[`${name}/references/guide.md`] = `# Guide ${i}\n`
      }
      const root = tree(files)
      age(root)
      const { registry, source } = yield* open([{ path: root }])
      const before = yield* source.stats
      const registryBefore = yield* registry.stats
      expect(before).toMatchObject({ readFiles: 2000, hashedFiles: 2000 })
      // The registry reuses the manifests the source built: it hashes nothing itself.
      expect(registryBefore.hashedFiles).toBe(0)

      write(root, "s0500/references/guide.md", "# Guide 500, edited\n")
      const changes = yield* registry.reload
      expect(changes.changed).toEqual([{
        uri: "skill://s0500/SKILL.md",
        filesAdded: [],
        filesRemoved: [],
        filesChanged: ["skill://s0500/references/guide.md"]
      }])
      const after = yield* source.stats
      expect(after.readFiles - before.readFiles).toBe(1)
      expect(after.readBytes - before.readBytes).toBe("# Guide 500, edited\n".length)
      // Only the edited file is hashed again: its skill's SKILL.md keeps its digest and the other 999
      // skills keep their manifests.
      expect(after.hashedFiles - before.hashedFiles).toBe(1)
      expect(after.hashedBytes - before.hashedBytes).toBe("# Guide 500, edited\n".length)
      expect((yield* registry.stats).hashedFiles).toBe(0)
    }), { timeout: 60_000 })

  it.effect("a bad edit keeps the last good version with one log line; the fix is served", () =>
    Effect.gen(function*() {
      const root = tree({ "acme/billing/refunds/SKILL.md": skillMd("refunds") })
      const { registry, lines } = yield* open([{ path: root }])
      const entryOf = (snapshot: Snapshot.Snapshot) =>
        snapshot.entries.get(snapshot.byUri.get("skill://acme/billing/refunds/SKILL.md") as Snapshot.StaticSkill)
      const good = entryOf(yield* registry.snapshot)

      write(root, "acme/billing/refunds/SKILL.md", "---\nname: refunds\ndescription: &x anchored\n---\n")
      expect((yield* registry.reload).changed).toEqual([])
      yield* registry.reload
      expect(lines).toEqual([
        "acme/billing/refunds/SKILL.md:3: anchor &x is not allowed; still serving the last good version"
      ])
      expect(entryOf(yield* registry.snapshot)).toStrictEqual(good)

      write(root, "acme/billing/refunds/SKILL.md", skillMd("refunds", "Fixed."))
      const fixed = yield* registry.reload
      expect(fixed.changed.map((change) => change.uri)).toEqual(["skill://acme/billing/refunds/SKILL.md"])
      expect((yield* registry.snapshot).byUri.get("skill://acme/billing/refunds/SKILL.md")!.frontmatter.description)
        .toBe("Fixed.")
      expect(lines.at(-1)).toBe("acme/billing/refunds: valid again, serving the new version")
    }))

  it.effect("a new invalid skill is not served, with one line naming the file and the rule", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha") })
      const { registry, lines } = yield* open([{ path: root }])
      write(root, "beta/SKILL.md", skillMd("not-beta"))
      expect((yield* registry.reload).added).toEqual([])
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^beta\/SKILL\.md: frontmatter name "not-beta" differs .*; not served$/)
    }))

  describe("several roots", () => {
    it.effect("each root has its own prefix and cache hint", () =>
      Effect.gen(function*() {
        const one = tree({ "alpha/SKILL.md": skillMd("alpha") })
        const two = tree({ "alpha/SKILL.md": skillMd("alpha") })
        const { registry } = yield* open([
          { path: one },
          { path: two, prefix: ["team"], cacheHint: { ttl: "1 minute", scope: "public" } }
        ])
        const snapshot = yield* registry.snapshot
        expect(snapshot.skills.map((skill) => [skill.uri, skill.cacheHint])).toEqual([
          ["skill://alpha/SKILL.md", undefined],
          ["skill://team/alpha/SKILL.md", { ttlMs: 60_000, cacheScope: "public" }]
        ])
      }))

    it.effect("two roots producing the same skill URI is an error naming both folders", () =>
      Effect.gen(function*() {
        const one = tree({ "alpha/SKILL.md": skillMd("alpha") })
        const two = tree({ "alpha/SKILL.md": skillMd("alpha") })
        const error = yield* Effect.flip(open([{ path: one }, { path: two }]))
        expect(error._tag).toBe("UriCollision")
        expect(error.message).toBe(
          `skill://alpha/SKILL.md is served from both ${one}/alpha and ${two}/alpha; give one of the roots a prefix`
        )
      }))
  })

  it.effect("a skill rewritten while scans run is only ever published as one whole version", () =>
    Effect.gen(function*() {
      // Both files of a version carry its number: a published skill mixing versions would show two.
      const version = (n: number) => ({
        "mixed/SKILL.md": skillMd("mixed", `Version ${n}.`),
        "mixed/data.md": `version ${n}\n${"y".repeat(n % 7 * 1000)}`
      })
      const root = tree(version(0))
      const { registry } = yield* open([{ path: root }])
      let writing = true
      const writer = yield* Effect.promise(async () => {
        for (let n = 1; writing; n++) {
          for (const [relative, content] of Object.entries(version(n))) write(root, relative, content)
          // Pauses between versions, so some scans find a quiet moment and publish a newer one.
          await new Promise((resolve) => setTimeout(resolve, n % 3))
        }
      }).pipe(Effect.forkChild)
      const seen = new Set<string>()
      for (let i = 0; i < 60; i++) {
        yield* Effect.ignore(registry.reload)
        const skill = (yield* registry.snapshot).byUri.get("skill://mixed/SKILL.md") as Snapshot.StaticSkill
        const description = String(skill.frontmatter.description)
        const data = new TextDecoder().decode(skill.manifest.files.bytes(skill.manifest.files.indexOf("data.md")))
        const versions = new Set([/Version (\d+)/.exec(description)![1], /version (\d+)/.exec(data)![1]])
        // A SKILL.md of version n may sit beside data.md of version n-1 only if that pair was on disk
        // at one moment (the writer writes SKILL.md first): never data from a later version.
        const [first, second] = [...versions].map(Number)
        if (second !== undefined) expect(second).toBe(first! - 1)
        seen.add(description)
      }
      writing = false
      yield* Fiber.join(writer)
      expect(seen.size).toBeGreaterThan(1)
    }), { timeout: 60_000 })

  it.effect("a registry made from code reloads its definitions; Skill.make inputs with equal bytes are not rehashed", () =>
    Effect.gen(function*() {
      let description = "One."
      const registry = yield* SkillRegistry.make(Effect.sync(() => [
        Skill.make({ path: "code", files: { "SKILL.md": skillMd("code", description), "a.md": "a" } })
      ]))
      expect((yield* registry.stats).hashedFiles).toBe(2)
      expect((yield* registry.reload).changed).toEqual([])
      expect((yield* registry.stats).hashedFiles).toBe(2)
      description = "Two."
      expect((yield* registry.reload).changed.map((change) => change.filesChanged)).toEqual([["skill://code/SKILL.md"]])
      expect(yield* registry.stats).toMatchObject({ builds: 3, hashedFiles: 4, builtSkills: 3 })
    }))
})
