/**
 * A cache of verified skill file bytes keyed by (server identity, uri, digest) (R23, R24, R128).
 * Every hit is re-hashed and compared with the digest it is looked up under, so a corrupted or
 * edited entry is a miss, never a silent substitute (R130(b)); only digest-identified files are
 * cached, so `"dynamic"` skills never are.
 *
 * @since 0.1.0
 */
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Digest } from "@mcp-skills/core"

/**
 * What a cached file is identified by. `server` is the host-assigned label of the origin
 * (a URL or command line), never the self-reported `serverInfo` (R144).
 *
 * @since 0.1.0
 */
export interface Key {
  readonly server: string
  readonly uri: string
  readonly digest: Digest.Digest
}

/**
 * A cached file: its verified bytes and the `mimeType` the server gave them.
 *
 * @since 0.1.0
 */
export interface Entry {
  readonly bytes: Uint8Array
  readonly mimeType: string | undefined
}

/**
 * @since 0.1.0
 */
export interface Store {
  /** A file whose bytes' SHA-256 equals `key.digest`, or `undefined`. */
  readonly get: (key: Key) => Effect.Effect<Entry | undefined>
  /** Stores a file already verified against `key.digest`. Cache failures are never fatal. */
  readonly set: (key: Key, entry: Entry) => Effect.Effect<void>
}

/**
 * The cache used by `SkillsClient`. Without a layer it is one in-memory store (see {@link memory})
 * shared by every client; keys carry the server identity, so clients never see each other's files.
 *
 * @since 0.1.0
 */
export const SkillCache: Context.Reference<Store> = Context.Reference<Store>("@mcp-skills/client/SkillCache", {
  defaultValue: () => memory()
})

const hex = (s: string) => createHash("sha256").update(s).digest("hex")

const verified = (key: Key, entry: Entry | undefined): Entry | undefined =>
  entry !== undefined && Digest.make(entry.bytes) === key.digest ? entry : undefined

/**
 * An in-memory store holding at most `maxBytes` (default 64 MiB), dropping the oldest entries first.
 *
 * @since 0.1.0
 */
export const memory = (options: { readonly maxBytes?: number } = {}): Store => {
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024
  const entries = new Map<string, Entry>()
  let total = 0
  const id = (key: Key) => JSON.stringify([key.server, key.uri, key.digest])
  return {
    get: (key) =>
      Effect.sync(() => {
        const k = id(key)
        const entry = verified(key, entries.get(k))
        if (entry === undefined && entries.has(k)) {
          total -= entries.get(k)!.bytes.byteLength
          entries.delete(k)
        }
        return entry
      }),
    set: (key, { bytes, mimeType }) =>
      Effect.sync(() => {
        if (bytes.byteLength > maxBytes) return
        const k = id(key)
        const previous = entries.get(k)
        if (previous !== undefined) total -= previous.bytes.byteLength
        entries.delete(k)
        entries.set(k, { bytes: Uint8Array.from(bytes), mimeType })
        total += bytes.byteLength
        for (const [oldest, value] of entries) {
          if (total <= maxBytes) break
          entries.delete(oldest)
          total -= value.bytes.byteLength
        }
      })
  }
}

/**
 * A store on disk under `directory`, which must be private to the host and outside every
 * filesystem-skill discovery path (R131): `<directory>/<sha256(server)>/<sha256(uri)>/<digest hex>`,
 * with the server label in `<sha256(server)>/origin.json` so the origin of every file is
 * recoverable from its path (R24), and the file's `mimeType` beside it in `<digest hex>.type`. Files are written to a temporary name and renamed into place,
 * never edited, and re-hashed on every read (R130(b)).
 *
 * @since 0.1.0
 */
export const disk = (directory: string): Store => {
  const serverDir = (server: string) => Path.join(directory, hex(server))
  const fileOf = (key: Key) => Path.join(serverDir(key.server), hex(key.uri), key.digest.slice("sha256:".length))
  return {
    get: (key) =>
      Effect.promise(async () => {
        const path = fileOf(key)
        const bytes = await Fs.readFile(path).then((b) => new Uint8Array(b), () => undefined)
        if (bytes === undefined) return undefined
        const mimeType = await Fs.readFile(`${path}.type`, "utf8").catch(() => undefined)
        const ok = verified(key, { bytes, mimeType: mimeType === "" ? undefined : mimeType })
        if (ok === undefined) await Fs.rm(path, { force: true }).catch(() => undefined)
        return ok
      }),
    set: (key, { bytes, mimeType }) =>
      Effect.promise(async () => {
        const path = fileOf(key)
        try {
          await Fs.mkdir(Path.dirname(path), { recursive: true, mode: 0o700 })
          const origin = Path.join(serverDir(key.server), "origin.json")
          await Fs.writeFile(origin, JSON.stringify({ server: key.server }) + "\n", { flag: "wx", mode: 0o600 }).catch(
            () => undefined
          )
          const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`
          await Fs.writeFile(temp, mimeType ?? "", { mode: 0o600 })
          await Fs.rename(temp, `${path}.type`)
          await Fs.writeFile(temp, bytes, { mode: 0o600 })
          await Fs.rename(temp, path)
        } catch {
          // A cache that cannot be written only costs a refetch.
        }
      })
  }
}

/**
 * The default in-memory cache.
 *
 * @since 0.1.0
 */
export const layerMemory = (options: { readonly maxBytes?: number } = {}): Layer.Layer<never> =>
  Layer.sync(SkillCache, () => memory(options))

/**
 * A cache on disk under `directory` (see {@link disk}).
 *
 * @since 0.1.0
 */
export const layerDisk = (directory: string): Layer.Layer<never> => Layer.succeed(SkillCache, disk(directory))
