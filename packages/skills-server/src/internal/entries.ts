/**
 * A snapshot's wire entries of static skills, made from each skill's manifest and signatures on
 * first use and kept in a bounded cache that goes with the snapshot: a catalogue keeps no entry
 * (nor a URI or digest string per file) for the skills nobody asks about.
 *
 * @internal
 */
import { Manifest } from "@mcp-skills/core"
import type { Entries, StaticSkill } from "../Snapshot.js"
import { Lru } from "./lru.js"
import * as Signed from "./signed.js"

/** Entries kept per snapshot, the most recently used. */
export const Kept = 1024

/** The entry of `skill`, made now. */
export const entryOf = (skill: StaticSkill) => Signed.entryOf(Manifest.entry(skill.manifest), skill.signatures)

/** A snapshot's entries. */
export const make = (): Entries => {
  const kept = new Lru<StaticSkill, ReturnType<typeof entryOf>>(Kept)
  return { get: (skill) => kept.getOrCompute(skill, () => entryOf(skill)) }
}
