/**
 * A snapshot's wire entries of static skills, made from each skill's manifest and signatures on
 * first use and kept in a bounded cache that goes with the snapshot: a catalogue keeps no entry
 * (nor a URI or digest string per file) for the skills nobody asks about.
 *
 * @internal
 */
import { Manifest } from "@mcp-skills/core"
import type { Skill as CoreSkill } from "@mcp-skills/core"
import * as Skill from "../Skill.js"
import type { Entries, StaticSkill } from "../Snapshot.js"
import { Lru } from "./lru.js"
import * as Signed from "./signed.js"
import * as ServerLimits from "../ServerLimits.js"

/** `entry` with where its skill came from in its `_meta`, beside its signatures (R139). */
export const withProvenance = (entry: CoreSkill.Skill, provenance: Skill.Provenance | undefined): CoreSkill.Skill =>
  provenance === undefined ? entry : { ...entry, _meta: { ...entry._meta, [Skill.ProvenanceMetaKey]: { ...provenance } } }

/** The entry of `skill`, made now. */
export const entryOf = (skill: Pick<StaticSkill, "manifest" | "signatures" | "provenance">): CoreSkill.Skill =>
  withProvenance(Signed.entryOf(Manifest.entry(skill.manifest), skill.signatures), skill.provenance)

/** A snapshot's entries. */
export const make = (): Entries => {
  const kept = new Lru<StaticSkill, CoreSkill.Skill>(ServerLimits.KeptEntries)
  return { get: (skill) => kept.getOrCompute(skill, () => entryOf(skill)) }
}
