/**
 * The walk: which entries under a root are files to serve, and which are left out and why.
 *
 * One listing with file types per folder and an `lstat` per file (see `guard`, the one way in), or
 * none for a regular file on a walk that reads what it finds.
 * Symbolic links to folders are not followed, so a link can neither loop nor make one file appear
 * under two paths; links to files are served under their own path when their real path is inside
 * the root and not hidden. Hidden entries (a name starting with `.`) and everything below them are
 * skipped, except a skill's signatures file, which is stamped like any file (and never served).
 */
import { SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import { SourceDirectoryError } from "../../DirectoryModel.js"
import { classify, list, type Stamp, under } from "./guard.js"
import * as Signatures from "./signatures.js"
import * as ServerLimits from "../../ServerLimits.js"

/** An entry left out, with the reason; `path` relative to the root, `/`-separated. */
export interface Left {
  readonly path: string
  readonly reason: string
}

/** Whether the walk looks at an entry of this name: a visible one, or a signatures file. */
export const isWalked = (name: string) => !SkillUri.isHidden(name) || name === Signatures.FileName

/** An entry that exists but cannot be looked at (a file) or listed (a folder). */
export interface Unreadable extends Left {
  readonly folder: boolean
}

/**
 * Whether the walk reaches `relative` (`/`-separated): no hidden segment, but for a signatures file
 * as the last one.
 */
export const isWalkedPath = (relative: string) => {
  const segments = relative.split("/")
  const last = segments.pop()!
  return isWalked(last) && !segments.some(SkillUri.isHidden)
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
}


/**
 * Walks the folder at `relative` (`""` for the root) and everything visible below it, handing each
 * file to `onFile` with its path relative to the root and its stamp. A folder below the start that
 * is removed while the walk runs is simply gone, and one that cannot be listed is `unreadable`;
 * the root failing is a `SourceDirectoryError`, and so is another start unless `startMayBeGone`.
 * With `onListed`, a file its folder's listing shows as a regular file is handed there unstamped,
 * without a system call of its own: a walk that reads every file it finds stamps each by the
 * descriptor it reads it through (`guard.openFile`). Each folder listed is handed to `onFolder`
 * before its files.
 */
export const walk = Effect.fnUntraced(function*(
  realRoot: string,
  onFile: (relative: string, stamp: Stamp) => void,
  relative = "",
  startMayBeGone = false,
  onListed?: (relative: string) => void,
  onFolder?: (relative: string) => void
) {
  const out: Walked = { files: 0, ignored: [], unreadable: [], folders: 0 }
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
      if (!isWalked(entry.name)) continue
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
          if (!SkillUri.isHidden(entry.name)) pending.push(path)
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
