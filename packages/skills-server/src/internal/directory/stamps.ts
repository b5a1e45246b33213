/**
 * What is kept of each file from scan to scan (its stamp and what was last read of it), and
 * reading a skill's files so that they belong to one moment.
 *
 * The I/O is synchronous on purpose (see `guard`): callers bound the work between two yields to
 * the scheduler, so a serving process stays responsive.
 */
import { Digest, Extension } from "@mcp-skills/core"
import { UnreadableFile } from "../../DirectoryModel.js"
import { RacyMillis, ReadAttempts } from "../../ServerLimits.js"
import { classify, read as readGuarded, sameStamp, type Stamp } from "./guard.js"
import * as Signatures from "./signatures.js"

/**
 * How far what was last read of a file can be trusted: not at all (`Stale`: not read since the file
 * had this stamp); while no event names it (`Racy`: modified too recently for its stamp to show
 * every write); as long as its stamp is unchanged (`Sound`). `Suspect`: it read empty just after a
 * write where it had bytes before, as a file does between the truncation and the write of a
 * rewrite in place; not believed, and read again by the periodic check.
 */
export type Trust = "Stale" | "Racy" | "Sound" | "Suspect"

/**
 * A file found under a root, kept from scan to scan: its path relative to the root (`/`-separated),
 * its stamp as stat'ed, and what was last read of it: its bytes, or for a file served on demand only
 * its digest, so a catalogue larger than memory is not held twice over. One record per file, with
 * plain fields of stable types; its path on disk is the root's real path joined with `relative`
 * (see `under`), derived when a system call needs it rather than kept.
 */
export class Found implements Stamp {
  dev: number
  ino: number
  size: number
  mtimeMs: number
  ctimeMs: number
  trust: Trust = "Stale"

  constructor(readonly relative: string, stamp: Stamp, public read: Uint8Array | Digest.Digest | undefined = undefined) {
    this.dev = stamp.dev
    this.ino = stamp.ino
    this.size = stamp.size
    this.mtimeMs = stamp.mtimeMs
    this.ctimeMs = stamp.ctimeMs
  }

  /** Keeps what was read while the file had `stamp`, at `now` (wall-clock milliseconds). */
  keep(stamp: Stamp, read: Uint8Array | Digest.Digest, now: number): void {
    this.dev = stamp.dev
    this.ino = stamp.ino
    this.size = stamp.size
    this.mtimeMs = stamp.mtimeMs
    this.ctimeMs = stamp.ctimeMs
    this.read = read
    this.trust = now - stamp.mtimeMs < RacyMillis ? "Racy" : "Sound"
  }
}

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
  | { readonly _tag: "OnDisk"; readonly path: string; readonly size: number; readonly digest: Digest.Digest }

const isNamed = (relative: string, name: string) => relative === name || relative.endsWith(`/${name}`)

/**
 * Whether a file of `size` bytes at `relative` is served on demand: above the threshold, except a
 * `SKILL.md`, whose frontmatter the catalogue needs (also as a nested skill's file), and a
 * signatures file, whose records it relays.
 */
export const isOnDemand = (relative: string, size: number, onDemandAbove: number) =>
  size > onDemandAbove && !isNamed(relative, Extension.SkillFileName) && !isNamed(relative, Signatures.FileName)

const emptyDigest = Digest.make(new Uint8Array(0))

// Whether what was last read of a file had bytes.
const hadBytes = (file: Found) =>
  file.read instanceof Uint8Array ? file.read.byteLength > 0 : file.read !== undefined && file.read !== emptyDigest

/** Counters of reads and hashes (cumulative). */
export interface Counters {
  readFiles: number
  readBytes: number
  hashedFiles: number
  hashedBytes: number
}

/**
 * Reads one skill's files (`files`: its members, then its signatures file if it has one),
 * re-reading only those whose stamp changed (or that were racy), each through `guard`, then stamps
 * what it read again: if a file changed meanwhile, or read empty just after a write where it had
 * bytes, the skill is read again (`ReadAttempts` in all), so its files belong to one moment; only
 * then does each file keep what was read of it. `admit` bounds the sizes before every try (a file
 * may have grown since). `base` is the skill folder's relative path with its `/`. A racy file is
 * read again only if `recheck` says so. A file above `onDemandAbove` bytes is hashed here and its
 * bytes are not kept; when any file of the skill must be read (or `everything`), such files are
 * read again too, since a new manifest needs every file's bytes once. The contents come in the
 * order of `files`.
 */
