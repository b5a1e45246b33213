/**
 * `SkillRegistry.upsert` / `remove` (validate only what changes, swap
 * atomically, announce like a reload) and skills declared as scoped layers.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { Skill, SkillRegistry, SkillsServer, Snapshot } from "../src/index.js"
import { skillMd } from "./support/fixtures.js"
import { legacyStdio, modernHttp, ServerUrl, StdioPipe, stdioServer, httpServer } from "./support/wire.js"

const staticSkill = (path: string, version: number, options: { listed?: boolean; public?: boolean } = {}) => {
  const name = path.split("/").at(-1)!
  const files: Record<string, string | Uint8Array> = { "SKILL.md": skillMd(name) }
  if (version >= 1) files["references/a.md"] = `# ${name} v${version}\n`
  if (version >= 2) files["assets/b.bin"] = new Uint8Array([0xff, version, 0x00])
  return Skill.make({
    path,
    files,
    listed: options.listed ?? true,
    ...(options.public === true ? { cacheHint: { ttl: "1 minute", scope: "public" as const } } : {})
  })
}

// A snapshot as requests see it, with indices replaced by the URIs they stand for, so a snapshot
// updated in place and one built from scratch compare equal exactly when they answer alike.
const view = (snapshot: Snapshot.Snapshot) => {
  const uriOf = (index: number) => snapshot.skills[index]!.uri
  const owners = (indices: ReadonlyArray<number>) => indices.map(uriOf).sort()
  snapshot.skills.forEach((skill, index) => {
    assert.strictEqual(skill.index, index)
    assert.strictEqual(snapshot.byUri.get(skill.uri), skill)
  })
  const sorted = <A>(entries: Iterable<A>, key: (a: A) => string) => [...entries].sort((a, b) => key(a) < key(b) ? -1 : 1)
  return {
    // Updated by the skills a change touches alone, it must still be the full build's revision.
    revision: snapshot.revision,
    skills: sorted(snapshot.byUri.values(), (skill) => skill.uri).map((skill) => ({
      uri: skill.uri,
      kind: skill._tag,
      listed: skill.listed,
      frontmatter: skill.frontmatter,
      hint: skill.cacheHint,
      entry: skill._tag === "Static" ? snapshot.entries.get(skill) : undefined
    })),
    size: [snapshot.skills.length, snapshot.byUri.size, snapshot.files.all().length, snapshot.directories.all().length],
    listed: snapshot.listed.map((skill) => skill.uri),
    // Each file as found through its URI: every field a request reads.
    files: sorted(snapshot.files.all(), (file) => file.uri).map((file) => {
      const found = snapshot.files.get(file.uri)!
      const { uri, name, mimeType, size, digest } = found
      return {
        uri,
        name,
        mimeType,
        size,
        digest,
        ...(found._tag === "InMemory" ? { content: found.content } : { location: found.location }),
        owners: owners(found.owners)
      }
    }),
    directories: sorted(snapshot.directories.all(), (directory) => directory.uri).map((directory) => ({
      uri: directory.uri,
      owners: owners(directory.owners),
      children: directory.children.map((child) => ({ ...child, owners: owners(child.owners) }))
    })),
    dynamicRoots: sorted(snapshot.dynamicRoots.keys(), (uri) => uri),
    families: snapshot.families.map((family) => [Snapshot.familyKey(family), family.definition]),
    nested: sorted(snapshot.nested.entries(), ([uri]) => uri),
    listing: [snapshot.listing.anyPrivate, snapshot.listing.anyDefault]
  }
}

// The universe the property draws from: plain, nested (R10: a full rebuild), dynamic, rendered,
// unlisted and public skills, each in three versions.
const universe = [
  (v: number) => staticSkill("alpha", v),
  (v: number) => staticSkill("beta", v, { listed: v !== 1 }),
  (v: number) => staticSkill("org/gamma", v),
  (v: number) => staticSkill("org/gamma/delta", v),
  (v: number) => staticSkill("team/eta", v, { public: true }),
  (v: number) =>
    Skill.dynamic({ path: "dyn/epsilon", frontmatter: { name: "epsilon", description: `v${v}` }, read: () => Effect.succeed(undefined) }),
  (v: number) =>
    Skill.rendered({ path: "org/zeta", render: () => Effect.succeed({ "SKILL.md": `${skillMd("zeta")}v${v}\n` }) }),
  (_v: number) => Skill.make({ path: "broken", files: { "SKILL.md": skillMd("not-broken") } }),
  (v: number) => Skill.family({ path: "fam/{x}", render: ({ x }) => Effect.succeed({ "SKILL.md": `${skillMd(x)}v${v}\n` }) }),
  // Where the family's instances live: refused while the family is there, and the other way round.
  (v: number) => staticSkill("fam/one", v)
]
const Pick = Schema.Literals([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
const Operation = Schema.Struct({
  remove: Schema.Boolean,
  picks: Schema.Array(Pick).check(Schema.isMaxLength(3)),
  version: Schema.Literals([0, 1, 2])
})

describe("SkillRegistry.upsert and remove", () => {
  it.effect.prop("after any sequence of changes, the snapshot equals a full build of the same skills", {
    initial: Schema.Array(Pick).check(Schema.isMaxLength(4)),
    operations: Schema.Array(Operation).check(Schema.isMaxLength(8))
  }, ({ initial, operations }) =>
    Effect.gen(function*() {
      const keyOf = (pick: number) => SkillRegistry.keyOf(universe[pick]!(0))
      const model = new Map<string, Skill.Definition>()
      for (const pick of new Set(initial)) if (pick < 7) model.set(keyOf(pick), universe[pick]!(0))
      const registry = yield* SkillRegistry.make([...model.values()])
      for (const operation of operations) {
        const before = yield* registry.snapshot
        if (operation.remove) {
          yield* registry.remove(operation.picks.map(keyOf))
          for (const pick of operation.picks) model.delete(keyOf(pick))
        } else {
          const batch = operation.picks.map((pick) => universe[pick]!(operation.version))
          const next = new Map(model)
          for (const definition of batch) next.set(SkillRegistry.keyOf(definition), definition)
          // The oracle: a full build of the catalogue the upsert would make (a batch naming one
          // skill twice is refused too).
          const valid = Exit.isSuccess(yield* Effect.exit(SkillRegistry.build([...next.values()]))) &&
            new Set(operation.picks).size === operation.picks.length
          const result = yield* Effect.exit(registry.upsert(batch))
          assert.strictEqual(Exit.isSuccess(result), valid)
          if (Exit.isFailure(result)) {
            // Refused: the catalogue is the one before, the very same snapshot.
            assert.strictEqual(yield* registry.snapshot, before)
            continue
          }
          for (const [i, pick] of operation.picks.entries()) model.set(keyOf(pick), batch[i]!)
        }
        const expected = yield* SkillRegistry.build([...model.values()])
        expect(view(yield* registry.snapshot)).toEqual(view(expected))
      }
    }), { timeout: 120_000, arbitrary: { runs: 400 } })

  it.effect("removing two skills where the first removal moves the second into its index", () =>
    Effect.gen(function*() {
      // Found by the property above: the second removal must find the moved skill at its new index.
      const registry = yield* SkillRegistry.make([staticSkill("alpha", 0)])
      yield* registry.upsert([universe[6]!(2), staticSkill("org/gamma", 2)])
      yield* registry.remove(["skill://alpha/SKILL.md", "skill://org/zeta/SKILL.md"])
      const snapshot = yield* registry.snapshot
      expect(view(snapshot)).toEqual(view(yield* SkillRegistry.build([staticSkill("org/gamma", 2)])))
    }))

  it.effect("upsert validates and hashes only the new skill and reports what changed", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([staticSkill("alpha", 1), staticSkill("beta", 2)])
      const stats = yield* registry.stats
      const added = yield* registry.upsert([staticSkill("gamma", 2)])
      expect(added).toEqual({ added: ["skill://gamma/SKILL.md"], removed: [], changed: [], listChanged: true, updated: [] })
      expect((yield* registry.stats).hashedFiles - stats.hashedFiles).toBe(3)
      const changed = yield* registry.upsert([staticSkill("alpha", 2)])
      expect(changed.changed).toEqual([{
        uri: "skill://alpha/SKILL.md",
        filesAdded: ["skill://alpha/assets/b.bin"],
        filesRemoved: [],
        filesChanged: ["skill://alpha/references/a.md"]
      }])
      expect(changed.updated).toEqual(["skill://alpha/references/a.md"])
      // The same bytes again: nothing hashed, nothing changed.
      const again = yield* registry.stats
      expect((yield* registry.upsert([staticSkill("alpha", 2)])).changed).toEqual([])
      expect((yield* registry.stats).hashedFiles).toBe(again.hashedFiles)
      const removed = yield* registry.remove(["skill://beta/SKILL.md", "skill://nowhere/SKILL.md"])
      expect(removed.removed).toEqual(["skill://beta/SKILL.md"])
      expect(removed.updated).toEqual(["skill://beta/SKILL.md", "skill://beta/assets/b.bin", "skill://beta/references/a.md"].sort())
      const snapshot = yield* registry.snapshot
      expect([...snapshot.byUri.keys()].sort()).toEqual(["skill://alpha/SKILL.md", "skill://gamma/SKILL.md"])
    }))

  it.effect("a failing upsert changes nothing and names every problem", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([staticSkill("alpha", 1)])
      const before = yield* registry.snapshot
      const error = yield* Effect.flip(registry.upsert([
        staticSkill("fine", 0),
        Skill.make({ path: "wrong", files: { "SKILL.md": skillMd("other") } })
      ]))
      expect(error._tag).toBe("RegistrationError")
      expect(error.problems.map((problem) => problem.skill)).toEqual(["skill://wrong/SKILL.md"])
      assert.strictEqual(yield* registry.snapshot, before)
      // A skill where a family's instances live is refused the same way.
      yield* registry.upsert([Skill.family({ path: "customers/{customer}/onboarding", render: () => Effect.succeed({}) })])
      const conflict = yield* Effect.flip(registry.upsert([staticSkill("customers/acme/onboarding", 0)]))
      expect(conflict.problems[0]!.reason).toContain("can name the same skill as the skill skill://customers/acme/onboarding/SKILL.md")
    }))

  it.effect("concurrent upserts are serialized: each sees the last one's catalogue and reports only its own change", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([])
      const builds = (yield* registry.stats).builds
      const results = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => `s${i}x`),
        (name) => registry.upsert([staticSkill(name, 1)]),
        { concurrency: "unbounded" }
      )
      expect(results.map((changes) => changes.added)).toEqual(Array.from({ length: 20 }, (_, i) => [`skill://s${i}x/SKILL.md`]))
      expect((yield* registry.snapshot).byUri.size).toBe(20)
      expect((yield* registry.stats).builds).toBe(builds + 20)
    }))

  it.effect("upserted skills outlive a reload of the source until removed", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([staticSkill("alpha", 0), staticSkill("beta", 0)])
      yield* registry.upsert([staticSkill("runtime", 0), staticSkill("beta", 2)])
      yield* registry.remove(["skill://alpha/SKILL.md"])
      const reloaded = yield* registry.reload
      // alpha comes back from the source; beta stays the upserted version; runtime stays.
      expect(reloaded.added).toEqual(["skill://alpha/SKILL.md"])
      const snapshot = yield* registry.snapshot
      expect([...snapshot.byUri.keys()].sort()).toEqual(["skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://runtime/SKILL.md"])
      expect(snapshot.files.get("skill://beta/assets/b.bin")).toBeDefined()
      yield* registry.remove(["skill://runtime/SKILL.md"])
      yield* registry.reload
      expect((yield* registry.snapshot).byUri.has("skill://runtime/SKILL.md")).toBe(false)
    }))
})

let captured: SkillRegistry.SkillRegistry["Service"] | undefined
const Skills = SkillsServer.layer({ skills: [staticSkill("alpha", 1)] })
const Capture = Layer.effectDiscard(Effect.gen(function*() {
  captured = yield* SkillRegistry.SkillRegistry
}))

layer(stdioServer(Layer.merge(Skills, Capture.pipe(Layer.provide(Skills)))))("announcements", (it) => {
  it.effect("upsert and remove announce list_changed and resources/updated as a reload does", () =>
    Effect.gen(function*() {
      const pipe = yield* StdioPipe
      const client = yield* legacyStdio(pipe)
      yield* client.call("resources/subscribe", { uri: "skill://alpha/references/a.md" })
      const seen = (method: string) => pipe.notifications.filter((message) => message.method === method)
      const settle = Effect.gen(function*() {
        for (let i = 0; i < 50; i++) yield* client.call("ping")
      })
      yield* captured!.upsert([staticSkill("beta", 0)])
      yield* settle
      expect(seen("notifications/resources/list_changed")).toHaveLength(1)
      yield* captured!.upsert([staticSkill("alpha", 2)])
      yield* settle
      expect(seen("notifications/resources/updated").map((message) => message.params.uri)).toEqual(["skill://alpha/references/a.md"])
      expect(seen("notifications/resources/list_changed")).toHaveLength(2)
      yield* captured!.remove(["skill://alpha/SKILL.md"])
      yield* settle
      expect(seen("notifications/resources/updated").map((message) => message.params.uri)).toEqual([
        "skill://alpha/references/a.md",
        "skill://alpha/references/a.md"
      ])
      expect(seen("notifications/resources/list_changed")).toHaveLength(3)
      expect((yield* client.call("skills/list")).skills.map((skill: any) => skill.uri)).toEqual(["skill://beta/SKILL.md"])
    }))
})

const Refunds = SkillsServer.skill(staticSkill("billing/refunds", 1))
const Onboarding = SkillsServer.family(Skill.family({
  path: "customers/{customer}/onboarding",
  list: () => Effect.succeed([{ customer: "acme" }]),
  render: ({ customer }) => Effect.succeed({ "SKILL.md": `---\nname: onboarding\ndescription: For ${customer}\n---\n` })
}))

layer(httpServer(Layer.mergeAll(Skills, Capture.pipe(Layer.provide(Skills)), Layer.mergeAll(Refunds, Onboarding).pipe(Layer.provide(Skills)))))(
  "skills declared as layers",
  (it) => {
    it.effect("modules contribute their skills with Layer.mergeAll; they are served", () =>
      Effect.gen(function*() {
        const listed = yield* modernHttp(yield* ServerUrl).call("skills/list")
        expect(listed.skills.map((skill: any) => skill.uri)).toEqual([
          "skill://alpha/SKILL.md",
          "skill://billing/refunds/SKILL.md",
          "skill://customers/acme/onboarding/SKILL.md"
        ])
      }))

    it.effect("a skill layer adds its skill when built and removes it when its scope closes", () =>
      Effect.gen(function*() {
        const registry = captured!
        const scope = yield* Scope.make()
        const Temporary = SkillsServer.skill(staticSkill("temporary", 0)).pipe(
          Layer.provide(Layer.succeed(SkillRegistry.SkillRegistry, registry))
        )
        yield* Layer.buildWithScope(Temporary, scope)
        const client = modernHttp(yield* ServerUrl)
        expect((yield* client.call("skills/get", { uri: "skill://temporary/SKILL.md" })).skill.uri).toBe("skill://temporary/SKILL.md")
        yield* Scope.close(scope, Exit.void)
        expect((yield* client.fail("skills/get", { uri: "skill://temporary/SKILL.md" })).code).toBe(-32602)
        expect((yield* registry.snapshot).byUri.has("skill://temporary/SKILL.md")).toBe(false)
      }))

    it.effect("a skill the registry refuses fails its layer with the RegistrationError", () =>
      Effect.gen(function*() {
        const Broken = SkillsServer.skill(Skill.make({ path: "broken", files: { "SKILL.md": skillMd("other") } })).pipe(
          Layer.provide(Layer.succeed(SkillRegistry.SkillRegistry, captured!))
        )
        const error = yield* Effect.flip(Effect.scoped(Layer.build(Broken)))
        expect(error._tag).toBe("RegistrationError")
        expect(error.problems[0]!.reason).toContain("differs from the skill's directory name")
      }))
  }
)
