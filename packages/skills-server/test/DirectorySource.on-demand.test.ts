/**
 * Files served on demand (`DirectorySource` option `onDemandAbove`, `serve
 * --on-demand-above`). Their bytes are read and hashed once when scanned and then held neither by
 * the catalogue nor by the file stamps; each read takes them from disk and sends them only when
 * their size and SHA-256 are the catalogue's. Files are edited behind the server's back (no
 * watcher): a read answers the new bytes after a reload, or an error, never bytes whose digest
 * differs from the entry.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import { Context, Effect, Layer } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as fs from "node:fs"
import * as path from "node:path"
import { DirectorySource, Skill, SkillRegistry, SkillsServer } from "../src/index.js"
import { httpServer } from "./support/cli-server.js"
import { bytesOf, sha256 } from "./support/catalogue.js"
import { tree } from "./support/tree.js"
import { watchReloads } from "./support/watched.js"
import {
  type Client,
  httpServer as inProcess,
  legacyHttp,
  legacyStdio,
  modernHttp,
  modernStdio,
  ServerUrl,
  StdioPipe,
  stdioServer
} from "./support/wire.js"

const skillMd = (name: string, padding = 0) =>
  `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n${"s".repeat(padding)}\n`

const Threshold = 1024
const bigUri = "skill://alpha/data/big.bin"
const textUri = "skill://alpha/references/long.md"

// Exactly `size` bytes, all `byte` but the first, so two fills of one size differ.
const fill = (byte: number, size: number) => {
  const bytes = new Uint8Array(size).fill(byte)
  bytes[0] = 0xff
  return bytes
}

// Written an hour ago: a file modified within the last second is read again by every scan (its
// stamp cannot be trusted yet), which would hide what these tests look at.
const aged = (root: string) => {
  const then = new Date(Date.now() - 3_600_000)
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) fs.utimesSync(path.join(entry.parentPath, entry.name), then, then)
  }
  return root
}

const catalogue = () =>
  aged(tree({
    // Above the threshold, yet held: the catalogue needs its frontmatter.
    "alpha/SKILL.md": skillMd("alpha", 2 * Threshold),
    "alpha/references/small.md": "# Small\n",
    // Exactly the threshold: held ("above" is strict).
    "alpha/references/edge.md": "e".repeat(Threshold),
    "alpha/references/long.md": `# Long\n${"l".repeat(3 * Threshold)}\n`,
    "alpha/data/big.bin": fill(0x01, 8 * Threshold),
    "beta/SKILL.md": skillMd("beta")
  }))

/** The digest of `uri` in its skill's current entry (undefined when it is not listed). */
const entryDigest = (client: Client, uri: string) =>
  Effect.map(
    client.call("skills/get", { uri: "skill://alpha/SKILL.md" }),
    (result) => (result.skill.resources as Array<{ uri: string; digest: string }>).find((file) => file.uri === uri)?.digest
  )

const read = (client: Client, uri: string) =>
  Effect.map(client.call("resources/read", { uri }), (result) => bytesOf(result.contents[0]))

// Replaces a file the way editors do: a new inode renamed over the old one.
const replace = (file: string, bytes: Uint8Array) => {
  fs.writeFileSync(`${file}.tmp`, bytes)
  fs.renameSync(`${file}.tmp`, file)
}

