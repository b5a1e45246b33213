/**
 * A snapshot's static directories, derived on first use instead of at build time: a folder is
 * listed by the manifest of the innermost skill around it, which holds every file below it
 * (nested skills' files included, R10), so one pass over at most `Limits.maxFiles` files makes
 * the entry. Built for every file of every skill, the entries cost about half a kilobyte per
 * file served and most of the build's garbage, for folders few clients ever read.
 *
 * @internal
 */
import { Extension } from "@mcp-skills/core"
import * as Order from "effect/Order"
import type { DirectoryChild, DirectoryEntry, Directories, Snapshot, StaticSkill } from "../Snapshot.js"
import { Lru } from "./lru.js"
import * as MimeType from "../MimeType.js"
import { enclosing } from "./registry.js"
import * as ServerLimits from "../ServerLimits.js"

/** Directories kept per snapshot, the most recently read (each at most one skill's file list). */
export const Kept = ServerLimits.KeptDirectories

const byUri = Order.mapInput(Order.String, (child: DirectoryChild) => child.uri)

// The entry of `uri` from the files of `skill`, the innermost skill around it; `undefined` when
// no file lies below it. A directory is owned by the skills that hold a file below it (each
// file's innermost owner), so a hidden nested skill takes its folder out of its parent's listing.
const derive = (snapshot: Snapshot, skill: StaticSkill, uri: string): DirectoryEntry | undefined => {
  const prefix = uri + "/"
  const owners = new Set<number>()
  const children: Array<DirectoryChild> = []
  const folders = new Map<string, Set<number>>()
  const files = skill.manifest.files
  for (let index = 0; index < files.length; index++) {
    const file = files.uri(index)
    if (!file.startsWith(prefix)) continue
    // The innermost skill around the file: this one, or a static skill nested in it.
    const holder = skill.enclosedBy.length === 0 && (snapshot.nested.get(skill.root) ?? 0) === 0
      ? skill.index
      : (enclosing(snapshot, file) ?? skill).index
    owners.add(holder)
    const slash = file.indexOf("/", prefix.length)
    if (slash === -1) {
      const name = files.name(index)
      children.push({
        uri: file,
        owners: [holder],
        resource: { uri: file, name, mimeType: MimeType.fromPath(name), size: files.size(index) }
      })
      continue
    }
    const folder = file.slice(0, slash)
    const holders = folders.get(folder)
    if (holders === undefined) folders.set(folder, new Set([holder]))
    else holders.add(holder)
  }
  if (owners.size === 0) return undefined
  for (const [folder, holders] of folders) {
    const name = decodeURIComponent(folder.slice(prefix.length))
    children.push({ uri: folder, owners: [...holders].sort(Order.Number), resource: { uri: folder, name, mimeType: Extension.DirectoryMimeType } })
  }
  return { uri, children: children.sort(byUri), owners: [...owners].sort(Order.Number) }
}

// The static skill whose files list the directory `uri`, if any.
const holderOf = (snapshot: Snapshot, uri: string): StaticSkill | undefined => {
  const skill = enclosing(snapshot, uri)
  return skill?._tag === "Static" ? skill : undefined
}

/**
 * The directories of `snapshot` (given as a thunk, as the snapshot is made with them), each
 * derived on first use and kept in a cache of the `Kept` most recently read.
 */
export const make = (snapshot: () => Snapshot): Directories => {
  const kept = new Lru<string, DirectoryEntry | undefined>(Kept)
  const get = (uri: string): DirectoryEntry | undefined =>
    kept.getOrCompute(uri, () => {
      const current = snapshot()
      const skill = holderOf(current, uri)
      return skill === undefined ? undefined : derive(current, skill, uri)
    })
  return {
    get,
    all: () => {
      const current = snapshot()
      const out: Array<DirectoryEntry> = []
      const seen = new Set<string>()
      for (const skill of current.skills) {
        if (skill._tag !== "Static") continue
        for (let index = 0; index < skill.manifest.files.length; index++) {
          const file = skill.manifest.files.uri(index)
          for (let end = file.lastIndexOf("/"); end >= skill.root.length; end = file.lastIndexOf("/", end - 1)) {
            const directory = file.slice(0, end)
            if (seen.has(directory)) break
            seen.add(directory)
            out.push(derive(current, holderOf(current, directory)!, directory)!)
          }
        }
      }
      return out
    }
  }
}
