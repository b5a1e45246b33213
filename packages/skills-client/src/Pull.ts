/**
 * Installs skills from a server into a local folder, in four steps: {@link select} the entries,
 * {@link plan} against the lock file and the folder, {@link stage} every file verified into a
 * staging folder inside the target, {@link commit} by renames. The file system is effect's
 * `FileSystem` service, so the steps run on any implementation (tests use one in memory).
 *
 * All or nothing: nothing below the target moves before every selected skill verified, and a
 * failure while committing undoes the renames already done, so the target and
 * `mcp-skills.lock.json` are left as they were; the lock file is renamed into place last. Only a
 * killed process can leave a commit half done, and then the lock file still describes the previous
 * pull. A pull never writes through a symbolic link: every path component below the target is
 * checked with `lstat` in the plan and again just before the commit, a link anywhere on the way,
 * at a skill folder or inside one is refused with {@link UnsafePath}, and the lock file must be a
 * regular file, checked before it is opened (a FIFO would block the reader). Names are checked from
 * the entries before anything is written: no hidden segment, no deeper than {@link MaxDepth}, no two
 * names one file system could take for one ({@link UnsafeName}).
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { McpClientError } from "effect/ai/McpClientError"
import { Digest, Extension, McpTelemetry, Skill, SkillUri } from "@mcp-skills/core"
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
  /** The fingerprint of the trusted key whose signature verified when it was pulled. */
  signer: Schema.optionalKey(Schema.String),
  files: Schema.Array(LockFile)
})

type LockSkill = typeof LockSkill.Type

/**
 * The lock file: for every pulled skill its origin (the host-assigned server label, R23), its
 * folder, every file with digest and size, and the signer that verified it (pulled with `trust`).
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
 * What a failed pull checked.
 *
 * @since 0.1.0
 */
export const Check = Schema.Literals([
  "digest",
  "size",
  "frontmatter",
  "unlisted",
  "outside",
  "contents",
  "uri",
  "limit",
  "dynamic",
  "cursor",
  "entry",
  "not-found",
  "extension",
  "directory",
  "timeout",
  "auth",
  "transport",
  "changed",
  "link",
  "name",
  "lock",
  "write",
  "signature",
  "signer",
  "usage"
])

/**
 * @since 0.1.0
 */
export type Check = typeof Check.Type

/**
 * A pull that failed: `check` names what failed, `skill` and `file` where.
 *
 * @since 0.1.0
 */
export class PullError extends Schema.TaggedError<PullError>()("PullError", {
  check: Check,
  skill: Schema.optional(Schema.String),
  file: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    // Each uri once: the detail usually names it already; a file lies inside its skill.
    const where = this.file !== undefined
      ? this.detail.includes(this.file) ? undefined : `file ${this.file}`
      : this.skill !== undefined && !this.detail.includes(this.skill)
      ? `skill ${this.skill}`
      : undefined
    return `${this.check} check failed${where === undefined ? "" : ` (${where})`}: ${this.detail}`
  }
}

/**
 * A path below the target folder that a pull will not write through or replace: a symbolic link
 * (`found: "SymbolicLink"`, dangling or not), or something other than the folder or regular file
 * expected there (a FIFO lock file, a file where a folder belongs).
 *
 * @since 0.1.0
 */
export class UnsafePath extends Schema.TaggedError<UnsafePath>()("UnsafePath", {
  path: Schema.String,
  found: Schema.String,
  expected: Schema.Literals(["directory", "regular file"])
}) {
  override get message(): string {
    return this.found === "SymbolicLink"
      ? `${this.path} is a symbolic link; a pull never writes through links`
      : `${this.path} is a ${this.found}, not a ${this.expected}`
  }
}

/**
 * The deepest file a pull writes, in path segments below the target, skill folder included
 * (`acme/billing/refs/a.md` is 4). Skills are small folders (at most 512 files); a deeper path is a
 * server probing the tools that later walk the folder (a 2,000-level tree outruns recursive
 * deletes).
 *
 * @since 0.1.0
 */
