/**
 * The schemas generate their own test data: each property below is written as a user of the package
 * writes one, with the exported schema itself as the generator, and checks the value with the
 * package's own validators.
 */
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Result, Schema } from "effect"
import {
  CacheHint,
  Digest,
  Extension,
  Manifest,
  Protocol,
  Signing,
  Skill,
  SkillFrontmatter,
  SkillName,
  SkillUri
} from "../src/index.js"

// What JSON does to a value on the wire (-0 becomes 0, nothing else changes for these schemas).
const overTheWire = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

describe("schemas as generators", () => {
  it.prop("SkillName: a generated name is a name, and the last segment of its SKILL.md URI", { name: SkillName.SkillName }, ({ name }) => {
    expect(SkillName.isSkillName(name)).toBe(true)
    expect(SkillName.pattern.test(name)).toBe(true)
    const uri = Result.getOrThrow(SkillUri.skillMd("skill", ["acme", name]))
    expect(SkillUri.skillName(uri)).toBe(name)
  })

  it.prop("SkillFrontmatter: decode accepts it, and render then parseSkillMd gives it back", {
    frontmatter: SkillFrontmatter.SkillFrontmatter
  }, ({ frontmatter }) => {
    expect(Result.getOrThrow(SkillFrontmatter.decode(frontmatter))).toEqual(frontmatter)
    const parsed = Result.getOrThrow(SkillFrontmatter.parseSkillMd(SkillFrontmatter.render(frontmatter, "# Body\n")))
    expect(SkillFrontmatter.diff(frontmatter, parsed.frontmatter)).toEqual([])
    expect(parsed.body).toBe("# Body\n")
  })

  it.prop("SkillUri: parses, has no query, fragment, empty or dot segment, and formats to an equivalent URI", {
    uri: SkillUri.SkillUri
  }, ({ uri }) => {
    const parsed = Result.getOrThrow(SkillUri.parse(uri))
    expect(uri).not.toMatch(/[?#\\]|\/\/.*\/\/|\/$/)
    for (const segment of parsed.segments) {
      expect(segment).not.toBe("")
      expect([".", ".."]).not.toContain(segment)
      expect(segment).not.toMatch(/[/\\]/)
    }
    expect(Result.getOrThrow(SkillUri.parse(SkillUri.format(parsed)))).toEqual(parsed)
  })

  it.prop("SkillMdUri: its name and skill path are the segments parse gives", { uri: SkillUri.SkillMdUri }, ({ uri }) => {
    const segments = Result.getOrThrow(SkillUri.parse(uri)).segments
    expect(SkillUri.skillPath(uri)).toEqual(segments.slice(0, -1))
    expect(SkillUri.skillName(uri)).toBe(segments.at(-2))
  })

  it.prop("SkillMdUri: names a SKILL.md under its root, and every reference resolves inside it", {
    uri: SkillUri.SkillMdUri,
    file: SkillName.SkillName
  }, ({ uri, file }) => {
    expect(Result.getOrThrow(SkillUri.parseSkillMd(uri))).toBe(uri)
    expect(`${SkillUri.root(uri)}/SKILL.md`).toBe(uri)
    expect(SkillUri.skillPath(uri).length).toBeGreaterThanOrEqual(1)
    expect(Result.getOrThrow(SkillUri.resolve(uri, "SKILL.md"))).toBe(uri)
    const inside = Result.getOrThrow(SkillUri.resolve(uri, `references/../${file}.md`))
    expect(SkillUri.contains(uri, inside)).toBe(true)
    expect(SkillUri.relativePath(uri, inside)).toBe(`${file}.md`)
    expect(Result.isFailure(SkillUri.resolve(uri, `${"../".repeat(SkillUri.skillPath(uri).length)}${file}.md`))).toBe(true)
  })

  it.prop("SkillResource: a file URI, a digest, a size", { resource: Skill.SkillResource }, ({ resource }) => {
    expect(Result.isSuccess(SkillUri.parse(resource.uri))).toBe(true)
    expect(Digest.isDigest(resource.digest)).toBe(true)
    expect(Number.isSafeInteger(resource.size) && resource.size >= 0).toBe(true)
  })

  it.prop("Skill: a received entry that Skill.decode accepts unchanged, with no problem to report", { skill: Skill.Skill }, ({ skill }) => {
    expect(Skill.problems(skill)).toEqual([])
    expect(Result.getOrThrow(Skill.decode(overTheWire(skill)))).toEqual(overTheWire(skill))
    expect(SkillUri.skillName(skill.uri)).toBe(skill.frontmatter.name)
    const resources = skill.resources
    expect(Skill.isDynamic(skill)).toBe(resources === "dynamic")
    if (resources !== "dynamic") {
      expect(Skill.findResource(skill, skill.uri)?.uri).toBe(skill.uri)
      for (const resource of resources) expect(SkillUri.contains(skill.uri, resource.uri)).toBe(true)
      expect(new Set(resources.map((resource) => resource.uri)).size).toBe(resources.length)
    }
  })

  it.prop("Manifest: what Manifest.make builds from its own files, each digest the SHA-256 of the bytes", {
    manifest: Manifest.Manifest
  }, ({ manifest }) => {
    const entry = Manifest.entry(manifest)
    expect(Result.getOrThrow(Skill.decode(overTheWire(entry)))).toEqual(overTheWire(entry))
    const files = Array.from(manifest.files)
    expect(files[0]!.path).toBe("SKILL.md")
    const rest = files.slice(1).map((file) => file.path)
    expect(rest).toEqual([...rest].sort())
    for (const file of files) {
      expect(file.digest).toBe(Digest.make(file.bytes!))
      expect(file.size).toBe(file.bytes!.byteLength)
      expect(SkillUri.relativePath(manifest.uri, file.uri)).toBe(file.path)
      expect(manifest.files.indexOfUri(file.uri)).toBe(manifest.files.indexOf(file.path))
    }
    // A URI no file has, even one a client cannot spell in UTF-8 (a lone surrogate), is -1, not a throw.
    for (const tail of ["\ud800", "a/\udfff.md", "%C3%BC\ud800"]) {
      expect(manifest.files.indexOfUri(`${manifest.uri.slice(0, -"/SKILL.md".length)}/${tail}`)).toBe(-1)
    }
    const again = Result.getOrThrow(Manifest.make({ uri: manifest.uri, files: files.map(({ path, bytes }) => ({ path, bytes: bytes! })) }))
    expect(Manifest.entry(again)).toEqual(entry)
    expect(Schema.is(Manifest.Manifest)(manifest)).toBe(true)
    // One byte changed and the stored digest no longer describes the file: not a manifest.
    const [first, ...others] = files
    const tampered = Result.getOrThrow(Manifest.make({
      uri: manifest.uri,
      files: [{ path: first!.path, bytes: Uint8Array.from([...first!.bytes!, 0]), digest: first!.digest }, ...others.map(({ path, bytes }) => ({ path, bytes: bytes! }))]
    }))
    expect(Schema.is(Manifest.Manifest)(tampered)).toBe(false)
  })

  it.prop("Manifest: the table in room the caller made is the table it allocates; room of another length, or over a file, is left alone", {
    manifest: Manifest.Manifest
  }, ({ manifest }) => {
    const files = Array.from(manifest.files)
    const size = files.reduce((total, file) => total + file.size, 0)
    const room = Manifest.tableBytes(files.length)
    // As a reader lays out one skill: the table first, then each file's bytes, in one buffer, whose
    // every byte is garbage before the table is written.
    const slab = new Uint8Array(room + size).fill(0xa5)
    let at = room
    const inputs = files.map(({ path, bytes }) => {
      const view = slab.subarray(at, at + bytes!.byteLength)
      view.set(bytes!)
      at += bytes!.byteLength
      return { path, bytes: view }
    })
    const shuffled = [...inputs].reverse()
    const inRoom = Result.getOrThrow(Manifest.make({ uri: manifest.uri, files: shuffled, table: slab.subarray(0, room) }))
    const alone = Result.getOrThrow(Manifest.make({ uri: manifest.uri, files: shuffled }))
    expect(Array.from(inRoom.files)).toEqual(Array.from(alone.files))
    expect(Manifest.entry(inRoom)).toEqual(Manifest.entry(manifest))
    // One buffer holds the skill: its files and its table.
    expect(inRoom.files.buffers()).toEqual(size === 0 ? [] : [slab.buffer])
    expect(slab.subarray(0, room).some((byte) => byte !== 0xa5) || room === 0).toBe(true)
    // A room one byte short is not written, and the manifest is the same.
    const short = new Uint8Array(Math.max(0, room - 1)).fill(0xa5)
    const elsewhere = Result.getOrThrow(Manifest.make({ uri: manifest.uri, files: shuffled, table: short }))
    expect(Array.from(elsewhere.files)).toEqual(Array.from(alone.files))
    expect(short.every((byte) => byte === 0xa5)).toBe(true)
    // Room over a file's bytes is not written either: the bytes stay those hashed.
    if (size > 0 && room > 0) {
      const before = Uint8Array.from(slab)
      const kept = Result.getOrThrow(Manifest.make({ uri: manifest.uri, files: shuffled, table: slab.subarray(size, size + room) }))
      expect(Array.from(kept.files)).toEqual(Array.from(alone.files))
      expect(slab).toEqual(before)
    }
  })

  it.prop("ListSkillsResult: every listed entry decodes on its own, and the hint is read as sent", {
    result: Protocol.ListSkillsResult
  }, ({ result }) => {
    const received = Schema.decodeUnknownSync(Protocol.ListSkillsPage)(overTheWire(result))
    expect(received.skills.map((entry) => Result.getOrThrow(Skill.decode(entry)))).toEqual(overTheWire(result.skills))
    if (result.ttlMs !== undefined) expect(CacheHint.fromResult(result).ttlMs).toBe(result.ttlMs)
  })

  it.prop("GetSkillResult: the entry decodes on its own", { result: Protocol.GetSkillResult }, ({ result }) => {
    const received = Schema.decodeUnknownSync(Protocol.GetSkillEnvelope)(overTheWire(result))
    expect(Result.getOrThrow(Skill.decode(received.skill))).toEqual(overTheWire(result.skill))
  })
})

// Every schema the package exports: generated directly (no value is thrown away by a check),
// round-tripped, and fed arbitrary JSON.
const exported: ReadonlyArray<readonly [string, Schema.Codec<unknown, unknown>]> = [
  ["CacheHint.CacheHint", CacheHint.CacheHint],
  ["CacheHint.CacheScope", CacheHint.CacheScope],
  ["CacheHint.TtlMs", CacheHint.TtlMs],
  ["Digest.Digest", Digest.Digest],
  ["Extension.Capability", Extension.Capability],
  ["Manifest.Manifest", Manifest.Manifest],
  ["Manifest.Problem", Manifest.Problem],
  ["Manifest.InvalidSkill", Manifest.InvalidSkill],
  ["Protocol.ListSkillsParams", Protocol.ListSkillsParams],
  ["Protocol.ListSkillsResult", Protocol.ListSkillsResult],
  ["Protocol.ListSkillsPage", Protocol.ListSkillsPage],
  ["Protocol.GetSkillParams", Protocol.GetSkillParams],
  ["Protocol.GetSkillResult", Protocol.GetSkillResult],
  ["Protocol.GetSkillEnvelope", Protocol.GetSkillEnvelope],
  ["Protocol.ResourceEntry", Protocol.ResourceEntry],
  ["Protocol.ReadResourceDirectoryParams", Protocol.ReadResourceDirectoryParams],
  ["Protocol.ReadResourceDirectoryResult", Protocol.ReadResourceDirectoryResult],
  ["Signing.KeyId", Signing.KeyId],
  ["Signing.Signature", Signing.Signature],
  ["Signing.Problem", Signing.Problem],
  ["Signing.SigningError", Signing.SigningError],
  ["Skill.SkillResource", Skill.SkillResource],
  ["Skill.Dynamic", Skill.Dynamic],
  ["Skill.Resources", Skill.Resources],
  ["Skill.Skill", Skill.Skill],
  ["Skill.InvalidSkillEntry", Skill.InvalidSkillEntry],
  ["SkillFrontmatter.SkillFrontmatter", SkillFrontmatter.SkillFrontmatter],
  ["SkillFrontmatter.FrontmatterError", SkillFrontmatter.FrontmatterError],
  ["SkillName.SkillName", SkillName.SkillName],
  ["SkillUri.SkillUri", SkillUri.SkillUri],
  ["SkillUri.SkillMdUri", SkillUri.SkillMdUri],
  ["SkillUri.InvalidSkillUri", SkillUri.InvalidSkillUri]
]

describe("every exported schema", () => {
  for (const [name, schema] of exported) {
    it.effect(`${name}: 200 values generated with no discard`, () =>
      Effect.gen(function*() {
        const result = yield* Arbitrary.checkEffect(Arbitrary.schema(schema), () => true, { runs: 200, maxDiscards: 0 })
        expect(result).toMatchObject({ _tag: "Passed", runs: 200, discards: 0 })
      }))

    it.prop(`${name}: arbitrary JSON, as a peer could send it, decodes or fails with a SchemaError`, { json: Schema.Json }, ({ json }) => {
      const result = Schema.decodeUnknownResult(schema)(json)
      if (Result.isFailure(result)) expect(result.failure._tag).toBe("SchemaError")
    }, { arbitrary: { runs: 100 } })

    // Manifest holds bytes and is never encoded; the others travel as JSON or are typed errors.
    if (name === "Manifest.Manifest") continue
    const equivalent = Schema.toEquivalence(schema)
    it.prop(`${name}: decode(encode(x)) is x, also after a trip through JSON`, { value: schema }, ({ value }) => {
      const encoded = Schema.encodeUnknownSync(schema)(value)
      expect(equivalent(Schema.decodeUnknownSync(schema)(encoded), value)).toBe(true)
      // The received-side schemas accept any number for a hint, which JSON cannot carry when infinite.
      if (!Schema.is(Schema.Json)(encoded)) return
      // JSON may only lose what it cannot say (-0): the encoded form survives the trip as JSON sees it.
      const wire = overTheWire(encoded)
      expect(Schema.encodeUnknownSync(schema)(Schema.decodeUnknownSync(schema)(wire))).toEqual(wire)
    }, { arbitrary: { runs: 50 } })
  }
})
