/**
 * Installs skills from a server into a local folder, all or nothing: every entry is checked before
 * any file is read, every file is verified into a staging folder inside the target, and only a
 * fully verified pull is renamed into place and recorded in `mcp-skills.lock.json`.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { McpClientError } from "effect/ai/McpClientError"
import { Digest, Extension, Skill, SkillUri } from "@mcp-skills/core"
import type * as SkillsClient from "./SkillsClient.js"
import type { SkillsClientError } from "./SkillsClientError.js"

/**
 * The lock file name inside the target folder.
 *
 * @since 0.1.0
 */
export const LockFileName = "mcp-skills.lock.json"

const LockFile = Schema.Struct({ uri: Schema.String, digest: Schema.String, size: Schema.Number, path: Schema.String })

const LockSkill = Schema.Struct({
  origin: Schema.String,
  uri: Schema.String,
  path: Schema.String,
  dynamic: Schema.Boolean,
  files: Schema.Array(LockFile)
})

/**
 * The lock file: for every pulled skill its origin (the host-assigned server label, R23), its
 * folder and every file with digest and size.
 *
 * @since 0.1.0
 */
export const Lock = Schema.Struct({
  version: Schema.Literal(1),
  skills: Schema.Array(LockSkill)
})

/**
 * @since 0.1.0
 */
export type Lock = typeof Lock.Type

/**
 * A pull that failed. `check` names what failed (digest, size, frontmatter, unlisted, uri, limit,
 * dynamic, cursor, timeout, entry, not-found, changed, ...), `skill` and `file` where it failed.
 *
 * @since 0.1.0
 */
export class PullError extends Schema.TaggedError<PullError>()("PullError", {
  check: Schema.String,
  skill: Schema.optional(Schema.String),
  file: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    const where = [this.skill === undefined ? undefined : `skill ${this.skill}`, this.file === undefined ? undefined : `file ${this.file}`]
      .filter((part) => part !== undefined)
      .join(", ")
    return `${this.check} check failed${where === "" ? "" : ` (${where})`}: ${this.detail}`
  }
}

/**
 * How the files of one skill changed since the last pull.
 *
 * @since 0.1.0
 */
export interface Change {
  readonly skill: string
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly changed: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 */
export interface Options {
  /** The target folder. */
  readonly into: string
  /** Skill URIs to pull; ignored with `all`. URIs absent from the listing are fetched with `skills/get` (R30). */
  readonly uris?: ReadonlyArray<string> | undefined
  readonly all?: boolean | undefined
  /** Replace skills whose files changed since the last pull. */
  readonly acceptChanges?: boolean | undefined
  /** Called as bytes of a skill arrive. */
  readonly onProgress?: ((progress: { readonly skill: string; readonly bytes: number; readonly total: number }) => void) | undefined
}

/**
 * What a pull did.
 *
 * @since 0.1.0
 */
export interface Summary {
  readonly pulled: ReadonlyArray<{ readonly uri: string; readonly path: string; readonly files: number; readonly bytes: number }>
  readonly changes: ReadonlyArray<Change>
}

const checkOf: Record<string, string> = {
  DigestMismatch: "digest",
  SizeMismatch: "size",
  FrontmatterMismatch: "frontmatter",
  UnlistedResource: "unlisted",
  WrongResourceReturned: "uri",
  InvalidResourceContents: "contents",
  LimitExceeded: "limit",
  DynamicSkillRefused: "dynamic",
  RepeatedCursor: "cursor",
  RunawayListing: "cursor",
  InvalidSkillEntry: "entry",
  SkillNotFound: "not-found",
  ExtensionNotSupported: "extension",
  DirectoryReadNotSupported: "directory"
}

/**
 * Describes any client failure as a `PullError` naming the skill and file it happened on.
 *
 * @since 0.1.0
 */
export const toPullError = (
  error: SkillsClientError | McpClientError | PullError,
  where: { readonly skill?: string | undefined; readonly file?: string | undefined } = {}
): PullError => {
  if (error._tag === "PullError") return error
  const check = error._tag === "McpClientError"
    ? error.reason._tag === "TimeoutError"
      ? "timeout"
      // -32602 (2026-07-28) and -32002 (2025-11-25) both answer "no such resource" (R65, R66).
      : error.reason._tag === "ProtocolError" && (error.reason.code === -32602 || error.reason.code === -32002)
      ? "not-found"
      : "transport"
    : checkOf[error._tag] ?? error._tag
  const skill = where.skill ?? ("skill" in error && typeof error.skill === "string" ? error.skill : undefined)
  const file = "uri" in error && typeof error.uri === "string" && error.uri !== skill ? error.uri : where.file
  // The line already names skill and file; drop the same uri when the message starts with it.
  const prefix = `${file ?? skill}: `
  const message = error._tag === "McpClientError"
    ? describeMcpError(error)
    : error._tag === "InvalidSkillEntry"
    ? `invalid entry: ${error.problems.join("; ")}`
    : error.message
  const detail = message.startsWith(prefix) ? message.slice(prefix.length) : message
  return new PullError({
    check,
    ...(skill === undefined ? {} : { skill }),
    ...(file === undefined ? {} : { file }),
    detail
  })
}

// Transport failures name their underlying cause (connection refused, DNS, ...), not only "request failed".
const describeMcpError = (error: McpClientError): string => {
  const messages = [error.message]
  let cause: unknown = "cause" in error.reason ? error.reason.cause : undefined
  for (let depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause.message.length > 0 && !messages.includes(cause.message)) messages.push(cause.message)
    cause = cause.cause
  }
  return messages.join(": ")
}