export const MaxDepth = 32

/**
 * Why {@link UnsafeName} refused a name.
 *
 * @since 0.1.0
 */
export const NameProblem = Schema.Union([
  /** A segment starts with `.`. */
  Schema.TaggedStruct("Hidden", { segment: Schema.String }),
  Schema.TaggedStruct("TooDeep", { depth: Schema.Int, max: Schema.Int }),
  /**
   * `name` (the path or a folder on it) is also `otherName` on the way to `other`, a file of this
   * pull or one the lock file records, when case and Unicode normalization are ignored; or both
   * need one name, as a file and a folder or as two files.
   */
  Schema.TaggedStruct("Collides", { name: Schema.String, other: Schema.String, otherName: Schema.String })
])

/**
 * @since 0.1.0
 */
export type NameProblem = typeof NameProblem.Type

/**
 * A file a pull refuses to write, decided from the entries before anything is written. `path` is
 * where it would go below the target, `/`-separated. Hidden names are refused whatever they are:
 * version-control and tool folders (`.git`, `.hg`, `.svn`, `.vscode`, `.github`) and files
 * (`.git` as a `gitdir:` pointer, `.npmrc`, `.envrc`) make later commands in that folder run code,
 * a list of them is never complete, nobody reviewing an install sees them, and a directory source
 * never serves one, so no skill published from a folder has one. Names that differ only in case or
 * Unicode normalization (NFC/NFD) are one file on macOS and Windows file systems: one would silently
 * replace the other.
 *
 * @since 0.1.0
 */
export class UnsafeName extends Schema.TaggedError<UnsafeName>()("UnsafeName", {
  skill: Schema.String,
  uri: Schema.String,
  path: Schema.String,
  problem: NameProblem
}) {
  override get message(): string {
    const problem = this.problem
    switch (problem._tag) {
      case "Hidden":
        return `${this.uri} would be written to ${this.path}: a pull writes no hidden name like "${problem.segment}" (tool and version-control folders such as .git can make later commands run code)`
      case "TooDeep":
        return `${this.uri} would be written ${problem.depth} levels deep, at ${this.path}; a pull writes at most ${problem.max}`
      case "Collides":
        if (problem.name === problem.otherName) return `${this.uri} and ${problem.other} both need ${problem.name}`
        return `${
          problem.name === this.path ? `${this.path} (${this.uri})` : `${this.uri} would be written below ${problem.name}, which`
        } differs from ${problem.otherName} (${problem.other}) only in case or Unicode normalization: one name on macOS and Windows file systems`
    }
  }
}

/**
 * What a pull did to one skill. `Updated` lists the file uris added, removed and changed.
 *
 * @since 0.1.0
 */
export type Outcome =
  | { readonly _tag: "Added"; readonly uri: string; readonly path: string; readonly files: number; readonly bytes: number }
  | {
    readonly _tag: "Updated"
    readonly uri: string
    readonly path: string
    readonly files: number
    readonly bytes: number
    readonly added: ReadonlyArray<string>
    readonly removed: ReadonlyArray<string>
    readonly changed: ReadonlyArray<string>
  }
  | { readonly _tag: "Unchanged"; readonly uri: string; readonly path: string }
  /** A skill inside another selected skill, verified and recorded in the lock; its files came with `within`. */
  | { readonly _tag: "Nested"; readonly uri: string; readonly path: string; readonly within: string }

/**
 * What a pull did, per selected skill in selection order.
 *
 * @since 0.1.0
 */
export interface Summary {
  readonly skills: ReadonlyArray<Outcome>
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
  /**
   * Accept a skill whose verified signer differs from the one the lock file records (a key
   * rotated, or another author); otherwise such a skill fails the pull with check `signer`.
   */
  readonly acceptSigner?: boolean | undefined
  /** Called as bytes of a skill arrive. */
  readonly onProgress?: ((progress: { readonly skill: string; readonly bytes: number; readonly total: number }) => void) | undefined
}

