/**
 * A cache of verified skill file bytes keyed by (server identity, uri, digest) (R23, R24, R128).
 * Every hit is re-hashed and compared with the digest it is looked up under, so a corrupted or
 * edited entry is a miss, never a silent substitute (R130(b)); only digest-identified files are
 * cached, so `"dynamic"` skills never are.
 *
 * @since 0.1.0
 */
import { createHash, randomBytes } from "node:crypto"
import { constants } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as ByteSize from "effect/ByteSize"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Digest } from "@mcp-skills/core"
import { Recency } from "./internal/recency.js"

/**
 * What a cached file is identified by. `server` is the host-assigned label of the origin
 * (a URL or command line), never the self-reported `serverInfo` (R144); `size` is the size the
 * entry gives it, so a stored file larger than that is a miss before it is read (a smaller one
 * is read, and `SkillsClient` then reports an entry whose size contradicts its digest).
 *
 * @since 0.1.0
 * @category models
 */
export interface Key {
  readonly server: string
  readonly uri: string
  readonly digest: Digest.Digest
  readonly size: number
}

/**
 * A cached file: its verified bytes and the `mimeType` the server gave them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly bytes: Uint8Array
  readonly mimeType: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Store {
  /** A file whose bytes' SHA-256 equals `key.digest`, or `undefined`. */
  readonly get: (key: Key) => Effect.Effect<Entry | undefined>
  /** Stores a file already verified against `key.digest`. Cache failures are never fatal. */
  readonly set: (key: Key, entry: Entry) => Effect.Effect<void>
}

/**
 * How much a store holds: past `maxBytes`, the least recently used files are dropped first.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  readonly maxBytes?: ByteSize.Input | undefined
}

/**
 * The bound of the in-memory store by default (64 MiB): four skills at the largest size the
 * extension allows (16 MiB), hundreds of common ones, for one process.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxMemoryBytes: ByteSize.ByteSize = ByteSize.mebibytes(64)

/**
 * The bound of the disk store by default (256 MiB): sixteen skills at the largest size the
 * extension allows, thousands of common ones, and still small beside the skills folders it feeds.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxDiskBytes: ByteSize.ByteSize = ByteSize.mebibytes(256)

const boundOf = (input: ByteSize.Input | undefined, fallback: ByteSize.ByteSize): number => {
  const bytes = ByteSize.toNumberUnsafe(input === undefined ? fallback : ByteSize.fromInputUnsafe(input))
  if (bytes <= 0) throw new RangeError("SkillCache maxBytes must be positive")
  return bytes
}

/**
 * The cache used by `SkillsClient`. Without a layer it is one in-memory store (see {@link memory})
 * shared by every client; keys carry the server identity, so clients never see each other's files.
 *
 * @since 0.1.0
 * @category models
 */
export const SkillCache: Context.Reference<Store> = Context.Reference<Store>("@mcp-skills/client/SkillCache", {
  defaultValue: () => memory()
})

const hex = (s: string) => createHash("sha256").update(s).digest("hex")

const verified = (key: Key, entry: Entry | undefined): Entry | undefined =>
  entry !== undefined && entry.bytes.byteLength <= key.size && Digest.make(entry.bytes) === key.digest ? entry : undefined

/**
 * An in-memory store holding at most `maxBytes` (default {@link defaultMaxMemoryBytes}), dropping
 * the least recently used entries first.
 *
 * @since 0.1.0
 * @category constructors
 */
export const memory = (options: Options = {}): Store => {
  const entries = new Recency<string, Entry>(boundOf(options.maxBytes, defaultMaxMemoryBytes))
  const id = (key: Key) => JSON.stringify([key.server, key.uri, key.digest])
  return {
    get: (key) =>
      Effect.sync(() => {
        const k = id(key)
        const entry = verified(key, entries.use(k))
        if (entry === undefined) entries.delete(k)
        return entry
      }),
    set: (key, { bytes, mimeType }) =>
      Effect.sync(() => void entries.add(id(key), { bytes: Uint8Array.from(bytes), mimeType }, bytes.byteLength))
  }
}

