/**
 * Relaying authors' signatures: static entries carry them in `_meta` on every surface (the fast
 * route and effect's path alike), a skill whose files no longer match is logged, `requireSigned`
 * leaves out what has no signature that verifies, and a directory source reads them from the hidden
 * `.mcp-skills-signatures.json` it never serves.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Signing } from "@mcp-skills/core"
import { Effect, Layer, Logger, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as DirectorySource from "../src/DirectorySource.js"
import { DirectoryModel, Skill, SkillRegistry, SkillsServer } from "../src/index.js"
import { simple, skillMd } from "./support/fixtures.js"
import { entryOf, makeKey, signed } from "./support/signing.js"
import { tree } from "./support/tree.js"
import { exchange, Twins, twins, wellFormed } from "./support/twins.js"
import { httpServer, modernHttp, ServerUrl, withHeaders } from "./support/wire.js"

const author = makeKey()
const second = makeKey()

/** Runs `effect` with its log lines collected (a registry's later changes log there too). */
const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const collect = Logger.make((options) => void lines.push((options.message as ReadonlyArray<unknown>).map(String).join(" ")))
    const value = yield* effect.pipe(Effect.provide(Logger.layer([collect])))
    return { value, lines }
  })

const refunds = simple("acme/refunds", { "policy.md": "# Policy\n" })
// Signed over other bytes than it serves: what a file edited behind its signature looks like.
const edited = { ...simple("acme/edited", { "policy.md": "# Edited\n" }), signatures: signed(simple("acme/edited", { "policy.md": "# Original\n" }), author.key).signatures }
const daily = Skill.dynamic({
  path: "reports/daily",
  frontmatter: { name: "daily", description: "Today" },
  read: () => Effect.succeed(skillMd("daily", "Today"))
})

describe("relayed signatures", () => {
  layer(twins())((it) => {
    it.effect("skills/list and skills/get carry a signed skill's records under our own _meta key, from the fast route and effect's path alike", () =>
      Effect.gen(function*() {
        const { on, off } = yield* Twins
        // The listing page that holds the signed skill (pages of two, in URI order).
        const page = { cursor: Buffer.from("skills\nskill://big/SKILL.md").toString("base64url") }
        for (const [method, params] of [["skills/get", { uri: "skill://pages/alpha/SKILL.md" }], ["skills/list", page]] as const) {
          const request = wellFormed(method, params)
          const [fast, slow] = [yield* exchange(on, request.headers, request.body), yield* exchange(off, request.headers, request.body)]
          assert.deepStrictEqual(fast.body, slow.body)
          const result = (fast.body as { result: { skill?: unknown; skills?: ReadonlyArray<unknown> } }).result
          const entry = (result.skill ?? result.skills!.find((skill: any) => skill.uri === "skill://pages/alpha/SKILL.md")) as any
          expect(Object.keys(entry._meta)).toEqual([Signing.MetaKey])
          expect(entry._meta[Signing.MetaKey]).toHaveLength(2)
          expect(Signing.evaluate(entry)._tag).toBe("Verified")
          // Nothing under the extension's reserved prefix (R139).
          expect(JSON.stringify(entry._meta)).not.toContain("io.modelcontextprotocol.skills/")
        }
      }))
  })

  it.effect("a skill whose files no longer match its signatures is served, with one warning; verified and unsigned skills say nothing", () =>
    Effect.gen(function*() {
      const { value: registry, lines } = yield* logged(SkillRegistry.make([signed(refunds, author.key), edited, simple("plain")]))
      const snapshot = yield* registry.snapshot
      expect(snapshot.skills.map((skill) => skill.uri)).toEqual([
        "skill://acme/edited/SKILL.md",
        "skill://acme/refunds/SKILL.md",
        "skill://plain/SKILL.md"
      ])
      expect(lines).toEqual([
        `serving skill://acme/edited/SKILL.md although its files no longer match its signature by ${author.keyId} (the signature does not match the skill's name, frontmatter and files); clients that verify will refuse it`
      ])
      // A rebuild with the same files and signatures neither checks nor says it again.
      const said = lines.length
      yield* registry.reload
      expect(lines.length).toBe(said)
    }))

  it.effect("requireSigned serves only skills whose signature verifies; the rest are left out with one line each", () =>
    Effect.gen(function*() {
      const family = Skill.family({ path: "teams/{team}", render: ({ team }) => Effect.succeed({ "SKILL.md": skillMd(String(team)) }) })
      const rendered = Skill.rendered({ path: "hello", render: () => Effect.succeed({ "SKILL.md": skillMd("hello") }) })
      const { value: registry, lines } = yield* logged(
        SkillRegistry.make([signed(refunds, second.key, author.key), edited, simple("plain"), daily, rendered, family], { requireSigned: true })
      )
      const snapshot = yield* registry.snapshot
      expect(snapshot.skills.map((skill) => skill.uri)).toEqual(["skill://acme/refunds/SKILL.md"])
      expect(snapshot.families).toEqual([])
      expect(lines.sort()).toEqual([
        `not serving skill://acme/edited/SKILL.md: its files no longer match its signature by ${author.keyId} (the signature does not match the skill's name, frontmatter and files)`,
        "not serving skill://hello/SKILL.md: a rendered skill cannot be signed, and signatures are required",
        "not serving skill://plain/SKILL.md: it is not signed, and signatures are required",
        "not serving skill://reports/daily/SKILL.md: a dynamic skill cannot be signed, and signatures are required",
        "not serving skill://teams/{team}: a family's skill cannot be signed, and signatures are required"
      ])
      // An upsert the registry refuses takes the skill's previous version out, as a full build would.
      const changes = yield* registry.upsert([{ ...signed(refunds, author.key), files: [...refunds.files, { path: "new.md", bytes: new Uint8Array(1) }] }])
      expect(changes.removed).toEqual(["skill://acme/refunds/SKILL.md"])
      expect((yield* registry.snapshot).skills).toEqual([])
    }))

  it.effect("signing a skill, or signing it again, is a change clients hear of: list_changed, and a new revision", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([refunds])
      const before = yield* registry.snapshot
      const changes = yield* registry.replace([signed(refunds, author.key)])
      expect(changes.changed.map((change) => change.uri)).toEqual(["skill://acme/refunds/SKILL.md"])
      expect(changes.listChanged).toBe(true)
      expect(changes.updated).toEqual([])
      const after = yield* registry.snapshot
      expect(after.revision).not.toBe(before.revision)
      const entry = after.skills[0]!
      assert(entry._tag === "Static")
      expect(after.entries.get(entry)).toEqual(Signing.withSignatures(entryOf(refunds), refunds.signatures ?? signed(refunds, author.key).signatures!))
      expect((yield* registry.replace([signed(refunds, author.key, second.key)])).listChanged).toBe(true)
      expect((yield* registry.replace([signed(refunds, author.key, second.key)])).listChanged).toBe(false)
    }))
})

