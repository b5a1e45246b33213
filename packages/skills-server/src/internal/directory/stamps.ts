/**
 * What is kept of each file from scan to scan (its stamp and what was last read of it), and
 * reading a skill's files so that they belong to one moment.
 *
 * The I/O is synchronous on purpose (see `guard`): callers bound the work between two yields to
 * the scheduler, so a serving process stays responsive.
 */
import { Digest, Extension } from "@mcp-skills/core"
import { hash } from "node:crypto"
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

// The numbers kept per file, `Stride` to a slot: its stamp as last stat'ed, and where the bytes
// last read of it are in their buffer.
const Stride = 7
const Dev = 0
const Ino = 1
const Size = 2
const Mtime = 3
const Ctime = 4
const Offset = 5
const Length = 6

// A file's trust as kept: its index here.
const Trusts: ReadonlyArray<Trust> = ["Stale", "Racy", "Sound", "Suspect"]
const Stale = 0
const Racy = 1
const Sound = 2
const Suspect = 3

// What was last read of a file: nothing yet, its bytes (held), or its digest only (served on demand).
const Unread = 0
const Held = 1
const Hashed = 2

const DigestBytes = 32

// The digest of no bytes: what a file served on demand that read empty is known by.
const emptyDigest = hash("sha256", new Uint8Array(0), "buffer")

/**
 * The files found under one root, kept from scan to scan, as columns indexed by slot: each file's
 * stamp as stat'ed and where its last read bytes are (numbers in one `Float64Array`), its trust and
 * what was read of it (a byte each), the buffer holding its bytes (one per skill read, shared by its
 * files), and for a file served on demand its digest as 32 bytes, so a catalogue larger than memory
 * is not held twice over. No object per file: a catalogue of 80,000 files keeps a path string, a
 * map entry and about 60 bytes of columns each. A file's path on disk is the root's real path
 * joined with its relative path (see `under`), derived when a system call needs it.
 *
 * A slot taken out of the index (`remove`) stays as it is until `release`d, so a scan can take it
 * back (a folder replaced by rename) or release it once nothing refers to it.
 */
export class FoundFiles {
  #numbers = new Float64Array(0)
  #trust = new Uint8Array(0)
  #read = new Uint8Array(0)
  #buffers: Array<ArrayBufferLike | undefined> = []
  #digests: Buffer | undefined
  #paths: Array<string | undefined> = []
  readonly #slots = new Map<string, number>()
  readonly #free: Array<number> = []

  /** How many files are indexed. */
  get count(): number {
    return this.#slots.size
  }

  /** The slot of the file at `relative`, if indexed. */
  slot(relative: string): number | undefined {
    return this.#slots.get(relative)
  }

  /** The path (relative to the root, `/`-separated) of the file in `slot`. */
  relative(slot: number): string {
    return this.#paths[slot]!
  }

  /** Calls `f` with each indexed file's path and slot, in the order they were indexed. */
  forEach(f: (slot: number, relative: string) => void): void {
    this.#slots.forEach(f)
  }

