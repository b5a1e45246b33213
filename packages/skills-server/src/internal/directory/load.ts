/**
 * Loading one root: what was found under it (kept between scans, walked again whole or only where
 * a watcher saw changes), and each skill read, validated and kept as its last good version.
 */
import { Extension, Limits, Manifest, type Signing, SkillFrontmatter, SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import * as Result from "effect/Result"
import * as NodePath from "node:path"
import type * as DirectoryModel from "../../DirectoryModel.js"
import {
  InvalidSkillDirectory,
  InvalidSkills,
  SourceDirectoryError,
  UnreadableFile,
  UnreadableFolder
} from "../../DirectoryModel.js"
import { viewOf } from "../registry.js"
import { SignaturesMaxBytes } from "../../ServerLimits.js"
import { group, type Grouped, place, signedFolder } from "./grouping.js"
import { classify, realFolder, type Stamp } from "./guard.js"
import { isWalkedPath, type Unreadable, walk } from "./scan.js"
import * as Signatures from "./signatures.js"
import type * as Skill from "../../Skill.js"
import { FoundFiles } from "./found.js"
import { type Content, type Counters, readSkill, stampFound } from "./stamps.js"
import * as ServerLimits from "../../ServerLimits.js"

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
}

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

// What every skill without files on disk holds: one empty list, not one per skill.
const noDiskFiles: ReadonlyArray<Skill.DiskFile> = []

const baseName = (relative: string) => relative.slice(relative.lastIndexOf("/") + 1)

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
const refresh = Effect.fnUntraced(function*(
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
      outcomes: previous?.realRoot === realRoot ? previous.outcomes : new Map()
    }
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
        if (SkillUri.isHidden(baseName(relative))) break
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
      if (at <= 0) break
    }
  }
  for (const slot of dropped) tree.files.release(slot)
  return { tree, dirty }
})

/**
 * Stamps the files a first walk found by their listing alone that no skill read (outside every
 * skill, in a skill that could not be read): the periodic check compares stamps, and an unstamped
 * file would be seen as changed on every check.
 */
const stampUnread = Effect.fnUntraced(function*(tree: Tree) {
  const unread: Array<number> = []
  tree.files.forEach((slot) => {
    if (!tree.files.stamped(slot)) unread.push(slot)
  })
  for (let at = 0; at < unread.length; at++) {
    stampFound(tree.realRoot, tree.files, unread[at]!)
    if ((at + 1) % ServerLimits.LoadSlice.calls === 0) yield* Effect.yieldNow
  }
})

/**
 * Whether `contents` are the files `previous` was made from, one by one in the same order: the
 * same bytes held, or a file on disk with the same digest.
 */
const sameFiles = (previous: DirectoryModel.LoadedSkill, contents: ReadonlyArray<Content>) => {
  const files = previous.manifest.files
  if (files.length !== contents.length) return false
  for (let index = 0; index < contents.length; index++) {
    const content = contents[index]!
    if (files.path(index) !== content.path) return false
    if (content._tag === "InMemory" ? !files.sameBytes(index, content.bytes) : files.held(index) || files.digest(index) !== content.digest) {
      return false
    }
  }
  return true
}

// Whether two views are of the very same memory (the bytes held of a file are a new view each
// time they are asked for), or both absent.
const sameMemory = (a: Uint8Array | undefined, b: Uint8Array | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.buffer === b.buffer && a.byteOffset === b.byteOffset && a.byteLength === b.byteLength)

// The files of a manifest without the bytes of those served on demand, which their holder reads
// from disk when asked.
const withoutBytesOf = (files: Manifest.Files, disk: ReadonlyArray<Skill.DiskFile>) => {
  const located = new Set(disk.map((file) => file.path))
  return files.withoutBytes((index) => located.has(files.path(index)))
}

const utf8 = new TextDecoder()

