/** The first two steps of a pull: what to pull, and what that does to the target, before any file is read. */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type { Skill } from "@mcp-skills/core"
import type * as SkillsClient from "../../SkillsClient.js"
import {
  type Check,
  type EditedSkill,
  type Error,
  FolderTaken,
  LocalChanges,
  PullError,
  SignerMismatch,
  toPullError
} from "../../PullError.js"
import type { LockSkill } from "../../LockFile.js"
import { inspect, isEdited, noEdits, recordedPaths } from "./disk.js"
import { recover } from "./journal.js"
import { checkNames, enclosing, folderOf, folderTaken, keptFiles, placed, prefixProblem } from "./names.js"
import { type Choices, type Plan, type Refused, type Step, tree } from "../../PullModel.js"
import { checkPath, readLock } from "./paths.js"

export const filesOf = (skill: Skill.Skill): ReadonlyArray<Skill.SkillResource> => skill.resources === "dynamic" ? [] : skill.resources

export interface Diff {
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly changed: ReadonlyArray<string>
}

export const diffFiles = (before: ReadonlyArray<{ readonly uri: string; readonly digest: string }>, after: typeof before): Diff => {
  const old = new Map(before.map((f) => [f.uri, f.digest]))
  const now = new Map(after.map((f) => [f.uri, f.digest]))
  return {
    added: [...now.keys()].filter((uri) => !old.has(uri)),
    removed: [...old.keys()].filter((uri) => !now.has(uri)),
    changed: [...now].filter(([uri, digest]) => old.has(uri) && old.get(uri) !== digest).map(([uri]) => uri)
  }
}

const isEmpty = (diff: Diff) => diff.added.length + diff.removed.length + diff.changed.length === 0

const describeDiff = (diff: Diff) =>
  [...diff.added.map((uri) => `+${uri}`), ...diff.removed.map((uri) => `-${uri}`), ...diff.changed.map((uri) => `~${uri}`)].join(" ")

// What a skill's own entry or files failed, not the pull: with `all` that skill is left out and
// named, and the others are installed.
const Refusable: ReadonlySet<Check> = new Set([
  "digest",
  "size",
  "frontmatter",
  "unlisted",
  "outside",
  "contents",
  "uri",
  "limit",
  "dynamic",
  "entry",
  "signature",
  "not-found",
  "changed"
])

/**
 * Runs the check of one skill: with `all`, a failure of the skill itself is answered as its
 * refusal (`undefined` and `refused` told), any other fails the pull.
 */
export const refusing = <A, E extends Error, R>(all: boolean, uri: string, refused: Array<Refused>) =>
(check: Effect.Effect<A, E, R>): Effect.Effect<A | undefined, E, R> =>
  all
    ? Effect.catch(check, (error) => {
      const said = toPullError(error)
      if (!Refusable.has(said.check)) return Effect.fail(error)
      refused.push({ uri, error: said })
      return Effect.succeed(undefined)
    })
    : check

export const select = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  options: Pick<Choices, "uris" | "all" | "prune">
): Effect.fn.Return<{ readonly selected: ReadonlyArray<Skill.Skill>; readonly refused: ReadonlyArray<Refused> }, PullError> {
  if (options.prune === true && options.all !== true) {
    return yield* new PullError({ check: "usage", detail: "--prune needs --all: only a pull of every listed skill knows which skills are gone" })
  }
  const listing = yield* client.listSkills().pipe(Effect.mapError((e) => toPullError(e)))
  const { refused, selected } = yield* selectFrom(client, listing, { ...options, missing: "fail" })
  // An empty catalogue is an answer to `all`: whatever was pulled from it is gone.
  if (selected.length === 0 && options.all !== true) return yield* new PullError({ check: "entry", detail: "no skill selected" })
  return { selected, refused }
})

/**
 * The entries of `listing` to pull: every valid one with `all` (each invalid one `refused`), else
 * each of `uris`, fetched with `skills/get` when not listed (R30). A URI the server does not serve
 * fails the selection, or with `missing: "gone"` is answered in `missing` (a sync removes it).
 */
export const selectFrom = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  listing: SkillsClient.Listing,
  options: Pick<Choices, "uris" | "all"> & { readonly missing: "fail" | "gone" }
): Effect.fn.Return<
  { readonly selected: ReadonlyArray<Skill.Skill>; readonly missing: ReadonlyArray<string>; readonly refused: ReadonlyArray<Refused> },
  PullError
