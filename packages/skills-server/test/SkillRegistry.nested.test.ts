/**
 * Nested skills under every kind of parent (R7, R10, R104): a parent's manifest lists its nested
 * skills' files, however deep, with digests of the bytes the nested skill serves; bytes that
 * conflict between a parent and a nested skill are refused; and a nested skill hidden from a
 * caller is carved out of every skill that contains it, for that caller, on every surface, while
 * the parent's manifest that caller gets lists exactly what it can read.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Skill, SkillRegistry, SkillsServer, Visibility } from "../src/index.js"
import { bytesOf, sha256 } from "./support/catalogue.js"
import { skillMd } from "./support/fixtures.js"
import { httpServer, modernHttp, ServerUrl, withHeaders } from "./support/wire.js"
import type { Client } from "./support/wire.js"

const problemsOf = (definitions: ReadonlyArray<Skill.Definition>) =>
  Effect.map(Effect.flip(SkillRegistry.build(definitions)), (error) => {
    assert.strictEqual(error._tag, "RegistrationError")
    return error.problems.map((problem) => `${problem.skill}: ${problem.reason}`).join("\n")
  })

const nestedFiles = { "SKILL.md": skillMd("inner"), "inner.md": "secret inner notes\n" }
const deepFiles = { "SKILL.md": skillMd("deep"), "deep.md": "deep notes\n" }
const parentFiles = { "SKILL.md": skillMd("outer"), "outer.md": "outer notes\n" }

// A parent of each kind at `<kind>/outer`, with `inner` inside it (static under a static parent,
// rendered otherwise) and a static `deep` inside `inner`.
const family = (kind: "static" | "rendered" | "dynamic") => {
  const path = `${kind}/outer`
  const parent = kind === "static"
    ? Skill.make({ path, files: parentFiles })
    : kind === "rendered"
    ? Skill.rendered({ path, render: () => Effect.succeed(parentFiles) })
    : Skill.dynamic({
      path,
      read: (file) => Effect.succeed(parentFiles[file as keyof typeof parentFiles]),
      list: Effect.succeed(Object.keys(parentFiles))
    })
  return [
    parent,
    kind === "static"
      ? Skill.make({ path: `${path}/inner`, files: nestedFiles })
      : Skill.rendered({ path: `${path}/inner`, render: () => Effect.succeed(nestedFiles) }),
    Skill.make({ path: `${path}/inner/deep`, files: deepFiles })
  ]
}

const visibility: Visibility.Check<never, never> = ({ headers }) =>
  Effect.succeed((skill: Visibility.SkillInfo) => !(headers["x-hide"] ?? "").split(",").includes(skill.name))

const readable = (client: Client, uri: string) => Effect.map(client.send("resources/read", { uri }), (response) => response.body.result !== undefined)

// Every manifest item reads back with its digest, and nothing else under the parent's root reads.
const verifyManifest = (client: Client, uri: string) =>
  Effect.gen(function*() {
    const entry = (yield* client.call("skills/get", { uri })).skill
    for (const resource of entry.resources) {
      const read = (yield* client.call("resources/read", { uri: resource.uri })).contents[0]
      assert.strictEqual(sha256(bytesOf(read)), resource.digest, resource.uri)
    }
    return (entry.resources as ReadonlyArray<{ uri: string }>).map((resource) => resource.uri)
  })

const directory = (client: Client, uri: string) =>
  Effect.map(client.send("resources/directory/read", { uri }), (response) =>
    response.body.result === undefined ? undefined : (response.body.result.resources as ReadonlyArray<{ uri: string }>).map((r) => r.uri))

describe("nesting rules at registration", () => {
  it.effect("a dynamic skill cannot sit inside a rendered one, whose manifest needs every digest", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf([
        Skill.rendered({ path: "outer", render: () => Effect.succeed(parentFiles) }),
        Skill.dynamic({ path: "outer/inner", frontmatter: { name: "inner", description: "d" }, read: () => Effect.succeed(undefined) })
      ])
      assert.match(problems, /outer\/inner.*dynamic skill cannot be nested in the rendered skill/)
    }))

  it.effect("a parent's file inside a nested skill's folder that the nested skill does not hold is refused", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf([
        Skill.make({ path: "outer", files: { ...parentFiles, "inner/stray.md": "stray\n" } }),
        Skill.make({ path: "outer/inner", files: nestedFiles })
      ])
      assert.match(problems, /skill:\/\/outer\/SKILL\.md: inner\/stray\.md lies inside the nested skill skill:\/\/outer\/inner\/SKILL\.md/)
    }))

  it.effect("R104: a code skill holding a file and a folder at one path is refused", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf([
        Skill.make({ path: "notes", files: { "SKILL.md": skillMd("notes"), "notes.md": "a\n", "notes.md/inner.md": "b\n" } })
      ])
      assert.match(problems, /notes\.md\/inner\.md: notes\.md is a file, so it cannot also be a folder/)
    }))

  it.effect("R104: also when the folder comes from a nested skill", () =>
    Effect.gen(function*() {
      const problems = yield* problemsOf([
        Skill.make({ path: "outer", files: { ...parentFiles, "inner": "a file named like the nested skill\n" } }),
        Skill.make({ path: "outer/inner", files: nestedFiles })
      ])
      assert.match(problems, /inner\/SKILL\.md: inner is a file/)
    }))
})

describe("changes of nested skills", () => {
  it.effect("a change of an unlisted skill nested in a listed rendered parent changes the listing (R10)", () =>
    Effect.gen(function*() {
      const parent = Skill.rendered({ path: "outer", render: () => Effect.succeed(parentFiles) })
      const nested = (notes: string) =>
        Skill.make({ path: "outer/inner", listed: false, files: { ...nestedFiles, "inner.md": notes } })
      const registry = yield* SkillRegistry.make([parent, nested("one\n")])
      const changes = yield* registry.replace([parent, nested("two\n")])
      assert.isTrue(changes.listChanged)
    }))
})

const conflicting = Skill.rendered({
  path: "conflict/outer",
  render: () => Effect.succeed({ ...parentFiles, "inner/inner.md": "the parent's other bytes\n" })
})

layer(httpServer(SkillsServer.layer({
  skills: [
    ...family("static"),
    ...family("rendered"),
    ...family("dynamic"),
    conflicting,
    Skill.make({ path: "conflict/outer/inner", files: nestedFiles })
  ],
  visibility
})))("nested skills on the wire", (it) => {
  for (const kind of ["static", "rendered"] as const) {
    it.effect(`a ${kind} parent's manifest lists every nested skill's files, however deep, with digests that verify (R10)`, () =>
      Effect.gen(function*() {
        const client = modernHttp(yield* ServerUrl)
        const listed = yield* verifyManifest(client, `skill://${kind}/outer/SKILL.md`)
        for (const file of ["outer.md", "inner/SKILL.md", "inner/inner.md", "inner/deep/SKILL.md", "inner/deep/deep.md"]) {
          assert.include(listed, `skill://${kind}/outer/${file}`)
        }
      }))

    it.effect(`a nested skill hidden from a caller is carved out of a ${kind} parent on every surface`, () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const client = withHeaders(modernHttp(url), { "x-hide": "inner" })
        const root = `skill://${kind}/outer`
        const listed = yield* verifyManifest(client, `${root}/SKILL.md`)
        assert.notInclude(listed, `${root}/inner/SKILL.md`)
        assert.notInclude(listed, `${root}/inner/inner.md`)
        // The deeper skill is visible: its files stay, readable.
        assert.include(listed, `${root}/inner/deep/deep.md`)
        assert.isFalse(yield* readable(client, `${root}/inner/inner.md`))
        assert.isFalse(yield* readable(client, `${root}/inner/SKILL.md`))
        assert.isTrue(yield* readable(client, `${root}/inner/deep/deep.md`))
        assert.deepStrictEqual(yield* directory(client, `${root}/inner`), [`${root}/inner/deep`])
        const texts = JSON.stringify([
          yield* client.send("skills/list", {}),
          yield* client.send("resources/list", {}),
          yield* client.send("resources/directory/read", { uri: root })
        ])
        assert.notInclude(texts, "secret inner notes")
        assert.notInclude(texts, sha256(new TextEncoder().encode(nestedFiles["inner.md"])))
        assert.notInclude(texts, `${root}/inner/SKILL.md`)
      }))
  }

  it.effect("a dynamic parent's directories show its nested skills' entries, and only the visible ones", () =>
    Effect.gen(function*() {
      const url = yield* ServerUrl
      const root = "skill://dynamic/outer"
      assert.deepStrictEqual(yield* directory(modernHttp(url), root), [`${root}/SKILL.md`, `${root}/inner`, `${root}/outer.md`])
      const hiding = withHeaders(modernHttp(url), { "x-hide": "inner,deep" })
      assert.deepStrictEqual(yield* directory(hiding, root), [`${root}/SKILL.md`, `${root}/outer.md`])
      assert.isFalse(yield* readable(hiding, `${root}/inner/inner.md`))
      assert.isTrue(yield* readable(modernHttp(url), `${root}/inner/inner.md`))
    }))

  it.effect("a rendered parent whose bytes conflict with a nested skill's is refused (-32603, logged), not served", () =>
    Effect.gen(function*() {
      const error = yield* modernHttp(yield* ServerUrl).fail("skills/get", { uri: "skill://conflict/outer/SKILL.md" })
      assert.strictEqual(error.code, -32603)
    }))
})
