/**
 * The registry's helpers that only this package uses: instances of families, cache hints, stored
 * files and their owners, listing scope, ancestors, changes and dynamic owners.
 *
 * @internal
 */
import { Extension } from "@mcp-skills/core"
import type { Digest, Manifest } from "@mcp-skills/core"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Result from "effect/Result"
import type * as PathTemplate from "../PathTemplate.js"
import type * as Skill from "../Skill.js"
import * as Signed from "./signed.js"
import type {
  FamilyEntry,
  Hint,
  InstanceSkill,
  SkillBase,
  SkillChange,
  SkillEntry,
  Snapshot,
  StaticSkill
} from "../Snapshot.js"

/**
 * The instance of `family` for a match or an expansion of its template.
 */
export const instance = (family: FamilyEntry, found: PathTemplate.Instance): InstanceSkill => {
  const name = found.path[found.path.length - 1]!
  return {
    _tag: "Instance",
    family,
    params: found.params,
    uri: found.uri,
    root: found.root,
    path: found.path,
    name,
    frontmatter: { name },
    listed: family.listed,
    resource: { uri: found.uri, name, mimeType: Extension.MarkdownMimeType },
    cacheHint: family.cacheHint
  }
}

/**
 * Normalizes a cache hint, or returns why it is invalid.
 */
export const normalizeHint = (hint: Skill.CacheHint): Result.Result<Hint, string> => {
  const millis = Option.match(Duration.fromInput(hint.ttl), {
    onNone: () => NaN,
    onSome: (duration) => Math.floor(Duration.toMillis(duration))
  })
  if (!Number.isSafeInteger(millis) || millis < 0) {
    return Result.fail(`cacheHint.ttl must be finite and nonnegative, got ${String(hint.ttl)}`)
  }
  return Result.succeed({ ttlMs: millis, cacheScope: hint.scope ?? "private" })
}

/**
 * What a snapshot keeps of a manifest: not its body, a slice of the decoded `SKILL.md` that would
 * keep a second copy of every `SKILL.md` alive.
 */
export const viewOf = (manifest: Skill.ManifestView): Skill.ManifestView => {
  if (!("body" in manifest)) return manifest
  const { body: _, ...view } = manifest as Manifest.Manifest
  return view
}

/**
 * The skills whose manifests list a file of `skill` (indices into `Snapshot.skills`, ascending):
 * the skill itself and the static skills around it (R10).
 */
export const ownersOf = (skill: StaticSkill): ReadonlyArray<number> =>
  skill.enclosedBy.length === 0 ? [skill.index] : [...skill.enclosedBy, skill.index].sort(Order.Number)

/** Whether a listed skill makes the listing private by itself (its own hint, or rendered). */
export const isPrivate = (skill: SkillEntry): boolean =>
  skill.cacheHint === undefined ? skill._tag === "Rendered" : skill.cacheHint.cacheScope === "private"

/** The listing's scope facts from the counts of private and default listed skills. */
export const listingFrom = (
  privateSkills: number,
  defaultSkills: number,
  families: ReadonlyArray<FamilyEntry>
): Snapshot["listing"] => ({
  anyPrivate: privateSkills > 0 || families.some((family) => family.listed && family.cacheHint?.cacheScope !== "public"),
  anyDefault: defaultSkills > 0,
  privateSkills,
  defaultSkills
})

/**
 * The proper prefixes of a skill root that are URIs a skill root could have (`skill://a`,
 * `skill://a/b` of `skill://a/b/c`), longest first.
 */
export const ancestors = (root: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let end = root.lastIndexOf("/"); end > root.indexOf("://") + 2; end = root.lastIndexOf("/", end - 1)) {
    out.push(root.slice(0, end))
  }
  return out
}

const sameJson = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b)

export const digests = (skill: SkillEntry): ReadonlyMap<string, Digest.Digest> => {
  const out = new Map<string, Digest.Digest>()
  if (skill._tag !== "Static") return out
  const files = skill.manifest.files
  for (let index = 0; index < files.length; index++) out.set(files.uri(index), files.digest(index))
  return out
}

// The signatures a static entry relays: signing a skill again changes what a listing shows.
const relayedOf = (skill: SkillEntry) => skill._tag === "Static" ? Signed.relayed(skill.signatures) : undefined

/**
 * How one skill present before and after a change changed, if at all.
 */
export const changeOf = (old: SkillEntry, skill: SkillEntry): SkillChange | undefined => {
  if (
    old._tag === "Static" && skill._tag === "Static" && old.manifest === skill.manifest && old.listed === skill.listed &&
    sameJson(old.cacheHint, skill.cacheHint) && relayedOf(old) === relayedOf(skill)
  ) return undefined
  const was = digests(old)
  const now = digests(skill)
  const filesAdded = [...now.keys()].filter((uri) => !was.has(uri))
  const filesRemoved = [...was.keys()].filter((uri) => !now.has(uri))
  const filesChanged = [...now].filter(([uri, digest]) => was.has(uri) && was.get(uri) !== digest).map(([uri]) => uri)
  const kindChanged = old._tag !== skill._tag
  const same = !kindChanged && filesAdded.length === 0 && filesRemoved.length === 0 && filesChanged.length === 0 &&
    old.listed === skill.listed && sameJson(old.frontmatter, skill.frontmatter) && sameJson(old.cacheHint, skill.cacheHint) &&
    relayedOf(old) === relayedOf(skill)
  return same ? undefined : { uri: skill.uri, filesAdded, filesRemoved, filesChanged }
}

/**
 * The innermost skill whose root is `uri` or contains it, if any (walks up the URI, no catalogue
 * scan): the skill a file or directory belongs to, nested skills included.
 */
export const enclosing = (snapshot: Snapshot, uri: string): SkillEntry | undefined => {
  let end = uri.length
  while (end > 0) {
    const prefix = uri.slice(0, end)
    const owner = snapshot.dynamicRoots.get(prefix) ?? snapshot.byUri.get(prefix + "/" + Extension.SkillFileName)
    if (owner !== undefined) return owner
    end = uri.lastIndexOf("/", end - 1)
    if (end <= uri.indexOf("://") + 2) return undefined
  }
  return undefined
}

/**
 * The innermost of the skills (indices into `skills`) whose manifests list one file: the skill
 * the file belongs to, whose visibility decides the file's (a hidden nested skill is carved out of
 * every skill that contains it).
 */
export const innermost = (skills: ReadonlyArray<SkillBase>, owners: ReadonlyArray<number>): number => {
  let best = owners[0]!
  for (let i = 1; i < owners.length; i++) {
    if (skills[owners[i]!]!.root.length > skills[best]!.root.length) best = owners[i]!
  }
  return best
}
