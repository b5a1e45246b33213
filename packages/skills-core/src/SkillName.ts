/**
 * Skill names under the Agent Skills naming rules (R96, spec §1.4).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * 1 to 64 characters of lowercase ASCII letters, digits and `-`, no leading, trailing or doubled `-`.
 * The same expression the conformance suite applies (`name-naming-rules`); ASCII only, because
 * Unicode names make the comparison with a percent-encoded URI segment ambiguous (spec §7 item 7).
 *
 * @since 0.1.0
 * @category constants
 */
export const pattern = /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/

/**
 * A string known to be a valid skill name; generates valid names directly.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SkillName = Schema.String.check(
  Schema.isPattern(pattern, {
    expected: "a skill name (1 to 64 of a-z, 0-9 and \"-\", no \"-\" at either end or twice in a row)",
    // The generator cannot read the lookahead of `pattern`; this equivalent form, bounded to 64
    // characters, lets it build valid names directly instead of filtering random strings.
    arbitraryConstraint: { patterns: [{ source: "^[a-z0-9]+(?:-[a-z0-9]+)*$", flags: "" }], maxLength: 64 }
  })
).pipe(Schema.brand("SkillName"))

/**
 * @since 0.1.0
 * @category models
 */
export type SkillName = typeof SkillName.Type

/**
 * Whether a value is a valid skill name.
 *
 * @example
 * ```ts
 * import { SkillName } from "@mcp-skills/core"
 *
 * SkillName.isSkillName("pdf-processing") // true
 * SkillName.isSkillName("PDF_Processing") // false: lowercase letters, digits and single hyphens
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isSkillName: (u: unknown) => u is SkillName = Schema.is(SkillName)