describe("files served on demand", () => {
  it.effect("are hashed once, held neither by the source nor by the snapshot, and SKILL.md stays in memory", () =>
    Effect.gen(function*() {
      const root = catalogue()
      const source = yield* DirectorySource.make([{ path: root, onDemandAbove: Threshold }], { log: () => Effect.void })
      const registry = yield* SkillRegistry.make(source.definitions)
      const snapshot = yield* registry.snapshot
      const tags = new Map(snapshot.files.all().map((file) => [file.uri, file._tag]))
      expect(tags.get(bigUri)).toBe("OnDisk")
      expect(tags.get(textUri)).toBe("OnDisk")
      expect(tags.get("skill://alpha/SKILL.md")).toBe("InMemory")
      expect(tags.get("skill://alpha/references/small.md")).toBe("InMemory")
      expect(tags.get("skill://alpha/references/edge.md")).toBe("InMemory")

      const stats = yield* source.stats
      expect(stats.onDiskFiles).toBe(2)
      const held = ["alpha/SKILL.md", "alpha/references/small.md", "alpha/references/edge.md", "beta/SKILL.md"]
      expect(stats.heldBytes).toBe(held.reduce((sum, file) => sum + fs.statSync(path.join(root, file)).size, 0))
      // The snapshot holds bytes of the files in memory only.
      const alpha = snapshot.byUri.get("skill://alpha/SKILL.md")
      assert(alpha?._tag === "Static")
      expect(Skill.heldFiles(alpha.manifest).map((file) => file.path).sort()).toEqual(["SKILL.md", "references/edge.md", "references/small.md"])
      for (const file of alpha.manifest.files) expect(file.bytes !== undefined).toBe(tags.get(file.uri) === "InMemory")
      const big = Array.from(alpha.manifest.files).find((file) => file.uri === bigUri)!
      expect(big.digest).toBe(sha256(fill(0x01, 8 * Threshold)))
      expect(big.size).toBe(8 * Threshold)

      // An unchanged rescan reads and hashes nothing, and keeps the manifest.
      yield* registry.reload
      const again = yield* source.stats
      expect(again.readFiles).toBe(stats.readFiles)
      expect(again.hashedFiles).toBe(stats.hashedFiles)
      const after = (yield* registry.snapshot).byUri.get("skill://alpha/SKILL.md")
      assert(after?._tag === "Static")
      expect(after.manifest).toBe(alpha.manifest)

      // A change to a held file of the skill makes a new manifest: the files on disk are read once
      // for it and are still not held.
      fs.writeFileSync(path.join(root, "alpha/references/small.md"), "# Small, edited\n")
      yield* registry.reload
      const edited = yield* source.stats
      expect(edited.onDiskFiles).toBe(2)
      expect(edited.readFiles).toBe(stats.readFiles + 3)
      expect(edited.heldBytes).toBe(stats.heldBytes + "# Small, edited\n".length - "# Small\n".length)

      // Without the option every file is held.
      const plain = yield* DirectorySource.make([{ path: root }], { log: () => Effect.void })
      yield* plain.scan
      expect((yield* plain.stats).onDiskFiles).toBe(0)
    }).pipe(Effect.scoped))

  it.live("under watch, an edit to a file on disk gives the skill a new entry, and its bytes are still not held", () =>
    Effect.gen(function*() {
      const root = catalogue()
      const source = yield* DirectorySource.make([{ path: root, onDemandAbove: Threshold }], { log: () => Effect.void })
      const registry = yield* SkillRegistry.make(source.definitions)
      const reloads = yield* watchReloads(source, registry)
      const before = yield* source.stats
      replace(path.join(root, "alpha/data/big.bin"), fill(0x09, 16 * Threshold))
      for (let attempt = 0; attempt < 400 && reloads.length === 0; attempt++) yield* Effect.sleep("50 millis")
      expect(reloads[0]?.updated).toEqual([bigUri])
      const file = (yield* registry.snapshot).files.get(bigUri)
      assert(file?._tag === "OnDisk")
      expect(file.digest).toBe(sha256(fill(0x09, 16 * Threshold)))
      expect(file.size).toBe(16 * Threshold)
      const after = yield* source.stats
      // The new manifest needs the bytes of the skill's other file on disk once more (core's
      // `Manifest.make` takes bytes); the files held in memory are not read again.
      expect(after.readFiles - before.readFiles).toBe(2)
      expect(after.onDiskFiles).toBe(2)
      expect(after.heldBytes).toBe(before.heldBytes)
    }).pipe(Effect.scoped), 60_000)

  it.effect("a file on disk nested in another skill is on disk in both; a definition on disk without its manifest is refused", () =>
    Effect.gen(function*() {
      const root = tree({
        "outer/SKILL.md": skillMd("outer"),
        "outer/inner/SKILL.md": skillMd("inner"),
        "outer/inner/big.bin": fill(0x02, 2 * Threshold)
      })
      const source = yield* DirectorySource.make([{ path: root, onDemandAbove: Threshold }], { log: () => Effect.void })
      const registry = yield* SkillRegistry.make(source.definitions)
      const file = (yield* registry.snapshot).files.get("skill://outer/inner/big.bin")
      assert(file?._tag === "OnDisk")
      expect(file.owners.length).toBe(2)
      expect((yield* source.stats).onDiskFiles).toBe(1)

      const error = yield* Effect.flip(SkillRegistry.build([{
        ...(yield* source.definitions)[0]!,
        manifest: undefined
      }]))
      expect(error.message).toContain("need the manifest")
    }).pipe(Effect.scoped))

  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    it.live(`serve --on-demand-above, ${revision}: edits behind the server's back are answered verified or refused`, () =>
      Effect.gen(function*() {
        const root = catalogue()
        const { url } = yield* httpServer(root, ["--on-demand-above", "1KiB"])
        const client: Client = revision === "2026-07-28" ? modernHttp(url) : yield* legacyHttp(url)
        const big = path.join(root, "alpha/data/big.bin")

        // Read from disk, verified.
        const first = yield* read(client, bigUri)
        expect(first).toEqual(fill(0x01, 8 * Threshold))
        expect(sha256(first)).toBe(yield* entryDigest(client, bigUri))
        expect(new TextDecoder().decode(yield* read(client, textUri))).toBe(`# Long\n${"l".repeat(3 * Threshold)}\n`)

        // The same size, in place, with the old modification time put back: the change time
        // still tells the rescan, which answers the new bytes. (First, while the file's stamp is
        // an hour old: a file read within a second of its last write is read again by every
        // rescan.)
        const before = fs.statSync(big)
        fs.writeFileSync(big, fill(0x05, 8 * Threshold))
        fs.utimesSync(big, before.atime, before.mtime)
        const restamped = yield* read(client, bigUri)
        expect(restamped).toEqual(fill(0x05, 8 * Threshold))
        expect(sha256(restamped)).toBe(yield* entryDigest(client, bigUri))

        // Edited while its SKILL.md is broken: the rescan keeps the last good version, whose digest
        // the bytes no longer have, so the read is refused rather than sending them.
        const digest = yield* entryDigest(client, bigUri)
        const skill = fs.readFileSync(path.join(root, "alpha/SKILL.md"))
        fs.writeFileSync(path.join(root, "alpha/SKILL.md"), "---\nname: alpha\n---\n")
        fs.writeFileSync(big, fill(0x06, 8 * Threshold))
        const refused = yield* client.fail("resources/read", { uri: bigUri })
        expect(refused.code).toBe(-32602)
        expect(refused.message).toContain("changed on disk")
        expect(refused.data).toEqual({ uri: bigUri })
        expect(yield* entryDigest(client, bigUri)).toBe(digest)
        fs.writeFileSync(path.join(root, "alpha/SKILL.md"), skill)

        // Grown: the read reloads and answers the new bytes, which are the new entry's.
        fs.writeFileSync(big, fill(0x03, 12 * Threshold))
        const grown = yield* read(client, bigUri)
        expect(grown).toEqual(fill(0x03, 12 * Threshold))
        expect(sha256(grown)).toBe(yield* entryDigest(client, bigUri))

        // The same size, a new file renamed over it (a new inode).
        replace(big, fill(0x04, 12 * Threshold))
        const same = yield* read(client, bigUri)
        expect(same).toEqual(fill(0x04, 12 * Threshold))
        expect(sha256(same)).toBe(yield* entryDigest(client, bigUri))

        // Shrunk, still above the threshold.
        fs.writeFileSync(big, fill(0x07, 2 * Threshold))
        const shrunk = yield* read(client, bigUri)
        expect(shrunk).toEqual(fill(0x07, 2 * Threshold))
        expect(sha256(shrunk)).toBe(yield* entryDigest(client, bigUri))

        // Gone: the reload drops it, and the read is a plain "not found".
        fs.rmSync(big)
        const gone = yield* client.fail("resources/read", { uri: bigUri })
        expect(gone.code).toBe(-32602)
        expect(gone.message).toBe("Resource not found")
        expect(yield* entryDigest(client, bigUri)).toBeUndefined()
        // The rest of the skill is still served.
        expect(new TextDecoder().decode(yield* read(client, "skill://alpha/references/small.md"))).toBe("# Small\n")
      }).pipe(Effect.scoped), 60_000)
  }

  for (const revision of ["2026-07-28", "2025-11-25"] as const) {
    it.live(`stdio, ${revision}: a file edited behind the server's back is answered verified or refused`, () =>
      Effect.gen(function*() {
        const root = catalogue()
        const source = yield* DirectorySource.make([{ path: root, onDemandAbove: Threshold }], { log: () => Effect.void })
        const pipe = Context.get(yield* Layer.build(stdioServer(SkillsServer.layer({ skills: source.definitions }))), StdioPipe)
        const client: Client = revision === "2026-07-28" ? modernStdio(pipe) : yield* legacyStdio(pipe)
        const big = path.join(root, "alpha/data/big.bin")
        expect(yield* read(client, bigUri)).toEqual(fill(0x01, 8 * Threshold))

        // Edited while its SKILL.md is broken: the last good version stays, and the read is refused.
        const skill = fs.readFileSync(path.join(root, "alpha/SKILL.md"))
        fs.writeFileSync(path.join(root, "alpha/SKILL.md"), "---\nname: alpha\n---\n")
        fs.writeFileSync(big, fill(0x0a, 8 * Threshold))
        const refused = yield* client.fail("resources/read", { uri: bigUri })
        expect(refused).toMatchObject({ code: -32602, data: { uri: bigUri } })
        fs.writeFileSync(path.join(root, "alpha/SKILL.md"), skill)

        replace(big, fill(0x0b, 8 * Threshold))
        const fresh = yield* read(client, bigUri)
        expect(fresh).toEqual(fill(0x0b, 8 * Threshold))
        expect(sha256(fresh)).toBe(yield* entryDigest(client, bigUri))
      }).pipe(Effect.scoped), 60_000)
  }

  it.live("a reload caused by a read is answered only if the caller may still see the file", () =>
    Effect.gen(function*() {
      const root = catalogue()
      const source = yield* DirectorySource.make([{ path: root, onDemandAbove: Threshold }], { log: () => Effect.void })
      const Skills = SkillsServer.layer({
        skills: source.definitions,
        // Skills described as secret are hidden from everyone.
        visibility: () => Effect.succeed((skill) => !String(skill.frontmatter.description).includes("secret"))
      })
      const client = modernHttp(Context.get(yield* Layer.build(inProcess(Skills)), ServerUrl))
      expect(yield* read(client, bigUri)).toEqual(fill(0x01, 8 * Threshold))

      // Behind the server's back, the skill becomes secret and the file changes: the read reloads,
      // and the new catalogue hides the skill, so the new bytes are not sent either.
      fs.writeFileSync(path.join(root, "alpha/SKILL.md"), skillMd("alpha").replace("The alpha skill.", "A secret skill."))
      replace(path.join(root, "alpha/data/big.bin"), fill(0x08, 8 * Threshold))
      const hidden = yield* client.fail("resources/read", { uri: bigUri })
      expect(hidden.code).toBe(-32602)
      expect(hidden.message).toBe("Resource not found")
      expect((yield* client.fail("skills/get", { uri: "skill://alpha/SKILL.md" })).code).toBe(-32602)
    }).pipe(Effect.scoped), 60_000)

  it.live("SkillsClient reads files on demand verified, also after an edit behind the server's back", () =>
    Effect.gen(function*() {
      const root = catalogue()
      const { url } = yield* httpServer(root, ["--on-demand-above", "1024"])
      const client = yield* Layer.build(
        SkillsClient.layerHttp({ url, protocolVersion: "2026-07-28" }).pipe(
          Layer.provide([FetchHttpClient.layer, SkillCache.layerMemory()])
        )
      ).pipe(Effect.map((context) => context.mapUnsafe.get(SkillsClient.SkillsClient.key) as SkillsClient.Service))
      const pull = Effect.gen(function*() {
        const { skill } = yield* client.getSkill("skill://alpha/SKILL.md")
        assert(skill.resources !== "dynamic")
        const files = new Map<string, Uint8Array>()
        for (const resource of skill.resources) {
          const file = yield* client.readSkillResource(skill, resource.uri)
          expect(file.verified).toBe(true)
          files.set(resource.uri, file.bytes)
        }
        return files
      })
      // The client holds the skill's entry and has read one file on disk, verified.
      const longUri = textUri
      const { skill } = yield* client.getSkill("skill://alpha/SKILL.md")
      const first = yield* client.readSkillResource(skill, bigUri)
      expect(first.verified).toBe(true)
      expect(first.bytes).toEqual(fill(0x01, 8 * Threshold))
      // Another file changes before the client reads it: the server reloads and answers the new
      // bytes, which do not match the client's entry; the client gets the entry again (it heals a
      // stale entry) and verifies them against it.
      const longer = new TextEncoder().encode(`# Longer\n${"m".repeat(3 * Threshold)}\n`)
      replace(path.join(root, "alpha/references/long.md"), longer)
      const healed = yield* client.readSkillResource(skill, longUri)
      expect(healed.verified).toBe(true)
      expect(healed.bytes).toEqual(longer)
      expect(healed.digest).toBe(sha256(longer))
      // A pull from the new entry gets every file verified.
      const pulled = yield* pull
      expect(pulled.get(bigUri)).toEqual(fill(0x01, 8 * Threshold))
      expect(pulled.get(longUri)).toEqual(longer)
    }).pipe(Effect.scoped), 60_000)

  it.live("50 concurrent reads of a file edited behind the server's back run at most two rescans, and all answer the new bytes", () =>
    Effect.gen(function*() {
      // Enough skills that a rescan takes longer than the readers take to find the file changed.
      const files: Record<string, string | Uint8Array> = { ...Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [`many/s${i}/SKILL.md`, skillMd(`s${i}`)])
      ) }
      const root = aged(tree({ ...files, "alpha/SKILL.md": skillMd("alpha"), "alpha/data/big.bin": fill(0x01, 8 * Threshold) }))
      const source = yield* DirectorySource.make([{ path: root, onDemandAbove: Threshold }], { log: () => Effect.void })
      const client = modernHttp(Context.get(yield* Layer.build(inProcess(SkillsServer.layer({ skills: source.definitions }))), ServerUrl))
      expect(yield* read(client, bigUri)).toEqual(fill(0x01, 8 * Threshold))
      const before = (yield* source.stats).scans

      replace(path.join(root, "alpha/data/big.bin"), fill(0x0c, 8 * Threshold))
      const answers = yield* Effect.forEach(Array.from({ length: 50 }), () => read(client, bigUri), { concurrency: "unbounded" })
      for (const bytes of answers) expect(bytes).toEqual(fill(0x0c, 8 * Threshold))
      // Readers that find the file changed before a rescan starts share it; those that find it
      // changed while it runs share the next one (it may have read the file before the change).
      expect((yield* source.stats).scans - before).toBeLessThanOrEqual(2)
      expect(yield* entryDigest(client, bigUri)).toBe(sha256(fill(0x0c, 8 * Threshold)))
    }).pipe(Effect.scoped), 60_000)
})
