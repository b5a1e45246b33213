/**
 * A cache that forgets the least recently used first, once what it keeps weighs more than its
 * `capacity` (each entry weighs 1 unless `weigh` says otherwise): what the derived parts of a
 * snapshot (directory entries, answers, files' wire forms) are kept in, so a server's memory
 * follows its catalogue, not how many distinct requests it has answered.
 *
 * @internal
 */
const Nothing: unique symbol = Symbol("Nothing")

export class Lru<K, V> {
  // A `Map` iterates in insertion order: a hit moves its key to the end, so the first key is the
  // least recently used.
  readonly #entries = new Map<K, V>()
  #weight = 0
  // The key last used: a client repeating one request finds it without moving it to the end again.
  #newest: K | typeof Nothing = Nothing
  constructor(private readonly capacity: number, private readonly weigh: (value: V) => number = () => 1) {}

  /**
   * The value kept for `key`, or `compute`'s, kept from now on (`undefined` is kept too) unless it
   * alone weighs more than the capacity.
   */
  getOrCompute(key: K, compute: () => V): V {
    const known = this.#entries.get(key)
    if (known !== undefined || this.#entries.has(key)) {
      if (key !== this.#newest) {
        this.#entries.delete(key)
        this.#entries.set(key, known as V)
        this.#newest = key
      }
      return known as V
    }
    const computed = compute()
    const weight = this.weigh(computed)
    if (weight > this.capacity) return computed
    this.#entries.set(key, computed)
    this.#newest = key
    this.#weight += weight
    for (const [oldest, value] of this.#entries) {
      if (this.#weight <= this.capacity) break
      this.#entries.delete(oldest)
      this.#weight -= this.weigh(value)
    }
    return computed
  }
}
