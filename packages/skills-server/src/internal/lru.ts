/**
 * A cache of at most `capacity` entries that forgets the least recently used first: what the
 * derived parts of a snapshot (directory entries, answers) are kept in, so a snapshot's memory
 * follows its catalogue, not how many distinct requests it has answered.
 *
 * @internal
 */
export class Lru<K, V> {
  // A `Map` iterates in insertion order: a hit moves its key to the end, so the first key is the
  // least recently used.
  readonly #entries = new Map<K, V>()
  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#entries.size
  }

  /** The value kept for `key`, or `compute`'s, kept from now on (`undefined` is kept too). */
  getOrCompute(key: K, compute: () => V): V {
    if (this.#entries.has(key)) {
      const known = this.#entries.get(key)!
      this.#entries.delete(key)
      this.#entries.set(key, known)
      return known
    }
    const computed = compute()
    if (this.#entries.size >= this.capacity) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(key, computed)
    return computed
  }
}
