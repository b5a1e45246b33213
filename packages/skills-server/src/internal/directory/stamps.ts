/**
 * File stamps and the file cache: what a file looked like when stat'ed (size, modification time,
 * inode), the bytes last read for it, and reading a skill's files so that they belong to one moment.
 *
 * The I/O is synchronous on purpose: on a catalogue of 80,000 small files, `readFileSync` and
 * `statSync` cost a few microseconds each, the promise API ten times that in callbacks alone.
 * Callers bound the work between two yields to the scheduler, so a serving process stays responsive.
 */
import { Digest, Extension } from "@mcp-skills/core"
import * as NodeFs from "node:fs"
import { UnreadableFile } from "../../DirectoryModel.js"

/**
 * What a file looked like when stat'ed: a change of any of these means it must be read again.
 */
export interface Stamp {
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
}

export const stampOf = (stats: NodeFs.Stats): Stamp => ({ size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino })

export const sameStamp = (a: Stamp, b: Stamp) => a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino

/** A file found under a root: its path relative to the root (`/`-separated), real path and stamp. */
export interface Found {
  readonly relative: string
  readonly absolute: string
  readonly stamp: Stamp
}

/**
 * What is kept of a file last read, with the stamp it had then: its bytes (`Held`), or, for a file
 * served on demand, only its digest (`OnDisk`), so a catalogue larger than memory is not held twice
 * over by the stamps.
 */
export type Cached =
  | {
    readonly _tag: "Held"
    readonly stamp: Stamp
    readonly bytes: Uint8Array
    /** Modified too recently to trust the stamp alone: read again next time. */
    readonly racy: boolean
  }
  | { readonly _tag: "OnDisk"; readonly stamp: Stamp; readonly digest: Digest.Digest; readonly racy: boolean }

/**
 * One file of a skill as `readSkill` hands it over: bytes kept in memory (`InMemory`), bytes read
 * now and hashed but not kept (`Transient`, a file served on demand), or a file served on demand
 * whose stamp is unchanged, known by its digest only (`OnDisk`).
 */
export type Content =
  | { readonly _tag: "InMemory"; readonly path: string; readonly bytes: Uint8Array }
  | {
    readonly _tag: "Transient"
    readonly path: string
    readonly bytes: Uint8Array
    readonly digest: Digest.Digest
    readonly location: string
  }
  | {
    readonly _tag: "OnDisk"
    readonly path: string
    readonly size: number
    readonly digest: Digest.Digest
    readonly location: string
  }

/**
 * Whether a file of `size` bytes named `name` is served on demand: above the threshold, except a
 * `SKILL.md`, whose frontmatter the catalogue needs (also as a nested skill's file).
 */
export const isOnDemand = (name: string, size: number, onDemandAbove: number) =>
  size > onDemandAbove && name !== Extension.SkillFileName

// Filesystem timestamps tick more coarsely than writes: a file this recent may change again
// without its stamp changing.
const RacyMillis = 1_000
const ReadAttempts = 3

const reasons: Partial<Record<string, string>> = {
  ENOENT: "does not exist",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EBUSY: "busy",
  ETIMEDOUT: "timed out",
  ENOTDIR: "not a folder",
  ELOOP: "symbolic link loop"
}

/** A short reason for a failed system call. */
export const describeError = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return (code === undefined ? undefined : reasons[code] ?? code) ?? String(error)
}

/**
 * Reads the `size` bytes a file had when stat'ed into `into` (exactly `size` long): open, read,
 * close, without the `fstat` that `readFileSync` adds. A file that grew or shrank meanwhile has
 * another stamp when stat'ed again after the read, which is how the caller finds out.
 */
const readSized = (absolute: string, into: Uint8Array): Uint8Array => {
  const fd = NodeFs.openSync(absolute, "r")
  try {
    const size = into.byteLength
    let filled = 0
    while (filled < size) {
      const read = NodeFs.readSync(fd, into, filled, size - filled, filled)
      if (read === 0) break
      filled += read
    }
    return filled === size ? into : into.subarray(0, filled)
  } finally {
    NodeFs.closeSync(fd)
  }
}

/** Counters of reads and hashes (cumulative). */
export interface Counters {
  readFiles: number
  readBytes: number
  hashedFiles: number
  hashedBytes: number
}