/**
 * Every failure of a pull.
 *
 * @since 0.1.0
 */
export type Error = PullError | UnsafePath | UnsafeName

type ClientError = SkillsClientError | McpClientError

const checkOf: { readonly [Tag in SkillsClientError["_tag"]]: Check } = {
  DigestMismatch: "digest",
  SizeMismatch: "size",
  FrontmatterMismatch: "frontmatter",
  UnlistedResource: "unlisted",
  ReferenceOutsideSkill: "outside",
  UnexpectedContents: "unlisted",
  WrongResourceReturned: "uri",
  InvalidResourceContents: "contents",
  LimitExceeded: "limit",
  DynamicSkillRefused: "dynamic",
  RepeatedCursor: "cursor",
  RunawayListing: "cursor",
  InvalidSkillEntry: "entry",
  SkillNotFound: "not-found",
  ResourceNotFound: "not-found",
  DirectoryNotFound: "not-found",
  CursorRejected: "cursor",
  ExtensionNotSupported: "extension",
  DirectoryReadNotSupported: "directory",
  UnsignedSkill: "signature",
  SignatureInvalid: "signature",
  UntrustedSigner: "signature"
}

const mcpCheck = (error: McpClientError): Check => {
  const reason = error.reason
  switch (reason._tag) {
    case "TimeoutError":
      return "timeout"
    case "HttpError":
      return reason.status === 401 || reason.status === 403 ? "auth" : "transport"
    default:
      return "transport"
  }
}

/**
 * Describes any client or pull failure as a `PullError` naming the skill and file it happened on.
 *
 * @since 0.1.0
 */
export const toPullError = (
  error: ClientError | Error,
  where: { readonly skill?: string | undefined; readonly file?: string | undefined } = {}
): PullError => {
  switch (error._tag) {
    case "PullError":
      return error
    case "UnsafeName":
      return located("name", { skill: error.skill, file: error.uri }, error.message)
    case "UnsafePath":
      return new PullError({
        check: error.found === "SymbolicLink" ? "link" : Path.basename(error.path) === LockFileName ? "lock" : "write",
        file: error.path,
        detail: error.message
      })
    case "McpClientError":
      return located(mcpCheck(error), where, describeMcpError(error))
    case "InvalidSkillEntry":
      return located("entry", { skill: error.uri }, `invalid entry ${error.uri}: ${error.problems.join("; ")}`)
    default: {
      const skill = where.skill ?? ("skill" in error ? error.skill : undefined)
      const file = "uri" in error && error.uri !== skill ? error.uri : where.file
      return located(checkOf[error._tag], { skill, file }, error.message)
    }
  }
}

const located = (
  check: Check,
  where: { readonly skill?: string | undefined; readonly file?: string | undefined },
  detail: string
) =>
  new PullError({
    check,
    ...(where.skill === undefined ? {} : { skill: where.skill }),
    ...(where.file === undefined ? {} : { file: where.file }),
    detail
  })

// 401 and 403 say what the user can do about them; a transport failure names its cause itself.
const describeMcpError = (error: McpClientError): string => {
  const reason = error.reason
  if (reason._tag === "HttpError" && (reason.status === 401 || reason.status === 403)) {
    return reason.status === 401
      ? "the server answered 401 Unauthorized: send credentials with --header 'Authorization: Bearer ...' or MCP_SKILLS_TOKEN"
      : "the server answered 403 Forbidden: the credentials sent do not allow this"
  }
  return error.message
}

const isNotFound = (error: PlatformError.PlatformError) => error.reason._tag === "NotFound"

const writeError = (path: string) => (error: PlatformError.PlatformError) =>
  new PullError({ check: "write", file: path, detail: `cannot write ${path}: ${error.message}` })

// The type of `path` without following a link at it, or undefined when nothing is there.
const typeAt = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.lstat(path).pipe(
      Effect.map((info): FileSystem.File.Type | undefined => info.type),
      Effect.catchIf(isNotFound, () => Effect.succeed(undefined)),
      Effect.mapError(writeError(path))
    )
  })

