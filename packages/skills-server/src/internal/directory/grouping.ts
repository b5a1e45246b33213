/**
 * Grouping: which files belong to which skill. Every folder holding a `SKILL.md` is a skill, and
 * its files are every file below it, the files of skills nested inside it included (R10), but for
 * those below a hidden folder (a container such as `skills/.curated`). A
 * signatures file belongs to the skill of its folder only, and to no manifest.
 */
import { Extension, SkillUri } from "@mcp-skills/core"
import * as Order from "effect/Order"
import type { Left } from "./scan.js"
import * as Signatures from "./signatures.js"
import type { FoundFiles } from "./found.js"

const suffix = `/${Extension.SkillFileName}`

/** The last segment of a `/`-separated path. */
export const baseName = (relative: string) => relative.slice(relative.lastIndexOf("/") + 1)

/**
 * Skill folders (relative, `""` for the root) with their files (slots in the root's
 * `FoundFiles`), and misspelt `skill.md` hints. A skill's files are in the order of its manifest
 * (its `SKILL.md` first, then by path), so that what is read lines up, file by file, with the
 * skill's last version.
 */
export interface Grouped {
  readonly skills: Map<string, Array<number>>
  /** The signatures file of each folder that has one (a skill folder or not). */
  readonly signatures: Map<string, number>
  readonly hints: Array<Left>
}

/** The folder (relative, `""` for the root) a signatures file signs, or `undefined` for another file. */
export const signedFolder = (relative: string): string | undefined => {
  const at = relative.lastIndexOf("/")
  if (relative.slice(at + 1) !== Signatures.FileName) return undefined
  return at === -1 ? "" : relative.slice(0, at)
}


// The manifest's order of the files of the skill at `folder`, given their paths.
const inManifestOrder = (folder: string) => {
  const skillMd = folder === "" ? Extension.SkillFileName : `${folder}${suffix}`
  return (first: string, second: string) => first === skillMd ? -1 : second === skillMd ? 1 : Order.String(first, second)
}

/** Puts `file` (a slot of `found`) among the files of the skill at `folder`, in their order. */
export const place = (found: FoundFiles, members: Array<number>, folder: string, file: number) => {
  const order = inManifestOrder(folder)
  const path = found.relative(file)
  let at = members.length
  while (at > 0 && order(found.relative(members[at - 1]!), path) > 0) at--
  members.splice(at, 0, file)
}

// The files of the skill at `folder` in their order, in an array of exactly their number.
const sorted = (found: FoundFiles, folder: string, members: ReadonlyArray<number>) => {
  const paths = members.map((slot) => found.relative(slot))
  const order = inManifestOrder(folder)
  return members.map((_, index) => index).sort((a, b) => order(paths[a]!, paths[b]!)).map((index) => members[index]!)
}

/** Groups files by skill in one pass over them: each file looks up its folder and those above it. */
export const group = (found: FoundFiles): Grouped => {
  // The files of each skill, by the id of its folder.
  const byFolder = new Map<number, Array<number>>()
  found.forEach((file) => {
    if (found.name(file) === Extension.SkillFileName) byFolder.set(found.folderOf(file), [])
  })
  const signatures = new Map<string, number>()
  const hints: Array<Left> = []
  // A hidden container (`skills/.curated`) is walked for the skills in it, but its files are no
  // part of a skill above it: no skill serves a path with a hidden segment.
  const hidden = new Map<number, boolean>()
  const isHidden = (folder: number) => {
    let known = hidden.get(folder)
    if (known === undefined) hidden.set(folder, known = SkillUri.isHidden(baseName(found.folderPath(folder))))
    return known
  }
  found.forEach((file) => {
    const name = found.name(file)
    if (name === Signatures.FileName) {
      signatures.set(found.folderPath(found.folderOf(file)), file)
      return
    }
    let enclosed = false
    for (let folder = found.folderOf(file); folder !== -1; folder = found.parentOf(folder)) {
      const members = byFolder.get(folder)
      if (members !== undefined) {
        members.push(file)
        enclosed = true
      }
      if (isHidden(folder)) break
    }
    if (enclosed) return
    // A "skill.md" outside every skill is almost certainly a skill with a misspelt file name.
    if (name !== Extension.SkillFileName && name.toLowerCase() === "skill.md") {
      hints.push({ path: found.relative(file), reason: `not a skill: the file must be named exactly ${Extension.SkillFileName}` })
    }
  })
  const skills = new Map<string, Array<number>>()
  for (const [id, members] of byFolder) {
    const folder = found.folderPath(id)
    skills.set(folder, sorted(found, folder, members))
  }
  return { skills, signatures, hints }
}