// effect's `McpClient` reads a `SKILL.md`'s frontmatter again with its own reader and refuses the
// skill when that reading is not the listed one. The skill is still served: its bytes are the
// author's, and YAML 1.2 reads them as listed. The author hears of it once for each version.
const warningOf = (state: State, skill: DirectoryModel.LoadedSkill): DirectoryModel.Warning | undefined => {
  const { manifest } = skill
  if (state.warned.has(manifest)) return state.warned.get(manifest)
  const bytes = manifest.files.bytes(0)
  const findings = bytes === undefined ? [] : SkillFrontmatter.portability(utf8.decode(bytes), manifest.frontmatter)
  const first = findings[0]
  const warning = first === undefined ? undefined : {
    path: skill.directory === "." ? Extension.SkillFileName : `${skill.directory}/${Extension.SkillFileName}`,
    ...(first.line === undefined ? {} : { line: first.line }),
    reason: `served, but effect's McpClient refuses ${manifest.uri}, as its reader reads the frontmatter otherwise: ${
      findings.map((finding) =>
        `${finding.key === "" ? "the frontmatter" : finding.key}${finding.line === undefined ? "" : ` (line ${finding.line})`}: ` +
        `${finding.reason}; ${finding.fix}`
      ).join("; ")
    }`
  }
  state.warned.set(manifest, warning)
  return warning
}

/** One root's result: like `Loaded`, plus the folders that keep their last good version. */
export interface RootResult extends DirectoryModel.Loaded {
  readonly kept: ReadonlyArray<InvalidSkillDirectory>
}


/**
 * Loads every skill under `root`, re-reading only files whose stamp changed and reusing the
 * manifest of every skill whose bytes are all unchanged. `changed` (relative paths) limits what is
 * looked at again on disk, as a watcher reports it; `undefined` walks everything.
 */
