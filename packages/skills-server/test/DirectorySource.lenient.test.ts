/**
 * `lenient`: a skill is served as found where its meaning is unambiguous, each repair said with its
 * file and line, and the `SKILL.md` served has canonical frontmatter (portable: effect's reader,
 * YAML 1.2 and the `yaml` package read it alike) with the body byte for byte; digests and sizes are
 * of the bytes served. A signed skill is never rewritten. Without `lenient` nothing changes.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { SkillsClient } from "@mcp-skills/client"
import { Digest, Manifest, Signing, Skill, SkillFrontmatter, SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import { McpClient, McpProtocol } from "effect/ai"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { parse as parseYaml } from "yaml"
import * as DirectoryModel from "../src/DirectoryModel.js"
import * as DirectorySource from "../src/DirectorySource.js"
import { makeKey } from "./support/signing.js"
import { tree } from "./support/tree.js"
import { httpServer, ServerUrl } from "./support/wire.js"

const long = Array.from({ length: 200 }, (_, index) => `word${index}`).join(" ")
const body = "# Body\r\nkept *byte* for byte: 1\n"
const files = {
  // The folder is not the skill's name (a registry's `owner--repo--skill` folders).
  "acme--tools--cate/SKILL.md": "---\nname: cate-theme\ndescription: Themes\n---\n# Cate\n",
  "acme--tools--cate/README.md": "readme\n",
  // A plain value holding `: `.
  "colon/SKILL.md": `---\nname: colon\ndescription: Photoshop reference: wind direction\n---\n${body}`,
  // A block indicator with text on its line.
  "block/SKILL.md": "---\nname: block\ndescription: | Use when blocks\nlicense: MIT\n---\n# Block\n",
  // A stray line after the description.
  "stray/SKILL.md": "---\nname: stray\ndescription: Starts here\nand goes on\n---\n# Stray\n",
  "metadata/SKILL.md": "---\nname: metadata\ndescription: Metadata\nmetadata:\n  version: 2\n  tags: [a, b]\n  owner: team\n---\n",
  "terraform-cloud-mcp-server/SKILL.md": "---\nname: Terraform Cloud MCP Server\ndescription: Terraform\n---\n",
  "long/SKILL.md": `---\nname: long\ndescription: ${long}\n---\n`,
  "valid/SKILL.md": "---\nname: valid\ndescription: Valid as written\n---\n# Valid\n"
}

describe("DirectorySource: lenient", () => {
  it.effect("strict (the default) skips each with one clear line; nothing is repaired", () =>
    Effect.gen(function*() {
      const loaded = yield* DirectorySource.load(tree(files))
      expect(loaded.skills.map((skill) => skill.manifest.uri)).toEqual(["skill://valid/SKILL.md"])
      expect(loaded.skipped.map((skipped) => skipped.directory)).toEqual([
        "acme--tools--cate",
        "block",
        "colon",
        "long",
        "metadata",
        "stray",
        "terraform-cloud-mcp-server"
      ])
      expect(loaded.repairs).toEqual([])
    }))

  it.effect("serves every one, each repair with its file and line, counted per kind", () =>
    Effect.gen(function*() {
      const root = tree(files)
      const loaded = yield* DirectorySource.load(root, { lenient: true })
      expect(loaded.skipped).toEqual([])
      expect(loaded.warnings).toEqual([])
      expect(loaded.skills.map((skill) => skill.manifest.uri)).toEqual([
        "skill://acme--tools--cate/cate-theme/SKILL.md",
        "skill://block/SKILL.md",
        "skill://colon/SKILL.md",
        "skill://long/SKILL.md",
        "skill://metadata/SKILL.md",
        "skill://stray/SKILL.md",
        "skill://terraform-cloud-mcp-server/SKILL.md",
        "skill://valid/SKILL.md"
      ])
      const kinds = loaded.repairs.map((repaired) => `${repaired.path}:${repaired.line ?? ""} ${repaired.repair._tag}`)
      expect(kinds).toEqual([
        "acme--tools--cate/SKILL.md: Renamed",
        "block/SKILL.md:3 LiteralValue",
        "colon/SKILL.md:3 LiteralValue",
        "long/SKILL.md:3 DescriptionCut",
        "metadata/SKILL.md:4 MetadataAsJson",
        "metadata/SKILL.md:4 MetadataAsJson",
        "stray/SKILL.md:3 JoinedLine",
        "terraform-cloud-mcp-server/SKILL.md:2 NameAsSlug"
      ])
      expect(DirectoryModel.describeRepaired(loaded.repairs[2]!)).toBe(
        "colon/SKILL.md:3: description: YAML refuses it (" + (loaded.repairs[2]!.repair as { refused: string }).refused +
          "); read as its literal text (served as skill://colon/SKILL.md)"
      )
      const byName = new Map<string, SkillFrontmatter.SkillFrontmatter>(
        loaded.skills.map((skill) => [skill.manifest.frontmatter.name, skill.manifest.frontmatter])
      )
      expect(byName.get("colon")!.description).toBe("Photoshop reference: wind direction")
      expect(byName.get("block")!.description).toBe("Use when blocks")
      expect(byName.get("block")!.license).toBe("MIT")
      expect(byName.get("stray")!.description).toBe("Starts here and goes on")
      expect(byName.get("metadata")!.metadata).toEqual({ version: "2", tags: "[\"a\",\"b\"]", owner: "team" })
      expect(byName.has("terraform-cloud-mcp-server")).toBe(true)
      const cut = byName.get("long")!.description
      expect(cut.length).toBeLessThanOrEqual(1024)
      expect(cut.endsWith("…")).toBe(true)
      expect(long.startsWith(cut.slice(0, -1))).toBe(true)
      expect(long[cut.length - 1]).toBe(" ")

      for (const skill of loaded.skills) {
        const served = skill.manifest.files.bytes(0)!
        const text = new TextDecoder().decode(served)
        // The digest and size listed are those of the bytes served.
        expect(skill.manifest.files.digest(0)).toBe(Digest.make(served))
        expect(skill.manifest.files.size(0)).toBe(served.byteLength)
        // Every reader reads the frontmatter served alike.
        expect(SkillFrontmatter.portability(text, skill.manifest.frontmatter)).toEqual([])
        const yaml = parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(text)![1]!)
        expect(SkillFrontmatter.jsonEquals(yaml, skill.manifest.frontmatter)).toBe(true)
        // The body is the author's, byte for byte.
        const onDisk = NodeFs.readFileSync(NodePath.join(root, skill.directory, "SKILL.md"), "utf8")
        expect(onDisk.endsWith(Result.getOrThrow(SkillFrontmatter.parse(text)).body)).toBe(true)
      }
      const colon = new TextDecoder().decode(loaded.skills[2]!.manifest.files.bytes(0)!)
      expect(colon).toBe(`---\nname: "colon"\ndescription: "Photoshop reference: wind direction"\n---\n${body}`)
      // A folder's other files are the skill's files, whatever its name.
      expect(loaded.skills[0]!.manifest.files.length).toBe(2)
      // A skill valid as written is served as written.
      const valid = loaded.skills.at(-1)!
      expect(new TextDecoder().decode(valid.manifest.files.bytes(0)!)).toBe(files["valid/SKILL.md"])
    }))

  it.effect("a later key, quoted or not, stays a key; CRLF and a BOM are read; YAML's own syntax is refused as written", () =>
    Effect.gen(function*() {
      const loaded = yield* DirectorySource.load(
        tree({
          "quoted/SKILL.md": "---\nname: quoted\ndescription: Caf\u00e9: ol\u00e9\n\"allowed-tools\": [Read]\nUse When: asked\n---\n\u00fc\n",
          "crlf/SKILL.md": "\uFEFF---\r\nname: crlf\r\ndescription: Foo: bar\r\n---\r\nbody\r\n",
          "anchor/SKILL.md": "---\nname: anchor\ndescription: &x anchored: no\n---\n"
        }),
        { lenient: true }
      )
      expect(loaded.skills.map((skill) => skill.manifest.frontmatter)).toEqual([
        { name: "crlf", description: "Foo: bar" },
        {
          name: "quoted",
          description: "Caf\u00e9: ol\u00e9",
          "allowed-tools": ["Read"],
          "Use When": "asked"
        }
      ])
      expect(new TextDecoder().decode(loaded.skills[0]!.manifest.files.bytes(0)!)).toBe(
        // The frontmatter canonical, the body (CRLF) the author's.
        "---\nname: \"crlf\"\ndescription: \"Foo: bar\"\n---\nbody\r\n"
      )
      expect(loaded.skipped.map((skipped) => skipped.directory)).toEqual(["anchor"])
    }))

  it.effect("URIs are stable: the same on every load, and two that would be one both get their own", () =>
    Effect.gen(function*() {
      const root = tree({
        "x/SKILL.md": "---\nname: y\ndescription: Renamed into y\n---\n",
        "x/y/SKILL.md": "---\nname: y\ndescription: The nested y\n---\n"
      })
      const first = yield* DirectorySource.load(root, { lenient: true })
      const again = yield* DirectorySource.load(root, { lenient: true })
      const uris = first.skills.map((skill) => skill.manifest.uri)
      expect(again.skills.map((skill) => skill.manifest.uri)).toEqual(uris)
      expect(new Set(uris).size).toBe(2)
      for (const uri of uris) expect(uri).toMatch(/^skill:\/\/x\/at-[0-9a-f]{8}\/y\/SKILL\.md$/)
      expect(first.repairs.filter((repaired) => repaired.repair._tag === "SharedUri").map((repaired) => repaired.path)).toEqual([
        "x/SKILL.md",
        "x/y/SKILL.md"
      ])
      // A source names them alike on every scan.
      const source = yield* DirectorySource.make([{ path: root, lenient: true }], { log: () => Effect.void })
      const scanned = yield* source.scan
      expect(scanned.definitions.map((definition) => definition.manifest!.uri).sort()).toEqual([...uris].sort())
      const rescanned = yield* source.scan
      expect(rescanned.definitions.map((definition) => definition.manifest!.uri).sort()).toEqual([...uris].sort())
    }))

  it.effect("a signed skill is never rewritten: one that needs a repair is refused, saying so", () =>
    Effect.gen(function*() {
      const root = tree({
        "colon/SKILL.md": "---\nname: colon\ndescription: Reference: wind\n---\n",
        "colon/.mcp-skills-signatures.json": JSON.stringify({ version: 1, signatures: [] })
      })
      const loaded = yield* DirectorySource.load(root, { lenient: true })
      expect(loaded.skills).toEqual([])
      expect(loaded.skipped[0]!.message).toContain("signed, so it is not rewritten: description: YAML refuses it")
    }))
})

describe("DirectorySource: lenient, signed", () => {
  it.effect("a signed skill only renamed is served under its name, its signature verifying (it covers no URI)", () =>
    Effect.gen(function*() {
      const text = "---\nname: vendor-x\ndescription: X\n---\n# X\n"
      const bytes = new TextEncoder().encode(text)
      const key = makeKey()
      const entry = Manifest.entry(Result.getOrThrow(Manifest.make({
        uri: Result.getOrThrow(SkillUri.skillMd("skill", ["vendor-x"])),
        files: [{ path: "SKILL.md", bytes }]
      })))
      const signature = Result.getOrThrow(Signing.sign(entry, key.key))
      const root = tree({
        "x/SKILL.md": text,
        "x/.mcp-skills-signatures.json": JSON.stringify({ version: 1, signatures: [signature] })
      })
      const loaded = yield* DirectorySource.load(root, { lenient: true })
      expect(loaded.skills.map((skill) => skill.manifest.uri)).toEqual(["skill://x/vendor-x/SKILL.md"])
      const served = Manifest.entry(Result.getOrThrow(Manifest.make({ uri: loaded.skills[0]!.manifest.uri, files: [{ path: "SKILL.md", bytes }] })))
      expect(Result.isSuccess(Signing.verify(served, loaded.skills[0]!.signatures![0]!))).toBe(true)
    }))
})

const EffectClient = Layer.unwrap(Effect.gen(function*() {
  const url = yield* ServerUrl
  return McpClient.layerHttp({ name: "effect-client", version: "1.0.0", url, protocol: McpProtocol.v2026_07_28, extensions: { skills: true } })
})).pipe(Layer.provide(FetchHttpClient.layer))

layer(httpServer(DirectorySource.layer(tree(files), { lenient: true })))("lenient skills over the wire", (it) => {
  it.effect("effect's McpClient and our client read and verify every repaired SKILL.md", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const skills = yield* client.listSkills()
      expect(skills).toHaveLength(8)
      for (const skill of skills) {
        expect(Result.isSuccess(Skill.fromMcpSchema(skill))).toBe(true)
        yield* client.readSkillResource({ skill, uri: skill.uri })
      }
      const url = yield* ServerUrl
      const ours = SkillsClient.layerHttp({ url }).pipe(Layer.provide(FetchHttpClient.layer))
      const listing = yield* SkillsClient.SkillsClient.use((skillsClient) => skillsClient.listSkills()).pipe(Effect.provide(ours))
      expect(listing.invalid).toEqual([])
      expect(listing.skills).toHaveLength(8)
      for (const skill of listing.skills) {
        const loaded = yield* SkillsClient.SkillsClient.use((skillsClient) => skillsClient.loadSkill(skill)).pipe(Effect.provide(ours))
        expect(loaded.skillMd.verified).toBe(true)
      }
    }).pipe(Effect.provide(EffectClient)))
})
