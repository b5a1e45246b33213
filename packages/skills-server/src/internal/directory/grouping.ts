/**
 * Grouping: which files belong to which skill. Every folder holding a `SKILL.md` is a skill, and
 * its files are every file below it, the files of skills nested inside it included (R10). A
 * signatures file belongs to the skill of its folder only, and to no manifest.
 */
import { Extension } from "@mcp-skills/core"
import * as Order from "effect/Order"
import type { Left } from "./scan.js"
import * as Signatures from "./signatures.js"
import type { FoundFiles } from "./found.js"

const suffix = `/${Extension.SkillFileName}`

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


// The manifest's order of the files of the skill at `folder`.
const inManifestOrder = (found: FoundFiles, folder: string) => {
  const skillMd = folder === "" ? Extension.SkillFileName : `${folder}${suffix}`
  return (a: number, b: number) => {
    const first = found.relative(a)
    const second = found.relative(b)
    return first === skillMd ? -1 : second === skillMd ? 1 : Order.String(first, second)
  }
}

/** Puts `file` (a slot of `found`) among the files of the skill at `folder`, in their order. */
export const place = (found: FoundFiles, members: Array<number>, folder: string, file: number) => {
  const order = inManifestOrder(found, folder)
  let at = members.length
  while (at > 0 && order(members[at - 1]!, file) > 0) at--
  members.splice(at, 0, file)
}

/** Groups files by skill in one pass over them: each file looks up its ancestors by path. */
export const group = (found: FoundFiles): Grouped => {
  const skills = new Map<string, Array<number>>()
  found.forEach((_, relative) => {
    if (relative === Extension.SkillFileName) skills.set("", [])
    else if (relative.endsWith(suffix)) skills.set(relative.slice(0, -suffix.length), [])
  })
  const signatures = new Map<string, number>()
  const hints: Array<Left> = []
  found.forEach((file, relative) => {
    const signed = signedFolder(relative)
    if (signed !== undefined) {
      signatures.set(signed, file)
      return
    }
    let enclosed = false
    for (let at = relative.lastIndexOf("/"); ; at = relative.lastIndexOf("/", at - 1)) {
      const members = skills.get(at === -1 ? "" : relative.slice(0, at))
      if (members !== undefined) {
        members.push(file)
        enclosed = true
      }
      if (at <= 0) break
    }
    if (enclosed) return
    // A "skill.md" outside every skill is almost certainly a skill with a misspelt file name.
    const name = relative.slice(relative.lastIndexOf("/") + 1)
    if (name !== Extension.SkillFileName && name.toLowerCase() === "skill.md") {
      hints.push({ path: relative, reason: `not a skill: the file must be named exactly ${Extension.SkillFileName}` })
    }
  })
  // Sorted into a copy of the exact length: pushing leaves up to twice the room in each array.
  for (const [folder, members] of skills) skills.set(folder, members.toSorted(inManifestOrder(found, folder)))
  return { skills, signatures, hints }
}