// Opened without following a link at the file (O_NOFOLLOW), and without waiting for a writer
// (O_NONBLOCK: a FIFO opens at once, then fails the regular-file check); both are ignored where
// the platform lacks them.
const readFlags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)

// The bytes of the regular file at `path` if its size passes `accept`, read to that size and no
// further; anything else (a link, a FIFO, a folder, a file of another size) is undefined.
const readRegular = async (path: string, accept: (size: number) => boolean): Promise<Uint8Array | undefined> => {
  const handle = await Fs.open(path, readFlags).catch(() => undefined)
  if (handle === undefined) return undefined
  try {
    const info = await handle.stat()
    if (!info.isFile() || !accept(info.size)) return undefined
    const bytes = new Uint8Array(info.size)
    for (let at = 0; at < bytes.length;) {
      const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at)
      if (bytesRead === 0) return undefined
      at += bytesRead
    }
    return bytes
  } catch {
    return undefined
  } finally {
    await handle.close().catch(() => undefined)
  }
}

const isFolder = (path: string) => Fs.lstat(path).then((info) => info.isDirectory(), () => false)

const HexName = /^[0-9a-f]{64}$/

// RFC 6838: a type and a subtype of at most 127 characters each.
const MaxMimeTypeBytes = 255

// A temporary file older than this was left by a write that never finished.
const StaleTempMillis = 60_000

/**
 * A store on disk under `directory`, which must be private to the host and outside every
 * filesystem-skill discovery path (R131): `<directory>/<sha256(server)>/<sha256(uri)>/<digest hex>`,
 * with the server label in `<sha256(server)>/origin.json` so the origin of every file is
 * recoverable from its path (R24), and the file's `mimeType` beside it in `<digest hex>.type`.
 * Files are written to a temporary name and renamed into place, never edited, and re-hashed on
 * every read (R130(b)).
 *
 * **Details**
 *
 * It holds at most `maxBytes` (default {@link defaultMaxDiskBytes}), dropping the least recently
 * used files first. Recency is each file's modification time, renewed on every hit, so it
 * outlives the process; the store reads the folder once, at its first write (a read needs no
 * index), and keeps its index in step with every read and write after that. Processes sharing
 * one folder each keep the bound over what they know of. A cache file is read only when it is a
 * regular file no larger than its key names: a link is never followed, a FIFO never waited on, an
 * oversized file never read; each is a miss.
 *
 * @since 0.1.0
 * @category constructors
 */