describe("a caller who may not see a nested skill", () => {
  it.effect("gets the parent's entry without that skill's files and without the signatures, which cover them", () =>
    Effect.gen(function*() {
      const outer = simple("acme/refunds", { "policy.md": "# Policy\n" })
      const inner = simple("acme/refunds/secret", { "notes.md": "# Secret\n" })
      // Signed as an author signs a folder: over the entry the server builds, nested files included.
      const snapshot = yield* (yield* SkillRegistry.make([outer, inner])).snapshot
      const built = snapshot.byUri.get("skill://acme/refunds/SKILL.md")!
      assert(built._tag === "Static")
      const record = Result.getOrThrow(Signing.sign(snapshot.entries.get(built), author.key))
      const server = httpServer(SkillsServer.layer({
        skills: [{ ...outer, signatures: [record] }, inner],
        visibility: ({ headers }) => Effect.succeed(headers["x-user"] === "root" || ((skill) => skill.path.at(-1) !== "secret"))
      }))
      yield* Effect.gen(function*() {
        const anonymous = modernHttp(yield* ServerUrl)
        const root = withHeaders(anonymous, { "x-user": "root" })
        const full = (yield* root.call("skills/get", { uri: "skill://acme/refunds/SKILL.md" })).skill
        expect(Signing.evaluate(full)._tag).toBe("Verified")
        const carved = (yield* anonymous.call("skills/get", { uri: "skill://acme/refunds/SKILL.md" })).skill
        expect(carved.resources.map((resource: { uri: string }) => resource.uri)).not.toContain("skill://acme/refunds/secret/notes.md")
        expect(carved._meta).toBeUndefined()
      }).pipe(Effect.provide(Layer.fresh(server)))
    }))
})

layer(NodeServices.layer)("a directory source's signatures", (it) => {
  const folder = () => {
    const root = tree({ "refunds/SKILL.md": skillMd("refunds"), "refunds/policy.md": "# Policy\n" })
    const skill = simple("refunds", { "policy.md": "# Policy\n" })
    const record = Result.getOrThrow(Signing.sign(entryOf(skill), author.key))
    fs.writeFileSync(path.join(root, "refunds", DirectorySource.SignaturesFileName), JSON.stringify({ version: 1, signatures: [record] }))
    return { root, record }
  }

  it.effect("are relayed with the entry, and the file itself is in no manifest and never served", () =>
    Effect.gen(function*() {
      const { root, record } = folder()
      const loaded = yield* DirectorySource.load(root)
      expect(loaded.skills[0]!.signatures).toEqual([record])
      expect(Array.from(loaded.skills[0]!.manifest.files, (file) => file.path)).toEqual(["SKILL.md", "policy.md"])
      const server = httpServer(SkillsServer.layer({ skills: DirectorySource.definitions(root) }))
      yield* Effect.gen(function*() {
        const client = modernHttp(yield* ServerUrl)
        const { skill } = yield* client.call("skills/get", { uri: "skill://refunds/SKILL.md" })
        expect(skill._meta).toEqual({ [Signing.MetaKey]: [record] })
        expect(Signing.evaluate(skill)).toEqual({ _tag: "Verified", keyIds: [author.keyId] })
        const hidden = yield* client.fail("resources/read", { uri: `skill://refunds/${DirectorySource.SignaturesFileName}` })
        expect(hidden.code).toBe(-32602)
      }).pipe(Effect.provide(Layer.fresh(server)))
    }))

  it.effect("a file that is not a signatures file makes the skill invalid, naming it", () =>
    Effect.gen(function*() {
      const { root } = folder()
      fs.writeFileSync(path.join(root, "refunds", DirectorySource.SignaturesFileName), "{\"version\":2}")
      const loaded = yield* DirectorySource.load(root)
      expect(loaded.skills).toEqual([])
      expect(DirectoryModel.describeProblem(loaded.skipped[0]!)).toMatch(/^refunds\/\.mcp-skills-signatures\.json: not a signatures file/)
    }))
})