const isNotFound = (error: unknown) => (error as { code?: unknown }).code === "ENOENT"

/**
 * Reads the lock file of a folder; a missing file is an empty lock.
 *
 * @since 0.1.0
 */
export const readLock = (dir: string): Effect.Effect<Lock, PullError> =>
  Effect.tryPromise({
    try: async () => {
      const text = await Fs.readFile(Path.join(dir, LockFileName), "utf8").catch((e) => isNotFound(e) ? undefined : Promise.reject(e))
      return text === undefined ? { version: 1 as const, skills: [] } : Schema.decodeUnknownSync(Lock)(JSON.parse(text))
    },
    catch: (cause) => new PullError({ check: "lock", file: Path.join(dir, LockFileName), detail: String(cause) })
  })

// The folder of a skill inside the target: its decoded skill path, under the scheme when it is not `skill`.
const folderOf = (skill: Skill.Skill): string => {
  const parsed = Result.getOrThrow(SkillUri.parse(skill.uri))
  const segments = SkillUri.skillPath(skill.uri)
  return Path.join(...(parsed.scheme === "skill" ? [] : [parsed.scheme]), ...segments)
}

const filesOf = (skill: Skill.Skill): ReadonlyArray<Skill.SkillResource> => skill.resources === "dynamic" ? [] : skill.resources

const diff = (previous: typeof LockSkill.Type, skill: Skill.Skill): Change => {
  const before = new Map(previous.files.map((f) => [f.uri, f.digest]))
  const after = new Map(filesOf(skill).map((f) => [f.uri as string, f.digest as string]))
  return {
    skill: skill.uri,
    added: [...after.keys()].filter((uri) => !before.has(uri)),
    removed: [...before.keys()].filter((uri) => !after.has(uri)),
    changed: [...after].filter(([uri, digest]) => before.has(uri) && before.get(uri) !== digest).map(([uri]) => uri)
  }
}

const describeChange = (change: Change) =>
  [
    ...change.added.map((uri) => `+${uri}`),
    ...change.removed.map((uri) => `-${uri}`),
    ...change.changed.map((uri) => `~${uri}`)
  ].join(" ")

const isEmpty = (change: Change) => change.added.length + change.removed.length + change.changed.length === 0

const fsError = (detail: string) => (cause: unknown) => new PullError({ check: "write", detail: `${detail}: ${String(cause)}` })

/**
 * Pulls skills into `options.into`. Nothing is written unless every selected skill verifies.
 *
 * @since 0.1.0
 */
