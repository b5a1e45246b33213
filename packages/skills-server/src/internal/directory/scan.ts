/**
 * The walk: which entries under a root are files to serve, and which are left out and why.
 *
 * One listing with file types per folder and an `lstat` per file (see `guard`, the one way in), or
 * none for a regular file on a walk that reads what it finds.
 * Symbolic links to folders are not followed, so a link can neither loop nor make one file appear
 * under two paths; links to files are served under their own path when their real path is inside
 * the root and not hidden. Hidden entries (a name starting with `.`) and everything below them are
 * skipped, except a skill's signatures file, which is stamped like any file (and never served), and
 * the hidden containers the `npx skills` installer searches (see `layout`); a hidden folder that
 * holds skills is left out with a line saying so. `.git` and `node_modules` are never walked.
 */
import { Extension, SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import { SourceDirectoryError } from "../../DirectoryModel.js"
import { classify, list, type Stamp, under } from "./guard.js"
import * as Layout from "./layout.js"
import * as Signatures from "./signatures.js"
import * as ServerLimits from "../../ServerLimits.js"

/** An entry left out, with the reason; `path` relative to the root, `/`-separated. */
export interface Left {
  readonly path: string
  readonly reason: string
}

/**
 * Whether the walk looks at the entry `name` of the folder at `folder` (`""` for the root): a visible
 * one (never `node_modules`), a signatures file, or a hidden folder on the way to one of the
 * installer's containers (`skills/.curated`, `.claude/skills`); in a folder listed only on the way to
 * one (`.claude`), only what leads there.
 */
export const isWalkedIn = (folder: string, name: string): boolean => {
  if (Layout.isNeverWalked(name)) return false
  if (Layout.isPassage(folder)) return Layout.leadsToContainer(folder === "" ? name : `${folder}/${name}`)
  if (!SkillUri.isHidden(name) || name === Signatures.FileName) return true
  return Layout.leadsToContainer(folder === "" ? name : `${folder}/${name}`)
}

/** An entry that exists but cannot be looked at (a file) or listed (a folder). */
export interface Unreadable extends Left {
  readonly folder: boolean
}

/**
 * Whether the walk reaches `relative` (`/`-separated): each segment looked at in its folder, and a
 * signatures file only as the last one.
 */
export const isWalkedPath = (relative: string) => {
  const segments = relative.split("/")
  let folder = ""
  for (let at = 0; at < segments.length; at++) {
    const name = segments[at]!
    if (!isWalkedIn(folder, name)) return false
    if (at < segments.length - 1 && SkillUri.isHidden(name) && !Layout.leadsToContainer(`${folder === "" ? "" : `${folder}/`}${name}`)) {
      return false
    }
    folder = folder === "" ? name : `${folder}/${name}`
  }
  return true
}

// How many folders below the hidden folder at `relative` hold a `SKILL.md`, looked for within
// `ServerLimits.Discovery`; `more` when the search stopped at its bound.
const skillsIn = (realRoot: string, relative: string) => {
  let level = [relative]
  let skills = 0
  let folders = 0
  for (let depth = 0; depth < ServerLimits.Discovery.hiddenDepth && level.length > 0; depth++) {
    const next: Array<string> = []
    for (const folder of level) {
      if (++folders > ServerLimits.Discovery.hiddenFolders) return { skills, more: true }
      const listing = list(realRoot, folder)
      if (listing._tag !== "Listed") continue
      for (const entry of listing.entries) {
        if (entry.isFile() && entry.name === Extension.SkillFileName) skills++
        else if (entry.isDirectory() && !Layout.isNeverWalked(entry.name)) next.push(`${folder}/${entry.name}`)
      }
    }
    level = next
  }
  return { skills, more: level.length > 0 }
}

/** What a walk found, besides the files it handed over one by one. */
export interface Walked {
  /** How many files. */
  files: number
  readonly ignored: Array<Left>
  /** Entries that exist but cannot be looked at or listed (a folder or file denied to this process). */
  readonly unreadable: Array<Unreadable>
  /** How many folders were walked, the start included (each handed to `onFolder` as it is listed). */
  folders: number
  /** Whether the root holds a folder of plugin manifests (`layout.pluginFolder`), read only then. */
  plugins: boolean
}


/**
 * Walks the folder at `relative` (`""` for the root) and everything visible below it, handing each
 * file to `onFile` with its path relative to the root and its stamp. A folder below the start that
 * is removed while the walk runs is simply gone, and one that cannot be listed is `unreadable`;
 * the root failing is a `SourceDirectoryError`, and so is another start unless `startMayBeGone`.
 * With `onListed`, a file its folder's listing shows as a regular file is handed there unstamped,
 * without a system call of its own: a walk that reads every file it finds stamps each by the
 * descriptor it reads it through (`guard.openFile`). Each folder listed is handed to `onFolder`
 * before its files. A hidden folder is looked into for the skills it holds (`ignored` says them)
 * unless `lookIntoHidden` is false, as for the periodic stamp check, which reports no entries.
 */
export const walk = Effect.fnUntraced(function*(
  realRoot: string,
  onFile: (relative: string, stamp: Stamp) => void,
  relative = "",
  startMayBeGone = false,
  onListed?: (relative: string) => void,
  onFolder?: (relative: string) => void,
  lookIntoHidden = true
) {
  const out: Walked = { files: 0, ignored: [], unreadable: [], folders: 0, plugins: false }
  const pending = [relative]
  let calls = 0
  while (pending.length > 0) {
    const folder = pending.pop()!
    const listing = list(realRoot, folder)
    if (listing._tag !== "Listed") {
      const start = folder === relative
      if (start && (relative === "" || (!startMayBeGone && listing._tag === "Gone"))) {
        const reason = listing._tag === "Gone" ? "does not exist" : listing.reason
        return yield* new SourceDirectoryError({ path: under(realRoot, folder), reason })
      }
      if (listing._tag === "Unreadable") out.unreadable.push({ path: folder, reason: listing.reason, folder: true })
      continue
    }
    out.folders++
    onFolder?.(folder)
    for (const entry of listing.entries) {
      if (!isWalkedIn(folder, entry.name)) {
        if (folder === "" && entry.name === Layout.pluginFolder) out.plugins = true
        // A hidden folder that holds skills is said, with how to serve them; one only on the way
        // to a container (`.claude`) holds nothing else that is looked at.
        if (
          lookIntoHidden && entry.isDirectory() && SkillUri.isHidden(entry.name) && !Layout.isPassage(folder) &&
          !Layout.isNeverWalked(entry.name)
        ) {
          const path = folder === "" ? entry.name : `${folder}/${entry.name}`
          const found = skillsIn(realRoot, path)
          if (found.skills > 0) {
            out.ignored.push({
              path,
              reason: `hidden folder holding ${found.skills}${found.more ? " or more" : ""} skill${
                found.skills === 1 && !found.more ? "" : "s"
              } (a folder with a SKILL.md), not served; to serve ${found.skills === 1 ? "it" : "them"}, serve the folder itself: ` +
                `mcp-skills-server serve ${under(realRoot, path)}`
            })
          }
        }
        continue
      }
      // Joined into one flat string, not concatenated: a concatenation is a rope that keeps its
      // parts (the folder's path, the entry's name) alive as long as the path is kept.
      const path = folder === "" ? entry.name : [folder, entry.name].join("/")
      if (onListed !== undefined && entry.isFile()) {
        out.files++
        onListed(path)
        continue
      }
      const found = classify(realRoot, path, entry)
      switch (found._tag) {
        case "Directory":
          // A folder named as the signatures file is hidden like any other.
          if (!SkillUri.isHidden(entry.name) || Layout.leadsToContainer(path)) pending.push(path)
          break
        case "File":
          out.files++
          onFile(path, found.stamp)
          break
        case "Ignored":
          out.ignored.push({ path, reason: found.reason })
          break
        case "Unreadable":
          out.unreadable.push({ path, reason: found.reason, folder: false })
          break
        case "Gone":
          break
      }
    }
    calls += listing.entries.length + 1
    if (calls >= ServerLimits.LoadSlice.calls) {
      calls = 0
      yield* Effect.yieldNow
    }
  }
  return out
})
