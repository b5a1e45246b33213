/** The third step of a pull: every file read, verified and written into the staging folder. */
import * as Path from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import { Digest, Extension, type Skill, SkillUri } from "@mcp-skills/core"
import type * as SkillsClient from "../../SkillsClient.js"
import { PullError, toPullError, type UnsafeName } from "../../PullError.js"
import type { LockFile } from "../../LockFile.js"
import { checkNames, enclosing, keptFiles, placed } from "./names.js"
import { writeError } from "./paths.js"
import { filesOf, insideRefused, refusing } from "./plan.js"
import type { Plan, Progress, Refused, Staged, Step } from "../../PullModel.js"

export const stage = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  planned: Plan,
  staging: string,
  onProgress?: ((progress: Progress) => void) | undefined
): Effect.fn.Return<
  { readonly staged: ReadonlyArray<Staged>; readonly refused: ReadonlyArray<Refused> },
  PullError | UnsafeName,
  FileSystem.FileSystem
> {
  const fs = yield* FileSystem.FileSystem
  const staged: Array<Staged> = []
  const refused: Array<Refused> = []
  // The skills refused here, by folder: a nested skill staged inside one goes with it.
  const leftOut = new Map<string, string>()
  const verifiedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
  const stageOne = Effect.fnUntraced(function*(index: number, step: Step) {
    const { skill } = step
    const root = step.action === "nested" ? Path.join(staging, ".nested", String(index)) : Path.join(staging, step.folder)
    const total = filesOf(skill).reduce((sum, f) => sum + f.size, 0)
    let bytes = 0
    const lockFiles: Array<typeof LockFile.Type> = []
    const digests = new Map<string, Digest.Digest>()
    for (const resource of filesOf(skill)) if (!digests.has(resource.uri)) digests.set(resource.uri, resource.digest)
    // Every folder of the skill is made before its files are fetched: one call per folder.
    const mkdirs = (uris: ReadonlyArray<string>) =>
      Effect.forEach(
        new Set(uris.map((uri) => Path.dirname(Path.join(root, ...(SkillUri.relativePath(skill.uri, uri) ?? "").split("/"))))),
        (dir) => fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError(writeError(dir))),
        { discard: true }
      )
    const fetch = (uri: string) =>
      Effect.gen(function*() {
        const file = yield* client.readSkillResource(skill, uri).pipe(
          Effect.mapError((e) => toPullError(e, { skill: skill.uri, file: uri }))
        )
        const expected = digests.get(uri)
        // A read that healed a stale entry verified against a newer manifest than the one planned.
        if (expected !== undefined && file.digest !== expected) {
          return yield* new PullError({
            check: "changed",
            file: uri,
            detail: `${uri} changed on the server during the pull; pull again`
          })
        }
        const relative = SkillUri.relativePath(skill.uri, uri)
        if (relative === undefined || relative.length === 0) {
          return yield* new PullError({ check: "outside", file: uri, detail: `${uri} leaves the skill ${skill.uri}` })
        }
        const path = Path.join(root, ...relative.split("/"))
        // "wx": never onto something already there, a link included.
        yield* fs.writeFile(path, file.bytes, { flag: "wx" }).pipe(Effect.mapError(writeError(path)))
        bytes += file.bytes.byteLength
        onProgress?.({ skill: skill.uri, bytes, total })
        // For a "dynamic" skill this records what was fetched; the lock marks the skill unverified.
        lockFiles.push({ uri, digest: expected ?? Digest.make(file.bytes), size: file.bytes.byteLength, path: relative })
      })
    yield* mkdirs([skill.uri])
    yield* fetch(skill.uri)
    const others = skill.resources === "dynamic"
      ? yield* dynamicFiles(client, skill)
      : skill.resources.map((r) => r.uri as string).filter((uri) => uri !== skill.uri)
    // A "dynamic" skill's names are known only now; the plan checked every manifest.
    if (skill.resources === "dynamic" && step.action !== "nested") {
      yield* checkNames(
        placed(skill, step.folder, [skill.uri, ...others]),
        keptFiles(planned.lock, planned.origin, planned.steps.map((s) => s.skill))
      )
    }
    yield* mkdirs(others)
    yield* Effect.forEach(others, fetch, { concurrency: 4, discard: true })
    return {
      step,
      bytes,
      lock: {
        origin: planned.origin,
        uri: skill.uri,
        path: step.folder,
        dynamic: skill.resources === "dynamic",
        ...(step.signer === undefined ? {} : { signer: step.signer }),
        // A restore puts back the version verified then: its time stays.
        verifiedAt: step.action === "restore" ? step.previous?.verifiedAt ?? verifiedAt : verifiedAt,
        files: lockFiles.sort((a, b) => a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)
      }
    }
  })
  for (const [index, step] of planned.steps.entries()) {
    if (step.action === "unchanged") continue
    const done = yield* stageOne(index, step).pipe(refusing(planned.all, step.skill.uri, refused))
    if (done !== undefined) staged.push(done)
    else if (step.action !== "nested") leftOut.set(step.folder, step.skill.uri)
  }
  const kept = staged.filter(({ step }) => {
    const within = step.action === "nested" ? enclosing(leftOut, step.folder) : undefined
    if (within !== undefined) refused.push({ uri: step.skill.uri, error: insideRefused(step.skill.uri, within) })
    return within === undefined
  })
  return { staged: kept, refused }
})

// A `"dynamic"` skill has no manifest: its files are found by directory reads when the server
// offers them (R63), otherwise only SKILL.md is pulled.
const dynamicFiles = (client: SkillsClient.Service, skill: Skill.Skill) =>
  Effect.gen(function*() {
    if (client.capability?.directoryRead !== true) return [] as Array<string>
    const found: Array<string> = []
    const visit = (dir: string): Effect.Effect<void, PullError> =>
      Effect.gen(function*() {
        const children = yield* client.readResourceDirectory(dir).pipe(
          Effect.mapError((e) => toPullError(e, { skill: skill.uri, file: dir }))
        )
        for (const child of children) {
          if (child.mimeType === Extension.DirectoryMimeType) yield* visit(child.uri)
          else if (child.uri !== skill.uri) found.push(child.uri)
        }
      })
    yield* visit(SkillUri.root(skill.uri))
    return found
  })
