/**
 * What the loader keeps of each file under a root from scan to scan, as columns: its stamp, how far
 * what was last read of it can be trusted, and what was read (where its bytes are, or its digest).
 */
import type { Digest } from "@mcp-skills/core"
import { hash } from "node:crypto"
import { RacyMillis } from "../../ServerLimits.js"
import type { Stamp } from "./guard.js"
import { NameIndex } from "./nameIndex.js"

/**
 * How far what was last read of a file can be trusted: not at all (`Stale`: not read since the file
 * had this stamp); while no event names it (`Racy`: modified too recently for its stamp to show
 * every write); as long as its stamp is unchanged (`Sound`). `Suspect`: it read empty just after a
 * write where it had bytes before, as a file does between the truncation and the write of a
 * rewrite in place; not believed, and read again by the periodic check.
 */
export type Trust = "Stale" | "Racy" | "Sound" | "Suspect"

// The stamp kept per file as last stat'ed, `Stride` numbers to a slot.
const Stride = 5
const Dev = 0
const Ino = 1
const Size = 2
const Mtime = 3
const Ctime = 4

// Where the bytes last read of a file are in their buffer, two 32-bit numbers to a slot: a skill's
// bytes fit 32 bits (`Limits.MaxSkillBytes`).
const Offset = 0
const Length = 1

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

// The folder of the root itself (`""`), parent of every top-level entry.
const RootFolder = 0
const NoFolder = -1

// The digest of no bytes: what a file served on demand that read empty is known by.
const emptyDigest = hash("sha256", new Uint8Array(0), "buffer")

// A name to keep, as a string of its own: a slice of a path (V8 shares the path's characters from
// 13 code units up) would keep the whole path alive, so a longer name is copied when first kept.
const own = (name: string) => name.length < 13 ? name : Buffer.from(name, "utf16le").toString("utf16le")

/**
 * The files found under one root, kept from scan to scan, as columns indexed by slot: each file's
 * stamp as stat'ed (in a `Float64Array`) and where its last read bytes are (a `Uint32Array`), its
 * trust and what was read of it (a byte each), the buffer holding its bytes (one per skill read,
 * shared by its files), and for a file served on demand its digest as 32 bytes, so a catalogue
 * larger than memory is not held twice over.
 *
 * Paths are a tree of names: each folder is kept by its parent and its name, each file by its
 * folder and its name, and equal names are one string (`SKILL.md`, `references`: every skill's).
 * A path is made when asked for (`relative`). No object and no path string per file: a catalogue
 * of 80,000 files keeps about 90 bytes of columns each, its index and folders included.
 *
 * A slot taken out of the index (`remove`) stays as it is until `release`d, so a scan can take it
 * back (a folder replaced by rename) or release it once nothing refers to it.
 */
export class FoundFiles {
  #numbers = new Float64Array(0)
  #held = new Uint32Array(0)
  #trust = new Uint8Array(0)
  #read = new Uint8Array(0)
  #buffers: Array<ArrayBufferLike | undefined> = []
  #digests: Buffer | undefined
  // Each slot's folder and name, and the index on both.
  readonly #files = new NameIndex()
  // Whether each slot is indexed (`Indexed`), taken out (`Removed`) or free (`Free`).
  #state = new Uint8Array(0)
  #slots = 0
  readonly #free: Array<number> = []
  // The folders: the root's (id `RootFolder`), every folder walked and every folder holding a file.
  readonly #folders = new NameIndex()
  readonly #freeFolders: Array<number> = []
  // One string per distinct name, names of entries gone included until they outnumber the others.
  #names = new Map<string, string>()
  // How many entries were dropped since the names were last forgotten.
  #gone = 0
  // The folder last looked up by path: a walk adds the files of one folder in a row.
  #lastFolder = ""
  #lastFolderId = RootFolder

  constructor() {
    this.#folders.resize(8)
    this.#folders.insert(RootFolder, NoFolder, "")
  }

  /** How many files are indexed. */
  get count(): number {
    return this.#files.count
  }

  /** The slot of the file at `relative`, if indexed. */
  slot(relative: string): number | undefined {
    const slash = relative.lastIndexOf("/")
    const folder = slash === -1 ? RootFolder : this.#folderId(relative, slash)
    if (folder === -1) return undefined
    // Only indexed files are found: taking one out of the index leaves a tombstone in its place.
    const slot = this.#files.find(folder, relative, slash + 1, relative.length)
    return slot === -1 ? undefined : slot
  }

  /** The path (relative to the root, `/`-separated) of the indexed file in `slot`, made now. */
  relative(slot: number): string {
    const folder = this.#files.owner[slot]!
    const name = this.#files.names[slot]!
    return folder === RootFolder ? name : [this.folderPath(folder), name].join("/")
  }

  /** The name (last segment of the path) of the file in `slot`. */
  name(slot: number): string {
    return this.#files.names[slot]!
  }

