/**
 * What is under one root now: the files and folders a walk found (kept between scans, walked again
 * whole or only where a watcher saw changes), grouped into skills, with what the naming of each
 * skill folder keeps (`naming`).
 */
import { SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import type * as DirectoryModel from "../../DirectoryModel.js"
import { SourceDirectoryError } from "../../DirectoryModel.js"
import { baseName, group, type Grouped, place, signedFolder } from "./grouping.js"
import { classify, realFolder, type Stamp } from "./guard.js"
import { FoundFiles } from "./found.js"
import * as Layout from "./layout.js"
import type * as Naming from "./naming.js"
import type * as Repair from "./repair.js"
import { isWalkedPath, type Unreadable, walk } from "./scan.js"
import type { Counters } from "./stamps.js"
import type * as Skill from "../../Skill.js"

/**
 * What the last scan of one root found: its files and folders (each file with what was last read of
 * it), entries left out, entries that cannot be read, the skills they group into, and each skill
 * folder's last outcome.
 */
export interface Tree {
  readonly realRoot: string
  readonly files: FoundFiles
  readonly ignored: Map<string, string>
  readonly unreadable: Map<string, Unreadable>
  grouped: Grouped
  readonly outcomes: Map<string, Result.Result<DirectoryModel.LoadedSkill, DirectoryModel.SkillProblem>>
  readonly naming: NamingKept
}

/**
 * What naming keeps of each skill folder: the URI it would have alone, the folders it would share
 * it with, the lenient reading of its `SKILL.md`, and its repairs.
 */
export interface NamingKept {
  readonly alone: Map<string, string>
  shared: Map<string, ReadonlyArray<string>>
  readonly readings: Map<string, Naming.Reading>
  readonly repairs: Map<string, ReadonlyArray<Repair.Placed>>
}

export const emptyNaming = (): NamingKept => ({ alone: new Map(), shared: new Map(), readings: new Map(), repairs: new Map() })

/** Everything a source keeps between scans. */
export interface State {
  readonly roots: Map<number, Tree>
  /** The last valid version of each skill folder, by root index, then folder. */
  readonly good: Map<number, Map<string, DirectoryModel.LoadedSkill>>
  /** The bytes of the signatures file each loaded skill's signatures were decoded from. */
  readonly signedWith: WeakMap<DirectoryModel.LoadedSkill, Uint8Array | undefined>
  /** The warning of each manifest served, once made (`undefined`: none). */
  readonly warned: WeakMap<Skill.ManifestView, DirectoryModel.Warning | undefined>
  readonly counters: Counters & { scans: number; lookedAt: number }
}

export const emptyState = (): State => ({
  roots: new Map(),
  good: new Map(),
  signedWith: new WeakMap(),
  warned: new WeakMap(),
  counters: { scans: 0, lookedAt: 0, readFiles: 0, readBytes: 0, hashedFiles: 0, hashedBytes: 0 }
})

/** The real path of a root, which must be a folder. */
export const realRootOf = (root: string) =>
  Effect.suspend(() => {
    const found = realFolder(root)
    return "real" in found ? Effect.succeed(found.real) : Effect.fail(new SourceDirectoryError({ path: root, reason: found.reason }))
  })

/**
 * Indexes in `files` a file a full walk sees at `relative` with `stamp`, keeping what `last` (the
 * files of the scan before, left as they were, so a scan that fails leaves them intact) read of
 * it: trusted if the stamp is the same, otherwise to be read again, though unchanged bytes keep
 * their buffer.
 */
const seen = (files: FoundFiles, last: FoundFiles | undefined, relative: string, stamp: Stamp) => {
  const slot = files.add(relative, stamp)
  const before = last?.slot(relative)
  if (before !== undefined) files.inherit(slot, last!, before)
}

const isBelow = (path: string, folder: string) => folder === "" || path.startsWith(`${folder}/`)

// Forgets what was at `relative` (a file, an entry left out or unreadable, or a folder and
// everything below it); hands back the slots of the files that were below it, taken out of the
// index but not released.
const forget = (tree: Tree, relative: string): ReadonlyMap<string, number> | undefined => {
  tree.ignored.delete(relative)
  tree.unreadable.delete(relative)
  if (!tree.files.isFolder(relative)) return undefined
  const below = tree.files.removeFolder(relative)
  for (const path of tree.ignored.keys()) if (isBelow(path, relative)) tree.ignored.delete(path)
  for (const path of tree.unreadable.keys()) if (isBelow(path, relative)) tree.unreadable.delete(path)
  return below
}


// Whether an ancestor of `relative` is among `paths`: looked at again, it covers `relative`.
const coveredBy = (relative: string, paths: ReadonlySet<string>) => {
  for (let at = relative.lastIndexOf("/"); at > 0; at = relative.lastIndexOf("/", at - 1)) {
    if (paths.has(relative.slice(0, at))) return true
  }
  return false
}

/**
 * What is under the root now, and which skill folders must be validated again (`"all"`, or a set).
 * Walked whole when `changed` is `undefined` (or on the first scan, or when the root now resolves
 * elsewhere). Otherwise only the changed paths (relative) are looked at again, and the folders
 * among them walked; a change to a file only touches the skills enclosing it (a signatures file
 * only the skill of its folder), while a change that can add or remove a skill (a folder, a
 * `SKILL.md`) groups the files again. Files seen before keep their slot (in an incremental scan)
 * or what was read of them (in a full one).
 */
export const refresh = Effect.fnUntraced(function*(
  state: State,
  rootIndex: number,
  root: string,
  changed: ReadonlyArray<string> | undefined
) {
  const realRoot = yield* realRootOf(root)
  const previous = state.roots.get(rootIndex)
  if (changed === undefined || previous === undefined || previous.realRoot !== realRoot) {
    const last = previous?.realRoot === realRoot ? previous.files : undefined
    const files = new FoundFiles()
    // A first walk reads every file of every skill it finds, which stamps it (`readSkill`): a file
    // its listing shows as a regular file takes no system call of its own.
    const walked = yield* walk(
      realRoot,
      (relative, stamp) => seen(files, last, relative, stamp),
      "",
      false,
      last === undefined ? (relative) => void files.add(relative, undefined) : undefined,
      (folder) => files.addFolder(folder)
    )
    files.trim()
    state.counters.lookedAt += walked.files + walked.ignored.length + walked.unreadable.length + walked.folders
    const tree: Tree = {
      realRoot,
      files,
      ignored: new Map(walked.ignored.map((entry) => [entry.path, entry.reason])),
      unreadable: new Map(walked.unreadable.map((entry) => [entry.path, entry])),
      grouped: group(files),
      outcomes: previous?.realRoot === realRoot ? previous.outcomes : new Map(),
      naming: previous?.realRoot === realRoot ? previous.naming : emptyNaming()
    }
    // The plugin manifests are read on every full walk that saw their folder: a path they name
    // outside the root is said.
    if (walked.plugins) for (const left of Layout.readManifests(realRoot).refused) tree.ignored.set(left.path, left.reason)
    state.roots.set(rootIndex, tree)
    return { tree, dirty: "all" as const }
  }
  const tree = previous
  let regroup = false
  // Each changed file with its slot before and after (`undefined`: none).
  const touched: Array<{ readonly relative: string; readonly last: number | undefined; readonly now: number | undefined }> = []
  // Slots taken out of the index, released once nothing refers to them.
  const dropped: Array<number> = []
  const paths = new Set(changed)
  for (const relative of changed) {
    if (relative === "" || !isWalkedPath(relative) || coveredBy(relative, paths)) continue
    const entry = classify(realRoot, relative)
    state.counters.lookedAt++
    const wasFolder = tree.files.isFolder(relative)
    const last = tree.files.remove(relative)
    const below = forget(tree, relative)
    let now: number | undefined
    switch (entry._tag) {
      case "File":
        // A file seen before keeps its slot, and with it what was read of it.
        if (last === undefined) now = tree.files.add(relative, entry.stamp)
        else tree.files.put(relative, now = last, entry.stamp)
        break
      case "Ignored":
        tree.ignored.set(relative, entry.reason)
        break
      case "Unreadable":
        tree.unreadable.set(relative, { path: relative, reason: entry.reason, folder: false })
        break
      case "Directory": {
        // A folder named as a signatures file is hidden like any other.
        if (SkillUri.isHidden(baseName(relative)) && !Layout.leadsToContainer(relative)) break
        const walked = yield* walk(realRoot, (path, stamp) => {
          const slot = below?.get(path)
          if (slot === undefined) tree.files.add(path, stamp)
          else tree.files.put(path, slot, stamp)
        }, relative, true, undefined, (folder) => tree.files.addFolder(folder))
        state.counters.lookedAt += walked.files + walked.ignored.length + walked.unreadable.length + walked.folders
        for (const left of walked.ignored) tree.ignored.set(left.path, left.reason)
        for (const left of walked.unreadable) tree.unreadable.set(left.path, left)
        break
      }
      case "Gone":
        break
    }
    if (last !== undefined && now === undefined) dropped.push(last)
    if (below !== undefined) for (const slot of below.values()) dropped.push(slot)
    if (wasFolder || entry._tag === "Directory" || baseName(relative).toLowerCase() === "skill.md") regroup = true
    else touched.push({ relative, last, now })
  }
  if (regroup) {
    tree.grouped = group(tree.files)
    // Slots put back by a walk stay; the others are referred to no more.
    for (const slot of dropped) tree.files.release(slot)
    return { tree, dirty: "all" as const }
  }
  // Each touched file leaves, or takes its new place in, the skills enclosing it; a signatures
  // file, the skill of its folder.
  const dirty = new Set<string>()
  for (const { last, now, relative } of touched) {
    const signed = signedFolder(relative)
    if (signed !== undefined) {
      if (now === undefined) tree.grouped.signatures.delete(signed)
      else tree.grouped.signatures.set(signed, now)
      if (tree.grouped.skills.has(signed)) dirty.add(signed)
      continue
    }
    for (let at = relative.lastIndexOf("/"); ; at = relative.lastIndexOf("/", at - 1)) {
      const folder = at === -1 ? "" : relative.slice(0, at)
      const members = tree.grouped.skills.get(folder)
      if (members !== undefined) {
        const was = last === undefined ? -1 : members.indexOf(last)
        if (now === undefined) {
          if (was !== -1) members.splice(was, 1)
        } else if (was !== -1) members[was] = now
        else place(tree.files, members, folder, now)
        dirty.add(folder)
      }
      // No skill above a hidden container holds its files (see `grouping`).
      if (at <= 0 || SkillUri.isHidden(baseName(folder))) break
    }
  }
  for (const slot of dropped) tree.files.release(slot)
  return { tree, dirty }
})
