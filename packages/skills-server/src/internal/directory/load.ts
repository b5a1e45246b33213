/**
 * Loading one root: each skill of what was found under it (`refresh`) read, named (`naming`),
 * validated and kept as its last good version.
 */
import { Extension, Limits, Manifest, type Signing, SkillFrontmatter, SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Order from "effect/Order"
import * as Result from "effect/Result"
import * as NodePath from "node:path"
import * as DirectoryModel from "../../DirectoryModel.js"
import { InvalidSkillDirectory, InvalidSkills, UnreadableFile, UnreadableFolder } from "../../DirectoryModel.js"
import { viewOf } from "../registry.js"
import { SignaturesMaxBytes } from "../../ServerLimits.js"
import { signedFolder } from "./grouping.js"
import type { Unreadable } from "./scan.js"
import * as Signatures from "./signatures.js"
import type * as Skill from "../../Skill.js"
import * as Naming from "./naming.js"
import { refresh, type State, type Tree } from "./refresh.js"
import * as Repair from "./repair.js"
import { type Content, readSkill, stampFound } from "./stamps.js"
import * as ServerLimits from "../../ServerLimits.js"

// What every skill without files on disk holds: one empty list, not one per skill.
const noDiskFiles: ReadonlyArray<Skill.DiskFile> = []


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
    const natural = Naming.pathOf(base, folder, tree.files.segments(folder)!)
    let skillPath = prefix.concat(natural)
    let uri = SkillUri.skillMd(scheme, skillPath)
    if (Result.isFailure(uri)) return Result.fail(uri.failure)
    const folderUri = uri.success
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
    const invalid = (problems: Manifest.InvalidSkill["problems"]) => new Manifest.InvalidSkill({ uri: folderUri, problems })
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
    // The name its SKILL.md gives, read leniently: the skill is served under it, and with the
    // frontmatter written back where it was repaired.
    const skillMd = got.contents[0]
    const reading = options.lenient === true && skillMd?._tag === "InMemory"
      ? Naming.readingOf(tree.naming.readings.get(folder), skillMd.bytes, Repair.read)
      : undefined
    if (reading === undefined) tree.naming.readings.delete(folder)
    else tree.naming.readings.set(folder, reading)
    const lenient = reading?.reading._tag === "Refused" ? undefined : reading?.reading
    const placed: Array<Repair.Placed> = lenient?._tag === "Rewritten" ? [...lenient.repairs] : []
    if (placed.length > 0 && signaturesFile !== undefined) {
      return Result.fail(invalid([{
        path: Extension.SkillFileName,
        reason: `signed, so it is not rewritten: ${placed.map((entry) => DirectoryModel.describeRepair(entry.repair)).join("; ")}; ` +
          "repair it and sign it again"
      }]))
    }
    // Under its name below its folder, when that is not the folder's; then, when another folder
    // would have that URI too, each under a segment of its own.
    const renamed = lenient !== undefined && lenient.name !== natural.at(-1)
    const alone = renamed ? natural.concat([lenient.name]) : natural
    if (renamed) placed.unshift({ repair: { _tag: "Renamed", folder: folder === "" ? "." : folder, name: lenient.name } })
    if (renamed) {
      uri = SkillUri.skillMd(scheme, skillPath = prefix.concat(alone))
      if (Result.isFailure(uri)) return Result.fail(uri.failure)
    }
    tree.naming.alone.set(folder, uri.success)
    const sharing = tree.naming.shared.get(folder)
    if (sharing !== undefined) {
      placed.push({ repair: { _tag: "SharedUri", uri: uri.success, with: sharing.map((other) => other === "" ? "." : other) } })
      uri = SkillUri.skillMd(scheme, skillPath = prefix.concat(Naming.sharedPath(alone, folder)))
      if (Result.isFailure(uri)) return Result.fail(uri.failure)
    }
    if (placed.length === 0) tree.naming.repairs.delete(folder)
    else tree.naming.repairs.set(folder, placed)
    if (reading?.bytes !== undefined && skillMd?._tag === "InMemory") {
      got = { ...got, contents: [{ ...skillMd, bytes: reading.bytes }, ...got.contents.slice(1)] }
    }
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
    for (const kept of [tree.naming.alone, tree.naming.readings, tree.naming.repairs]) {
      for (const folder of kept.keys()) if (!folders.has(folder)) kept.delete(folder)
    }
  }
  // Two folders served under one URI both get their own; a folder whose sharing changed (one of
  // the two went away, or a third came) is named again.
  const served = new Map<string, string>()
  for (const [folder, uri] of tree.naming.alone) {
    const outcome = tree.outcomes.get(folder)
    if ((outcome !== undefined && Result.isSuccess(outcome)) || good.has(folder)) served.set(folder, uri)
  }
  const shared = Naming.shared(served)
  const before = tree.naming.shared
  tree.naming.shared = shared
  for (const folder of new Set([...before.keys(), ...shared.keys()])) {
    const members = folders.get(folder)
    if (members === undefined || before.get(folder)?.join("\n") === shared.get(folder)?.join("\n")) continue
    const outcome = loadSkill(folder, members)
    tree.outcomes.set(folder, outcome)
    if (Result.isSuccess(outcome)) warningOf(state, outcome.success)
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
  const repairs: Array<DirectoryModel.Repaired> = []
  for (const skill of skills) {
    const warning = warningOf(state, skill)
    if (warning !== undefined) warnings.push(warning)
    const folder = skill.directory === "." ? "" : skill.directory
    const path = folder === "" ? Extension.SkillFileName : `${folder}/${Extension.SkillFileName}`
    for (const { line, repair } of tree.naming.repairs.get(folder) ?? []) {
      repairs.push({ path, ...(line === undefined ? {} : { line }), uri: skill.manifest.uri, repair })
    }
  }
  return { skills, skipped, ignored, warnings, repairs, kept: kept.map((entry) => entry.problem) } satisfies RootResult
})
