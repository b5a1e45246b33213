/**
 * Cache hints of SEP-2549 as used on `skills/list`, `skills/get` and `resources/read` (R106).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * `public`: nothing caller-specific, shareable across callers; `private`: reuse only within one
 * authorisation context (R106, R143).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CacheScope = Schema.Literals(["public", "private"])

/**
 * @since 0.1.0
 * @category models
 */
export type CacheScope = typeof CacheScope.Type

/**
 * A non-negative integer number of milliseconds.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TtlMs = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * The two fields of a cacheable result.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CacheHint = Schema.Struct({
  ttlMs: TtlMs,
  cacheScope: CacheScope
})

/**
 * @since 0.1.0
 * @category models
 */
export type CacheHint = typeof CacheHint.Type

/**
 * The hint used when nothing else is known: stale at once, never shared across callers
 * (spec §7 item 3).
 *
 * @since 0.1.0
 * @category constructors
 */
export const none: CacheHint = { ttlMs: 0, cacheScope: "private" }

/**
 * The hint a host should assume for a received result (R107): a missing, negative or non-finite
 * `ttlMs` counts as 0, and any scope but `public` as `private`.
 *
 * @example
 * ```ts
 * import { CacheHint } from "@mcp-skills/core"
 *
 * CacheHint.fromResult({ ttlMs: 60_000, cacheScope: "public" }) // { ttlMs: 60000, cacheScope: "public" }
 * CacheHint.fromResult({ ttlMs: -1, cacheScope: "shared" })     // { ttlMs: 0, cacheScope: "private" }
 * CacheHint.fromResult({})                                       // CacheHint.none
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromResult = (result: { readonly ttlMs?: number | undefined; readonly cacheScope?: string | undefined }): CacheHint => ({
  ttlMs: result.ttlMs !== undefined && Number.isFinite(result.ttlMs) && result.ttlMs > 0 ? Math.floor(result.ttlMs) : 0,
  cacheScope: result.cacheScope === "public" ? "public" : "private"
})