export const loadRoot = Effect.fnUntraced(function*(
  state: State,
  rootIndex: number,
  root: string,
  options: DirectoryModel.Options,
  changed?: ReadonlyArray<string> | undefined
) {
  const scheme = options.scheme ?? "skill"
  const prefix = options.prefix ?? []
  const limits = options.limits ?? Limits.defaults
  const onDemandAbove = options.onDemandAbove ?? Infinity
  const { tree, dirty } = yield* refresh(state, rootIndex, root, changed)
  const good = state.good.get(rootIndex) ?? new Map<string, DirectoryModel.LoadedSkill>()
  state.good.set(rootIndex, good)
  // Compared with file modification times, which come from the wall clock, not from `Clock`.
  const now = Date.now()
  const { skills: folders, hints } = tree.grouped
  // A racy file may have changed without its stamp showing it: a full scan reads it again. A
  // watched scan reads it again only if an event named it, as any later write raises one.
  const named = changed === undefined ? undefined : new Set(changed)
  const recheck = (relative: string) => {
    if (named === undefined) return true
    for (let at = relative.length; at > 0; at = relative.lastIndexOf("/", at - 1)) {
      if (named.has(relative.slice(0, at))) return true
    }
    return false
  }

  // A SKILL.md at the root makes the root a skill named after its folder; every other skill then
  // sits below that name, as if the parent folder had been loaded.
  const base = folders.has("") ? [NodePath.basename(NodePath.resolve(root))] : []

  // The first entry that cannot be read below each skill folder (a signatures file aside: it is
  // its own folder's), found from each such entry up, not from each skill down; and those inside
  // no skill.
  const unreadableIn = new Map<string, Unreadable>()
  const strays: Array<Unreadable> = []
  for (const entry of tree.unreadable.values()) {
    if (signedFolder(entry.path) !== undefined) continue
    let enclosed = false
    for (let at = entry.path.lastIndexOf("/"); ; at = entry.path.lastIndexOf("/", at - 1)) {
      const folder = at === -1 ? "" : entry.path.slice(0, at)
      if (folders.has(folder)) {
        enclosed = true
        if (!unreadableIn.has(folder)) unreadableIn.set(folder, entry)
      }
      if (at <= 0) break
    }
    if (!enclosed) strays.push(entry)
  }

  const loadSkill = (
    folder: string,
    members: ReadonlyArray<number>
  ): Result.Result<DirectoryModel.LoadedSkill, DirectoryModel.SkillProblem> => {
    // `concat` makes an array of exactly its length; a spread grows one by pushes (17 slots).
    // The folder's names as the loader keeps them (shared, not slices of the folder's path): a
    // skill's folder holds its SKILL.md, so the loader knows it.
    const skillPath = prefix.concat(base, tree.files.segments(folder)!)
    const uri = SkillUri.skillMd(scheme, skillPath)
    if (Result.isFailure(uri)) return Result.fail(uri.failure)
    // A skill is served whole or not at all: a part of it that cannot be read keeps it out.
    const unreadable = unreadableIn.get(folder)
    if (unreadable !== undefined) {
      return Result.fail(
        unreadable.folder
          ? new UnreadableFolder({ path: unreadable.path, reason: unreadable.reason })
          : new UnreadableFile({ path: unreadable.path, reason: unreadable.reason })
      )
    }
    const folderBase = folder === "" ? "" : `${folder}/`
    const invalid = (problems: Manifest.InvalidSkill["problems"]) => new Manifest.InvalidSkill({ uri: uri.success, problems })
    // A signatures file that is there but cannot be read (a pipe, a link out of the root) is not
    // taken for no signatures.
    const signaturesPath = `${folderBase}${Signatures.FileName}`
    const refused = tree.ignored.get(signaturesPath) ?? tree.unreadable.get(signaturesPath)?.reason
    if (refused !== undefined) return Result.fail(invalid([{ path: Signatures.FileName, reason: `cannot read: ${refused}` }]))
    const signaturesFile = tree.grouped.signatures.get(folder)
    const files = signaturesFile === undefined ? members : [...members, signaturesFile]
    // Refuse an oversized skill or signatures file from the sizes, before reading gigabytes into
    // memory; again before every try, as a file may have grown.
    const admit = (sizeOf: (index: number) => number) => {
      let size = 0
      for (let index = 0; index < members.length; index++) size += sizeOf(index)
      const problems: Array<Manifest.InvalidSkill["problems"][number]> = Limits.violations(members.length, size, limits)
        .map((violation) => ({ reason: `${Limits.describe(violation)} (R16)` }))
      const signaturesSize = signaturesFile === undefined ? 0 : sizeOf(members.length)
      if (signaturesSize > SignaturesMaxBytes) {
        problems.push({ path: Signatures.FileName, reason: `${signaturesSize} bytes, more than the ${SignaturesMaxBytes} allowed` })
      }
      return problems.length === 0 ? undefined : invalid(problems)
    }
    // The manifest's table, in the buffer the skill's files are read into.
    const table = Manifest.tableBytes(members.length)
    const read = (everything: boolean) => {
      const got = readSkill(tree.realRoot, state.counters, tree.files, files, folderBase, now, recheck, onDemandAbove, everything, admit, table)
      if (got instanceof UnreadableFile || got instanceof Manifest.InvalidSkill) return got
      const { contents } = got
      const signatures = signaturesFile === undefined ? undefined : contents[members.length]
      return {
        contents: signatures === undefined ? contents : contents.slice(0, members.length),
        signatures: signatures?._tag === "InMemory" ? signatures.bytes : undefined,
        table: got.table
      }
    }
    let got = read(false)
    if (got instanceof UnreadableFile || got instanceof Manifest.InvalidSkill) return Result.fail(got)
    const previous = good.get(folder)
    const sameSkill = previous !== undefined && previous.manifest.uri === uri.success
    // The very bytes the last good version's signatures came from: nothing to decode again.
    if (sameSkill && sameFiles(previous, got.contents) && sameMemory(state.signedWith.get(previous), got.signatures)) {
      return Result.succeed(previous)
    }
    let signatures: ReadonlyArray<Signing.Signature> = []
    if (got.signatures !== undefined) {
      const decoded = Signatures.decode(got.signatures)
      if (Result.isFailure(decoded)) return Result.fail(invalid([{ path: Signatures.FileName, reason: decoded.failure }]))
      signatures = decoded.success
    }
    const signedWith = got.signatures
    const signed = (skill: Omit<DirectoryModel.LoadedSkill, "signatures">): DirectoryModel.LoadedSkill => {
      const loaded = signatures.length === 0 ? skill : { ...skill, signatures }
      // Only where there were any: an unsigned skill's absence is what the map answers anyway.
      if (signedWith !== undefined) state.signedWith.set(loaded, signedWith)
      return loaded
    }
    if (sameSkill && sameFiles(previous, got.contents)) {
      const { signatures: _, ...unsigned } = previous
      return Result.succeed(signed(unsigned))
    }
    // A new manifest needs every file's bytes once: files on disk are read again.
    if (got.contents.some((content) => content._tag === "OnDisk")) {
      got = read(true)
      if (got instanceof UnreadableFile || got instanceof Manifest.InvalidSkill) return Result.fail(got)
    }
    // A file whose bytes are those of the last good version keeps its digest.
    const before = previous?.manifest.files
    const knownDigest = (path: string, bytes: Uint8Array) => {
      const index = before === undefined ? -1 : before.indexOf(path)
      return index !== -1 && before!.sameBytes(index, bytes) ? before!.digest(index) : undefined
    }
    const inputs: Array<Manifest.FileInput> = []
    const disk: Array<Skill.DiskFile> = []
    for (const content of got.contents) {
      switch (content._tag) {
        case "InMemory": {
          const digest = knownDigest(content.path, content.bytes)
          if (digest === undefined) {
            state.counters.hashedFiles++
            state.counters.hashedBytes += content.bytes.byteLength
          }
          inputs.push(digest === undefined ? content : { ...content, digest })
          break
        }
        case "Transient":
          inputs.push(content)
          disk.push({ path: content.path, location: content.location, size: content.bytes.byteLength, digest: content.digest })
          break
        case "OnDisk":
          // `read(true)` reads every file, so this is only a contract between the two modules.
          return Result.fail(new UnreadableFile({ path: `${folderBase}${content.path}`, reason: "was not read again" }))
      }
    }
    return Result.map(
      Manifest.make({ uri: uri.success, files: inputs, limits, table: got.table }),
      (manifest) => {
        const view = viewOf(manifest)
        return signed({
          directory: folder === "" ? "." : folder,
          path: skillPath,
          // Without its body (a slice of the decoded SKILL.md), and without the bytes of files on
          // disk, so that the snapshot does not hold them either.
          manifest: disk.length === 0
            ? view
            : { ...view, files: withoutBytesOf(view.files, disk) },
          onDisk: disk.length === 0 ? noDiskFiles : disk
        })
      }
    )
  }

  let done = 0
  for (const folder of dirty === "all" ? folders.keys() : dirty) {
    const members = folders.get(folder)
    if (members === undefined) continue
    const outcome = loadSkill(folder, members)
    tree.outcomes.set(folder, outcome)
    // Made here, where the loop yields, rather than for every new skill at once below.
    if (Result.isSuccess(outcome)) warningOf(state, outcome.success)
    if (++done % ServerLimits.LoadSlice.skills === 0) yield* Effect.yieldNow
  }
  if (dirty === "all") {
    yield* stampUnread(tree)
    // A folder that is gone is no longer a skill: its outcome and last good version go with it.
    for (const folder of tree.outcomes.keys()) if (!folders.has(folder)) tree.outcomes.delete(folder)
    for (const folder of good.keys()) if (!folders.has(folder)) good.delete(folder)
  }

  const skills: Array<DirectoryModel.LoadedSkill> = []
  const skipped: Array<InvalidSkillDirectory> = []
  const kept: Array<{ readonly skill: DirectoryModel.LoadedSkill; readonly problem: InvalidSkillDirectory }> = []
  for (const [folder, result] of tree.outcomes) {
    if (Result.isSuccess(result)) {
      skills.push(result.success)
      good.set(folder, result.success)
      continue
    }
    const problem = new InvalidSkillDirectory({ directory: folder === "" ? "." : folder, error: result.failure })
    const last = good.get(folder)
    if (last === undefined) skipped.push(problem)
    else kept.push({ skill: last, problem })
  }

  if (options.strict === true && skipped.length + kept.length > 0) {
    return yield* new InvalidSkills({ root, invalid: [...skipped, ...kept.map((entry) => entry.problem)] })
  }
  for (const entry of kept) skills.push(entry.skill)
  skills.sort(Order.mapInput(Order.String, (skill: DirectoryModel.LoadedSkill) => skill.manifest.uri))
  skipped.sort(Order.mapInput(Order.String, (problem: InvalidSkillDirectory) => problem.directory))
  // A signatures file left out is its skill's problem (or, beside no skill, nobody's), and so is
  // what cannot be read inside a skill; what cannot be read elsewhere is said here.
  const ignored: Array<DirectoryModel.Ignored> = []
  for (const [path, reason] of tree.ignored) if (signedFolder(path) === undefined) ignored.push({ path, reason })
  for (const entry of strays) {
    ignored.push({ path: entry.path, reason: entry.folder ? `cannot list the folder: ${entry.reason}` : entry.reason })
  }
  ignored.push(...hints)
  ignored.sort(Order.mapInput(Order.String, (entry: { readonly path: string }) => entry.path))
  const warnings: Array<DirectoryModel.Warning> = []
  for (const skill of skills) {
    const warning = warningOf(state, skill)
    if (warning !== undefined) warnings.push(warning)
  }
  return { skills, skipped, ignored, warnings, kept: kept.map((entry) => entry.problem) } satisfies RootResult
})