export const disk = (directory: string, options: Options = {}): Store => {
  const maxBytes = boundOf(options.maxBytes, defaultMaxDiskBytes)
  // Below `directory`: `<server hex>/<uri hex>/<digest hex>`.
  const nameOf = (key: Key) => `${hex(key.server)}/${hex(key.uri)}/${key.digest.slice("sha256:".length)}`
  const pathOf = (name: string) => Path.join(directory, ...name.split("/"))
  // The two folders of a file are the store's own, never links to elsewhere.
  const ownFolders = async (name: string) => {
    const [server, uri] = name.split("/")
    return (await isFolder(Path.join(directory, server!))) && (await isFolder(Path.join(directory, server!, uri!)))
  }
  const drop = async (name: string) => {
    const path = pathOf(name)
    await Promise.all([Fs.rm(path, { force: true }), Fs.rm(`${path}.type`, { force: true })]).catch(() => undefined)
    // An emptied uri folder goes too (rmdir refuses one that is not empty).
    await Fs.rmdir(Path.dirname(path)).catch(() => undefined)
  }
  let index: Promise<Recency<string, undefined>> | undefined
  const load = async (now: number) => {
    const recency = new Recency<string, undefined>(maxBytes)
    const found: Array<{ readonly name: string; readonly weight: number; readonly used: number }> = []
    const names = (dir: string) => Fs.readdir(dir).catch(() => [] as Array<string>)
    for (const server of await names(directory)) {
      if (!HexName.test(server) || !(await isFolder(Path.join(directory, server)))) continue
      for (const uri of await names(Path.join(directory, server))) {
        const folder = Path.join(directory, server, uri)
        if (!HexName.test(uri) || !(await isFolder(folder))) continue
        await Promise.all((await names(folder)).map(async (file) => {
          const path = Path.join(folder, file)
          const info = await Fs.lstat(path).catch(() => undefined)
          if (info === undefined || !info.isFile()) return
          if (file.endsWith(".tmp") && now - info.mtimeMs > StaleTempMillis) await Fs.rm(path, { force: true }).catch(() => undefined)
          if (!HexName.test(file)) return
          const type = await Fs.lstat(`${path}.type`).catch(() => undefined)
          found.push({ name: `${server}/${uri}/${file}`, weight: info.size + (type?.isFile() ? type.size : 0), used: info.mtimeMs })
        }))
      }
    }
    found.sort((a, b) => a.used - b.used)
    for (const { name, weight } of found) for (const [evicted] of recency.add(name, undefined, weight)) await drop(evicted)
    return recency
  }
  return {
    get: (key) =>
      Effect.gen(function*() {
        const name = nameOf(key)
        const path = pathOf(name)
        const found = yield* Effect.promise(async () => {
          if (!(await ownFolders(name))) return undefined
          const bytes = await readRegular(path, (size) => size <= key.size)
          if (bytes === undefined) return undefined
          const type = await readRegular(`${path}.type`, (size) => size <= MaxMimeTypeBytes)
          const mimeType = type === undefined || type.byteLength === 0 ? undefined : new TextDecoder().decode(type)
          return verified(key, { bytes, mimeType })
        })
        if (found === undefined) {
          yield* Effect.promise(async () => (await index)?.delete(name))
          return undefined
        }
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* Effect.promise(async () => {
          ;(await index)?.use(name)
          await Fs.utimes(path, now, now).catch(() => undefined)
        })
        return found
      }),
    set: (key, { bytes, mimeType }) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.promise(async () => {
        const type = new TextEncoder().encode(mimeType ?? "")
        const weight = bytes.byteLength + type.byteLength
        if (weight > maxBytes || type.byteLength > MaxMimeTypeBytes) return
        const name = nameOf(key)
        const path = pathOf(name)
        try {
          await Fs.mkdir(Path.dirname(path), { recursive: true, mode: 0o700 })
          if (!(await ownFolders(name))) return
          const origin = Path.join(directory, name.split("/")[0]!, "origin.json")
          await Fs.writeFile(origin, JSON.stringify({ server: key.server }) + "\n", { flag: "wx", mode: 0o600 }).catch(
            () => undefined
          )
          // "wx": a fresh name, never through a link; the rename then replaces whatever was there.
          const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`
          await Fs.writeFile(temp, type, { flag: "wx", mode: 0o600 })
          await Fs.rename(temp, `${path}.type`)
          await Fs.writeFile(temp, bytes, { flag: "wx", mode: 0o600 })
          await Fs.rename(temp, path)
        } catch {
          // A cache that cannot be written only costs a refetch.
          return
        }
        index ??= load(now)
        for (const [evicted] of (await index).add(name, undefined, weight)) await drop(evicted)
      }))
  }
}

/**
 * The default in-memory cache.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (options: Options = {}): Layer.Layer<never> => Layer.sync(SkillCache, () => memory(options))

/**
 * A cache on disk under `directory` (see {@link disk}).
 *
 * @example
 * ```ts
 * import { SkillCache, SkillsClient } from "@mcp-skills/client"
 * import { Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 *
 * // Verified files kept on disk, at most 512 MiB, least recently used first out; every hit is
 * // hashed again and checked as a network read would be.
 * const Client = SkillsClient.layerHttp({ url: "http://127.0.0.1:3000/mcp" }).pipe(
 *   Layer.provide(SkillCache.layerDisk(".cache/skills", { maxBytes: "512 MiB" })),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDisk = (directory: string, options: Options = {}): Layer.Layer<never> =>
  Layer.sync(SkillCache, () => disk(directory, options))
