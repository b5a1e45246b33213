/** The first two steps of a pull: what to pull, and what that does to the target, before any file is read. */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type { Skill } from "@mcp-skills/core"
import type { Options, Plan, Step } from "../../Pull.js"
import type * as SkillsClient from "../../SkillsClient.js"
import { type Error, PullError, toPullError } from "../../PullError.js"
import type { LockSkill } from "../../LockFile.js"
import { checkNames, folderOf, keptFiles, placed } from "./names.js"
import { checkPath, checkTree, readLock } from "./paths.js"

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

export const select = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  options: Pick<Options, "uris" | "all">
): Effect.fn.Return<ReadonlyArray<Skill.Skill>, PullError> {
  const listing = yield* client.listSkills().pipe(Effect.mapError((e) => toPullError(e)))
  const selected: Array<Skill.Skill> = []
  if (options.all === true) {
    const invalid = listing.invalid[0]
    if (invalid !== undefined) return yield* toPullError(invalid)
    selected.push(...listing.skills)
  } else {
    for (const uri of new Set(options.uris ?? [])) {
      const listed = listing.skills.find((skill) => skill.uri === uri)
      if (listed !== undefined) {
        selected.push(listed)
        continue
      }
      const invalid = listing.invalid.find((entry) => entry.uri === uri)
      if (invalid !== undefined) return yield* toPullError(invalid)
      const fetched = yield* client.getSkill(uri).pipe(Effect.mapError((e) => toPullError(e, { skill: uri })))
      selected.push(fetched.skill)
    }
  }
  if (selected.length === 0) return yield* new PullError({ check: "entry", detail: "no skill selected" })
  return selected
})



export const plan = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  selected: ReadonlyArray<Skill.Skill>,
  options: Pick<Options, "into" | "acceptChanges" | "acceptSigner">
): Effect.fn.Return<Plan, Error, FileSystem.FileSystem> {
  const into = Path.resolve(options.into)
  const lock = yield* readLock(into)
  // This server's skills in the lock file, by URI (the first record of each, as a search finds).
  const pulled = new Map<string, LockSkill>()
  for (const record of lock.skills) if (record.origin === client.server && !pulled.has(record.uri)) pulled.set(record.uri, record)
  // Every entry is checked, signatures included, before anything is read or written.
  const signers = new Map<string, string | undefined>()
  for (const skill of selected) {
    const checked = yield* client.checkEntry(skill).pipe(Effect.mapError((e) => toPullError(e, { skill: skill.uri })))
    if (checked.signers === undefined) continue
    const previous = pulled.get(skill.uri)?.signer
    // The signer recorded last time, if it signed again; a skill may carry several signatures.
    const signer = previous !== undefined && checked.signers.some((keyId) => keyId === previous) ? previous : checked.signers[0]
    if (previous !== undefined && signer !== previous && options.acceptSigner !== true) {
      return yield* new PullError({
        check: "signer",
        skill: skill.uri,
        detail: `${skill.uri} was signed by ${previous} when last pulled and is now ${
          signer === undefined ? "not signed by a trusted key" : `signed by ${signer}`
        }; pass --accept-signer to accept it`
      })
    }
    signers.set(skill.uri, signer)
  }
  // Without trust no signature was checked: what the lock file recorded stays.
  const signerOf = (skill: Skill.Skill, previous: LockSkill | undefined) =>
    signers.has(skill.uri) ? signers.get(skill.uri) : previous?.signer
  // Each skill's folder, and the skill of each folder: lookups, not scans, for a pull of a whole catalogue.
  const folders = new Map<string, string>()
  const byFolder = new Map<string, string>()
  for (const skill of selected) {
    const folder = folderOf(skill)
    const other = byFolder.get(folder)
    if (other !== undefined) {
      return yield* new PullError({ check: "entry", skill: skill.uri, detail: `its folder ${folder} is also the folder of ${other}` })
    }
    folders.set(skill.uri, folder)
    byFolder.set(folder, skill.uri)
  }
  // Nested: a folder above the skill's is another selected skill's.
  const isNested = (skill: Skill.Skill) => {
    const folder = folders.get(skill.uri)!
    for (let at = folder.lastIndexOf("/"); at > 0; at = folder.lastIndexOf("/", at - 1)) {
      if (byFolder.has(folder.slice(0, at))) return true
    }
    return false
  }
  yield* checkNames(
    selected.flatMap((skill) =>
      isNested(skill) ? [] : placed(skill, folders.get(skill.uri)!, [skill.uri, ...filesOf(skill).map((file) => file.uri)])
    ),
    keptFiles(lock, client.server, selected)
  )
  const steps: Array<Step> = []
  for (const skill of selected) {
    const folder = folders.get(skill.uri)!
    const nested = isNested(skill)
    const previous = pulled.get(skill.uri)
    const signer = signerOf(skill, previous)
    if (nested) {
      steps.push({ skill, folder, action: "nested", previous, signer })
      continue
    }
    const exists = yield* checkPath(into, folder)
    if (previous === undefined) {
      if (exists) {
        const owner = lock.skills.find((s) => s.path === folder)
        return yield* new PullError({
          check: "changed",
          skill: skill.uri,
          detail: owner === undefined
            ? `${Path.join(into, folder)} exists and was not written by a pull; move it away first`
            : `${Path.join(into, folder)} holds ${owner.uri} from ${owner.origin}`
        })
      }
      steps.push({ skill, folder, action: "add", previous, signer })
      continue
    }
    if (exists) yield* checkTree(Path.join(into, folder))
    if (skill.resources === "dynamic" && options.acceptChanges !== true) {
      return yield* new PullError({
        check: "changed",
        skill: skill.uri,
        detail: `${skill.uri} is "dynamic" and cannot be compared with the last pull; pass --accept-changes to replace it`
      })
    }
    const diff = diffFiles(previous.files, filesOf(skill))
    if (skill.resources !== "dynamic" && isEmpty(diff) && exists) {
      steps.push({ skill, folder, action: "unchanged", previous, signer })
      continue
    }
    if (!isEmpty(diff) && options.acceptChanges !== true) {
      return yield* new PullError({
        check: "changed",
        skill: skill.uri,
        detail: `${skill.uri} changed since the last pull (${describeDiff(diff)}); pass --accept-changes to replace it`
      })
    }
    steps.push({ skill, folder, action: "update", previous, signer })
  }
  const result: Plan = { into, origin: client.server, lock, steps }
  return result
})
