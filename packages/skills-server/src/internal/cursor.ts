/**
 * Opaque keyset cursors: the position after which the next page starts (the last URI returned),
 * so a cursor stays meaningful when the catalogue changes. A cursor names the listing it belongs
 * to (`skills/list`, or one directory), and anything that does not decode back to exactly the
 * same string is refused.
 *
 * @internal
 */

const encode = (scope: string, after: string): string => Buffer.from(`${scope}\n${after}`, "utf8").toString("base64url")

/** The cursor of `scope` that continues after `after`. */
export const make = encode

/** The URI a cursor continues after, or `undefined` for a cursor that is garbled or of another listing. */
export const decode = (scope: string, cursor: string): string | undefined => {
  if (cursor.length === 0 || cursor.length > 16_384) return undefined
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  const separator = text.indexOf("\n")
  if (separator === -1 || text.slice(0, separator) !== scope) return undefined
  const after = text.slice(separator + 1)
  return encode(scope, after) === cursor ? after : undefined
}

/** Index of the first element of `sorted` whose key is greater than `after` (binary search). */
export const startAfter = <A>(sorted: ReadonlyArray<A>, key: (a: A) => string, after: string | undefined): number => {
  if (after === undefined) return 0
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (key(sorted[mid]!) <= after) low = mid + 1
    else high = mid
  }
  return low
}
