/**
 * An index of entries known by their owner and their name, as columns: what keeps a root's folders
 * (owned by their parent) and files (by their folder) without a path string each.
 */

// An index entry whose entry was taken out: a lookup goes on past it.
const Tombstone = 0xffffffff

// FNV-1a over `owner` and the UTF-16 code units of `text` from `start` to `end`: 32 bits, enough to
// spread an index.
const hashOf = (owner: number, text: string, start: number, end: number) => {
  let value = Math.imul(0x811c9dc5 ^ owner, 0x01000193)
  for (let at = start; at < end; at++) value = Math.imul(value ^ text.charCodeAt(at), 0x01000193)
  return value >>> 0
}

/**
 * Entries known by their owner (a folder) and their name, with an index on both: open addressing
 * over ids (id + 1; 0 empty, `Tombstone` removed), where a `Map` keyed by path would take a string
 * and about 40 bytes an entry. Both the folders (owned by their parent) and the files (by their
 * folder) of a root are kept so.
 */
export class NameIndex {
  owner = new Int32Array(0)
  names: Array<string | undefined> = []
  index = new Uint32Array(8)
  count = 0
  used = 0

  /** The id of the entry named `text[start, end)` in `owner`, or -1. */
  find(owner: number, text: string, start: number, end: number): number {
    const index = this.index
    const mask = index.length - 1
    const length = end - start
    for (let at = hashOf(owner, text, start, end) & mask; ; at = (at + 1) & mask) {
      const entry = index[at]!
      if (entry === 0) return -1
      if (entry === Tombstone) continue
      const id = entry - 1
      const name = this.names[id]!
      if (this.owner[id] === owner && name.length === length && text.startsWith(name, start)) return id
    }
  }

  /** Indexes `id` (not indexed yet) as `name` in `owner`, keeping the index at most three quarters full. */
  insert(id: number, owner: number, name: string): void {
    // Grown before `id` is written: the rebuilt table holds what was indexed, `id` not yet.
    if ((this.used + 1) * 4 > this.index.length * 3) this.rehash((this.count + 1) * 2)
    this.owner[id] = owner
    this.names[id] = name
    const index = this.index
    const mask = index.length - 1
    let at = hashOf(owner, name, 0, name.length) & mask
    while (index[at] !== 0 && index[at] !== Tombstone) at = (at + 1) & mask
    if (index[at] === 0) this.used++
    index[at] = id + 1
    this.count++
  }

  /** Takes `id` (indexed) out of the index; its owner and name stay until overwritten. */
  remove(id: number): void {
    const index = this.index
    const mask = index.length - 1
    const name = this.names[id]!
    let at = hashOf(this.owner[id]!, name, 0, name.length) & mask
    while (index[at] !== id + 1) at = (at + 1) & mask
    index[at] = Tombstone
    this.count--
  }

  /**
   * Builds the index again, without tombstones, with room for `room` and at most three quarters
   * full (a lookup stops only at an empty place): over the entries it holds, so an entry taken out
   * stays out whatever is still written of it.
   */
  rehash(room: number): void {
    let size = 8
    while (size < room || size * 3 < this.count * 4) size *= 2
    const old = this.index
    const index = new Uint32Array(size)
    const mask = size - 1
    for (let place = 0; place < old.length; place++) {
      const entry = old[place]!
      if (entry === 0 || entry === Tombstone) continue
      const name = this.names[entry - 1]!
      let at = hashOf(this.owner[entry - 1]!, name, 0, name.length) & mask
      while (index[at] !== 0) at = (at + 1) & mask
      index[at] = entry
    }
    this.index = index
    this.used = this.count
  }

  /** Keeps `capacity` ids, as many of the existing ones as fit. */
  resize(capacity: number): void {
    const owner = new Int32Array(capacity)
    owner.set(this.owner.subarray(0, Math.min(capacity, this.owner.length)))
    this.owner = owner
    // A copy of the exact length: an array grown by assignment keeps room to grow.
    this.names = this.names.slice(0, Math.min(capacity, this.names.length))
  }
}
