/**
 * A source over several roots: one scan at a time over shared state, URI collisions between roots,
 * problems, left-out entries and warnings reported once each, and the stamp check a watcher runs.
 */
import { Manifest, McpTelemetry } from "@mcp-skills/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import * as NodePath from "node:path"
import type * as DirectoryModel from "../../DirectoryModel.js"
import * as Skill from "../../Skill.js"
import { describeProblem, describeRepaired, UriCollision } from "../../DirectoryModel.js"
import { loadRoot, type RootResult } from "./load.js"
import { emptyState, realRootOf } from "./refresh.js"
import { walk } from "./scan.js"
import { FoundFiles } from "./found.js"

/**
 * The absolute paths (under each root as given, resolved) a watcher saw change since the last scan:
 * a scan looks only at those. Unset, a scan walks everything.
 */
export class ChangedPaths extends Context.Reference<ReadonlySet<string> | undefined>(
  "@mcp-skills/server/DirectorySource/ChangedPaths",
  { defaultValue: () => undefined }
) {}

export const make = Effect.fnUntraced(function*(
  roots: ReadonlyArray<DirectoryModel.Root>,
  options: { readonly log?: ((line: string) => Effect.Effect<void>) | undefined } = {}
) {
  const state = emptyState()
  const resolved = roots.map((root) => NodePath.resolve(root.path))
  let reported = new Map<string, string>()
  let reportedIgnored = new Map<string, string>()
  let reportedWarnings = new Map<string, string>()
  let reportedRepairs = new Map<string, string>()
  const lock = yield* Semaphore.make(1)
  const defined = new WeakMap<DirectoryModel.LoadedSkill, Skill.Static>()
  const log = options.log ?? ((line: string) => Effect.logWarning(line))

  // The changed paths that fall under root `index`, relative to it and `/`-separated.
  const changedUnder = (changed: ReadonlySet<string> | undefined, index: number) => {
    if (changed === undefined) return undefined
    const out: Array<string> = []
    for (const path of changed) {
      const relative = NodePath.relative(resolved[index]!, path)
      if (relative.startsWith("..") || NodePath.isAbsolute(relative)) continue
      out.push(relative.split(NodePath.sep).join("/"))
    }
    return out
  }

  // The definitions of the last scan, by URI: what `changes` is relative to.
  let last = new Map<string, Skill.Static>()

  const scanWith = (changed: ReadonlySet<string> | undefined) =>
    Effect.gen(function*() {
      const results: Array<{ readonly root: DirectoryModel.Root; readonly loaded: RootResult }> = []
      for (const [index, root] of roots.entries()) {
        results.push({ root, loaded: yield* loadRoot(state, index, root.path, root, changedUnder(changed, index)) })
      }
      state.counters.scans++
      const owners = new Map<string, string>()
      const definitions: Array<Skill.Static> = []
      const byUri = new Map<string, Skill.Static>()
      for (const { root, loaded } of results) {
        for (const skill of loaded.skills) {
          const place = `${root.path}/${skill.directory}`
          const other = owners.get(skill.manifest.uri)
          if (other !== undefined) return yield* new UriCollision({ uri: skill.manifest.uri, first: other, second: place })
          owners.set(skill.manifest.uri, place)
          // An unchanged skill is the same object scan after scan, and keeps its definition.
          let definition = defined.get(skill)
          if (definition === undefined) {
            definition = Skill.fromFiles(skill, { scheme: root.scheme, cacheHint: root.cacheHint })
            defined.set(skill, definition)
          }
          definitions.push(definition)
          byUri.set(skill.manifest.uri, definition)
        }
      }
      const problems = new Map<string, string>()
      const ignored = new Map<string, string>()
      const warnings = new Map<string, string>()
      const repairs = new Map<string, string>()
      for (const [index, { loaded }] of results.entries()) {
        const where = roots.length === 1 ? "" : `${roots[index]!.path}: `
        for (const invalid of loaded.skipped) {
          problems.set(`${index}\n${invalid.directory}`, `${where}${describeProblem(invalid)}; not served`)
        }
        for (const invalid of loaded.kept) {
          problems.set(`${index}\n${invalid.directory}`, `${where}${describeProblem(invalid)}; still serving the last good version`)
        }
        const folder = roots.length === 1 ? "" : `${roots[index]!.path}/`
        for (const entry of loaded.ignored) ignored.set(`${index}\n${entry.path}`, `ignored ${folder}${entry.path}: ${entry.reason}`)
        for (const warning of loaded.warnings) {
          warnings.set(`${index}\n${warning.path}`, Manifest.describe({ ...warning, path: `${folder}${warning.path}` }))
        }
        for (const repaired of loaded.repairs) {
          repairs.set(
            `${index}\n${repaired.path}\n${repaired.repair._tag}\n${repaired.line}`,
            `repaired ${describeRepaired({ ...repaired, path: `${folder}${repaired.path}` })}`
          )
        }
      }
      const newProblems = [...problems].filter(([key, line]) => reported.get(key) !== line).map(([, line]) => line)
      const fixed = [...reported.keys()].filter((key) => !problems.has(key)).map((key) => {
        const [index, directory] = key.split("\n") as [string, string]
        return roots.length === 1 ? directory : `${roots[Number(index)]!.path}/${directory}`
      })
      const newIgnored = [...ignored].filter(([key, line]) => reportedIgnored.get(key) !== line).map(([, line]) => line)
      const newWarnings = [...warnings].filter(([key, line]) => reportedWarnings.get(key) !== line).map(([, line]) => line)
      reported = problems
      reportedIgnored = ignored
      const newRepairs = [...repairs].filter(([key, line]) => reportedRepairs.get(key) !== line).map(([, line]) => line)
      reportedWarnings = warnings
      reportedRepairs = repairs
      const previous = last
      last = byUri
      return {
        byUri,
        previous,
        roots: results.map(({ root, loaded }) => ({
          root,
          loaded: {
            skills: loaded.skills,
            skipped: loaded.skipped,
            ignored: loaded.ignored,
            warnings: loaded.warnings,
            repairs: loaded.repairs
          }
        })),
        definitions,
        newProblems,
        fixed,
        newIgnored,
        newWarnings,
        newRepairs
      } satisfies DirectoryModel.Scan & {
        readonly byUri: ReadonlyMap<string, Skill.Static>
        readonly previous: ReadonlyMap<string, Skill.Static>
      }
    }).pipe(
      // One scan at a time: what was last read of each file and the last good versions are shared.
      Semaphore.withPermits(lock, 1),
      McpTelemetry.span("mcp_skills.scan", { "mcp_skills.scan.roots": roots.length })
    )

  const check = Effect.gen(function*() {
    const missed: Array<string> = []
    const racy: Array<string> = []
    for (const [index, root] of roots.entries()) {
      const realRoot = yield* realRootOf(root.path)
      const files = state.roots.get(index)?.files ?? new FoundFiles()
      // Reported under the root as given, as a watcher names them.
      const named = (relative: string) => NodePath.join(resolved[index]!, relative)
      // The files also known from the last scan: when they are as many as it found, none went away.
      const known: Array<string> = []
      const walked = yield* walk(realRoot, (relative, stamp) => {
        const last = files.slot(relative)
        if (last !== undefined) known.push(relative)
        if (last === undefined || !files.sameStamp(last, stamp)) missed.push(named(relative))
        else if (files.trust(last) === "Racy" || files.trust(last) === "Suspect") racy.push(named(relative))
      }, "", false, undefined, undefined, false)
      // What could not be read, and what can be again.
      const unreadable = state.roots.get(index)?.unreadable ?? new Map()
      for (const entry of walked.unreadable) if (!unreadable.has(entry.path)) missed.push(named(entry.path))
      if (unreadable.size > 0) {
        const still = new Set(walked.unreadable.map((entry) => entry.path))
        for (const path of unreadable.keys()) if (!still.has(path)) missed.push(named(path))
      }
      if (known.length === files.count) continue
      const still = new Set(known)
      files.forEach((slot) => {
        const relative = files.relative(slot)
        if (!still.has(relative)) missed.push(named(relative))
      })
    }
    return { missed, racy }
  }).pipe(Semaphore.withPermits(lock, 1))

  const handOut = Effect.gen(function*() {
    const result = yield* scanWith(yield* ChangedPaths)
    for (const line of result.newProblems) yield* log(line)
    for (const directory of result.fixed) yield* log(`${directory}: valid again, serving the new version`)
    for (const line of result.newIgnored) yield* log(line)
    for (const line of result.newWarnings) yield* log(line)
    for (const line of result.newRepairs) yield* log(line)
    return result
  })

  return {
    roots,
    scan: scanWith(undefined),
    definitions: Effect.map(handOut, (result) => result.definitions),
    changes: Effect.map(handOut, ({ previous, ...result }): DirectoryModel.Changes => {
      // An unchanged skill is the same definition object scan after scan: comparing pointers finds
      // what changed without looking into any skill.
      const upsert: Array<Skill.Static> = []
      for (const [uri, definition] of result.byUri) if (previous.get(uri) !== definition) upsert.push(definition)
      const remove: Array<string> = []
      for (const uri of previous.keys()) if (!result.byUri.has(uri)) remove.push(uri)
      return { upsert, remove }
    }),
    stats: Effect.sync((): DirectoryModel.Stats => {
      let onDiskFiles = 0
      let heldBytes = 0
      for (const tree of state.roots.values()) {
        tree.files.forEach((slot) => {
          if (tree.files.onDisk(slot)) onDiskFiles++
          else heldBytes += tree.files.heldBytes(slot)
        })
      }
      return { ...state.counters, onDiskFiles, heldBytes }
    }),
    check
  } satisfies DirectoryModel.Source
})
