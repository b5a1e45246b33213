/**
 * Grouping: which files belong to which skill. Every folder holding a `SKILL.md` is a skill, and
 * its files are every file below it, the files of skills nested inside it included (R10). A
 * signatures file belongs to the skill of its folder only, and to no manifest.
 */
import { Extension } from "@mcp-skills/core"
import * as Order from "effect/Order"
import type { Left } from "./scan.js"
import * as Signatures from "./signatures.js"
import type { Found } from "./stamps.js"

const suffix = `/${Extension.SkillFileName}`

/**
 * Skill folders (relative, `""` for the root) with their files, and misspelt `skill.md` hints. A
 * skill's files are in the order of its manifest (its `SKILL.md` first, then by path), so that what
 * is read lines up, file by file, with the skill's last version.
 */
export interface Grouped {
  readonly skills: Map<string, Array<Found>>
  /** The signatures file of each folder that has one (a skill folder or not). */
  readonly signatures: Map<string, Found>
  readonly hints: Array<Left>
}

/** The folder (relative, `""` for the root) a signatures file signs, or `undefined` for another file. */
export const signedFolder = (relative: string): string | undefined => {
  const at = relative.lastIndexOf("/")
  if (relative.slice(at + 1) !== Signatures.FileName) return undefined
  return at === -1 ? "" : relative.slice(0, at)
}


// The manifest's order of the files of the skill at `folder`.
const inManifestOrder = (folder: string) => {
  const skillMd = folder === "" ? Extension.SkillFileName : `${folder}${suffix}`
  return (a: Found, b: Found) =>
    a.relative === skillMd ? -1 : b.relative === skillMd ? 1 : Order.String(a.relative, b.relative)
}

/** Puts `file` among the files of the skill at `folder`, in their order. */
export const place = (members: Array<Found>, folder: string, file: Found) => {
  const order = inManifestOrder(folder)
  let at = members.length
  while (at > 0 && order(members[at - 1]!, file) > 0) at--
  members.splice(at, 0, file)
}

/** Groups files by skill in one pass over them: each file looks up its ancestors by path. */
export const group = (files: ReadonlyMap<string, Found>): Grouped => {
  const skills = new Map<string, Array<Found>>()
  for (const relative of files.keys()) {
    if (relative === Extension.SkillFileName) skills.set("", [])
    else if (relative.endsWith(suffix)) skills.set(relative.slice(0, -suffix.length), [])
  }
  const signatures = new Map<string, Found>()
  const hints: Array<Left> = []
  for (const file of files.values()) {
    const signed = signedFolder(file.relative)
    if (signed !== undefined) {
      signatures.set(signed, file)
      continue
    }
    let enclosed = false
    for (let at = file.relative.lastIndexOf("/"); ; at = file.relative.lastIndexOf("/", at - 1)) {
      const members = skills.get(at === -1 ? "" : file.relative.slice(0, at))
      if (members !== undefined) {
        members.push(file)
        enclosed = true
      }
      if (at <= 0) break
    }
    if (enclosed) continue
    // A "skill.md" outside every skill is almost certainly a skill with a misspelt file name.
    const name = file.relative.slice(file.relative.lastIndexOf("/") + 1)
    if (name !== Extension.SkillFileName && name.toLowerCase() === "skill.md") {
      hints.push({ path: file.relative, reason: `not a skill: the file must be named exactly ${Extension.SkillFileName}` })
    }
  }
  // Sorted into a copy of the exact length: pushing leaves up to twice the room in each array.
  for (const [folder, members] of skills) skills.set(folder, members.toSorted(inManifestOrder(folder)))
  return { skills, signatures, hints }
}
