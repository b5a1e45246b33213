/**
 * The catalogue revision: a short, content-derived name for one snapshot.
 *
 * Replicas that serve the same files compute the same revision, without talking to each other: it
 * hashes, in URI order, each skill's URI, kind, listing flag and cache hint, and for static skills
 * every file URI with its digest (the manifest); for dynamic and rendered skills, whose files are
 * produced per request, the frontmatter they publish. Anything a client could see differently
 * changes it. Replicas compare revisions to know whether they serve the same catalogue (the change
 * bus) and log it, so an operator can see which replicas agree.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import type * as SkillRegistry from "./SkillRegistry.js"

/**
 * A catalogue revision: 24 lowercase hex digits (96 bits of SHA-256).
 *
 * @since 0.1.0
 */
export type Revision = string

/**
 * The revision of a snapshot's skills (sorted by URI, as `Snapshot.skills` is).
 *
 * @since 0.1.0
 */
export const of = (skills: ReadonlyArray<SkillRegistry.SkillEntry>): Revision => {
  const hash = createHash("sha256")
  for (const skill of skills) {
    const hint = skill.cacheHint === undefined ? "" : `${skill.cacheHint.ttlMs} ${skill.cacheHint.cacheScope}`
    hash.update(`${skill.uri}\n${skill._tag} ${skill.listed ? "listed" : "unlisted"} ${hint}\n`)
    switch (skill._tag) {
      case "Static":
        for (const file of skill.manifest.files) hash.update(`${file.uri} ${file.digest}\n`)
        break
      case "Dynamic":
      case "Rendered":
        hash.update(`${JSON.stringify(skill.frontmatter)}\n`)
    }
  }
  return hash.digest("hex").slice(0, 24)
}

/**
 * Whether a string has the form of a revision (as received from a bus or a cursor).
 *
 * @since 0.1.0
 */
export const isRevision = (value: unknown): value is Revision => typeof value === "string" && /^[0-9a-f]{24}$/.test(value)
