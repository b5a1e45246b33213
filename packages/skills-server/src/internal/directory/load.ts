/**
 * Loading one root: what was found under it (kept between scans, walked again whole or only where
 * a watcher saw changes), and each skill read, validated and kept as its last good version.
 */
import { Limits, Manifest, SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type * as DirectoryModel from "../../DirectoryModel.js"
import { InvalidSkillDirectory, InvalidSkills, SourceDirectoryError, UnreadableFile } from "../../DirectoryModel.js"
import { group, type Grouped } from "./grouping.js"
import { classify, under, walk } from "./scan.js"
import * as Signatures from "./signatures.js"
import type * as Skill from "../../Skill.js"
import { type Cached, type Content, type Counters, describeError, type Found, readSkill } from "./stamps.js"

/**
 * What the last scan of one root found: files by relative path, entries left out, folders, the
 * skills they group into, and each skill folder's last outcome.
 */
export interface Tree {
  readonly realRoot: string
  readonly files: Map<string, Found>
  readonly ignored: Map<string, string>
  readonly folders: Set<string>
  grouped: Grouped
  readonly outcomes: Map<string, Result.Result<DirectoryModel.LoadedSkill, DirectoryModel.SkillProblem>>
}

/** Everything a source keeps between scans. */
export interface State {
  /** Bytes last read, by real path. */
  readonly cache: Map<string, Cached>
  readonly roots: Map<number, Tree>
  /** The last valid version of each skill folder, by root index and folder. */
  readonly good: Map<string, DirectoryModel.LoadedSkill>
  readonly counters: Counters & { scans: number; lookedAt: number }
}

export const emptyState = (): State => ({
  cache: new Map(),
  roots: new Map(),
  good: new Map(),
  counters: { scans: 0, lookedAt: 0, readFiles: 0, readBytes: 0, hashedFiles: 0, hashedBytes: 0 }
})

/** The real path of a root, which must be a folder. */
export const realRootOf = (root: string) =>
  Effect.try({
    try: () => {
      const real = NodeFs.realpathSync(NodePath.resolve(root))
      if (!NodeFs.statSync(real).isDirectory()) throw Object.assign(new Error("not a folder"), { code: "ENOTDIR" })
      return real
    },
    catch: (error) => new SourceDirectoryError({ path: root, reason: describeError(error) })
  })

const isBelow = (path: string, folder: string) => folder === "" || path.startsWith(`${folder}/`)

// Forgets what was under `relative` (a folder that went away or changed).
const forgetBelow = (state: State, found: Tree, relative: string) => {
  for (const [path, file] of found.files) {
    if (!isBelow(path, relative)) continue
    found.files.delete(path)
    state.cache.delete(file.absolute)
  }
  for (const path of found.ignored.keys()) if (isBelow(path, relative)) found.ignored.delete(path)
  for (const folder of found.folders) if (folder === relative || isBelow(folder, relative)) found.folders.delete(folder)
}

const forget = (state: State, found: Tree, relative: string) => {
  const file = found.files.get(relative)
  if (file !== undefined) state.cache.delete(file.absolute)
  found.files.delete(relative)
  found.ignored.delete(relative)
  if (found.folders.has(relative)) forgetBelow(state, found, relative)
}

const baseName = (relative: string) => relative.slice(relative.lastIndexOf("/") + 1)

/**
 * What is under the root now, and which skill folders must be validated again (`"all"`, or a set).
 * Walked whole when `changed` is `undefined` (or on the first scan, or when the root now resolves
 * elsewhere). Otherwise only the changed paths (relative) are looked at again, and the folders
 * among them walked; a change to a file only touches the skills enclosing it, while a change that
 * can add or remove a skill (a folder, a `SKILL.md`) groups the files again.
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
    const walked = yield* walk(realRoot)
    state.counters.lookedAt += walked.files.length + walked.ignored.length + walked.folders.length
    const files = new Map(walked.files.map((file) => [file.relative, file]))
    const tree: Tree = {
      realRoot,
      files,
      ignored: new Map(walked.ignored.map((entry) => [entry.path, entry.reason])),
      folders: new Set(walked.folders),
      grouped: group(files),
      outcomes: previous?.realRoot === realRoot ? previous.outcomes : new Map()
    }
    // Files that are gone leave the cache.
    const present = new Set(walked.files.map((file) => file.absolute))
    const inside = realRoot + NodePath.sep
    for (const absolute of state.cache.keys()) {
      if (absolute.startsWith(inside) && !present.has(absolute)) state.cache.delete(absolute)
    }
    state.roots.set(rootIndex, tree)
    return { tree, dirty: "all" as const }
  }
  const tree = previous
  let regroup = false
  const touched: Array<{ readonly relative: string; readonly found: Found | undefined }> = []
  // Skill folders whose signatures file changed: validated again, their files as they are.
  const resigned: Array<string> = []
  for (const relative of changed) {
    if (baseName(relative) === Signatures.FileName) {
      const folder = relative.slice(0, Math.max(0, relative.lastIndexOf("/")))
      if (!folder.split("/").some(SkillUri.isHidden)) resigned.push(folder)
      continue
    }
    if (relative === "" || relative.split("/").some(SkillUri.isHidden)) continue
    const entry = classify(realRoot, relative)
    state.counters.lookedAt++
    const wasFolder = tree.folders.has(relative)
    forget(state, tree, relative)
    if (entry._tag === "File") tree.files.set(relative, entry.found)
    else if (entry._tag === "Ignored") tree.ignored.set(relative, entry.reason)
    else if (entry._tag === "Directory") {
      const walked = yield* walk(realRoot, relative, true)
      state.counters.lookedAt += walked.files.length + walked.ignored.length + walked.folders.length
      for (const file of walked.files) tree.files.set(file.relative, file)
      for (const left of walked.ignored) tree.ignored.set(left.path, left.reason)
      for (const folder of walked.folders) tree.folders.add(folder)
    }
    if (wasFolder || entry._tag === "Directory" || baseName(relative).toLowerCase() === "skill.md") regroup = true
    else touched.push({ relative, found: entry._tag === "File" ? entry.found : undefined })
  }
  if (regroup) {
    tree.grouped = group(tree.files)
    return { tree, dirty: "all" as const }
  }
  // Each touched file leaves, or takes its new place in, the skills enclosing it.
  const dirty = new Set(resigned.filter((folder) => tree.grouped.skills.has(folder)))
  for (const { relative, found } of touched) {
    for (let at = relative.lastIndexOf("/"); ; at = relative.lastIndexOf("/", at - 1)) {
      const folder = at === -1 ? "" : relative.slice(0, at)
      const members = tree.grouped.skills.get(folder)
      if (members !== undefined) {
        const kept = members.filter((file) => file.relative !== relative)
        if (found !== undefined) kept.push(found)
        tree.grouped.skills.set(folder, kept)
        dirty.add(folder)
      }
      if (at <= 0) break
    }
  }
  return { tree, dirty }
})

/** One root's result: like `Loaded`, plus the folders that keep their last good version. */
export interface RootResult extends DirectoryModel.Loaded {
  readonly kept: ReadonlyArray<InvalidSkillDirectory>
}

// Skills validated between two yields to the scheduler.
const SkillsPerYield = 64

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
  // Compared with file modification times, which come from the wall clock, not from `Clock`.
  const now = Date.now()
  const { skills: folders, hints } = tree.grouped
  // A racy file may have changed without its stamp showing it: a full scan reads it again. A
  // watched scan reads it again only if an event named it, as any later write raises one.
  const named = changed === undefined ? undefined : new Set(changed)
  const recheck = (file: Found) => {
    if (named === undefined) return true
    for (let at = file.relative.length; at > 0; at = file.relative.lastIndexOf("/", at - 1)) {
      if (named.has(file.relative.slice(0, at))) return true
    }
    return false
  }

  // A SKILL.md at the root makes the root a skill named after its folder; every other skill then
  // sits below that name, as if the parent folder had been loaded.
  const base = folders.has("") ? [NodePath.basename(NodePath.resolve(root))] : []

  const loadSkill = (
    folder: string,
    key: string,
    members: ReadonlyArray<Found>
  ): Result.Result<DirectoryModel.LoadedSkill, DirectoryModel.SkillProblem> => {
    const skillPath = [...prefix, ...base, ...(folder === "" ? [] : folder.split("/"))]
    const uri = SkillUri.skillMd(scheme, skillPath)
    if (Result.isFailure(uri)) return Result.fail(uri.failure)
    // Refuse an oversized skill from its file sizes, before reading gigabytes into memory.
    const tooLarge = Limits.violations(members.length, members.reduce((sum, file) => sum + file.stamp.size, 0), limits)
    if (tooLarge.length > 0) {
      return Result.fail(
        new Manifest.InvalidSkill({
          uri: uri.success,
          problems: tooLarge.map((violation) => ({ reason: `${Limits.describe(violation)} (R16)` }))
        })
      )
    }
    const folderBase = folder === "" ? "" : `${folder}/`
    const read = (everything: boolean) =>
      readSkill(state.cache, state.counters, members, folderBase, now, recheck, onDemandAbove, everything)
    let contents = read(false)
    if (contents instanceof UnreadableFile) return Result.fail(contents)
    const signatures = Signatures.read(under(tree.realRoot, folder))
    if (Result.isFailure(signatures)) {
      return Result.fail(
        new Manifest.InvalidSkill({ uri: uri.success, problems: [{ path: Signatures.FileName, reason: signatures.failure }] })
      )
    }
    const signed = <A extends object>(skill: A) => signatures.success.length === 0 ? skill : { ...skill, signatures: signatures.success }
    const previous = state.good.get(key)
    // A file whose bytes are the very buffer of the last good version keeps its digest; a file on
    // disk is the same when its digest is.
    const known = new Map(previous?.manifest.files.map((file) => [file.path, file.digest]))
    const held = new Map(previous?.files.map((file) => [file.path, file.bytes]))
    const onDisk = new Set(previous?.onDisk.map((file) => file.path))
    const unchanged = (content: Content) =>
      content._tag === "InMemory"
        ? held.get(content.path) === content.bytes
        : onDisk.has(content.path) && known.get(content.path) === content.digest
    if (
      previous !== undefined && previous.manifest.uri === uri.success &&
      previous.manifest.files.length === contents.length && contents.every(unchanged)
    ) {
      const { signatures: _, ...unsigned } = previous
      return Result.succeed(
        JSON.stringify(previous.signatures ?? []) === JSON.stringify(signatures.success) ? previous : signed(unsigned)
      )
    }
    // A new manifest needs every file's bytes once: files on disk are read again.
    if (contents.some((content) => content._tag === "OnDisk")) {
      contents = read(true)
      if (contents instanceof UnreadableFile) return Result.fail(contents)
    }
    const inputs: Array<Manifest.FileInput> = []
    const disk: Array<Skill.DiskFile> = []
    for (const content of contents) {
      switch (content._tag) {
        case "InMemory": {
          const digest = held.get(content.path) === content.bytes ? known.get(content.path) : undefined
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
    const located = new Set(disk.map((file) => file.path))
    return Result.map(
      Manifest.make({ uri: uri.success, files: inputs, limits }),
      (manifest): DirectoryModel.LoadedSkill => signed({
        directory: folder === "" ? "." : folder,
        path: skillPath,
        files: manifest.files.filter((file) => !located.has(file.path)),
        onDisk: disk,
        // Without the bytes of files on disk, so that the snapshot does not hold them either.
        manifest: disk.length === 0 ? manifest : {
          ...manifest,
          files: manifest.files.map((file) =>
            located.has(file.path) ? { uri: file.uri, path: file.path, digest: file.digest, size: file.size } : file
          )
        }
      })
    )
  }

  let done = 0
  for (const folder of dirty === "all" ? folders.keys() : dirty) {
    const members = folders.get(folder)
    if (members === undefined) continue
    const result = loadSkill(folder, `${rootIndex}\n${folder === "" ? "." : folder}`, members)
    tree.outcomes.set(folder, result)
    if (++done % SkillsPerYield === 0) yield* Effect.yieldNow
  }
  if (dirty === "all") {
    // A folder that is gone is no longer a skill: its outcome and last good version go with it.
    for (const folder of tree.outcomes.keys()) if (!folders.has(folder)) tree.outcomes.delete(folder)
    for (const key of state.good.keys()) {
      const [index, directory] = key.split("\n") as [string, string]
      if (Number(index) === rootIndex && !folders.has(directory === "." ? "" : directory)) state.good.delete(key)
    }
  }

  const skills: Array<DirectoryModel.LoadedSkill> = []
  const skipped: Array<InvalidSkillDirectory> = []
  const kept: Array<{ readonly skill: DirectoryModel.LoadedSkill; readonly problem: InvalidSkillDirectory }> = []
  for (const [folder, result] of tree.outcomes) {
    const directory = folder === "" ? "." : folder
    const key = `${rootIndex}\n${directory}`
    if (Result.isSuccess(result)) {
      skills.push(result.success)
      state.good.set(key, result.success)
      continue
    }
    const problem = new InvalidSkillDirectory({ directory, error: result.failure })
    const last = state.good.get(key)
    if (last === undefined) skipped.push(problem)
    else kept.push({ skill: last, problem })
  }

  if (options.strict === true && skipped.length + kept.length > 0) {
    return yield* new InvalidSkills({ root, invalid: [...skipped, ...kept.map((entry) => entry.problem)] })
  }
  for (const entry of kept) skills.push(entry.skill)
  skills.sort((a, b) => byCodeUnit(a.manifest.skill.uri, b.manifest.skill.uri))
  skipped.sort((a, b) => byCodeUnit(a.directory, b.directory))
  const ignored = [...tree.ignored].map(([path, reason]) => ({ path, reason }))
  ignored.push(...hints)
  ignored.sort((a, b) => byCodeUnit(a.path, b.path))
  return { skills, skipped, ignored, kept: kept.map((entry) => entry.problem) } satisfies RootResult
})

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
