/**
 * Where an upstream's skills appear in a gateway's catalogue, and which origin each skill of the
 * catalogue has. An upstream's skill `scheme://a/b/SKILL.md` is served at
 * `skill://PREFIX/a/b/SKILL.md`: the prefix adds path segments and never renames a skill (its
 * last segment, the name, is the upstream's). Origins are per-origin namespaces (R139): a skill
 * of one origin never shares its URI with, encloses, or lies inside a skill of another, since a
 * nested skill's files would join its parent's manifest.
 *
 * @internal
 */
import { Extension, SkillUri } from "@mcp-skills/core"
import * as Result from "effect/Result"
import * as Skill from "../../Skill.js"
import type * as Snapshot from "../../Snapshot.js"
import { ancestors } from "../registry.js"

/** The gateway's `SKILL.md` URI of an upstream skill, or why it has none (a path too long, ...). */
export const gatewayUri = (prefix: ReadonlyArray<string>, upstream: SkillUri.SkillMdUri) =>
  SkillUri.skillMd("skill", [...prefix, ...SkillUri.skillPath(upstream)])

/**
 * The upstream's `SKILL.md` URI of a gateway URI under `prefix` (the upstream's `scheme`), or
 * `undefined` when the URI is not under it.
 */
export const upstreamUri = (
  prefix: ReadonlyArray<string>,
  scheme: string,
  uri: SkillUri.SkillMdUri
): SkillUri.SkillMdUri | undefined => {
  if (!uri.startsWith("skill://")) return undefined
  const path = SkillUri.skillPath(uri)
  if (path.length <= prefix.length || prefix.some((segment, i) => path[i] !== segment)) return undefined
  return Result.getOrUndefined(SkillUri.skillMd(scheme, path.slice(prefix.length)))
}

/** One skill as origins see it: its `SKILL.md` URI and the origin serving it (`undefined`: local). */
export interface Placed {
  readonly uri: string
  readonly origin: string | undefined
}

const rootOf = (uri: string) => uri.slice(0, -(Extension.SkillFileName.length + 1))

/** The origin of a definition: the source its provenance names, or local. */
export const originOfDefinition = (definition: Skill.Definition): string | undefined =>
  definition._tag === "Static" || definition._tag === "Dynamic" ? definition.provenance?.source : undefined

/** The origin of a skill of a snapshot, from the provenance its entry relays. */
export const originOfEntry = (skill: Snapshot.SkillEntry): string | undefined => {
  if (skill._tag === "Rendered") return undefined
  const provenance = skill.entry._meta?.[Skill.ProvenanceMetaKey]
  return typeof provenance === "object" && provenance !== null && "source" in provenance && typeof provenance.source === "string"
    ? provenance.source
    : undefined
}

const describe = (origin: string | undefined) => origin === undefined ? "a local skill" : `a skill of the upstream ${origin}`

/**
 * Every clash of `candidates` with `existing` (and with each other): the same URI, or one skill
 * inside another, across two origins. Each names the candidate and the skill it clashes with.
 */
export const clashes = (
  candidates: ReadonlyArray<Placed>,
  existing: Iterable<Placed>
): Array<{ readonly skill: string; readonly reason: string }> => {
  const byRoot = new Map<string, Placed>()
  for (const skill of existing) byRoot.set(rootOf(skill.uri), skill)
  const problems: Array<{ skill: string; reason: string }> = []
  const placed: Array<Placed> = []
  for (const candidate of candidates) {
    const root = rootOf(candidate.uri)
    const same = byRoot.get(root)
    if (same !== undefined && same.origin !== candidate.origin) {
      problems.push({ skill: candidate.uri, reason: `${describe(same.origin)} is served at the same URI` })
      continue
    }
    const outer = ancestors(root).map((prefix) => byRoot.get(prefix)).find((skill) => skill !== undefined && skill.origin !== candidate.origin)
    if (outer !== undefined) {
      problems.push({ skill: candidate.uri, reason: `it lies inside ${outer.uri}, ${describe(outer.origin)}` })
      continue
    }
    byRoot.set(root, candidate)
    placed.push(candidate)
  }
  // A candidate enclosing a skill of another origin: one sorted pass over every root.
  const roots = [...byRoot.keys()].sort()
  for (const candidate of placed) {
    const root = rootOf(candidate.uri)
    let i = lowerBound(roots, root + "/")
    for (; i < roots.length && roots[i]!.startsWith(root + "/"); i++) {
      const inner = byRoot.get(roots[i]!)!
      if (inner.origin !== candidate.origin) {
        problems.push({ skill: candidate.uri, reason: `${inner.uri}, ${describe(inner.origin)}, lies inside it` })
        break
      }
    }
  }
  return problems
}

const lowerBound = (sorted: ReadonlyArray<string>, key: string) => {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (sorted[mid]! < key) low = mid + 1
    else high = mid
  }
  return low
}