> {
  const selected: Array<Skill.Skill> = []
  const missing: Array<string> = []
  if (options.all === true) {
    const refused = listing.invalid.map((invalid): Refused => ({ uri: invalid.uri, error: toPullError(invalid) }))
    selected.push(...listing.skills)
    return { selected, missing, refused }
  }
  for (const uri of new Set(options.uris ?? [])) {
    const listed = listing.skills.find((skill) => skill.uri === uri)
    if (listed !== undefined) {
      selected.push(listed)
      continue
    }
    const invalid = listing.invalid.find((entry) => entry.uri === uri)
    if (invalid !== undefined) return yield* toPullError(invalid)
    const fetched = yield* client.getSkill(uri).pipe(
      Effect.map((got) => got.skill),
      Effect.catchTag("SkillNotFound", (error) => options.missing === "gone" ? Effect.succeed(undefined) : Effect.fail(error)),
      Effect.mapError((e) => toPullError(e, { skill: uri }))
    )
    if (fetched === undefined) missing.push(uri)
    else selected.push(fetched)
  }
  return { selected, missing, refused: [] }
})

/** The refusal of a skill that lies inside the folder of `outer`, a skill refused. */
export const insideRefused = (uri: string, outer: string) =>
  new PullError({ check: "entry", skill: uri, detail: `${uri} lies inside ${outer}, which was refused` })