export const readSkill = <E>(
  realRoot: string,
  counters: Counters,
  files: ReadonlyArray<Found>,
  base: string,
  now: number,
  recheck: (file: Found) => boolean,
  onDemandAbove: number,
  everything: boolean,
  admit: (stamps: ReadonlyArray<Stamp>) => E | undefined
): ReadonlyArray<Content> | UnreadableFile | E => {
  const refused = admit(files)
  if (refused !== undefined) return refused
  // What was last read of a file, when it can be handed over without reading the file again.
  const trusted = (file: Found) =>
    !everything && (file.trust === "Sound" || (file.trust === "Racy" && !recheck(file))) ? file.read : undefined
  const known: Array<Content> = []
  for (const file of files) {
    const read = trusted(file)
    if (read === undefined) break
    const path = file.relative.slice(base.length)
    known.push(
      typeof read === "string"
        ? { _tag: "OnDisk", path, size: file.size, digest: read }
        : { _tag: "InMemory", path, bytes: read }
    )
  }
  if (known.length === files.length) return known

  // The stamps the files read are expected to have: as last stat'ed, then as stat'ed again after
  // a try during which they changed.
  let restamped: Array<Stamp> | undefined
  // The files that read empty, suspiciously, on the last try.
  let suspect: Array<Found> = []
  for (let attempt = 0; attempt < ReadAttempts; attempt++) {
    const expected = (index: number): Stamp => restamped?.[index] ?? files[index]!
    if (restamped !== undefined) {
      const tooLarge = admit(files.map((_, index) => expected(index)))
      if (tooLarge !== undefined) return tooLarge
    }
    // Every file but those whose bytes are held and trusted is read: a file on disk too, as a
    // new version of the skill needs its bytes once.
    let total = 0
    for (let index = 0; index < files.length; index++) {
      const file = files[index]!
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
    suspect = []
    const inputs: Array<Content> = []
    // The files read (their indexes) and what each keeps once the skill is read whole.
    const readAt: Array<number> = []
    const reads: Array<Uint8Array | Digest.Digest> = []
    // The files that were not those stamped when opened.
    const changed: Array<number> = []
    for (let index = 0; index < files.length; index++) {
      const file = files[index]!
      const path = file.relative.slice(base.length)
      const held = trusted(file)
      if (held instanceof Uint8Array) {
        inputs.push({ _tag: "InMemory", path, bytes: held })
        continue
      }
      const stamp = expected(index)
      const onDemand = isOnDemand(file.relative, stamp.size, onDemandAbove)
      const into = onDemand ? new Uint8Array(stamp.size) : slab.subarray(offset, offset + stamp.size)
      if (!onDemand) offset += stamp.size
      const got = readGuarded(realRoot, file.relative, stamp, into)
      if (got._tag === "Refused") return new UnreadableFile({ path: file.relative, reason: got.reason })
      if (got._tag === "Changed") {
        moved = true
        changed.push(index)
        continue
      }
      const read = got.bytes
      counters.readFiles++
      counters.readBytes += read.byteLength
      if (read.byteLength === 0 && hadBytes(file) && now - stamp.mtimeMs < RacyMillis) {
        moved = true
        suspect.push(file)
      }
      readAt.push(index)
      if (onDemand) {
        const digest = Digest.make(read)
        counters.hashedFiles++
        counters.hashedBytes += read.byteLength
        inputs.push({ _tag: "Transient", path, bytes: read, digest, location: got.location })
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
    // Stamped again once all are read: a file that changed during its read, or while the others
    // were read, makes the skill be read again.
    const again: Array<Stamp> = []
    for (const index of [...readAt, ...changed]) {
      const entry = classify(realRoot, files[index]!.relative)
      if (entry._tag !== "File") {
        const reason = entry._tag === "Gone" ? "does not exist" : entry._tag === "Directory" ? "now a folder" : entry.reason
        return new UnreadableFile({ path: files[index]!.relative, reason })
      }
      if (!sameStamp(entry.stamp, expected(index))) moved = true
      again[index] = entry.stamp
    }
    if (!moved) {
      for (let at = 0; at < readAt.length; at++) files[readAt[at]!]!.keep(expected(readAt[at]!), reads[at]!, now)
      return inputs
    }
    restamped = again
  }
  if (suspect.length > 0) {
    // Its last good version is served meanwhile; the periodic check reads it again.
    for (const file of suspect) file.trust = "Suspect"
    return new UnreadableFile({
      path: suspect[0]!.relative,
      reason: `read empty while being rewritten (${ReadAttempts} attempts)`
    })
  }
  return new UnreadableFile({
    path: `${base}${Extension.SkillFileName}`,
    reason: `its files kept changing while being read (${ReadAttempts} attempts)`
  })
}