/**
 * Reads the lock file of a folder; a missing file is an empty lock. Anything but a regular file
 * there is refused before it is opened.
 *
 * @since 0.1.0
 */
export const readLock = (dir: string): Effect.Effect<Lock, Error, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = Path.join(dir, LockFileName)
    const type = yield* typeAt(path)
    if (type === undefined) return { version: 1 as const, skills: [] }
    if (type !== "File") return yield* new UnsafePath({ path, found: type, expected: "regular file" })
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((e) => new PullError({ check: "lock", file: path, detail: `cannot read ${path}: ${e.message}` }))
    )
    return yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Lock))(text).pipe(
      Effect.mapError((e) => new PullError({ check: "lock", file: path, detail: `${path} is not a lock file: ${e.message}` }))
    )
  })

/**
 * Checks every component of `folder` below `into` without following links: each existing one
 * must be a directory, none a link. Answers whether the last one exists.
 */
const checkPath = (into: string, folder: string) =>
  Effect.gen(function*() {
    const segments = folder.split("/")
    let path = into
    for (const segment of segments) {
      path = Path.join(path, segment)
      const type = yield* typeAt(path)
      if (type === undefined) return false
      if (type !== "Directory") return yield* new UnsafePath({ path, found: type, expected: "directory" })
    }
    return true
  })

// A folder about to be replaced holds no link anywhere (a link there would look like a file of
// the skill); only folders and regular files are expected.
const checkTree = (dir: string): Effect.Effect<void, Error, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(dir).pipe(Effect.mapError(writeError(dir)))
    for (const name of names) {
      const path = Path.join(dir, name)
      const type = yield* typeAt(path)
      if (type === "Directory") yield* checkTree(path)
      else if (type !== undefined && type !== "File") yield* new UnsafePath({ path, found: type, expected: "regular file" })
    }
  })

// The folder of a skill inside the target, `/`-separated: its decoded skill path, under the scheme
// when it is not `skill`.
const folderOf = (skill: Skill.Skill): string => {
  const parsed = Result.getOrThrow(SkillUri.parse(skill.uri))
  return [...(parsed.scheme === "skill" ? [] : [parsed.scheme]), ...SkillUri.skillPath(skill.uri)].join("/")
}

/** One file where a pull would put it: `path` below the target, `/`-separated. */
interface Placed {
  readonly skill: string
  readonly uri: string
  readonly path: string
}

// A uri outside the skill has no place; staging refuses it when it comes to read it.
const placed = (skill: Skill.Skill, folder: string, uris: Iterable<string>): Array<Placed> => {
  const out: Array<Placed> = []
  for (const uri of uris) {
    const relative = SkillUri.relativePath(skill.uri, uri)
    if (relative !== undefined && relative.length > 0) out.push({ skill: skill.uri, uri, path: `${folder}/${relative}` })
  }
  return out
}

// What one file system may take for one name: case folded both ways (so "ſ" meets "s") after NFC.
const folded = (name: string) => name.normalize("NFC").toUpperCase().toLowerCase()

// The files the lock file records that this pull leaves in place.
const keptFiles = (lock: Lock, origin: string, selected: ReadonlyArray<Skill.Skill>): Array<Placed> => {
  const pulled = new Set(selected.map((skill) => skill.uri as string))
  return lock.skills
    .filter((skill) => !(skill.origin === origin && pulled.has(skill.uri)))
    .flatMap((skill) => skill.files.map((file) => ({ skill: skill.uri, uri: file.uri, path: `${skill.path}/${file.path}` })))
}

/**
 * Refuses, before anything is written, every name a pull must not write (see {@link UnsafeName}):
 * `writing` are the files of this pull, `kept` those already in the target that stay (compared
 * with, not checked themselves).
 */
