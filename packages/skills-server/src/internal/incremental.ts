/**
 * Snapshot updates in O(change), for `SkillRegistry.upsert` and `remove`.
 *
 * A skill that neither encloses nor sits inside another (R10 nesting) owns its files (found through
 * it, and the directories derived from them) alone, so adding, replacing or removing it touches
 * only its own entries: its maps' entries change in an `Overlay` (nothing of the rest is copied),
 * it takes a free index (the end, or the index of the skill it replaces), and a removed skill's
 * index is filled by the last skill. The arrays of skills are copied (pointers only). Nested skills
 * share files, which only a full build can attribute: `apply` answers `undefined` and the registry
 * rebuilds.
 *
 * @internal
 */
import * as Order from "effect/Order"
import * as Cursor from "./cursor.js"
import * as Directories from "./directories.js"
import * as Entries from "./entries.js"
import * as Files from "./files.js"
import { Overlay } from "./overlay.js"
import * as Revision from "../Revision.js"
import type * as SkillRegistry from "../Snapshot.js"
import * as Registry from "./registry.js"

type Snapshot = SkillRegistry.Snapshot
type SkillEntry = SkillRegistry.SkillEntry

const SkillMd = "/SKILL.md"

// Whether a skill at `root` encloses or sits inside another skill of `snapshot`.
const isNested = (snapshot: Snapshot, root: string) =>
  (snapshot.nested.get(root) ?? 0) > 0 || Registry.ancestors(root).some((prefix) => snapshot.byUri.has(prefix + SkillMd))

// The files a static skill that is not nested owns (its directories are derived from them).
const owned = (skill: SkillEntry): ReadonlyArray<string> =>
  skill._tag === "Static" ? Array.from({ length: skill.manifest.files.length }, (_, index) => skill.manifest.files.uri(index)) : []

/**
 * `before` with the skills of `added` put in (each replacing the skill of the same URI, if any)
 * and the skills of `removed` (SKILL.md URIs) taken out, with what changed; `undefined` when a
 * skill involved is nested (R10). `added` was built from the upserted definitions alone.
 */
export const apply = (
  before: Snapshot,
  added: Snapshot | undefined,
  removed: ReadonlyArray<string>
): { readonly snapshot: Snapshot; readonly changes: SkillRegistry.Changes } | undefined => {
  const incoming = added === undefined ? [] : added.skills.map((skill) => ({ skill, from: added }))
  for (const { from, skill } of incoming) {
    if (isNested(before, skill.root) || isNested(from, skill.root)) return undefined
  }
  for (const uri of removed) {
    const skill = before.byUri.get(uri)
    if (skill !== undefined && isNested(before, skill.root)) return undefined
  }
  const skills = before.skills.slice()
  const listed = before.listed.slice()
  const byUri: Array<[string, SkillEntry | undefined]> = []
  const dynamicRoots: Array<[string, SkillRegistry.DynamicSkill | SkillRegistry.RenderedSkill | undefined]> = []
  const nested = new Map<string, number>()
  let privateSkills = before.listing.privateSkills
  let defaultSkills = before.listing.defaultSkills
  const changes = {
    added: [] as Array<string>,
    removed: [] as Array<string>,
    changed: [] as Array<SkillRegistry.SkillChange>,
    listChanged: false,
    updated: new Set<string>()
  }

  // Skills taken out (undefined) or put in during this update, by URI: a skill moved into a freed
  // index is found at its new index by a later removal in the same update.
  const live = new Map<string, SkillEntry | undefined>()
  const removedSkills: Array<SkillEntry> = []
  const addedSkills: Array<SkillEntry> = []
  const find = (uri: string) => live.has(uri) ? live.get(uri) : before.byUri.get(uri)
  const position = (uri: string) => Cursor.startAfter(listed, (skill) => skill.uri, uri)
  const count = (skill: SkillEntry, by: number) => {
    for (const prefix of Registry.ancestors(skill.root)) {
      nested.set(prefix, (nested.get(prefix) ?? before.nested.get(prefix) ?? 0) + by)
    }
    if (!skill.listed) return
    if (Registry.isPrivate(skill)) privateSkills += by
    if (skill.cacheHint === undefined) defaultSkills += by
  }
  const takeOut = (skill: SkillEntry) => {
    byUri.push([skill.uri, undefined])
    live.set(skill.uri, undefined)
    if (skill._tag !== "Static") dynamicRoots.push([skill.root, undefined])
    if (skill.listed && listed[position(skill.uri) - 1]?.uri === skill.uri) listed.splice(position(skill.uri) - 1, 1)
    count(skill, -1)
    removedSkills.push(skill)
  }
  // Puts `skill` at `index`; its files are its own.
  const putIn = (skill: SkillEntry, index: number) => {
    const placed = { ...skill, index }
    skills[index] = placed
    byUri.push([placed.uri, placed])
    live.set(placed.uri, placed)
    if (placed._tag !== "Static") dynamicRoots.push([placed.root, placed])
    if (placed.listed) listed.splice(position(placed.uri), 0, placed)
    count(placed, 1)
    addedSkills.push(placed)
    return placed
  }

  for (const uri of new Set(removed)) {
    const skill = find(uri)
    if (skill === undefined) continue
    takeOut(skill)
    const last = skills[skills.length - 1]!
    if (last.uri !== skill.uri) {
      if (isNested(before, last.root)) return undefined
      takeOut(last)
      putIn(last, skill.index)
    }
    skills.pop()
    changes.removed.push(uri)
    changes.listChanged ||= skill.listed
    for (const file of owned(skill)) changes.updated.add(file)
  }
  for (const { skill } of incoming) {
    const old = find(skill.uri)
    if (old === undefined) {
      putIn(skill, skills.length)
      changes.added.push(skill.uri)
      changes.listChanged ||= skill.listed
      continue
    }
    takeOut(old)
    const placed = putIn(skill, old.index)
    const change = Registry.changeOf(old, placed)
    if (change === undefined) continue
    changes.changed.push(change)
    for (const file of [...change.filesRemoved, ...change.filesChanged]) changes.updated.add(file)
    changes.listChanged ||= old.listed || placed.listed
  }

  const schemes = added?.skills.some((skill) => !before.schemes.has(skill.uri.slice(0, skill.uri.indexOf("://"))))
    ? new Set([...before.schemes, ...added.schemes])
    : before.schemes
  const snapshot: Snapshot = {
    ...before,
    revision: Revision.update(before.revision, removedSkills, addedSkills),
    skills,
    listed,
    byUri: Overlay.of(before.byUri).with(byUri),
    files: Files.following(before.files, () => snapshot),
    entries: Entries.make(),
    directories: Directories.make(() => snapshot),
    dynamicRoots: Overlay.of(before.dynamicRoots).with(dynamicRoots),
    nested: Overlay.of(before.nested).with([...nested].map(([prefix, n]) => [prefix, n > 0 ? n : undefined])),
    schemes,
    hashed: added?.hashed ?? { files: 0, bytes: 0 },
    listing: Registry.listingFrom(privateSkills, defaultSkills, before.families)
  }
  return {
    snapshot,
    changes: { ...changes, updated: [...changes.updated].sort(Order.String) }
  }
}
