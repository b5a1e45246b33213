/**
 * Opaque keyset cursors: the position after which the next page starts (the last URI returned),
 * so a cursor stays meaningful when the catalogue changes. A cursor names the listing it belongs
 * to (`skills/list`, or one directory), and anything that does not decode back to exactly the
 * same string is refused.
 *
 * @internal
 */
import { Base64Url } from "effect/encoding"
import * as Result from "effect/Result"
import * as ServerLimits from "../ServerLimits.js"

const encode = (scope: string, after: string): string => Base64Url.encode(`${scope}\n${after}`)

/** The cursor of `scope` that continues after `after`. */
export const make = encode

/** The URI a cursor continues after, or `undefined` for a cursor that is garbled or of another listing. */
export const decode = (scope: string, cursor: string): string | undefined => {
  if (cursor.length === 0 || cursor.length > ServerLimits.MaxCursorLength) return undefined
  const decoded = Base64Url.decodeString(cursor)
  if (Result.isFailure(decoded)) return undefined
  const text = decoded.success
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