  /** The folder (its id) holding the file in `slot`. */
  folderOf(slot: number): number {
    return this.#files.owner[slot]!
  }

  /** The folder holding folder `folder` (`-1` for the root's). */
  parentOf(folder: number): number {
    return this.#folders.owner[folder]!
  }

  /** The path (relative to the root, `""` for the root) of folder `folder`, made now. */
  folderPath(folder: number): string {
    return this.#segments(folder).join("/")
  }

  /** The names from the root down to the known folder at `relative` (the strings kept), if known. */
  segments(relative: string): Array<string> | undefined {
    const folder = relative === "" ? RootFolder : this.#folderId(relative, relative.length)
    return folder === -1 ? undefined : this.#segments(folder)
  }

  #segments(folder: number): Array<string> {
    const names: Array<string> = []
    for (let at = folder; at !== RootFolder; at = this.#folders.owner[at]!) names.push(this.#folders.names[at]!)
    return names.reverse()
  }

  /** Calls `f` with each indexed file's slot, in the order of their slots. */
  forEach(f: (slot: number) => void): void {
    for (let slot = 0; slot < this.#slots; slot++) if (this.#state[slot] === Indexed) f(slot)
  }

  /** Whether `relative` is a folder known here: walked, or holding a file indexed. */
  isFolder(relative: string): boolean {
    return relative === "" || this.#folderId(relative, relative.length) !== -1
  }

  /** Knows the folder at `relative` (and those above it): walked, maybe empty. */
  addFolder(relative: string): void {
    if (relative !== "") this.#ensureFolder(relative, relative.length)
  }

  /**
   * Forgets the folder at `relative` and every folder below it; hands back the slots (by path) of
   * the files indexed below it, taken out of the index but not released.
   */
  removeFolder(relative: string): Map<string, number> {
    const below = new Map<string, number>()
    const top = relative === "" ? RootFolder : this.#folderId(relative, relative.length)
    if (top === -1) return below
    const inside = (folder: number) => {
      for (let at = folder; at !== NoFolder; at = this.#folders.owner[at]!) if (at === top) return true
      return false
    }
    this.forEach((slot) => {
      if (inside(this.#files.owner[slot]!)) below.set(this.relative(slot), slot)
    })
    for (const slot of below.values()) this.#take(slot)
    const gone: Array<number> = []
    for (let folder = 0; folder < this.#folders.names.length; folder++) {
      if (folder !== RootFolder && this.#folders.names[folder] !== undefined && inside(folder)) gone.push(folder)
    }
    for (const folder of gone) {
      this.#folders.remove(folder)
      this.#folders.names[folder] = undefined
      this.#freeFolders.push(folder)
      this.#dropped()
    }
    this.#lastFolder = ""
    this.#lastFolderId = RootFolder
    return below
  }

  /**
   * Indexes a new file at `relative` with `stamp`, or unstamped (found by its folder's listing
   * alone: its first read stamps it, see `stamped`): nothing read of it yet.
   */
  add(relative: string, stamp: Stamp | undefined): number {
    let slot = this.#free.pop()
    if (slot === undefined) {
      slot = this.#slots++
      if (slot === this.#trust.length) this.#grow()
    }
    this.#index(relative, slot)
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
    this.#index(relative, slot)
    if (!this.sameStamp(slot, stamp)) this.#stamp(slot, stamp)
  }

  /** Keeps in `slot` what `other` read of the same file in `from`, trusted only if its stamp is the same. */
  inherit(slot: number, from: FoundFiles, other: number): void {
    const kind = from.#read[other]!
    this.#read[slot] = kind
    if (kind === Held) {
      this.#buffers[slot] = from.#buffers[other]
      this.#held[slot * 2 + Offset] = from.#held[other * 2 + Offset]!
      this.#held[slot * 2 + Length] = from.#held[other * 2 + Length]!
    } else if (kind === Hashed) {
      this.#digestsFor().set(from.#digests!.subarray(other * DigestBytes, (other + 1) * DigestBytes), slot * DigestBytes)
    }
    let same = true
    for (let at = 0; at <= Ctime; at++) same &&= this.#numbers[slot * Stride + at] === from.#numbers[other * Stride + at]
    this.#trust[slot] = same ? from.#trust[other]! : Stale
  }

  /** Takes the file at `relative` out of the index; its slot stays until `release`d or `put` back. */
  remove(relative: string): number | undefined {
    const slot = this.slot(relative)
    if (slot !== undefined) this.#take(slot)
    return slot
  }

  /** Frees `slot` (taken out of the index) for another file, dropping what was read of it. */
  release(slot: number): void {
    if (this.#state[slot] !== Removed) return
    this.#state[slot] = Free
    this.#files.names[slot] = undefined
    this.#buffers[slot] = undefined
    this.#read[slot] = Unread
    this.#free.push(slot)
    this.#dropped()
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
    return new Uint8Array(this.#buffers[slot]!, this.#held[slot * 2 + Offset]!, this.#held[slot * 2 + Length]!)
  }

  /** Whether the bytes last read of the file in `slot` are held. */
  holds(slot: number): boolean {
    return this.#read[slot] === Held
  }

  /** How many bytes of the file in `slot` are held. */
  heldBytes(slot: number): number {
    return this.#read[slot] === Held ? this.#held[slot * 2 + Length]! : 0
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
        return this.#held[slot * 2 + Length]! > 0
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
      this.#held[slot * 2 + Offset] = read.byteOffset
      this.#held[slot * 2 + Length] = read.byteLength
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
    if (this.#free.length === 0) this.#resize(this.#slots)
    // Filled to about two thirds at most: linear probing stays short, at 6 bytes a file or less.
    this.#files.rehash(Math.ceil(this.#files.count * 1.5))
    if (this.#freeFolders.length === 0) this.#folders.resize(this.#folders.names.length)
    this.#folders.rehash(Math.ceil(this.#folders.count * 1.5))
  }

  #grow(): void {
    this.#resize(Math.max(1024, this.#trust.length * 2))
  }

  #resize(capacity: number): void {
    const count = Math.min(capacity, this.#slots)
    const numbers = new Float64Array(capacity * Stride)
    numbers.set(this.#numbers.subarray(0, count * Stride))
    this.#numbers = numbers
    const held = new Uint32Array(capacity * 2)
    held.set(this.#held.subarray(0, count * 2))
    this.#held = held
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
    this.#files.resize(capacity)
    // A copy of the exact length: an array grown by assignment keeps room to grow.
    this.#buffers = this.#buffers.slice(0, count)
  }

  // Indexes `slot` (not indexed) at `relative`, in its folder, known from now on if it was not.
  #index(relative: string, slot: number): void {
    const slash = relative.lastIndexOf("/")
    const folder = slash === -1 ? RootFolder : this.#ensureFolder(relative, slash)
    const name = this.#files.names[slot]
    const same = name !== undefined && name.length === relative.length - slash - 1 && relative.startsWith(name, slash + 1)
    this.#files.insert(slot, folder, same ? name : this.#intern(relative, slash + 1, relative.length))
    this.#state[slot] = Indexed
  }

  // Takes the indexed `slot` out of the index.
  #take(slot: number): void {
    this.#files.remove(slot)
    this.#state[slot] = Removed
  }

  // The id of the folder at `text[0, end)` (not the root's), or -1.
  #folderId(text: string, end: number): number {
    const last = this.#lastFolder
    if (last.length === end && text.startsWith(last)) return this.#lastFolderId
    let folder = RootFolder
    for (let start = 0; start < end && folder !== -1;) {
      let slash = text.indexOf("/", start)
      if (slash === -1 || slash > end) slash = end
      folder = this.#folders.find(folder, text, start, slash)
      start = slash + 1
    }
    if (folder !== -1) this.#remember(text, end, folder)
    return folder
  }

  // The id of the folder at `text[0, end)`, known from now on with those above it.
  #ensureFolder(text: string, end: number): number {
    const found = this.#folderId(text, end)
    if (found !== -1) return found
    let folder = RootFolder
    for (let start = 0; start < end;) {
      let slash = text.indexOf("/", start)
      if (slash === -1 || slash > end) slash = end
      const child = this.#folders.find(folder, text, start, slash)
      folder = child !== -1 ? child : this.#newFolder(folder, this.#intern(text, start, slash))
      start = slash + 1
    }
    this.#remember(text, end, folder)
    return folder
  }

  #newFolder(parent: number, name: string): number {
    let folder = this.#freeFolders.pop()
    if (folder === undefined) {
      folder = this.#folders.names.length
      if (folder === this.#folders.owner.length) this.#folders.resize(Math.max(8, folder * 2))
      this.#folders.names.push(undefined)
    }
    this.#folders.insert(folder, parent, name)
    return folder
  }

  // Remembers the folder last looked up, by a path of its own (not a slice of a file's path).
  #remember(text: string, end: number, folder: number): void {
    if (this.#lastFolder.length !== end || !text.startsWith(this.#lastFolder)) this.#lastFolder = text.slice(0, end)
    this.#lastFolderId = folder
  }

  // The one string kept for the name `text[start, end)`.
  #intern(text: string, start: number, end: number): string {
    const name = text.slice(start, end)
    const known = this.#names.get(name)
    if (known !== undefined) return known
    const kept = own(name)
    this.#names.set(kept, kept)
    return kept
  }

  // An entry was dropped: once the names of entries gone outnumber those in use, they are forgotten.
  #dropped(): void {
    if (++this.#gone <= Math.max(1024, this.#files.count + this.#folders.count)) return
    this.#gone = 0
    const names = new Map<string, string>()
    this.forEach((slot) => {
      const name = this.#files.names[slot]!
      names.set(name, name)
    })
    for (const name of this.#folders.names) if (name !== undefined) names.set(name, name)
    this.#names = names
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