  /** Indexes a new file at `relative` with `stamp`: nothing read of it yet. */
  add(relative: string, stamp: Stamp): number {
    let slot = this.#free.pop()
    if (slot === undefined) {
      slot = this.#paths.length
      if (slot === this.#trust.length) this.#grow()
    }
    this.#paths[slot] = relative
    this.#slots.set(relative, slot)
    this.#read[slot] = Unread
    this.#buffers[slot] = undefined
    this.#stamp(slot, stamp)
    return slot
  }

  /**
   * Indexes again at `relative` a file taken out by `remove`, seen now with `stamp`: not to be
   * trusted any more if the stamp changed, though what was read of it is kept (unchanged bytes keep
   * their buffer).
   */
  put(relative: string, slot: number, stamp: Stamp): void {
    this.#slots.set(relative, slot)
    if (!this.sameStamp(slot, stamp)) this.#stamp(slot, stamp)
  }

  /** Keeps in `slot` what `other` read of the same file in `from`, trusted only if its stamp is the same. */
  inherit(slot: number, from: FoundFiles, other: number): void {
    const kind = from.#read[other]!
    this.#read[slot] = kind
    if (kind === Held) {
      this.#buffers[slot] = from.#buffers[other]
      this.#numbers[slot * Stride + Offset] = from.#numbers[other * Stride + Offset]!
      this.#numbers[slot * Stride + Length] = from.#numbers[other * Stride + Length]!
    } else if (kind === Hashed) {
      this.#digestsFor().set(from.#digests!.subarray(other * DigestBytes, (other + 1) * DigestBytes), slot * DigestBytes)
    }
    let same = true
    for (let at = 0; at <= Ctime; at++) same &&= this.#numbers[slot * Stride + at] === from.#numbers[other * Stride + at]
    this.#trust[slot] = same ? from.#trust[other]! : Stale
  }

  /** Takes the file at `relative` out of the index; its slot stays until `release`d or `put` back. */
  remove(relative: string): number | undefined {
    const slot = this.#slots.get(relative)
    if (slot !== undefined) this.#slots.delete(relative)
    return slot
  }

  /** Frees `slot` (taken out of the index) for another file, dropping what was read of it. */
  release(slot: number): void {
    if (this.#slots.get(this.#paths[slot]!) === slot) return
    this.#paths[slot] = undefined
    this.#buffers[slot] = undefined
    this.#read[slot] = Unread
    this.#free.push(slot)
  }

  /** Whether `stamp` is the stamp of the file in `slot`. */
  sameStamp(slot: number, stamp: Stamp): boolean {
    const at = slot * Stride
    const numbers = this.#numbers
    return numbers[at + Size] === stamp.size && numbers[at + Mtime] === stamp.mtimeMs && numbers[at + Ctime] === stamp.ctimeMs &&
      numbers[at + Ino] === stamp.ino && numbers[at + Dev] === stamp.dev
  }

  /** Copies the stamp of the file in `slot` into `into`, and hands it back. */
  stampInto(slot: number, into: { -readonly [K in keyof Stamp]: number }): Stamp {
    const at = slot * Stride
    const numbers = this.#numbers
    into.dev = numbers[at + Dev]!
    into.ino = numbers[at + Ino]!
    into.size = numbers[at + Size]!
    into.mtimeMs = numbers[at + Mtime]!
    into.ctimeMs = numbers[at + Ctime]!
    return into
  }

  /** The size of the file in `slot`, as last stat'ed. */
  size(slot: number): number {
    return this.#numbers[slot * Stride + Size]!
  }

  /** How far what was last read of the file in `slot` can be trusted. */
  trust(slot: number): Trust {
    return Trusts[this.#trust[slot]!]!
  }

  /** Marks what was read of the file in `slot` as not believed (see `Suspect`). */
  suspect(slot: number): void {
    this.#trust[slot] = Suspect
  }

  /** A view of the bytes last read of the file in `slot`, if they are held. */
  bytes(slot: number): Uint8Array | undefined {
    if (this.#read[slot] !== Held) return undefined
    const at = slot * Stride
    return new Uint8Array(this.#buffers[slot]!, this.#numbers[at + Offset]!, this.#numbers[at + Length]!)
  }

  /** Whether the bytes last read of the file in `slot` are held. */
  holds(slot: number): boolean {
    return this.#read[slot] === Held
  }

  /** How many bytes of the file in `slot` are held. */
  heldBytes(slot: number): number {
    return this.#read[slot] === Held ? this.#numbers[slot * Stride + Length]! : 0
  }

  /** The digest last read of the file in `slot`, if it is known by its digest only. */
  digest(slot: number): Digest.Digest | undefined {
    if (this.#read[slot] !== Hashed) return undefined
    return ["sha256:", this.#digests!.toString("hex", slot * DigestBytes, (slot + 1) * DigestBytes)].join("") as Digest.Digest
  }

  /** Whether the file in `slot` is known by its digest only. */
  onDisk(slot: number): boolean {
    return this.#read[slot] === Hashed
  }

  /** Whether what was last read of the file in `slot` had bytes. */
  hadBytes(slot: number): boolean {
    switch (this.#read[slot]) {
      case Held:
        return this.#numbers[slot * Stride + Length]! > 0
      case Hashed:
        return !this.#digests!.subarray(slot * DigestBytes, (slot + 1) * DigestBytes).equals(emptyDigest)
      default:
        return false
    }
  }

  /** Keeps what was read of the file in `slot` while it had `stamp`, at `now` (wall-clock milliseconds). */
  keep(slot: number, stamp: Stamp, read: Uint8Array | Digest.Digest, now: number): void {
    this.#stamp(slot, stamp)
    if (typeof read === "string") {
      this.#read[slot] = Hashed
      this.#buffers[slot] = undefined
      this.#digestsFor().write(read.slice(7), slot * DigestBytes, DigestBytes, "hex")
    } else {
      this.#read[slot] = Held
      this.#buffers[slot] = read.buffer
      this.#numbers[slot * Stride + Offset] = read.byteOffset
      this.#numbers[slot * Stride + Length] = read.byteLength
    }
    this.#trust[slot] = now - stamp.mtimeMs < RacyMillis ? Racy : Sound
  }

  // Sets the stamp of `slot`, whose last read is then not to be trusted.
  #stamp(slot: number, stamp: Stamp): void {
    const at = slot * Stride
    const numbers = this.#numbers
    numbers[at + Dev] = stamp.dev
    numbers[at + Ino] = stamp.ino
    numbers[at + Size] = stamp.size
    numbers[at + Mtime] = stamp.mtimeMs
    numbers[at + Ctime] = stamp.ctimeMs
    this.#trust[slot] = Stale
  }

  /**
   * Gives back the room kept for files to come (up to half the columns, as they double), once a
   * full walk indexed every file found.
   */
  trim(): void {
    if (this.#free.length === 0) this.#resize(this.#paths.length)
  }

  #grow(): void {
    this.#resize(Math.max(1024, this.#trust.length * 2))
  }

  #resize(capacity: number): void {
    const count = Math.min(capacity, this.#paths.length)
    const numbers = new Float64Array(capacity * Stride)
    numbers.set(this.#numbers.subarray(0, count * Stride))
    this.#numbers = numbers
    const trust = new Uint8Array(capacity)
    trust.set(this.#trust.subarray(0, count))
    this.#trust = trust
    const read = new Uint8Array(capacity)
    read.set(this.#read.subarray(0, count))
    this.#read = read
    if (this.#digests !== undefined) {
      const digests = Buffer.alloc(capacity * DigestBytes)
      this.#digests.copy(digests, 0, 0, count * DigestBytes)
      this.#digests = digests
    }
    // Copies of the exact length: arrays grown by assignment keep room to grow.
    this.#paths = this.#paths.slice(0, count)
    this.#buffers = this.#buffers.slice(0, count)
  }

  // The digests column, made the first time a file is known by its digest only.
  #digestsFor(capacity = this.#trust.length): Buffer {
    if (this.#digests === undefined || this.#digests.length < capacity * DigestBytes) {
      const digests = Buffer.alloc(capacity * DigestBytes)
      this.#digests?.copy(digests)
      this.#digests = digests
    }
    return this.#digests
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

/** Counters of reads and hashes (cumulative). */
export interface Counters {
  readFiles: number
  readBytes: number
  hashedFiles: number
  hashedBytes: number
}

/**
 * Reads one skill's files (`files`: the slots in `found` of its members, then of its signatures
 * file if it has one), re-reading only those whose stamp changed (or that were racy), each through
 * `guard`, then stamps what it read again: if a file changed meanwhile, or read empty just after a
 * write where it had bytes, the skill is read again (`ReadAttempts` in all), so its files belong to
 * one moment; only then does each file keep what was read of it. `admit` bounds the sizes (file
 * `index`'s, by `sizeOf`) before every try (a file may have grown since). `base` is the skill
 * folder's relative path with its `/`. A racy file is read again only if `recheck` says so (given
 * its relative path). A file above `onDemandAbove` bytes is hashed here and its bytes are not kept;
 * when any file of the skill must be read (or `everything`), such files are read again too, since a
 * new manifest needs every file's bytes once. The contents come in the order of `files`.
 */
export const readSkill = <E>(
  realRoot: string,
  counters: Counters,
  found: FoundFiles,
  files: ReadonlyArray<number>,
  base: string,
  now: number,
  recheck: (relative: string) => boolean,
  onDemandAbove: number,
  everything: boolean,
  admit: (sizeOf: (index: number) => number) => E | undefined
): ReadonlyArray<Content> | UnreadableFile | E => {
  const refused = admit((index) => found.size(files[index]!))
  if (refused !== undefined) return refused
  // Whether what was last read of a file can be handed over without reading the file again.
  const trusted = (slot: number) => {
    if (everything) return false
    const trust = found.trust(slot)
    return trust === "Sound" || (trust === "Racy" && !recheck(found.relative(slot)))
  }
  const known: Array<Content> = []
  for (const slot of files) {
    if (!trusted(slot)) break
    const path = found.relative(slot).slice(base.length)
    const bytes = found.bytes(slot)
    const digest = bytes === undefined ? found.digest(slot) : undefined
    if (bytes !== undefined) known.push({ _tag: "InMemory", path, bytes })
    else if (digest !== undefined) known.push({ _tag: "OnDisk", path, size: found.size(slot), digest })
    else break
  }
  if (known.length === files.length) return known

  // The stamps the files read are expected to have: as last stat'ed (copied into `stamp`, one
  // object for the whole skill), then as stat'ed again after a try during which they changed.
  let restamped: Array<Stamp> | undefined
  const stamp = { dev: 0, ino: 0, size: 0, mtimeMs: 0, ctimeMs: 0 }
  const expected = (index: number): Stamp => restamped?.[index] ?? found.stampInto(files[index]!, stamp)
  const sizeOf = (index: number) => restamped?.[index]?.size ?? found.size(files[index]!)
  // The files whose held bytes are handed over as they are.
  const held = (slot: number) => found.holds(slot) && trusted(slot)
  // The files that read empty, suspiciously, on the last try.
  let suspect: Array<number> = []
  for (let attempt = 0; attempt < ReadAttempts; attempt++) {
    if (restamped !== undefined) {
      const tooLarge = admit(sizeOf)
      if (tooLarge !== undefined) return tooLarge
    }
    // Every file but those whose bytes are held and trusted is read: a file on disk too, as a
    // new version of the skill needs its bytes once.
    let total = 0
    for (let index = 0; index < files.length; index++) {
      const slot = files[index]!
      if (held(slot)) continue
      const size = sizeOf(index)
      if (!isOnDemand(found.relative(slot), size, onDemandAbove)) total += size
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
    // What each file read keeps once the skill is read whole (by index; `undefined`: not read).
    const reads: Array<Uint8Array | Digest.Digest | undefined> = []
    for (let index = 0; index < files.length; index++) {
      const slot = files[index]!
      const relative = found.relative(slot)
      const path = relative.slice(base.length)
      if (held(slot)) {
        inputs.push({ _tag: "InMemory", path, bytes: found.bytes(slot)! })
        continue
      }
      const size = sizeOf(index)
      const onDemand = isOnDemand(relative, size, onDemandAbove)
      const into = onDemand ? new Uint8Array(size) : slab.subarray(offset, offset + size)
      if (!onDemand) offset += size
      const got = readGuarded(realRoot, relative, expected(index), into)
      if (got._tag === "Refused") return new UnreadableFile({ path: relative, reason: got.reason })
      if (got._tag === "Changed") {
        moved = true
        continue
      }
      const read = got.bytes
      counters.readFiles++
      counters.readBytes += read.byteLength
      if (read.byteLength === 0 && found.hadBytes(slot) && now - expected(index).mtimeMs < RacyMillis) {
        moved = true
        suspect.push(slot)
      }
      if (onDemand) {
        const digest = Digest.make(read)
        counters.hashedFiles++
        counters.hashedBytes += read.byteLength
        inputs.push({ _tag: "Transient", path, bytes: read, digest, location: got.location })
        reads[index] = digest
        continue
      }
      // Unchanged bytes keep their buffer, so the skill's manifest is reused rather than rehashed.
      const last = found.bytes(slot)
      const bytes = last !== undefined && last.byteLength === read.byteLength && Buffer.compare(last, read) === 0 ? last : read
      inputs.push({ _tag: "InMemory", path, bytes })
      reads[index] = bytes
    }
    // Stamped again once all are read: a file that changed during its read, or while the others
    // were read, makes the skill be read again.
    const again: Array<Stamp> = []
    for (let index = 0; index < files.length; index++) {
      const slot = files[index]!
      if (held(slot)) continue
      const entry = classify(realRoot, found.relative(slot))
      if (entry._tag !== "File") {
        const reason = entry._tag === "Gone" ? "does not exist" : entry._tag === "Directory" ? "now a folder" : entry.reason
        return new UnreadableFile({ path: found.relative(slot), reason })
      }
      if (!sameStamp(entry.stamp, expected(index))) moved = true
      again[index] = entry.stamp
    }
    if (!moved) {
      for (let index = 0; index < files.length; index++) {
        const read = reads[index]
        if (read !== undefined) found.keep(files[index]!, expected(index), read, now)
      }
      return inputs
    }
    restamped = again
  }
  if (suspect.length > 0) {
    // Its last good version is served meanwhile; the periodic check reads it again.
    for (const slot of suspect) found.suspect(slot)
    return new UnreadableFile({
      path: found.relative(suspect[0]!),
      reason: `read empty while being rewritten (${ReadAttempts} attempts)`
    })
  }
  return new UnreadableFile({
    path: `${base}${Extension.SkillFileName}`,
    reason: `its files kept changing while being read (${ReadAttempts} attempts)`
  })
}
