/**
 * File stamps and what is kept of each file: what a file looked like when stat'ed (size,
 * modification time, inode), what was last read of it, and reading a skill's files so that they
 * belong to one moment.
 *
 * The I/O is synchronous on purpose: on a catalogue of 80,000 small files, `readFileSync` and
 * `statSync` cost a few microseconds each, the promise API ten times that in callbacks alone.
 * Callers bound the work between two yields to the scheduler, so a serving process stays responsive.
 */
import { Digest, Extension } from "@mcp-skills/core"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { UnreadableFile } from "../../DirectoryModel.js"

/**
 * What a file looked like when stat'ed: a change of any of these means it must be read again. A
 * `NodeFs.Stats` is one, and so is a {@link Found}.
 */
export interface Stamp {
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
}

export const sameStamp = (a: Stamp, b: Stamp) => a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino

/**
 * How far what was last read of a file can be trusted: not at all (`Stale`: not read since the file
 * had this stamp); while no event names it (`Racy`: modified too recently for its stamp to show
 * every write); as long as its stamp is unchanged (`Sound`).
 */
export type Trust = "Stale" | "Racy" | "Sound"

/**
 * A file found under a root, kept from scan to scan: its path relative to the root (`/`-separated),
 * its stamp as stat'ed, and what was last read of it: its bytes, or for a file served on demand only
 * its digest, so a catalogue larger than memory is not held twice over. One record per file, with
 * plain fields of stable types; its path on disk is the root's real path joined with `relative`
 * (see {@link under}), derived when a system call needs it rather than kept.
 */
export class Found implements Stamp {
  size: number
  mtimeMs: number
  ino: number
  trust: Trust = "Stale"

  constructor(readonly relative: string, stamp: Stamp, public read: Uint8Array | Digest.Digest | undefined = undefined) {
    this.size = stamp.size
    this.mtimeMs = stamp.mtimeMs
    this.ino = stamp.ino
  }

  /** Keeps what was read while the file had `stamp`, at `now` (wall-clock milliseconds). */
  keep(stamp: Stamp, read: Uint8Array | Digest.Digest, now: number): void {
    this.size = stamp.size
    this.mtimeMs = stamp.mtimeMs
    this.ino = stamp.ino
    this.read = read
    this.trust = now - stamp.mtimeMs < RacyMillis ? "Racy" : "Sound"
  }
}

