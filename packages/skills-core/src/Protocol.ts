/**
 * Params and results of `skills/list`, `skills/get` and `resources/directory/read` (spec §1.7).
 *
 * Result fields that only 2026-07-28 defines (`resultType`, `ttlMs`, `cacheScope`) are optional here:
 * 2025-11-25 results omit them and receivers must accept both (spec §7 item 1).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { CacheScope, TtlMs } from "./CacheHint.js"
import { Skill } from "./Skill.js"

const Meta = Schema.optionalKey(Schema.Record(Schema.String, Schema.Json))
const Cursor = Schema.optionalKey(Schema.String)
const ResultFields = {
  resultType: Schema.optionalKey(Schema.String),
  _meta: Meta
}
const CacheFields = {
  ttlMs: Schema.optionalKey(TtlMs),
  cacheScope: Schema.optionalKey(CacheScope)
}
// What a receiver accepts: a bad hint is read as "stale, private" (R107), never a reason to drop a page.
const ReceivedCacheFields = {
  ttlMs: Schema.optionalKey(Schema.Number),
  cacheScope: Schema.optionalKey(Schema.String)
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const ListSkillsParams = Schema.Struct({ cursor: Cursor, _meta: Meta })

/**
 * @since 0.1.0
 * @category models
 */
export type ListSkillsParams = typeof ListSkillsParams.Type

/**
 * One page of the listing; each entry is atomic (R31).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListSkillsResult = Schema.Struct({
  skills: Schema.Array(Skill),
  nextCursor: Cursor,
  ...CacheFields,
  ...ResultFields
})

/**
 * @since 0.1.0
 * @category models
 */
export type ListSkillsResult = typeof ListSkillsResult.Type

/**
 * A listing page whose entries are not decoded yet, so that one invalid entry can be reported and
 * skipped without losing the page (R6, spec §7 item 8).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListSkillsPage = Schema.Struct({
  skills: Schema.Array(Schema.Unknown),
  nextCursor: Cursor,
  ...ReceivedCacheFields,
  ...ResultFields
})

/**
 * @since 0.1.0
 * @category models
 */
export type ListSkillsPage = typeof ListSkillsPage.Type

/**
 * @example
 * ```ts
 * import { Protocol } from "@mcp-skills/core"
 * import { Schema } from "effect"
 *
 * const params = Schema.decodeUnknownSync(Protocol.GetSkillParams)({ uri: "skill://pdf-processing/SKILL.md" })
 * params.uri // "skill://pdf-processing/SKILL.md"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetSkillParams = Schema.Struct({ uri: Schema.String, _meta: Meta })

/**
 * @since 0.1.0
 * @category models
 */
export type GetSkillParams = typeof GetSkillParams.Type

/**
 * The answer of `skills/get`: one entry, no `nextCursor` (R44, R45).
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetSkillResult = Schema.Struct({
  skill: Skill,
  ...CacheFields,
  ...ResultFields
})

/**
 * @since 0.1.0
 * @category models
 */
export type GetSkillResult = typeof GetSkillResult.Type

/**
 * A `skills/get` answer whose entry is not decoded yet.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetSkillEnvelope = Schema.Struct({
  skill: Schema.Unknown,
  ...ReceivedCacheFields,
  ...ResultFields
})

/**
 * @since 0.1.0
 * @category models
 */
export type GetSkillEnvelope = typeof GetSkillEnvelope.Type

/**
 * An MCP `Resource` as listed by `resources/list` and `resources/directory/read`; directories carry
 * `mimeType: "inode/directory"` (R52).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResourceEntry = Schema.Struct({
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  mimeType: Schema.optionalKey(Schema.String),
  size: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  annotations: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json)),
  icons: Schema.optionalKey(Schema.Array(Schema.Json)),
  _meta: Meta
})

/**
 * @since 0.1.0
 * @category models
 */
export type ResourceEntry = typeof ResourceEntry.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const ReadResourceDirectoryParams = Schema.Struct({ uri: Schema.String, cursor: Cursor, _meta: Meta })

/**
 * @since 0.1.0
 * @category models
 */
export type ReadResourceDirectoryParams = typeof ReadResourceDirectoryParams.Type

/**
 * The direct children of a directory resource (R52); not a cacheable result.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReadResourceDirectoryResult = Schema.Struct({
  resources: Schema.Array(ResourceEntry),
  nextCursor: Cursor,
  ...ResultFields
})

/**
 * @since 0.1.0
 * @category models
 */
export type ReadResourceDirectoryResult = typeof ReadResourceDirectoryResult.Type
