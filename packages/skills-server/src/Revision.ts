/**
 * The catalogue revision: a short, content-derived name for one snapshot.
 *
 * Replicas that serve the same files compute the same revision, without talking to each other.
 * Each skill is hashed alone (its URI, kind, listing flag and cache hint, and for static skills
 * every file URI with its digest and the signatures it relays; for dynamic and rendered skills,
 * whose files are produced per request, the frontmatter they publish), each family by its template, listing flag and hint, and
 * the revision is the sum of those hashes modulo 2^96. A sum does not depend on order, and an
 * `upsert` or `remove` updates it by the skills it touches alone, keeping them O(change). Anything a
 * client could see differently changes it. Replicas compare revisions to know whether they serve the same catalogue (the change
 * bus) and log it, so an operator can see which replicas agree.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import type * as SkillRegistry from "./Snapshot.js"

/**
 * A catalogue revision: 24 lowercase hex digits (a sum of 96-bit SHA-256 prefixes).
 *
 * @since 0.1.0
 * @category models
 */
export type Revision = string

const Digits = 24
const Modulus = 1n << BigInt(Digits * 4)

const termOf = (text: string): bigint => BigInt(`0x${createHash("sha256").update(text).digest("hex").slice(0, Digits)}`)

const hintOf = (hint: SkillRegistry.Hint | undefined) => hint === undefined ? "" : `${hint.ttlMs} ${hint.cacheScope}`

const skillTerm = (skill: SkillRegistry.SkillEntry): bigint => {
  const lines = [`${skill.uri}`, `${skill._tag} ${skill.listed ? "listed" : "unlisted"} ${hintOf(skill.cacheHint)}`]
  switch (skill._tag) {
    case "Static":
      for (let index = 0; index < skill.manifest.files.length; index++) {
        lines.push(`${skill.manifest.files.uri(index)} ${skill.manifest.files.digest(index)}`)
      }
      // Signatures are part of what a client sees; an unsigned skill's term is unchanged by them.
      // Provenance is not: replicas of a gateway verify the same upstream at different times.
      if (skill.signatures !== undefined && skill.signatures.length > 0) lines.push(JSON.stringify(skill.signatures))
      break
    case "Dynamic":
    case "Rendered":
      lines.push(JSON.stringify(skill.frontmatter))
  }
  return termOf(lines.join("\n"))
}

const familyTerm = (family: SkillRegistry.FamilyEntry): bigint =>
  termOf(`family ${family.template.scheme}://${family.template.template}\n${family.listed ? "listed" : "unlisted"} ${hintOf(family.cacheHint)}`)

const format = (sum: bigint): Revision => (((sum % Modulus) + Modulus) % Modulus).toString(16).padStart(Digits, "0")

const sumOf = <A>(items: Iterable<A>, term: (item: A) => bigint) => {
  let sum = 0n
  for (const item of items) sum += term(item)
  return sum
}

/**
 * The revision of a catalogue: its skills and families, in any order.
 *
 * @example
 * ```ts
 * import { Revision, SkillRegistry } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * // Two replicas serve the same catalogue exactly when their revisions are equal.
 * const revision = Effect.gen(function*() {
 *   const registry = yield* SkillRegistry.SkillRegistry
 *   const snapshot = yield* registry.snapshot
 *   return Revision.isRevision(snapshot.revision) ? snapshot.revision : undefined
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (
  skills: Iterable<SkillRegistry.SkillEntry>,
  families: Iterable<SkillRegistry.FamilyEntry> = []
): Revision => format(sumOf(skills, skillTerm) + sumOf(families, familyTerm))

/**
 * The revision after taking `removed` out of a catalogue of revision `revision` and putting `added`
 * in: the same value `of` gives for the resulting catalogue, at the cost of the skills involved.
 *
 * @since 0.1.0
 * @category utils
 */
export const update = (
  revision: Revision,
  removed: Iterable<SkillRegistry.SkillEntry>,
  added: Iterable<SkillRegistry.SkillEntry>
): Revision => format(BigInt(`0x${revision}`) - sumOf(removed, skillTerm) + sumOf(added, skillTerm))

/**
 * Whether a string has the form of a revision (as received from a bus).
 *
 * @since 0.1.0
 * @category guards
 */
export const isRevision = (value: unknown): value is Revision => typeof value === "string" && /^[0-9a-f]{24}$/.test(value)
