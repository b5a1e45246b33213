/**
 * The cache stores are bounded: past `maxBytes` the least recently used files go first, in memory
 * and on disk, where recency outlives the process. A disk entry is read only when it is a regular
 * file no larger than its key names: a FIFO, a link (to a file with the right bytes, or to
 * /dev/zero), a linked folder or an oversized file is a miss, never followed, waited on or read.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Digest } from "@mcp-skills/core"
import { SkillCache } from "@mcp-skills/client"
import { runCli, tempDir } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

const enc = new TextEncoder()
const hex = (s: string) => createHash("sha256").update(s).digest("hex")

// A file of 100 bytes and its key; with "text/plain" (10 bytes) it weighs 110.
const file = (name: string) => {
  const bytes = enc.encode(name.repeat(100).slice(0, 100))
  const key: SkillCache.Key = { server: "http://example/mcp", uri: `skill://cache/${name}`, digest: Digest.make(bytes), size: 100 }
  return { key, entry: { bytes, mimeType: "text/plain" } }
}
const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(file) as [ReturnType<typeof file>, ReturnType<typeof file>, ReturnType<typeof file>, ReturnType<typeof file>, ReturnType<typeof file>]

const pathOf = (dir: string, key: SkillCache.Key) =>
  Path.join(dir, hex(key.server), hex(key.uri), key.digest.slice("sha256:".length))

const exists = (path: string) => Effect.promise(() => Fs.lstat(path).then(() => true, () => false))

const hits = (store: SkillCache.Store, ...files: ReadonlyArray<ReturnType<typeof file>>) =>
  Effect.forEach(files, ({ key }) => Effect.map(store.get(key), (entry) => entry !== undefined))

describe("SkillCache.memory", () => {
  it.effect("keeps the most recently used within maxBytes", () =>
    Effect.gen(function*() {
      const store = SkillCache.memory({ maxBytes: 250 })
      yield* store.set(a.key, a.entry)
      yield* store.set(b.key, b.entry)
      yield* store.get(a.key)
      yield* store.set(c.key, c.entry)
      assert.deepStrictEqual(yield* hits(store, a, b, c), [true, false, true])
    }))
})

describe("SkillCache.disk", () => {
  it.live("evicts the least recently used past maxBytes, files and folders with them", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("cache-lru-")
      const store = SkillCache.disk(dir, { maxBytes: 350 })
      for (const { key, entry } of [a, b, c]) yield* store.set(key, entry)
      assert.deepStrictEqual(yield* hits(store, a), [true])
      yield* store.set(d.key, d.entry)
      assert.isFalse(yield* exists(pathOf(dir, b.key)))
      assert.isFalse(yield* exists(`${pathOf(dir, b.key)}.type`))
      assert.isFalse(yield* exists(Path.dirname(pathOf(dir, b.key))))
      assert.deepStrictEqual(yield* hits(store, a, b, c, d), [true, false, true, true])
      // Larger than the whole cache: never stored, nothing evicted for it.
      const huge = enc.encode("x".repeat(400))
      yield* store.set({ ...e.key, digest: Digest.make(huge), size: 400 }, { bytes: huge, mimeType: undefined })
      assert.deepStrictEqual(yield* hits(store, a, c, d), [true, true, true])
    }))

  it.live("recency outlives the process: a new store over the folder evicts by last use", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("cache-reopen-")
      const first = SkillCache.disk(dir, { maxBytes: 350 })
      for (const { key, entry } of [a, b, c]) yield* first.set(key, entry)
      // a used last, b before it, c first.
      yield* Effect.promise(async () => {
        await Fs.utimes(pathOf(dir, c.key), 1_000, 1_000)
        await Fs.utimes(pathOf(dir, b.key), 2_000, 2_000)
        await Fs.utimes(pathOf(dir, a.key), 3_000, 3_000)
      })
      const second = SkillCache.disk(dir, { maxBytes: 350 })
      yield* second.set(d.key, d.entry)
      assert.deepStrictEqual(yield* hits(second, a, b, c, d), [true, true, false, true])
      // A hit renews its time on disk.
      yield* Effect.promise(() => Fs.utimes(pathOf(dir, a.key), 1, 1))
      yield* second.get(a.key)
      assert.isAbove((yield* Effect.promise(() => Fs.stat(pathOf(dir, a.key)))).mtimeMs, 1_000_000)
    }))

  it.live("an entry replaced by a FIFO is a miss at once, and the next write replaces it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("cache-fifo-")
      const store = SkillCache.disk(dir)
      yield* store.set(a.key, a.entry)
      const path = pathOf(dir, a.key)
      yield* Effect.promise(() => Fs.rm(path))
      execFileSync("mkfifo", [path])
      // A blocking open would never return: the timeout turns a hang into a failure.
      assert.isUndefined(yield* store.get(a.key).pipe(Effect.timeout("5 seconds")))
      yield* store.set(a.key, a.entry)
      assert.isTrue((yield* Effect.promise(() => Fs.lstat(path))).isFile())
      assert.deepStrictEqual(yield* hits(store, a), [true])
    }))

  it.live("links are never followed: to a file with the right bytes, to /dev/zero, or as the entry's folder", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("cache-links-")
      const outside = yield* tempDir("cache-outside-")
      const store = SkillCache.disk(dir)
      yield* store.set(a.key, a.entry)
      const path = pathOf(dir, a.key)
      const copy = Path.join(outside, "a")
      yield* Effect.promise(async () => {
        await Fs.writeFile(copy, a.entry.bytes)
        await Fs.rm(path)
        await Fs.symlink(copy, path)
      })
      assert.isUndefined(yield* store.get(a.key))
      yield* Effect.promise(async () => {
        await Fs.rm(path)
        await Fs.symlink("/dev/zero", path)
      })
      assert.isUndefined(yield* store.get(a.key).pipe(Effect.timeout("5 seconds")))
      // The uri folder itself a link to a folder holding the right file: neither read nor written through.
      const folder = Path.dirname(path)
      yield* Effect.promise(async () => {
        await Fs.rm(folder, { recursive: true })
        await Fs.writeFile(Path.join(outside, Path.basename(path)), a.entry.bytes)
        await Fs.symlink(outside, folder)
      })
      assert.isUndefined(yield* store.get(a.key))
      yield* store.set(b.key, b.entry)
      yield* store.set({ ...a.key }, a.entry)
      assert.deepStrictEqual((yield* Effect.promise(() => Fs.readdir(outside))).sort(), ["a", Path.basename(path)].sort())
    }))

  it.live("a file larger than its key's size is a miss, never read", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("cache-oversized-")
      const store = SkillCache.disk(dir)
      yield* store.set(a.key, a.entry)
      // 1 GiB, sparse: reading it would take seconds and a gigabyte.
      yield* Effect.promise(() => Fs.truncate(pathOf(dir, a.key), 1024 * 1024 * 1024))
      assert.isUndefined(yield* store.get(a.key).pipe(Effect.timeout("2 seconds")))
    }))
})

describe("mcp-skills --cache-max-size", () => {
  it.live("bounds the disk cache: a file read later evicts the one used least recently", () =>
    Effect.gen(function*() {
      const s = yield* Effect.acquireRelease(Effect.promise(() => Tamper.start()), (s) => Effect.promise(() => s.close()))
      const cache = yield* tempDir("cache-cli-")
      const run = (args: ReadonlyArray<string>) => Effect.promise(() => runCli(["read", s.url, ...args, "--cache", cache, "--cache-max-size", "200B"]))
      // SKILL.md and its type weigh 162 bytes, the invoice 51: both do not fit in 200.
      assert.strictEqual((yield* run([Tamper.SkillUri])).status, 0)
      assert.strictEqual((yield* run([Tamper.SkillUri])).status, 0)
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri])
      assert.strictEqual((yield* run([Tamper.SkillUri, "templates/invoice.md"])).stdout, "# Invoice template\n\nTotal: {{amount}}\n")
      assert.strictEqual((yield* run([Tamper.SkillUri])).status, 0)
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri, Tamper.InvoiceUri, Tamper.SkillUri])
      const refused = yield* Effect.promise(() => runCli(["list", s.url, "--cache-max-size", "lots"]))
      assert.notStrictEqual(refused.status, 0)
      assert.include(refused.stderr, "a positive size with a unit")
    }).pipe(Effect.scoped))
})
