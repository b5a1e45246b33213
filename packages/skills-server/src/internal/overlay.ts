/**
 * A map for snapshots that change a little at a time: the native `Map` a full build made, and the
 * changes made since in a persistent hash map (effect's `HashMap`). Changing k keys copies
 * nothing of the base and costs O(k log n), so `SkillRegistry.upsert` of one skill costs the same
 * in a catalogue of ten skills or of ten thousand; a lookup costs one native lookup while nothing
 * changed, and one more in the (small) changes after. The next full build starts a new base.
 *
 * @internal
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"

/** A map of a snapshot: its entries never change once made. */
export class Overlay<K, V> implements ReadonlyMap<K, V> {
  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    // A removed key maps to `None`, so it hides the base's entry.
    private readonly changes: HashMap.HashMap<K, Option.Option<V>>,
    readonly size: number
  ) {}

  /** `map` as the base of an overlay (no copy). */
  static of<K, V>(map: ReadonlyMap<K, V>): Overlay<K, V> {
    return map instanceof Overlay ? map : new Overlay(map, HashMap.empty(), map.size)
  }

  get(key: K): V | undefined {
    if (HashMap.size(this.changes) > 0) {
      const changed = HashMap.get(this.changes, key)
      if (Option.isSome(changed)) return Option.getOrUndefined(changed.value)
    }
    return this.base.get(key)
  }

  has(key: K): boolean {
    return this.get(key) !== undefined
  }

  /** This map with `updates` applied in order: a value sets its key, `undefined` removes it. */
  with(updates: Iterable<readonly [K, V | undefined]>): Overlay<K, V> {
    let size = this.size
    const changes = HashMap.mutate(this.changes, (changes) => {
      for (const [key, value] of updates) {
        const changed = HashMap.get(changes, key)
        const had = Option.isSome(changed) ? Option.isSome(changed.value) : this.base.has(key)
        size += (value !== undefined ? 1 : 0) - (had ? 1 : 0)
        HashMap.set(changes, key, Option.fromUndefinedOr(value))
      }
    })
    return new Overlay(this.base, changes, size)
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [key, value] of this) callback(value, key, this)
  }

  entries(): MapIterator<[K, V]> {
    const entries: Array<[K, V]> = []
    for (const [key, changed] of this.changes) if (Option.isSome(changed)) entries.push([key, changed.value])
    for (const [key, value] of this.base) if (!HashMap.has(this.changes, key)) entries.push([key, value])
    return entries.values()
  }

  keys(): MapIterator<K> {
    return Array.from(this.entries(), ([key]) => key).values()
  }

  values(): MapIterator<V> {
    return Array.from(this.entries(), ([, value]) => value).values()
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries()
  }
}
