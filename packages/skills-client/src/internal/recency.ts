/**
 * Values by key within a total weight, least recently used first: the bookkeeping of both cache
 * stores (the memory store keeps the bytes in it, the disk store the size of each file). Every
 * operation is constant work, evictions paid for by the additions that caused them.
 */
export class Recency<K, V> {
  // A `Map` iterates in insertion order: a use moves its key to the end, so the first key is the
  // least recently used.
  readonly #entries = new Map<K, { readonly value: V; readonly weight: number }>()
  #total = 0
  constructor(readonly capacity: number) {}

  /** The value kept for `key`, marked used now. */
  use(key: K): V | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    return entry.value
  }

  /**
   * Keeps `value` for `key` as used now, unless it alone weighs more than the capacity, and
   * answers what no longer fits, least recently used first (never `key` itself).
   */
  add(key: K, value: V, weight: number): Array<readonly [K, V]> {
    this.delete(key)
    if (weight > this.capacity) return []
    this.#entries.set(key, { value, weight })
    this.#total += weight
    const evicted: Array<readonly [K, V]> = []
    for (const [oldest, entry] of this.#entries) {
      if (this.#total <= this.capacity || oldest === key) break
      this.#entries.delete(oldest)
      this.#total -= entry.weight
      evicted.push([oldest, entry.value])
    }
    return evicted
  }

  delete(key: K): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    this.#total -= entry.weight
  }

  get total(): number {
    return this.#total
  }
}
