/**
 * Registration: everything validated and hashed once; a broken catalogue fails with one typed error
 * listing every problem (R1, R4, R15, R16, R19, duplicate URIs).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { McpServer } from "effect/ai"
import { Skill, SkillRegistry, SkillsServer, Snapshot } from "../src/index.js"
import * as V8 from "node:v8"
import { pdfProcessing, simple, skillMd } from "./support/fixtures.js"

// V8's own answer, through its natives syntax (allowed at run time: it is read when code is parsed).
V8.setFlagsFromString("--allow-natives-syntax")
const hasFastProperties = new Function("object", "return %HasFastProperties(object)") as (object: object) => boolean

const assertProblem = (problems: ReadonlyArray<string>, pattern: RegExp) =>
  assert.isTrue(problems.some((problem) => pattern.test(problem)), `no problem matches ${pattern}:\n${problems.join("\n")}`)

const problemsOf = (definitions: ReadonlyArray<Skill.Definition>, options?: SkillRegistry.Options) =>
  Effect.map(Effect.flip(SkillRegistry.build(definitions, options)), (error) => {
    assert.strictEqual(error._tag, "RegistrationError")
    return error.problems.map((problem) => `${problem.skill}: ${problem.reason}`)
  })

describe("SkillRegistry", () => {
  it.effect("reports every problem of every skill at once", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf([
        Skill.make({ path: "wrong-name", files: { "SKILL.md": skillMd("other") } }),
        Skill.make({ path: "no-skill-md", files: { "README.md": "x" } }),
        Skill.make({ path: "no-description", files: { "SKILL.md": "---\nname: no-description\n---\n" } }),
        Skill.make({ path: "Bad_Name", files: { "SKILL.md": skillMd("Bad_Name") } }),
        simple("twice"),
        simple("twice"),
        pdfProcessing
      ])
      assert.strictEqual(problems.length, 5, problems.join("\n"))
      assertProblem(problems, /skill:\/\/wrong-name\/SKILL\.md: .*"other".*"wrong-name".*R4/)
      assertProblem(problems, /no-skill-md.*no SKILL\.md/)
      assertProblem(problems, /no-description.*description/)
      assertProblem(problems, /Bad_Name/)
      assertProblem(problems, /twice.*duplicate/)
    }))

  it.effect("limits: 512 files and 16 MiB per skill by default (R16), raisable only explicitly", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = {}
      for (let i = 0; i < 512; i++) files[`f${i}.txt`] = "x"
      const tooMany = simple("many", files) // 513 with SKILL.md
      const big = simple("big", { "blob.bin": new Uint8Array(16 * 1024 * 1024) })
      const problems = yield* problemsOf([tooMany, big])
      assert.strictEqual(problems.length, 2)
      assertProblem(problems, /big.*bytes exceed the limit of 16777216/)
      assertProblem(problems, /many.*513 files exceed the limit of 512/)
      const raised = yield* SkillRegistry.build([tooMany, big], { limits: { maxResources: 1000, maxTotalBytes: 32 * 1024 * 1024 } })
      assert.strictEqual(raised.skills.length, 2)
      const exactly = simple("exact", Object.fromEntries(Object.entries(files).slice(0, 511)))
      assert.strictEqual((yield* SkillRegistry.build([exactly])).files.all().length, 512)
    }))

  it.effect("dynamic skills: frontmatter checked at registration, given or read from SKILL.md", () =>
    Effect.gen(function*() {
      const fromRead = Skill.dynamic({ path: "gen/live", read: () => Effect.succeed(skillMd("live")) })
      const snapshot = yield* SkillRegistry.build([fromRead])
      assert.deepStrictEqual<unknown>((snapshot.skills[0] as Snapshot.DynamicSkill).entry, {
        uri: "skill://gen/live/SKILL.md",
        frontmatter: { name: "live", description: "The live skill" },
        resources: "dynamic"
      })
      const problems = yield* problemsOf([
        Skill.dynamic({ path: "gen/a", frontmatter: { name: "b", description: "x" }, read: () => Effect.succeed(undefined) }),
        Skill.dynamic({ path: "gen/c", read: () => Effect.succeed(undefined) }),
        Skill.dynamic({ path: "gen/d", read: () => Effect.fail("boom") }),
        Skill.dynamic({ path: "outer/inner", frontmatter: { name: "inner", description: "x" }, read: () => Effect.succeed(undefined) }),
        simple("outer")
      ])
      assert.strictEqual(problems.length, 4, problems.join("\n"))
      assertProblem(problems, /gen\/a.*"b".*R4/)
      assertProblem(problems, /gen\/c.*no content/)
      assertProblem(problems, /gen\/d.*boom/)
      assertProblem(problems, /outer\/inner.*cannot be nested/)
    }))

  it.effect("R10: nested files join the enclosing manifest; a conflicting copy is refused", () =>
    Effect.gen(function*() {
      const snapshot = yield* SkillRegistry.build([simple("a", { "x.md": "x" }), simple("a/b", { "y.md": "y" })])
      const outer = snapshot.entries.get(snapshot.byUri.get("skill://a/SKILL.md") as Snapshot.StaticSkill)
      assert.deepStrictEqual((outer.resources as ReadonlyArray<{ readonly uri: string }>).map((r) => r.uri), [
        "skill://a/SKILL.md",
        "skill://a/b/SKILL.md",
        "skill://a/b/y.md",
        "skill://a/x.md"
      ])
      assert.deepStrictEqual(snapshot.files.get("skill://a/b/y.md")!.owners, [0, 1])
      const problems = yield* problemsOf([simple("a", { "b/y.md": "other" }), simple("a/b", { "y.md": "y" })])
      assertProblem(problems, /b\/y\.md differs from the same file of nested skill skill:\/\/a\/b\/SKILL\.md/)
    }))

  it.effect("a manifest made for another skill path is not reused: the skill is built from its files", () =>
    Effect.gen(function*() {
      const files = [
        { path: "SKILL.md", bytes: new TextEncoder().encode(skillMd("alpha")) },
        { path: "notes.md", bytes: new TextEncoder().encode("notes\n") }
      ]
      const made = yield* SkillRegistry.build([Skill.fromFiles({ path: ["alpha"], files })])
      const elsewhere = made.skills[0]!
      assert(elsewhere._tag === "Static")
      // The same folder moved below `team/`, handed over with the manifest it had.
      const moved = yield* SkillRegistry.build([Skill.fromFiles({ path: ["team", "alpha"], files, manifest: elsewhere.manifest })])
      const skill = moved.byUri.get("skill://team/alpha/SKILL.md")
      assert(skill?._tag === "Static")
      assert.strictEqual(moved.entries.get(skill).uri, "skill://team/alpha/SKILL.md")
      assert.deepStrictEqual(Array.from(skill.manifest.files, (file) => file.uri), ["skill://team/alpha/SKILL.md", "skill://team/alpha/notes.md"])
      assert.strictEqual(moved.hashed.files, 2)
    }))

  // Tens of thousands of these live as long as the catalogue: a getter written in each object made
  // it a dictionary of its properties in V8, about 450 B a skill.
  it.effect("skills made from a manifest keep V8's fast properties, and their files survive a spread", () =>
    Effect.gen(function*() {
      const files = [
        { path: "SKILL.md", bytes: new TextEncoder().encode(skillMd("alpha")) },
        { path: "notes.md", bytes: new TextEncoder().encode("notes\n") }
      ]
      const made = yield* SkillRegistry.build([Skill.fromFiles({ path: ["alpha"], files })])
      const built = made.skills[0]!
      assert(built._tag === "Static")
      const skills = Array.from({ length: 64 }, (_, index) =>
        Skill.fromFiles(
          { path: ["team", `alpha-${index}`], files, manifest: built.manifest },
          index % 3 === 0 ? { cacheHint: { ttl: "5 minutes", scope: "public" } } : undefined
        ))
      assert.deepStrictEqual(skills.filter((skill) => !hasFastProperties(skill)).length, 0)
      const copy = { ...skills[1]! }
      assert.deepStrictEqual(copy.files.map((file) => file.path), ["SKILL.md", "notes.md"])
      assert.deepStrictEqual(Object.keys(skills[0]!).sort(), ["_tag", "cacheHint", "files", "listed", "manifest", "path", "scheme"])
      assert.strictEqual(Object.getPrototypeOf(skills[0]), Object.prototype)
    }))

  it.effect("wire content is decided once: text iff the bytes round-trip UTF-8", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(Snapshot.wireContent(new TextEncoder().encode("héllo")), { text: "héllo" })
      assert.deepStrictEqual(Snapshot.wireContent(new Uint8Array([0xff, 0xfe])), { blob: "//4=" })
      // An overlong encoding of "/" is not valid UTF-8.
      assert.deepStrictEqual(Snapshot.wireContent(new Uint8Array([0xc0, 0xaf])), { blob: "wK8=" })
      assert.deepStrictEqual(Snapshot.wireContent(new Uint8Array([0xef, 0xbb, 0xbf])), { text: "\ufeff" })
    }))

  it.effect("SkillsServer.layer accepts skills produced by an Effect (e.g. a directory load)", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        SkillsServer.layer({ skills: Effect.succeed([simple("loaded")]) }).pipe(Layer.provide(McpServer.McpServer.layer))
      )
      const registry = Context.get(context, SkillRegistry.SkillRegistry)
      const snapshot = yield* registry.snapshot
      assert.deepStrictEqual(snapshot.skills.map((skill) => skill.uri), ["skill://loaded/SKILL.md"])
    }))

  it.effect("SkillsServer.layer fails with the typed RegistrationError", () =>
    Effect.gen(function*() {
      const exit = yield* Layer.build(
        SkillsServer.layer({ skills: [simple("ok"), Skill.make({ path: "bad", files: {} })] }).pipe(
          Layer.provide(McpServer.McpServer.layer)
        )
      ).pipe(Effect.scoped, Effect.exit)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.toString() : ""
      assert.include(error, "RegistrationError")
      assert.include(error, "skill://bad/SKILL.md")
    }))
})