const checkNames = (writing: ReadonlyArray<Placed>, kept: ReadonlyArray<Placed> = []): Effect.Effect<void, UnsafeName> =>
  Effect.gen(function*() {
    const refuse = (file: Placed, problem: NameProblem) => new UnsafeName({ ...file, problem })
    for (const file of writing) {
      const segments = file.path.split("/")
      const hidden = segments.find(SkillUri.isHidden)
      if (hidden !== undefined) return yield* refuse(file, { _tag: "Hidden", segment: hidden })
      if (segments.length > MaxDepth) return yield* refuse(file, { _tag: "TooDeep", depth: segments.length, max: MaxDepth })
    }
    // Every file and every folder on the way to one, by folded name: a folder may be on the way to
    // many files, a file is one uri.
    const taken = new Map<string, { readonly name: string; readonly file: Placed; readonly folder: boolean }>()
    for (const [index, file] of [...kept, ...writing].entries()) {
      const segments = file.path.split("/")
      let name = ""
      for (const [depth, segment] of segments.entries()) {
        name = depth === 0 ? segment : `${name}/${segment}`
        const folder = depth < segments.length - 1
        const key = folded(name)
        const other = taken.get(key)
        if (other === undefined) {
          taken.set(key, { name, file, folder })
        } else if (
          // What the target already holds is not this pull's to judge.
          index >= kept.length &&
          (other.name !== name || other.folder !== folder || (!folder && other.file.uri !== file.uri))
        ) {
          return yield* refuse(file, { _tag: "Collides", name, other: other.file.uri, otherName: other.name })
        }
      }
    }
  })

const filesOf = (skill: Skill.Skill): ReadonlyArray<Skill.SkillResource> => skill.resources === "dynamic" ? [] : skill.resources

interface Diff {
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly changed: ReadonlyArray<string>
}

