/**
 * Every way a pull fails, and the one translation of a client failure into a {@link PullError}.
 * `Pull` re-exports all of it.
 *
 * @since 0.1.0
 */
import * as Path from "node:path"
import * as Schema from "effect/Schema"
import type { McpClientError } from "effect/ai/McpClientError"
import type { SkillsClientError } from "./SkillsClientError.js"
import { LockFileName } from "./LockFile.js"

/**
 * What a failed pull checked.
 *
 * @since 0.1.0
 * @category schemas
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
  "local",
  "busy",
  "collision",
  "usage"
])

/**
 * @since 0.1.0
 * @category models
 */
export type Check = typeof Check.Type

/**
 * A pull that failed: `check` names what failed, `skill` and `file` where.
 *
 * @since 0.1.0
 * @category errors
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
 * @category errors
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
 * @category constants
 */
export const MaxDepth = 32

/**
 * Why {@link UnsafeName} refused a name.
 *
 * @since 0.1.0
 * @category schemas
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
 * @category models
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
 * @category errors
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
 * What changed below an installed skill's folder since it was pulled, found by comparing the
 * files with the lock file (size first, then digest): `modified` files differ, `missing` ones are
 * gone, `added` ones were never pulled (no lock record names them). Paths are below the target,
 * `/`-separated. `truncated`: the folder holds more than a pull could have written there, and
 * `added` names only the first found.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Edits = Schema.Struct({
  modified: Schema.Array(Schema.String),
  missing: Schema.Array(Schema.String),
  added: Schema.Array(Schema.String),
  truncated: Schema.Boolean
})

/**
 * @since 0.1.0
 * @category models
 */
export type Edits = typeof Edits.Type

/**
 * The {@link Edits} of one installed skill: its URI and folder below the target.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EditedSkill = Schema.Struct({ uri: Schema.String, path: Schema.String, edits: Edits })

/**
 * @since 0.1.0
 * @category models
 */
export type EditedSkill = typeof EditedSkill.Type

// At most this many paths in a message; the error itself carries them all.
const MaxNamed = 10

/**
 * Files changed on disk since they were pulled, which this pull would overwrite or remove (an
 * update, a restore of a skill whose files no longer match the lock file, or a prune): refused
 * unless `overwriteLocal` (`--overwrite-local`), naming every skill and file.
 *
 * @example
 * ```ts
 * import { Pull, PullError, SkillsClient } from "@mcp-skills/client"
 * import { Console, Effect } from "effect"
 *
 * // A pull that would overwrite files edited since the last one names them, and changes nothing.
 * const pullKeepingEdits = Effect.gen(function*() {
 *   const client = yield* SkillsClient.SkillsClient
 *   return yield* Pull.pull(client, { into: "./vendor-skills", all: true })
 * }).pipe(
 *   Effect.catchIf(
 *     (error): error is PullError.LocalChanges => error instanceof PullError.LocalChanges,
 *     (error) => Console.error(error.message)
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class LocalChanges extends Schema.TaggedError<LocalChanges>()("LocalChanges", {
  skills: Schema.Array(EditedSkill)
}) {
  override get message(): string {
    const named = this.skills.flatMap(({ edits }) => [
      ...edits.modified.map((path) => `${path} (edited)`),
      ...edits.missing.map((path) => `${path} (deleted)`),
      ...edits.added.map((path) => `${path} (added)`)
    ])
    const truncated = this.skills.filter((skill) => skill.edits.truncated).map((skill) => skill.path)
    const shown = named.slice(0, MaxNamed).join(", ")
    const more = named.length > MaxNamed ? ` and ${named.length - MaxNamed} more` : ""
    const full = truncated.length === 0 ? "" : `; ${truncated.join(", ")} holds more than a pull wrote there`
    return `files changed here since they were pulled would be overwritten: ${shown}${more}${full}; pass --overwrite-local to replace them with the verified source`
  }
}

/**
 * What the signer of a skill is now, when it differs from the one its lock record pins.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SignerNow = Schema.Union([
  /** Pulled without `trust`: no signature was checked, so the changed files cannot be the signer's. */
  Schema.TaggedStruct("NotChecked", {}),
  /** Signed by another trusted key, whose signature verifies. */
  Schema.TaggedStruct("SignedBy", { keyId: Schema.String }),
  /** Not signed by any trusted key (allowed unsigned by the trust policy). */
  Schema.TaggedStruct("Unsigned", {})
])

