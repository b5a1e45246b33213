/**
 * The bounds of the skills tools (`SkillsServer.Options.tools`), each with its reason: what a
 * model reads in one answer. The server's other bounds are `ServerLimits`.
 *
 * @since 0.2.0
 */

/**
 * Hits of one `search_skills` page: 20, the few a model weighs before it loads one; the rest is a
 * cursor away.
 *
 * @example
 * ```ts
 * import { ToolLimits } from "@mcp-skills/server"
 *
 * // The calls a model makes to see the best 100 hits of a query.
 * const calls = Math.ceil(100 / ToolLimits.SearchPageSize) // 5
 * ```
 *
 * @since 0.2.0
 * @category bounds
 */
export const SearchPageSize = 20

/**
 * Characters of a `search_skills` query: 256, a sentence; a longer one is refused, not cut.
 *
 * @since 0.2.0
 * @category bounds
 */
export const MaxQueryLength = 256

/**
 * Distinct words of a query that count: the first 16. Each word costs a look-up (and, from four
 * letters on, a pass over the index's words of about its length), so a query's cost is bounded.
 *
 * @since 0.2.0
 * @category bounds
 */
export const MaxQueryWords = 16

/**
 * Characters of a text file (bytes of a binary) in one answer of `load_skill` or
 * `read_skill_file`: 65,536, about 16,000 tokens, a long `SKILL.md` whole; a larger file comes in
 * parts, each answer naming the `offset` of the next.
 *
 * @since 0.2.0
 * @category bounds
 */
export const MaxFileChars = 65_536

/**
 * Files of a skill listed by one `load_skill` answer: 200 (the spec allows 512 a skill); the rest
 * is a cursor away.
 *
 * @since 0.2.0
 * @category bounds
 */
export const FilesPerPage = 200