/** The path on disk of `relative` (`/`-separated, no `.` or `..` segment) under `realRoot`. */
// Where `/` is the separator, joining is concatenating, without `path.join`'s normalization of
// every one of 80,000 paths.
export const under = NodePath.sep === "/"
  ? (realRoot: string, relative: string) => relative === "" ? realRoot : realRoot === "/" ? `/${relative}` : `${realRoot}/${relative}`
  : NodePath.join

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
 * Whether a file of `size` bytes at `relative` is served on demand: above the threshold, except a
 * `SKILL.md`, whose frontmatter the catalogue needs (also as a nested skill's file).
 */
export const isOnDemand = (relative: string, size: number, onDemandAbove: number) =>
  size > onDemandAbove && relative !== Extension.SkillFileName && !relative.endsWith(`/${Extension.SkillFileName}`)

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
 * its files belong to one moment; only then does each file keep what was read of it. `base` is the
 * skill folder's relative path with its `/`. A racy file is read again only if `recheck` says so.
 * A file above `onDemandAbove` bytes is hashed here and its bytes are not kept; when any file of
 * the skill must be read (or `everything`), such files are read again too, since a new manifest
 * needs every file's bytes once. The contents come in the order of `members`.
 */
export const readSkill = (
  realRoot: string,
  counters: Counters,
  members: ReadonlyArray<Found>,
  base: string,
  now: number,
  recheck: (file: Found) => boolean,
  onDemandAbove: number,
  everything: boolean
): ReadonlyArray<Content> | UnreadableFile => {
  // What was last read of a file, when it can be handed over without reading the file again.
  const trusted = (file: Found) =>
    !everything && (file.trust === "Sound" || (file.trust === "Racy" && !recheck(file))) ? file.read : undefined
  const known: Array<Content> = []
  for (const file of members) {
    const read = trusted(file)
    if (read === undefined) break
    const path = file.relative.slice(base.length)
    known.push(
      typeof read === "string"
        ? { _tag: "OnDisk", path, size: file.size, digest: read, location: under(realRoot, file.relative) }
        : { _tag: "InMemory", path, bytes: read }
    )
  }
  if (known.length === members.length) return known

  // The stamps the files read are expected to have: as last stat'ed, then as stat'ed again after
  // an attempt during which they changed.
  let restamped: Array<Stamp> | undefined
  for (let attempt = 0; attempt < ReadAttempts; attempt++) {
    const expected = (index: number): Stamp => restamped?.[index] ?? members[index]!
    // Every member but those whose bytes are held and trusted is read: a file on disk too, as a
    // new version of the skill needs its bytes once.
    let total = 0
    for (let index = 0; index < members.length; index++) {
      const file = members[index]!
      if (trusted(file) instanceof Uint8Array) continue
      const { size } = expected(index)
      if (!isOnDemand(file.relative, size, onDemandAbove)) total += size
    }
    // The files read together share one allocation: one buffer per skill rather than per file is
    // what keeps a catalogue of small files from costing an allocation (and a collection) each.
    // A file read again later gets its own; the rest of the skill keeps the old buffer.
    // Files served on demand get their own buffer, so that none of the slab is theirs.
    const slab = Buffer.allocUnsafeSlow(total)
    let offset = 0
    let moved = false
    const inputs: Array<Content> = []
    // The members read (their indexes), where they are on disk, and what each keeps once the
    // skill is read whole.
    const readAt: Array<number> = []
    const locations: Array<string> = []
    const reads: Array<Uint8Array | Digest.Digest> = []
    for (let index = 0; index < members.length; index++) {
      const file = members[index]!
      const path = file.relative.slice(base.length)
      const held = trusted(file)
      if (held instanceof Uint8Array) {
        inputs.push({ _tag: "InMemory", path, bytes: held })
        continue
      }
      const { size } = expected(index)
      const onDemand = isOnDemand(file.relative, size, onDemandAbove)
      const location = under(realRoot, file.relative)
      let read: Uint8Array
      try {
        if (onDemand) {
          read = readSized(location, new Uint8Array(size))
        } else {
          read = readSized(location, slab.subarray(offset, offset + size))
          offset += size
        }
      } catch (error) {
        return new UnreadableFile({ path: file.relative, reason: describeError(error) })
      }
      counters.readFiles++
      counters.readBytes += read.byteLength
      // Fewer bytes than stat'ed: the file changed during the read.
      if (read.byteLength !== size) moved = true
      readAt.push(index)
      locations.push(location)
      if (onDemand) {
        const digest = Digest.make(read)
        counters.hashedFiles++
        counters.hashedBytes += read.byteLength
        inputs.push({ _tag: "Transient", path, bytes: read, digest, location })
        reads.push(digest)
        continue
      }
      // Unchanged bytes keep their array, so the skill's manifest is reused rather than rehashed.
      const last = file.read
      const bytes = last instanceof Uint8Array && last.byteLength === read.byteLength && Buffer.compare(last, read) === 0
        ? last
        : read
      inputs.push({ _tag: "InMemory", path, bytes })
      reads.push(bytes)
    }
    const again: Array<Stamp> = []
    for (let at = 0; at < readAt.length; at++) {
      const index = readAt[at]!
      const stats = NodeFs.statSync(locations[at]!, { throwIfNoEntry: false })
      if (stats === undefined || !sameStamp(stats, expected(index))) moved = true
      again[index] = stats ?? expected(index)
    }
    if (!moved) {
      for (let at = 0; at < readAt.length; at++) members[readAt[at]!]!.keep(expected(readAt[at]!), reads[at]!, now)
      return inputs
    }
    restamped = again
  }
  return new UnreadableFile({
    path: `${base}${Extension.SkillFileName}`,
    reason: `its files kept changing while being read (${ReadAttempts} attempts)`
  })
}