const diffFiles = (before: ReadonlyArray<{ readonly uri: string; readonly digest: string }>, after: typeof before): Diff => {
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

/**
 * Step 1: the entries to pull. A broken listing fails here, before anything is read or written.
 *
 * @since 0.1.0
 */
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

/**
 * One skill of a plan. `Nested` skills lie inside another selected skill, whose manifest already
 * holds their files (R101): verified against their own entry but not placed separately.
 *
 * @since 0.1.0
 */
export interface Step {
  readonly skill: Skill.Skill
  readonly folder: string
  readonly action: "add" | "update" | "unchanged" | "nested"
  readonly previous: LockSkill | undefined
  /** The trusted signer the lock file will record (the client checked its signature). */
  readonly signer: string | undefined
}

/**
 * A pull decided from the entries, the lock file and the folder, before any file is read.
 *
 * @since 0.1.0
 */
export interface Plan {
  readonly into: string
  readonly origin: string
  readonly lock: Lock
  readonly steps: ReadonlyArray<Step>
}

/**
 * Step 2: everything the entries, the lock file and the folder show, for every skill, before any
 * file is read (R17): limits, folder clashes, changes since the last pull, links on the way.
 *
 * @since 0.1.0
 */
export const plan = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  selected: ReadonlyArray<Skill.Skill>,
  options: Pick<Options, "into" | "acceptChanges" | "acceptSigner">
): Effect.fn.Return<Plan, Error, FileSystem.FileSystem> {
  const into = Path.resolve(options.into)
  const lock = yield* readLock(into)
  // Every entry is checked, signatures included, before anything is read or written.
  const signers = new Map<string, string | undefined>()
  for (const skill of selected) {
    const checked = yield* client.checkEntry(skill).pipe(Effect.mapError((e) => toPullError(e, { skill: skill.uri })))
    if (checked.signers === undefined) continue
    const previous = lock.skills.find((s) => s.uri === skill.uri && s.origin === client.server)?.signer
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
  const folders = new Map<string, string>()
  for (const skill of selected) {
    const folder = folderOf(skill)
    const other = [...folders].find(([, f]) => f === folder)
    if (other !== undefined) {
      return yield* new PullError({ check: "entry", skill: skill.uri, detail: `its folder ${folder} is also the folder of ${other[0]}` })
    }
    folders.set(skill.uri, folder)
  }
  const isNested = (skill: Skill.Skill) => {
    const folder = folders.get(skill.uri)!
    return selected.some((outer) => outer !== skill && folder.startsWith(folders.get(outer.uri)! + "/"))
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
    const previous = lock.skills.find((s) => s.uri === skill.uri && s.origin === client.server)
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

/**
 * One skill verified into the staging folder.
 *
 * @since 0.1.0
 */
export interface Staged {
  readonly step: Step
  readonly bytes: number
  readonly lock: LockSkill
}

/**
 * Step 3: reads every file of every skill to add or update, verified, into `staging` (a fresh
 * folder inside the target, so the commit's renames stay on one file system). SKILL.md first:
 * no other file of a skill is requested until it passed.
 *
 * @since 0.1.0
 */
export const stage = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  planned: Plan,
  staging: string,
  onProgress?: Options["onProgress"]
): Effect.fn.Return<ReadonlyArray<Staged>, PullError | UnsafeName, FileSystem.FileSystem> {
  const fs = yield* FileSystem.FileSystem
  const staged: Array<Staged> = []
  for (const [index, step] of planned.steps.entries()) {
    if (step.action === "unchanged") continue
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
    staged.push({
      step,
      bytes,
      lock: {
        origin: planned.origin,
        uri: skill.uri,
        path: step.folder,
        dynamic: skill.resources === "dynamic",
        ...(step.signer === undefined ? {} : { signer: step.signer }),
        files: lockFiles.sort((a, b) => a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)
      }
    })
  }
  return staged
})

/**
 * Step 4: moves every staged skill into place (an accepted older copy into the staging folder's
 * trash) and renames the new lock file over the old one. Every path is checked again right before
 * it is used; a failure undoes the renames done so far, newest first.
 *
 * @since 0.1.0
 */
export const commit = Effect.fnUntraced(function*(
  planned: Plan,
  staged: ReadonlyArray<Staged>,
  staging: string
): Effect.fn.Return<void, Error, FileSystem.FileSystem> {
  const fs = yield* FileSystem.FileSystem
  const { into } = planned
  const undo: Array<Effect.Effect<void, PlatformError.PlatformError>> = []
  const run = Effect.gen(function*() {
    const trash = Path.join(staging, ".replaced")
    yield* fs.makeDirectory(trash).pipe(Effect.mapError(writeError(trash)))
    for (const [index, { step }] of staged.entries()) {
      if (step.action === "nested") continue
      const target = Path.join(into, step.folder)
      // Parents one at a time, each checked: a link created since the plan is refused here.
      const segments = step.folder.split("/")
      let parent = into
      for (const segment of segments.slice(0, -1)) {
        parent = Path.join(parent, segment)
        const type = yield* typeAt(parent)
        if (type === undefined) {
          const dir = parent
          yield* fs.makeDirectory(dir).pipe(Effect.mapError(writeError(dir)))
          undo.push(fs.remove(dir))
        } else if (type !== "Directory") {
          return yield* new UnsafePath({ path: parent, found: type, expected: "directory" })
        }
      }
      const type = yield* typeAt(target)
      if (type !== undefined && (type !== "Directory" || step.action === "add")) {
        return yield* new UnsafePath({ path: target, found: type, expected: "directory" })
      }
      if (type !== undefined) {
        const old = Path.join(trash, String(index))
        yield* fs.rename(target, old).pipe(Effect.mapError(writeError(target)))
        undo.push(fs.rename(old, target))
      }
      const source = Path.join(staging, step.folder)
      yield* fs.rename(source, target).pipe(Effect.mapError(writeError(target)))
      undo.push(fs.rename(target, source))
    }
    const replaced = new Set(staged.map((s) => s.lock.uri))
    // An unchanged skill keeps its record, with the signer that verified it now (--accept-signer).
    const unchanged = new Map(planned.steps.filter((step) => step.action === "unchanged").map((step) => [step.skill.uri as string, step]))
    const kept = planned.lock.skills.filter((s) => !(s.origin === planned.origin && replaced.has(s.uri))).map((s) => {
      const step = s.origin === planned.origin ? unchanged.get(s.uri) : undefined
      if (step === undefined || step.signer === s.signer) return s
      const { signer: _, ...rest } = s
      return step.signer === undefined ? rest : { ...rest, signer: step.signer }
    })
    const next: Lock = {
      version: 1,
      skills: [...kept, ...staged.map((s) => s.lock)].sort((a, b) =>
        a.origin === b.origin ? (a.uri < b.uri ? -1 : 1) : a.origin < b.origin ? -1 : 1
      )
    }
    const lockPath = Path.join(into, LockFileName)
    const temp = Path.join(staging, LockFileName)
    yield* fs.writeFileString(temp, JSON.stringify(next, null, 2) + "\n").pipe(Effect.mapError(writeError(temp)))
    const type = yield* typeAt(lockPath)
    if (type !== undefined && type !== "File") return yield* new UnsafePath({ path: lockPath, found: type, expected: "regular file" })
    yield* fs.rename(temp, lockPath).pipe(Effect.mapError(writeError(lockPath)))
  })
  yield* run.pipe(
    Effect.tapError(() => Effect.forEach(undo.reverse(), (step) => Effect.ignore(step), { discard: true }))
  )
})

/**
 * Pulls skills into `options.into`: {@link select}, {@link plan}, {@link stage}, {@link commit}.
 * Nothing below the target changes unless every selected skill verifies.
 *
 * @since 0.1.0
 */
export const pull = (
  client: SkillsClient.Service,
  options: Options
): Effect.Effect<Summary, Error, FileSystem.FileSystem> =>
  Effect.scoped(Effect.gen(function*() {
    const selected = yield* select(client, options)
    const planned = yield* plan(client, selected, options)
    const staging = yield* stagingFolder(planned.into)
    const staged = yield* stage(client, planned, staging, options.onProgress)
    yield* commit(planned, staged, staging)
    const byUri = new Map(staged.map((s) => [s.lock.uri, s]))
    const skills = planned.steps.map((step): Outcome => {
      if (step.action === "nested") {
        const within = planned.steps.find((outer) => outer.action !== "nested" && step.folder.startsWith(outer.folder + "/"))
        // The outermost selected skill around it is never nested itself.
        return { _tag: "Nested", uri: step.skill.uri, path: step.folder, within: within!.skill.uri }
      }
      const done = byUri.get(step.skill.uri)
      if (step.action === "unchanged" || done === undefined) return { _tag: "Unchanged", uri: step.skill.uri, path: step.folder }
      const counts = { uri: step.skill.uri, path: step.folder, files: done.lock.files.length, bytes: done.bytes }
      return step.previous === undefined
        ? { _tag: "Added", ...counts }
        : { _tag: "Updated", ...counts, ...diffFiles(step.previous.files, done.lock.files) }
    })
    return { skills }
  })).pipe(McpTelemetry.span("mcp_skills.pull"))

// The staging folder, removed with the scope; the target itself too when this pull created it
// and it is empty again (a failed first pull leaves no trace).
const stagingFolder = (into: string): Effect.Effect<string, Error, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const existed = (yield* typeAt(into)) !== undefined
    if (!existed) {
      yield* Effect.acquireRelease(
        fs.makeDirectory(into, { recursive: true }).pipe(Effect.mapError(writeError(into))),
        () => Effect.ignore(fs.remove(into))
      )
    }
    return yield* Effect.acquireRelease(
      fs.makeTempDirectory({ directory: into, prefix: ".mcp-skills-staging-" }).pipe(Effect.mapError(writeError(into))),
      (dir) => Effect.ignore(fs.remove(dir, { recursive: true, force: true }))
    )
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
