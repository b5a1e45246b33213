/**
 * What the loader keeps of each file under a root from scan to scan, as columns: its stamp, how far
 * what was last read of it can be trusted, and what was read (where its bytes are, or its digest).
 */
import type { Digest } from "@mcp-skills/core"
import { hash } from "node:crypto"
import { RacyMillis } from "../../ServerLimits.js"
import type { Stamp } from "./guard.js"

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

// What a slot holds (see `FoundFiles`'s state column).
const Free = 0
const Indexed = 1
const Removed = 2

// An index entry whose file was taken out: a lookup goes on past it.
const Tombstone = 0xffffffff

// FNV-1a over the UTF-16 code units of a path: 32 bits, enough to spread the index.
const hashOf = (path: string) => {
  let value = 0x811c9dc5
  for (let at = 0; at < path.length; at++) value = Math.imul(value ^ path.charCodeAt(at), 0x01000193)
  return value >>> 0
}

// The digest of no bytes: what a file served on demand that read empty is known by.
const emptyDigest = hash("sha256", new Uint8Array(0), "buffer")

/**
 * The files found under one root, kept from scan to scan, as columns indexed by slot: each file's
 * stamp as stat'ed and where its last read bytes are (numbers in one `Float64Array`), its trust and
 * what was read of it (a byte each), the buffer holding its bytes (one per skill read, shared by its
 * files), and for a file served on demand its digest as 32 bytes, so a catalogue larger than memory
 * is not held twice over. No object per file: a catalogue of 80,000 files keeps a path string and
 * about 70 bytes of columns each (its index by path included). A file's path on disk is the root's
 * real path joined with its relative path (see `under`), derived when a system call needs it.
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
  // Whether each slot is indexed (`Indexed`), taken out (`Removed`) or free (`Free`).
  #state = new Uint8Array(0)
  // The index by path: open addressing over slots (slot + 1; 0 empty, `Tombstone` removed), where a
  // `Map` entry would take about 40 bytes a file.
  #index = new Uint32Array(8)
  #count = 0
  #used = 0
  readonly #free: Array<number> = []

  /** How many files are indexed. */
  get count(): number {
    return this.#count
  }

  /** The slot of the file at `relative`, if indexed. */
  slot(relative: string): number | undefined {
    const at = this.#find(relative)
    return at === -1 ? undefined : this.#index[at]! - 1
  }

  /** The path (relative to the root, `/`-separated) of the file in `slot`. */
  relative(slot: number): string {
    return this.#paths[slot]!
  }

  /** Calls `f` with each indexed file's slot and path, in the order of their slots. */
  forEach(f: (slot: number, relative: string) => void): void {
    const paths = this.#paths
    for (let slot = 0; slot < paths.length; slot++) if (this.#state[slot] === Indexed) f(slot, paths[slot]!)
  }

  /**
   * Indexes a new file at `relative` with `stamp`, or unstamped (found by its folder's listing
   * alone: its first read stamps it, see `stamped`): nothing read of it yet.
   */
  add(relative: string, stamp: Stamp | undefined): number {
    let slot = this.#free.pop()
    if (slot === undefined) {
      slot = this.#paths.length
      if (slot === this.#trust.length) this.#grow()
    }
    this.#paths[slot] = relative
    this.#insert(relative, slot)
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
    this.#insert(relative, slot)
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
    const at = this.#find(relative)
    if (at === -1) return undefined
    const slot = this.#index[at]! - 1
    this.#index[at] = Tombstone
    this.#state[slot] = Removed
    this.#count--
    return slot
  }

  /** Frees `slot` (taken out of the index) for another file, dropping what was read of it. */
  release(slot: number): void {
    if (this.#state[slot] !== Removed) return
    this.#state[slot] = Free
    this.#paths[slot] = undefined
    this.#buffers[slot] = undefined
    this.#read[slot] = Unread
    this.#free.push(slot)
  }

  /** Whether the file in `slot` has a stamp: an unstamped one is never the same as any. */
  stamped(slot: number): boolean {
    return !Number.isNaN(this.#numbers[slot * Stride + Size]!)
  }

  /** Stamps the file in `slot`, found unstamped and not read since: nothing read of it is trusted. */
  stamp(slot: number, stamp: Stamp): void {
    this.#stamp(slot, stamp)
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

  /** The size of the file in `slot`, as last stat'ed (`NaN` while unstamped). */
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
  // An unstamped file's numbers are all NaN, equal to nothing, so it is never taken as unchanged.
  #stamp(slot: number, stamp: Stamp | undefined): void {
    const at = slot * Stride
    const numbers = this.#numbers
    numbers[at + Dev] = stamp === undefined ? NaN : stamp.dev
    numbers[at + Ino] = stamp === undefined ? NaN : stamp.ino
    numbers[at + Size] = stamp === undefined ? NaN : stamp.size
    numbers[at + Mtime] = stamp === undefined ? NaN : stamp.mtimeMs
    numbers[at + Ctime] = stamp === undefined ? NaN : stamp.ctimeMs
    this.#trust[slot] = Stale
  }

  /**
   * Gives back the room kept for files to come (up to half the columns, as they double), once a
   * full walk indexed every file found.
   */
  trim(): void {
    if (this.#free.length === 0) this.#resize(this.#paths.length)
    // Filled to about two thirds at most: linear probing stays short, at 6 bytes a file or less.
    this.#rehash(Math.ceil(this.#count * 1.5))
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
    const state = new Uint8Array(capacity)
    state.set(this.#state.subarray(0, count))
    this.#state = state
    if (this.#digests !== undefined) {
      const digests = Buffer.alloc(capacity * DigestBytes)
      this.#digests.copy(digests, 0, 0, count * DigestBytes)
      this.#digests = digests
    }
    // Copies of the exact length: arrays grown by assignment keep room to grow.
    this.#paths = this.#paths.slice(0, count)
    this.#buffers = this.#buffers.slice(0, count)
  }

  // Where `relative` is in the index, or -1.
  #find(relative: string): number {
    const index = this.#index
    const mask = index.length - 1
    for (let at = hashOf(relative) & mask; ; at = (at + 1) & mask) {
      const entry = index[at]!
      if (entry === 0) return -1
      if (entry !== Tombstone && this.#paths[entry - 1] === relative) return at
    }
  }

  // Indexes `slot` at `relative` (not indexed yet), keeping the index at most three quarters full.
  #insert(relative: string, slot: number): void {
    if ((this.#used + 1) * 4 > this.#index.length * 3) this.#rehash((this.#count + 1) * 2)
    const index = this.#index
    const mask = index.length - 1
    let at = hashOf(relative) & mask
    while (index[at] !== 0 && index[at] !== Tombstone) at = (at + 1) & mask
    if (index[at] === 0) this.#used++
    index[at] = slot + 1
    this.#state[slot] = Indexed
    this.#count++
  }

  // Builds the index again, without tombstones, with at least `room` entries.
  #rehash(room: number): void {
    let size = 8
    while (size < room) size *= 2
    const index = new Uint32Array(size)
    const mask = size - 1
    this.forEach((slot, relative) => {
      let at = hashOf(relative) & mask
      while (index[at] !== 0) at = (at + 1) & mask
      index[at] = slot + 1
    })
    this.#index = index
    this.#used = this.#count
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
