/**
 * Every bound of the core, each with its reason: the per-skill limits every host must accept (R15)
 * and servers should not exceed (R16), and what the spec leaves open: the size and nesting of a
 * frontmatter and the length of a URI. The server's and the client's own limits derive from these.
 *
 * @since 0.1.0
 */

/**
 * Manifest entries per skill, `SKILL.md` included.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxResources = 512

/**
 * Total bytes per skill (the sum of every `size`): 16 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxTotalBytes = 16_777_216

/**
 * The most bytes a skill can total whatever its limits say: 4 GiB less one byte. A manifest keeps
 * each size and offset in 32 bits; a skill that size is far past what a host can read over MCP.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxSkillBytes = 4_294_967_295

/**
 * Bytes of YAML between the `---` lines of a `SKILL.md`: 16 KiB, ours rather than the spec's. Every
 * parse, on the server and in the client alike, refuses a larger frontmatter before reading any
 * YAML. The Agent Skills fields fit in under 2 KiB (a description is at most 1,024 characters),
 * which leaves ample room for other keys, while the YAML that costs the most per byte (thousands of
 * flow items, or a line of errors) still parses in about 30 ms: one file cannot hold the event loop.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxFrontmatterBytes = 16_384

/**
 * Maps and sequences nested in a frontmatter, the top-level mapping included: 64 levels. Real
 * frontmatter nests two or three; a fixed limit makes every reader refuse the same files.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxFrontmatterDepth = 64

/**
 * Characters of a URI that `SkillUri.parse` accepts: 8,192. Real skill URIs are a few dozen
 * characters (a name of at most 64 per segment, a short path); the bound keeps every parse, every
 * map key and every message naming a URI small, whoever sent it, and is what HTTP servers commonly
 * accept for a whole request line (nginx's and Node's 8 KiB header buffers), so a URI that passes
 * it still fits an `Mcp-Name` header.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxUriLength = 8192

/**
 * Limits applied to one skill. Raising them is always an explicit choice of the caller.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly maxResources: number
  readonly maxTotalBytes: number
}

/**
 * The limits of the specification.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Limits = { maxResources: MaxResources, maxTotalBytes: MaxTotalBytes }

/**
 * Which limit a skill broke, with its figures.
 *
 * @since 0.1.0
 * @category models
 */
export interface Violation {
  readonly limit: "resources" | "bytes"
  readonly actual: number
  readonly max: number
}

/**
 * The limits a manifest of `count` files totalling `bytes` breaks, if any (R15-R17).
 *
 * @example
 * ```ts
 * import { Limits } from "@mcp-skills/core"
 *
 * Limits.violations(600, 1024).map(Limits.describe) // ["600 files exceed the limit of 512 per skill"]
 * Limits.violations(10, 1024, { maxResources: 5, maxTotalBytes: 512 }).length // 2
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const violations = (
  count: number,
  bytes: number,
  limits: Limits = defaults
): ReadonlyArray<Violation> => {
  const out: Array<Violation> = []
  if (count > limits.maxResources) out.push({ limit: "resources", actual: count, max: limits.maxResources })
  const maxBytes = Math.min(limits.maxTotalBytes, MaxSkillBytes)
  if (bytes > maxBytes) out.push({ limit: "bytes", actual: bytes, max: maxBytes })
  return out
}

/**
 * A one-line description of a limit violation.
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (violation: Violation): string =>
  violation.limit === "resources"
    ? `${violation.actual} files exceed the limit of ${violation.max} per skill`
    : `${violation.actual} bytes exceed the limit of ${violation.max} per skill`