/**
 * Reads one skill's files, re-reading only those whose stamp changed (or that were racy), and
 * re-stats what it read: if a file changed meanwhile, the skill is read again (at most 3 times), so
 * its files belong to one moment. `base` is the skill folder's relative path with its `/`. A racy
 * file is read again only if `recheck` says so. A file above `onDemandAbove` bytes is hashed here
 * and its bytes are not kept; when any file of the skill must be read (or `everything`), such files
 * are read again too, since a new manifest needs every file's bytes once.
 */
export const readSkill = (
  cache: Map<string, Cached>,
  counters: Counters,
  members: ReadonlyArray<Found>,
  base: string,
  now: number,
  recheck: (file: Found) => boolean,
  onDemandAbove: number,
  everything: boolean
): ReadonlyArray<Content> | UnreadableFile => {
  let current = members
  for (let attempt = 0; attempt < ReadAttempts; attempt++) {
    const fresh = new Map<string, Cached>()
    const lengths = new Map<string, number>()
    const inputs: Array<Content> = []
    const stale = new Set(current.filter((file) => {
      const cached = cache.get(file.absolute)
      return everything || cached === undefined || (cached.racy && recheck(file)) || !sameStamp(cached.stamp, file.stamp)
    }))
    if (stale.size > 0) for (const file of current) if (cache.get(file.absolute)?._tag === "OnDisk") stale.add(file)
    // The files read together share one allocation: one buffer per skill rather than per file is
    // what keeps a catalogue of small files from costing an allocation (and a collection) each.
    // A file read again later gets its own; the rest of the skill keeps the old buffer.
    // Files served on demand get their own buffer, so that none of the slab is theirs.
    const onDemand = (file: Found) => isOnDemand(file.relative.slice(file.relative.lastIndexOf("/") + 1), file.stamp.size, onDemandAbove)
    let total = 0
    for (const file of stale) if (!onDemand(file)) total += file.stamp.size
    const slab = Buffer.allocUnsafeSlow(total)
    let offset = 0
    for (const file of current) {
      const path = file.relative.slice(base.length)
      const cached = cache.get(file.absolute)
      if (!stale.has(file)) {
        inputs.push(
          cached!._tag === "Held"
            ? { _tag: "InMemory", path, bytes: cached!.bytes }
            : { _tag: "OnDisk", path, size: cached!.stamp.size, digest: cached!.digest, location: file.absolute }
        )
        continue
      }
      let read: Uint8Array
      try {
        if (onDemand(file)) {
          read = readSized(file.absolute, new Uint8Array(file.stamp.size))
        } else {
          read = readSized(file.absolute, slab.subarray(offset, offset + file.stamp.size))
          offset += file.stamp.size
        }
      } catch (error) {
        return new UnreadableFile({ path: file.relative, reason: describeError(error) })
      }
      counters.readFiles++
      counters.readBytes += read.byteLength
      lengths.set(file.absolute, read.byteLength)
      const racy = now - file.stamp.mtimeMs < RacyMillis
      if (onDemand(file)) {
        const bytes = read
        const digest = Digest.make(bytes)
        counters.hashedFiles++
        counters.hashedBytes += bytes.byteLength
        fresh.set(file.absolute, { _tag: "OnDisk", stamp: file.stamp, digest, racy })
        inputs.push({ _tag: "Transient", path, bytes, digest, location: file.absolute })
        continue
      }
      // Unchanged bytes keep their array, so the skill's manifest is reused rather than rehashed.
      const bytes = cached?._tag === "Held" && Buffer.from(cached.bytes).equals(read) ? cached.bytes : read
      fresh.set(file.absolute, { _tag: "Held", stamp: file.stamp, bytes, racy })
      inputs.push({ _tag: "InMemory", path, bytes })
    }
    if (fresh.size === 0) return inputs
    let moved = false
    const restamped = current.map((file) => {
      if (!fresh.has(file.absolute)) return file
      const stats = NodeFs.statSync(file.absolute, { throwIfNoEntry: false })
      if (stats === undefined) {
        moved = true
        return file
      }
      const stamp = stampOf(stats)
      if (!sameStamp(stamp, file.stamp) || stamp.size !== lengths.get(file.absolute)) moved = true
      return { ...file, stamp }
    })
    if (!moved) {
      for (const [absolute, entry] of fresh) cache.set(absolute, entry)
      return inputs
    }
    current = restamped
  }
  return new UnreadableFile({
    path: `${base}${Extension.SkillFileName}`,
    reason: `its files kept changing while being read (${ReadAttempts} attempts)`
  })
}
