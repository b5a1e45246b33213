/**
 * What changed between two snapshots, as clients are told it (`notifications/resources/*`) and
 * `replace`, `reload`, `upsert` and `remove` return it.
 *
 * @internal
 */
import * as Order from "effect/Order"
import { familyKey } from "../Snapshot.js"
import type { Changes, SkillChange, Snapshot } from "../Snapshot.js"
import { ancestors, changeOf, digests } from "./registry.js"

/** The changes from `before` to `after`. */
export const diff = (before: Snapshot, after: Snapshot): Changes => {
  const added: Array<string> = []
  const removed: Array<string> = []
  const changed: Array<SkillChange> = []
  const updated = new Set<string>()
  let listChanged = false
  // A rendered parent's manifest holds its nested skills' files (R10): a change of one is a
  // change of the listed parent's entry too.
  const inListedParent = (snapshot: Snapshot, root: string) =>
    snapshot.enclosed.size > 0 && ancestors(root).some((prefix) => {
      const parent = snapshot.dynamicRoots.get(prefix)
      return parent?._tag === "Rendered" && parent.listed
    })
  for (const skill of after.skills) {
    const old = before.byUri.get(skill.uri)
    if (old === undefined) {
      added.push(skill.uri)
      listChanged ||= skill.listed || inListedParent(after, skill.root)
      continue
    }
    const change = changeOf(old, skill)
    if (change === undefined) continue
    changed.push(change)
    for (const uri of [...change.filesRemoved, ...change.filesChanged]) updated.add(uri)
    listChanged ||= old.listed || skill.listed || inListedParent(after, skill.root)
  }
  // A family's instances are rendered per caller: any change to a listed family changes listings.
  const familiesBefore = new Map(before.families.map((family) => [familyKey(family), family]))
  for (const family of after.families) {
    const old = familiesBefore.get(familyKey(family))
    familiesBefore.delete(familyKey(family))
    if (old?.definition !== family.definition) listChanged ||= family.listed || old?.listed === true
  }
  for (const old of familiesBefore.values()) listChanged ||= old.listed
  for (const skill of before.skills) {
    if (after.byUri.has(skill.uri)) continue
    removed.push(skill.uri)
    listChanged ||= skill.listed || inListedParent(before, skill.root)
    for (const uri of digests(skill).keys()) if (after.files.get(uri) === undefined) updated.add(uri)
  }
  return { added, removed, changed, listChanged, updated: [...updated].sort(Order.String) }
}
