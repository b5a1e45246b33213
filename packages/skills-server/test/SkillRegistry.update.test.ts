/**
 * `SkillRegistry.update`, a source's change in one swap. Only the changed
 * definitions are validated; they stay the source's (the next `replace` replaces them), a skill
 * added by `upsert` keeps precedence over them, and a failing update changes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Skill, SkillRegistry, Snapshot } from "../src/index.js"
import { skillMd } from "./support/fixtures.js"

const skill = (name: string, text = `# ${name}\n`) =>
  Skill.make({ path: name, files: { "SKILL.md": skillMd(name), "references/a.md": text } })

const uri = (name: string) => `skill://${name}/SKILL.md`
const uris = (snapshot: Snapshot.Snapshot) => [...snapshot.byUri.keys()].sort()

describe("SkillRegistry.update", () => {
  it.effect("puts in and takes out in one swap, validating only the change, as a full build would", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([skill("a"), skill("b"), skill("c")])
      const before = yield* registry.stats
      const changes = yield* registry.update({ upsert: [skill("b", "# b, edited\n"), skill("d")], remove: [uri("c")] })
      expect(changes).toMatchObject({
        added: [uri("d")],
        removed: [uri("c")],
        changed: [{ uri: uri("b"), filesChanged: ["skill://b/references/a.md"] }],
        listChanged: true
      })
      expect(changes.updated).toEqual(["skill://b/references/a.md", "skill://c/SKILL.md", "skill://c/references/a.md"])
      expect((yield* registry.stats).builds - before.builds).toBe(1)
      expect((yield* registry.stats).builtSkills - before.builtSkills).toBe(2)
      const snapshot = yield* registry.snapshot
      const full = yield* SkillRegistry.build([skill("a"), skill("b", "# b, edited\n"), skill("d")])
      expect(snapshot.revision).toBe(full.revision)
      expect(uris(snapshot)).toEqual(uris(full))
    }))

  it.effect("nothing to do: no new snapshot, no build", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([skill("a")])
      const snapshot = yield* registry.snapshot
      const changes = yield* registry.update({ upsert: [], remove: [] })
      expect(changes).toEqual({ added: [], removed: [], changed: [], listChanged: false, updated: [] })
      expect(yield* registry.snapshot).toBe(snapshot)
      expect((yield* registry.stats).builds).toBe(1)
    }))

  it.effect("its definitions stay the source's: replaced by the next replace, unlike an upsert's", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([skill("a")])
      yield* registry.update({ upsert: [skill("from-source")], remove: [] })
      yield* registry.upsert([skill("at-runtime")])
      yield* registry.replace([skill("a")])
      expect(uris(yield* registry.snapshot)).toEqual([uri("a"), uri("at-runtime")])
    }))

  it.effect("a skill added by upsert keeps precedence: the source's version and removal are ignored", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([skill("a")])
      yield* registry.upsert([skill("a", "# runtime\n")])
      const snapshot = yield* registry.snapshot
      const changes = yield* registry.update({ upsert: [skill("a", "# source\n")], remove: [uri("a")] })
      expect(changes.changed).toEqual([])
      expect(yield* registry.snapshot).toBe(snapshot)
    }))

  it.effect("a failing update leaves the catalogue unchanged", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([skill("a"), skill("b")])
      const snapshot = yield* registry.snapshot
      const wrong = Skill.make({ path: "c", files: { "SKILL.md": skillMd("not-c") } })
      const result = yield* Effect.exit(registry.update({ upsert: [wrong], remove: [uri("a")] }))
      expect(Exit.isFailure(result)).toBe(true)
      expect(yield* registry.snapshot).toBe(snapshot)
      // And the next update starts from that catalogue.
      yield* registry.update({ upsert: [], remove: [uri("a")] })
      expect(uris(yield* registry.snapshot)).toEqual([uri("b")])
    }))
})