export const plan = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  listed: ReadonlyArray<Skill.Skill>,
  options: Omit<Choices, "uris">,
  // What the selection refused already (invalid entries): none of them is gone.
  refusedBefore: ReadonlyArray<Refused> = []
): Effect.fn.Return<Plan, Error, FileSystem.FileSystem> {
  const into = Path.resolve(options.into)
  const prune = options.prune === true
  const layout = options.layout ?? tree()
  const problem = prefixProblem(layout)
  if (problem !== undefined) return yield* new PullError({ check: "usage", detail: problem })
  yield* recover(into)
  const lock = yield* readLock(into)
  // This server's skills in the lock file, by URI (the first record of each, as a search finds).
  const pulled = new Map<string, LockSkill>()
  for (const record of lock.skills) if (record.origin === client.server && !pulled.has(record.uri)) pulled.set(record.uri, record)
  const all = options.all === true
  const refused = [...refusedBefore]
  // What changed on the server since the last pull, for every skill pulled before.
  const diffs = new Map<string, Diff>()
  for (const skill of listed) {
    const previous = pulled.get(skill.uri)
    if (previous !== undefined) diffs.set(skill.uri, diffFiles(previous.files, filesOf(skill)))
  }
  const changes = (skill: Skill.Skill) => skill.resources === "dynamic" || !isEmpty(diffs.get(skill.uri)!)
  // Every entry is checked, signatures included, before anything is read or written.
  const signers = new Map<string, string | undefined>()
  // The skills whose entries were refused, by folder.
  const leftOut = new Map<string, string>()
  for (const skill of listed) {
    const checked = yield* client.checkEntry(skill).pipe(
      Effect.mapError((e) => toPullError(e, { skill: skill.uri })),
      refusing(all, skill.uri, refused)
    )
    if (checked === undefined) {
      leftOut.set(folderOf(skill, layout), skill.uri)
      continue
    }
    const recorded = pulled.get(skill.uri)?.signer
    if (checked.signers === undefined) {
      // Without trust no signature was checked: a skill pinned to a signer may stay as it was
      // signed (its files are held to the recorded digests), never change.
      if (recorded !== undefined && changes(skill)) {
        return yield* new SignerMismatch({ skill: skill.uri, signer: recorded, now: { _tag: "NotChecked" } })
      }
      continue
    }
    // The signer recorded last time, if it signed again; a skill may carry several signatures.
    const signer = recorded !== undefined && checked.signers.some((keyId) => keyId === recorded) ? recorded : checked.signers[0]
    if (recorded !== undefined && signer !== recorded && options.acceptSigner !== true) {
      return yield* new SignerMismatch({
        skill: skill.uri,
        signer: recorded,
        now: signer === undefined ? { _tag: "Unsigned" } : { _tag: "SignedBy", keyId: signer }
      })
    }
    signers.set(skill.uri, signer)
  }
  // A skill inside one left out goes with it: its folder would be made inside a folder no pull wrote.
  const refusedUris = new Set(refused.map((refusal) => refusal.uri))
  const selected = listed.filter((skill) => {
    if (refusedUris.has(skill.uri)) return false
    const within = enclosing(leftOut, folderOf(skill, layout))
    if (within === undefined) return true
    refused.push({ uri: skill.uri, error: insideRefused(skill.uri, within) })
    refusedUris.add(skill.uri)
    return false
  })
  // Without trust, what the lock file recorded stays: the files are the ones it signed.
  const signerOf = (skill: Skill.Skill, previous: LockSkill | undefined) =>
    signers.has(skill.uri) ? signers.get(skill.uri) : previous?.signer
  // Each skill's folder, and the skill of each folder: lookups, not scans, for a pull of a whole catalogue.
  const folders = new Map<string, string>()
  const byFolder = new Map<string, string>()
  for (const skill of selected) {
    const folder = folderOf(skill, layout)
    const other = byFolder.get(folder)
    if (other !== undefined) {
      return yield* new PullError({ check: "entry", skill: skill.uri, detail: `its folder ${folder} is also the folder of ${other}` })
    }
    folders.set(skill.uri, folder)
    byFolder.set(folder, skill.uri)
  }
  // Nested: a folder above the skill's is another selected skill's.
  const isNested = (skill: Skill.Skill) => enclosing(byFolder, folders.get(skill.uri)!) !== undefined
  // A folder the lock file gives another skill, of this server or another, is refused naming both
  // (before the names of their files are compared, which would say less).
  for (const skill of selected) {
    if (isNested(skill)) continue
    const folder = folders.get(skill.uri)!
    const taken = folderTaken(lock, { uri: skill.uri, origin: client.server, folder })
    if (taken !== undefined) {
      return yield* new FolderTaken({
        folder,
        skill: skill.uri,
        server: client.server,
        otherFolder: taken.path,
        other: taken.uri,
        otherServer: taken.origin
      })
    }
  }
  yield* checkNames(
    selected.flatMap((skill) =>
      isNested(skill) ? [] : placed(skill, folders.get(skill.uri)!, [skill.uri, ...filesOf(skill).map((file) => file.uri)])
    ),
    keptFiles(lock, client.server, selected)
  )
  const recorded = recordedPaths(lock)
  // Files changed here since they were pulled, which this pull would overwrite or remove.
  const edited: Array<EditedSkill> = []
  const steps: Array<Step> = []
  for (const skill of selected) {
    const folder = folders.get(skill.uri)!
    const previous = pulled.get(skill.uri)
    const signer = signerOf(skill, previous)
    if (isNested(skill)) {
      steps.push({ skill, folder, action: "nested", previous, signer, local: noEdits })
      continue
    }
    const exists = yield* checkPath(into, folder)
    // Pulled before into another folder (another layout or prefix): it moves, as an update.
    const moved = previous !== undefined && previous.path !== folder
    if (previous === undefined || moved) {
      if (exists) {
        return yield* new PullError({
          check: "changed",
          skill: skill.uri,
          detail: `${Path.join(into, folder)} exists and was not written by a pull; move it away first`
        })
      }
    }
    if (previous === undefined) {
      steps.push({ skill, folder, action: "add", previous, signer, local: noEdits })
      continue
    }
    if (skill.resources === "dynamic" && options.acceptChanges !== true) {
      return yield* new PullError({
        check: "changed",
        skill: skill.uri,
        detail: `${skill.uri} is "dynamic" and cannot be compared with the last pull; pass --accept-changes to replace it`
      })
    }
    const diff = diffs.get(skill.uri)!
    if (changes(skill) && options.acceptChanges !== true) {
      return yield* new PullError({
        check: "changed",
        skill: skill.uri,
        detail: `${skill.uri} changed since the last pull (${describeDiff(diff)}); pass --accept-changes to replace it`
      })
    }
    const local = yield* inspect(into, previous, recorded)
    if (isEdited(local)) edited.push({ uri: skill.uri, path: previous.path, edits: local })
    const action = changes(skill) || moved ? "update" : isEdited(local) ? "restore" : "unchanged"
    steps.push({ skill, folder, action, previous, signer, local })
  }
  // With every listed skill selected (or for the `unlisted` a caller names), a skill pulled from
  // this server before and listed no more is gone once `skills/get` says so too (an unlisted
  // skill may still be served, R30); `select` refused prune without all.
  const gone: Array<LockSkill> = []
  const candidates = options.all === true
    ? [...pulled.values()]
    : (options.unlisted ?? []).flatMap((uri) => pulled.get(uri) ?? [])
  for (const record of candidates) {
    if (folders.has(record.uri) || refusedUris.has(record.uri)) continue
    const served = yield* client.getSkill(record.uri).pipe(
      Effect.as(true),
      Effect.catchTag("SkillNotFound", () => Effect.succeed(false)),
      Effect.mapError((e) => toPullError(e, { skill: record.uri }))
    )
    if (served) continue
    gone.push(record)
    if (!prune) continue
    // Removing a skill loses nothing of a file deleted already.
    const local = yield* inspect(into, record, recorded)
    const lost = { ...local, missing: [] }
    if (isEdited(lost)) edited.push({ uri: record.uri, path: record.path, edits: lost })
  }
  if (edited.length > 0 && options.overwriteLocal !== true) return yield* new LocalChanges({ skills: edited })
  const result: Plan = {
    into,
    origin: client.server,
    lock,
    steps,
    gone,
    prune,
    all,
    refused,
    ...(options.skillsLock === undefined ? {} : { skillsLock: Path.resolve(options.skillsLock) })
  }
  return result
})