export const pull = Effect.fnUntraced(function*(client: SkillsClient.Service, options: Options) {
  const into = Path.resolve(options.into)
  const lock = yield* readLock(into)

  // 1. Entries: a broken listing fails here, before anything is read or written.
  const listing = yield* client.listSkills().pipe(Effect.mapError((e) => toPullError(e)))
  let selected: Array<Skill.Skill>
  if (options.all === true) {
    const invalid = listing.invalid[0]
    if (invalid !== undefined) return yield* toPullError(invalid, { skill: invalid.uri })
    selected = [...listing.skills]
  } else {
    selected = []
    for (const uri of new Set(options.uris ?? [])) {
      const listed = listing.skills.find((skill) => skill.uri === uri)
      if (listed !== undefined) {
        selected.push(listed)
        continue
      }
      const invalid = listing.invalid.find((entry) => entry.uri === uri)
      if (invalid !== undefined) return yield* toPullError(invalid, { skill: uri })
      const fetched = yield* client.getSkill(uri).pipe(Effect.mapError((e) => toPullError(e, { skill: uri })))
      selected.push(fetched.skill)
    }
  }
  if (selected.length === 0) return yield* new PullError({ check: "entry", detail: "no skill selected" })

  // 2. Everything the entries alone show, for every skill, before any file is read (R17).
  for (const skill of selected) {
    yield* client.checkEntry(skill).pipe(Effect.mapError((e) => toPullError(e, { skill: skill.uri })))
  }
  const folders = new Map<string, string>()
  for (const skill of selected) {
    const folder = folderOf(skill)
    const other = [...folders].find(([, f]) => f === folder)
    if (other !== undefined) {
      return yield* new PullError({ check: "entry", skill: skill.uri, detail: `its folder ${folder} is also the folder of ${other[0]}` })
    }
    folders.set(skill.uri, folder)
  }
  // A nested skill (R101) lies inside another selected skill, whose manifest already holds its
  // files: it is verified against its own entry but not placed separately.
  const nested = new Set(
    selected.filter((skill) =>
      selected.some((outer) => outer !== skill && folders.get(skill.uri)!.startsWith(folders.get(outer.uri)! + Path.sep))
    ).map((skill) => skill.uri)
  )
  const changes: Array<Change> = []
  for (const skill of selected) {
    const previous = lock.skills.find((s) => s.uri === skill.uri && s.origin === client.server)
    if (previous !== undefined) {
      if (skill.resources === "dynamic" && options.acceptChanges !== true) {
        return yield* new PullError({
          check: "changed",
          skill: skill.uri,
          detail: "a \"dynamic\" skill cannot be compared with the last pull; pass --accept-changes to replace it"
        })
      }
      const change = diff(previous, skill)
      if (!isEmpty(change)) changes.push(change)
      if (!isEmpty(change) && options.acceptChanges !== true) {
        return yield* new PullError({
          check: "changed",
          skill: skill.uri,
          detail: `changed since the last pull (${describeChange(change)}); pass --accept-changes to replace it`
        })
      }
      continue
    }
    if (nested.has(skill.uri)) continue
    const target = Path.join(into, folders.get(skill.uri)!)
    const exists = yield* Effect.promise(() => Fs.stat(target).then(() => true, () => false))
    if (exists) {
      const owner = lock.skills.find((s) => s.path === folders.get(skill.uri))
      return yield* new PullError({
        check: "changed",
        skill: skill.uri,
        detail: owner === undefined
          ? `${target} exists and was not written by a pull; move it away first`
          : `${target} holds ${owner.uri} from ${owner.origin}`
      })
    }
  }

  // 3. Verify every file into a staging folder inside the target, so the final renames stay on one filesystem.
  yield* Effect.tryPromise({ try: () => Fs.mkdir(into, { recursive: true }), catch: fsError(`cannot create ${into}`) })
  const staging = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () => Fs.mkdtemp(Path.join(into, ".mcp-skills-staging-")),
      catch: fsError(`cannot create a staging folder in ${into}`)
    }),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )

  const pulled: Array<{ uri: string; path: string; files: number; bytes: number; nested: boolean; lock: typeof LockSkill.Type }> = []
  for (const skill of selected) {
    const folder = folders.get(skill.uri)!
    const root = nested.has(skill.uri) ? Path.join(staging, ".nested", String(pulled.length)) : Path.join(staging, folder)
    const total = filesOf(skill).reduce((sum, f) => sum + f.size, 0)
    let bytes = 0
    const lockFiles: Array<typeof LockFile.Type> = []
    const digests = new Map<string, Digest.Digest>()
    for (const resource of filesOf(skill)) if (!digests.has(resource.uri)) digests.set(resource.uri, resource.digest)
    // One mkdir per folder, not per file; files of one folder wait for the same call.
    const created = new Map<string, Promise<unknown>>()
    const mkdir = (dir: string) => {
      let made = created.get(dir)
      if (made === undefined) {
        made = Fs.mkdir(dir, { recursive: true })
        created.set(dir, made)
      }
      return made
    }
    const fetch = (uri: string) =>
      Effect.gen(function*() {
        const file = yield* client.readSkillResource(skill, uri).pipe(
          Effect.mapError((e) => toPullError(e, { skill: skill.uri, file: uri }))
        )
        const relative = SkillUri.relativePath(skill.uri, uri)
        if (relative === undefined || relative.length === 0) {
          return yield* new PullError({ check: "unlisted", skill: skill.uri, file: uri, detail: "outside the skill" })
        }
        const path = Path.join(root, ...relative.split("/"))
        yield* Effect.tryPromise({
          try: async () => {
            await mkdir(Path.dirname(path))
            await Fs.writeFile(path, file.bytes, { flag: "wx" })
          },
          catch: fsError(`cannot write ${path}`)
        })
        bytes += file.bytes.byteLength
        options.onProgress?.({ skill: skill.uri, bytes, total })
        // For a "dynamic" skill this records what was fetched; the lock marks the skill unverified.
        lockFiles.push({
          uri,
          digest: digests.get(uri) ?? Digest.make(file.bytes),
          size: file.bytes.byteLength,
          path: relative
        })
      })

    // SKILL.md first and verified; no other file of the skill is requested until it passes.
    yield* fetch(skill.uri)
    const others = skill.resources === "dynamic"
      ? yield* dynamicFiles(client, skill)
      : skill.resources.map((r) => r.uri as string).filter((uri) => uri !== skill.uri)
    yield* Effect.forEach(others, fetch, { concurrency: 4, discard: true })
    const dynamic = skill.resources === "dynamic"
    pulled.push({
      uri: skill.uri,
      path: folder,
      files: lockFiles.length,
      bytes,
      nested: nested.has(skill.uri),
      lock: {
        origin: client.server,
        uri: skill.uri,
        path: folder,
        dynamic,
        files: lockFiles.sort((a, b) => a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)
      }
    })
  }

  // 4. Everything verified: move each skill into place (replacing an accepted older copy) and write the lock.
  yield* Effect.tryPromise({
    try: async () => {
      const trash = Path.join(staging, ".replaced")
      for (const skill of pulled) {
        if (skill.nested) continue
        const target = Path.join(into, skill.path)
        await Fs.mkdir(Path.dirname(target), { recursive: true })
        const old = await Fs.stat(target).then(() => true, () => false)
        if (old) {
          await Fs.mkdir(trash, { recursive: true })
          await Fs.rename(target, Path.join(trash, randomBytes(6).toString("hex")))
        }
        await Fs.rename(Path.join(staging, skill.path), target)
      }
      const kept = lock.skills.filter((s) => !pulled.some((p) => p.uri === s.uri && p.lock.origin === s.origin))
      const next: Lock = {
        version: 1,
        skills: [...kept, ...pulled.map((p) => p.lock)].sort((a, b) =>
          a.origin === b.origin ? (a.uri < b.uri ? -1 : 1) : a.origin < b.origin ? -1 : 1
        )
      }
      const temp = Path.join(staging, LockFileName)
      await Fs.writeFile(temp, JSON.stringify(next, null, 2) + "\n")
      await Fs.rename(temp, Path.join(into, LockFileName))
    },
    catch: fsError(`cannot move the pulled skills into ${into}`)
  })

  const summary: Summary = {
    pulled: pulled.map(({ uri, path, files, bytes }) => ({ uri, path, files, bytes })),
    changes
  }
  return summary
}, Effect.scoped)

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
