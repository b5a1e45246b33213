/**
 * Where each file of a pull goes below the target, and the names refused before anything is
 * written (hidden, too deep, or one name on a case-folding file system).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type Skill, SkillUri } from "@mcp-skills/core"
import { MaxDepth, type NameProblem, UnsafeName } from "../../PullError.js"
import type { Lock } from "../../LockFile.js"
import { type Layout, tree } from "../../PullModel.js"

// A prefix is a skill name's form, so a flat folder `prefix-name` still has one.
const PrefixPattern = /^[a-z0-9]+(-[a-z0-9]+)*$/

/** Why `layout`'s prefix cannot be used, if it cannot. */
export const prefixProblem = (layout: Layout): string | undefined =>
  layout.prefix === undefined || (PrefixPattern.test(layout.prefix) && layout.prefix.length <= 64)
    ? undefined
    : `--prefix must be lowercase letters, digits and single hyphens (at most 64), as a skill name is; got ${JSON.stringify(layout.prefix)}`

// The folder of a skill inside the target, `/`-separated. Tree: its decoded skill path, under the
// scheme when it is not `skill`; flat: its name (the last segment, equal to its frontmatter
// `name`), one level below the target, as hosts read skills.
export const folderOf = (skill: Skill.Skill, layout: Layout = tree()): string => {
  const path = SkillUri.skillPath(skill.uri)
  if (layout._tag === "Flat") {
    const name = path[path.length - 1]!
    return layout.prefix === undefined ? name : `${layout.prefix}-${name}`
  }
  const parsed = Result.getOrThrow(SkillUri.parse(skill.uri))
  return [...(layout.prefix === undefined ? [] : [layout.prefix]), ...(parsed.scheme === "skill" ? [] : [parsed.scheme]), ...path].join("/")
}

/** The nearest folder above `folder` (`/`-separated) that `folders` holds, and what it holds there. */
export const enclosing = <A>(folders: ReadonlyMap<string, A>, folder: string): A | undefined => {
  for (let at = folder.lastIndexOf("/"); at > 0; at = folder.lastIndexOf("/", at - 1)) {
    const found = folders.get(folder.slice(0, at))
    if (found !== undefined) return found
  }
  return undefined
}

/** One file where a pull would put it: `path` below the target, `/`-separated. */
export interface Placed {
  readonly skill: string
  readonly uri: string
  readonly path: string
}

// A uri outside the skill has no place; staging refuses it when it comes to read it.
export const placed = (skill: Skill.Skill, folder: string, uris: Iterable<string>): Array<Placed> => {
  const out: Array<Placed> = []
  for (const uri of uris) {
    const relative = SkillUri.relativePath(skill.uri, uri)
    if (relative !== undefined && relative.length > 0) out.push({ skill: skill.uri, uri, path: `${folder}/${relative}` })
  }
  return out
}

// What one file system may take for one name: case folded both ways (so "ſ" meets "s") after NFC.
const folded = (name: string) => name.normalize("NFC").toUpperCase().toLowerCase()

/**
 * The lock record (of another skill) whose folder `folder` would take: the same folder; for a
 * skill of another server, also one inside the other (a replace or prune of the outer folder would
 * carry the inner skill away). Names one file system takes for one are {@link checkNames}'.
 */
export const folderTaken = (
  lock: Lock,
  skill: { readonly uri: string; readonly origin: string; readonly folder: string }
): Lock["skills"][number] | undefined => {
  const mine = skill.folder
  return lock.skills.find((record) => {
    if (record.origin === skill.origin && record.uri === skill.uri) return false
    const theirs = record.path
    if (theirs === mine) return true
    return record.origin !== skill.origin && (theirs.startsWith(`${mine}/`) || mine.startsWith(`${theirs}/`))
  })
}

// The files the lock file records that this pull leaves in place.
export const keptFiles = (lock: Lock, origin: string, selected: ReadonlyArray<Skill.Skill>): Array<Placed> => {
  const pulled = new Set(selected.map((skill) => skill.uri as string))
  return lock.skills
    .filter((skill) => !(skill.origin === origin && pulled.has(skill.uri)))
    .flatMap((skill) => skill.files.map((file) => ({ skill: skill.uri, uri: file.uri, path: `${skill.path}/${file.path}` })))
}

/**
 * Refuses, before anything is written, every name a pull must not write (see {@link UnsafeName}):
 * `writing` are the files of this pull, `kept` those already in the target that stay (compared
 * with, not checked themselves).
 */
export const checkNames = (writing: ReadonlyArray<Placed>, kept: ReadonlyArray<Placed> = []): Effect.Effect<void, UnsafeName> =>
  Effect.gen(function*() {
    const refuse = (file: Placed, problem: NameProblem) => new UnsafeName({ ...file, problem })
    for (const file of writing) {
      const segments = file.path.split("/")
      const hidden = segments.find(SkillUri.isHidden)
      if (hidden !== undefined) return yield* refuse(file, { _tag: "Hidden", segment: hidden })
      if (segments.length > MaxDepth) return yield* refuse(file, { _tag: "TooDeep", depth: segments.length, max: MaxDepth })
    }
    // Every file and every folder on the way to one, by folded name: a folder may be on the way to
    // many files, a file is one uri.
    const taken = new Map<string, { readonly name: string; readonly file: Placed; readonly folder: boolean }>()
    for (const [index, file] of [...kept, ...writing].entries()) {
      const segments = file.path.split("/")
      let name = ""
      for (const [depth, segment] of segments.entries()) {
        name = depth === 0 ? segment : `${name}/${segment}`
        const folder = depth < segments.length - 1
        const key = folded(name)
        const other = taken.get(key)
        if (other === undefined) {
          taken.set(key, { name, file, folder })
        } else if (
          // What the target already holds is not this pull's to judge.
          index >= kept.length &&
          (other.name !== name || other.folder !== folder || (!folder && other.file.uri !== file.uri))
        ) {
          return yield* refuse(file, { _tag: "Collides", name, other: other.file.uri, otherName: other.name })
        }
      }
    }
  })