/**
 * @since 0.1.0
 * @category models
 */
export type SignerNow = typeof SignerNow.Type

/**
 * A skill whose lock record pins a signer, which this pull would replace with bytes that signer
 * did not sign (or that nobody checked): refused. Without `trust` the changed skill cannot be
 * verified at all; with it, another signer needs `acceptSigner` (`--accept-signer`).
 *
 * @since 0.1.0
 * @category errors
 */
export class SignerMismatch extends Schema.TaggedError<SignerMismatch>()("SignerMismatch", {
  skill: Schema.String,
  signer: Schema.String,
  now: SignerNow
}) {
  override get message(): string {
    const was = `${this.skill} was signed by ${this.signer} when last pulled`
    switch (this.now._tag) {
      case "NotChecked":
        return `${was} and has changed since; pull it with --trust and that signer's public key to verify the update`
      case "SignedBy":
        return `${was} and is now signed by ${this.now.keyId}; pass --accept-signer to accept it`
      case "Unsigned":
        return `${was} and is now not signed by a trusted key; pass --accept-signer to accept it`
    }
  }
}

/**
 * Another pull, by a process still running, is committing into the same target folder; this one
 * changed nothing.
 *
 * @since 0.1.0
 * @category errors
 */
export class PullInProgress extends Schema.TaggedError<PullInProgress>()("PullInProgress", {
  path: Schema.String,
  pid: Schema.Int
}) {
  override get message(): string {
    return `another pull (process ${this.pid}) is committing into ${this.path}; try again when it has finished`
  }
}

/**
 * A skill whose folder is already another skill's, as the lock file records it: the same folder
 * (or one inside the other, or one name on a case-folding file system). Two servers serving a
 * skill of one name into one host folder meet here: `server` and `otherServer` name both. A
 * `prefix` (`--prefix`) gives one server's skills folders of their own; two skills of one name
 * from one server cannot share a host folder.
 *
 * @since 0.1.0
 * @category errors
 */
export class FolderTaken extends Schema.TaggedError<FolderTaken>()("FolderTaken", {
  /** The folder below the target, `/`-separated. */
  folder: Schema.String,
  skill: Schema.String,
  server: Schema.String,
  /** The folder the other skill has. */
  otherFolder: Schema.String,
  other: Schema.String,
  otherServer: Schema.String
}) {
  override get message(): string {
    const where = this.folder === this.otherFolder ? this.folder : `${this.folder} (and ${this.otherFolder})`
    const head = `${this.skill} from ${this.server} would be installed at ${where}, which holds ${this.other}`
    return this.server === this.otherServer
      ? `${head} of the same server: a folder holds one skill of each name; pull one of them, or pull into another folder`
      : `${head} from ${this.otherServer}; pass --prefix to install the skills of ${this.server} under folders of their own`
  }
}

/**
 * Every failure of a pull.
 *
 * @since 0.1.0
 * @category errors
 */
export type Error = PullError | UnsafePath | UnsafeName | LocalChanges | SignerMismatch | PullInProgress | FolderTaken

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
  UntrustedSigner: "signature",
  ServerNotStarted: "transport",
  ServerStopped: "transport"
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
 * @category utils
 */
export const toPullError = (
  error: SkillsClientError | McpClientError | Error,
  where: { readonly skill?: string | undefined; readonly file?: string | undefined } = {}
): PullError => {
  switch (error._tag) {
    case "PullError":
      return error
    case "UnsafeName":
      return located("name", { skill: error.skill, file: error.uri }, error.message)
    case "LocalChanges":
      return located("local", {}, error.message)
    case "SignerMismatch":
      return located("signer", { skill: error.skill }, error.message)
    case "PullInProgress":
      return located("busy", { file: error.path }, error.message)
    case "FolderTaken":
      return located("collision", { skill: error.skill }, error.message)
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
