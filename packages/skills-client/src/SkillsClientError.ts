/**
 * Typed failures of the Skills client. Each carries the data a caller needs to explain the
 * failure or recover (spec §5.1). Transport and protocol failures stay effect's `McpClientError`,
 * but for a stdio server that could not start or stopped: {@link ServerNotStarted} and
 * {@link ServerStopped} name the command, how it ended and what it last wrote to stderr.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Signing, type Skill } from "@mcp-skills/core"

/**
 * The server did not declare `io.modelcontextprotocol/skills`, so no `skills/*` request is sent (R86).
 *
 * @since 0.1.0
 * @category errors
 */
export class ExtensionNotSupported extends Schema.TaggedError<ExtensionNotSupported>()("ExtensionNotSupported", {
  server: Schema.String
}) {
  override get message(): string {
    return `${this.server} does not offer the io.modelcontextprotocol/skills extension: it declares no skills capability`
  }
}

/**
 * `resources/directory/read` was refused locally: the server did not declare `directoryRead` (R49).
 *
 * @since 0.1.0
 * @category errors
 */
export class DirectoryReadNotSupported
  extends Schema.TaggedError<DirectoryReadNotSupported>()("DirectoryReadNotSupported", {
    uri: Schema.String
  })
{
  override get message(): string {
    return `cannot read directory ${this.uri}: the server does not declare directoryRead`
  }
}

/**
 * `skills/get` answered that no skill is served at `uri` (-32602, R41). `detail` keeps the
 * server's own words; the message does not repeat them, as they name the same uri.
 *
 * @example
 * ```ts
 * import { SkillsClient } from "@mcp-skills/client"
 * import { Effect } from "effect"
 *
 * // Each failure is a typed error: recover from the ones you expect by their tag.
 * const entryOrNothing = (uri: string) =>
 *   Effect.gen(function*() {
 *     const client = yield* SkillsClient.SkillsClient
 *     return (yield* client.getSkill(uri)).skill
 *   }).pipe(Effect.catchTag("SkillNotFound", () => Effect.succeed(undefined)))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class SkillNotFound extends Schema.TaggedError<SkillNotFound>()("SkillNotFound", {
  uri: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `no skill is served at ${this.uri}`
  }
}

const refetched = (count: number | undefined) =>
  count === undefined || count === 0 ? "" : ` (also after fetching the entry again)`

/**
 * `resources/read` answered that a file of a skill is not there (-32602; -32002 from servers on
 * 2025-11-25): hidden from this caller (a grant withdrawn, an entry fetched under other credentials)
 * or removed since its entry was fetched. Against an entry that may be stale the entry is fetched
 * again first, and `entryRefetches` counts that (0 or 1; see `SkillsClient`). `detail` keeps the
 * server's words.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResourceNotFound extends Schema.TaggedError<ResourceNotFound>()("ResourceNotFound", {
  skill: Schema.String,
  uri: Schema.String,
  detail: Schema.String,
  entryRefetches: Schema.optionalKey(Schema.Int)
}) {
  override get message(): string {
    return `the server does not serve ${this.uri} of ${this.skill} to this client: it is hidden or was removed${refetched(this.entryRefetches)}`
  }
}

/**
 * `resources/directory/read` answered that no directory is served at `uri` (-32602): hidden, removed,
 * or a file rather than a directory.
 *
 * @since 0.1.0
 * @category errors
 */
export class DirectoryNotFound extends Schema.TaggedError<DirectoryNotFound>()("DirectoryNotFound", {
  uri: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `no directory is served at ${this.uri}`
  }
}

/**
 * A request carrying a cursor was refused (-32602, R35: unknown or expired, e.g. after the server
 * restarted); list again from the start, without a cursor. `method` is `skills/list` or
 * `resources/directory/read`.
 *
 * @since 0.1.0
 * @category errors
 */
export class CursorRejected extends Schema.TaggedError<CursorRejected>()("CursorRejected", {
  method: Schema.String,
  cursor: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.method} refused the cursor ${JSON.stringify(this.cursor)}: ${this.detail}`
  }
}

/**
 * A skill exceeds a per-skill limit (R15-R18): from its manifest, or, for a `"dynamic"` skill,
 * from the bytes fetched so far.
 *
 * @since 0.1.0
 * @category errors
 */
export class LimitExceeded extends Schema.TaggedError<LimitExceeded>()("LimitExceeded", {
  uri: Schema.String,
  limit: Schema.Literals(["resources", "bytes"]),
  actual: Schema.Number,
  max: Schema.Number
}) {
  override get message(): string {
    return `${this.uri}: ${this.actual} ${this.limit === "resources" ? "files" : "bytes"} exceed the limit of ${this.max}`
  }
}

/**
 * A read of a file the held manifest does not list, refused before any request (R125).
 *
 * @since 0.1.0
 * @category errors
 */
export class UnlistedResource extends Schema.TaggedError<UnlistedResource>()("UnlistedResource", {
  skill: Schema.String,
  uri: Schema.String
}) {
  override get message(): string {
    return `${this.uri} is not listed in the manifest of ${this.skill}`
  }
}

/**
 * A reference resolves outside the skill's folder (`..` past the root, another skill, another
 * scheme): refused before any request, as no manifest can list it (R103, R125).
 *
 * @since 0.1.0
 * @category errors
 */
export class ReferenceOutsideSkill extends Schema.TaggedError<ReferenceOutsideSkill>()("ReferenceOutsideSkill", {
  skill: Schema.String,
  reference: Schema.String
}) {
  override get message(): string {
    return `${this.reference} leaves the skill ${this.skill}`
  }
}

/**
 * A `resources/read` answer carried items besides the requested file that the manifest does not
 * vouch for (`extra`): items of another skill, unlisted files, or several items of a `"dynamic"`
 * skill. Nothing of the answer is used; a server sending content nobody listed is misbehaving.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedContents extends Schema.TaggedError<UnexpectedContents>()("UnexpectedContents", {
  uri: Schema.String,
  extra: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `reading ${this.uri}, the server also sent ${this.extra.join(", ")}, which the manifest does not list`
  }
}

/**
 * The answer did not contain the requested uri (`returned` lists what came back), or an entry
 * from `skills/get` names another skill than requested.
 *
 * @since 0.1.0
 * @category errors
 */
export class WrongResourceReturned extends Schema.TaggedError<WrongResourceReturned>()("WrongResourceReturned", {
  uri: Schema.String,
  returned: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `asked for ${this.uri}, the server answered ${this.returned.length === 0 ? "nothing" : this.returned.join(", ")}`
  }
}

/**
 * The contents item has neither usable `text` nor valid base64 `blob`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidResourceContents extends Schema.TaggedError<InvalidResourceContents>()("InvalidResourceContents", {
  uri: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.uri}: ${this.detail}`
  }
}

/**
 * The byte length of a file differs from the manifest `size` (R121).
 *
 * @since 0.1.0
 * @category errors
 */
export class SizeMismatch extends Schema.TaggedError<SizeMismatch>()("SizeMismatch", {
  skill: Schema.String,
  uri: Schema.String,
  expected: Schema.Number,
  actual: Schema.Number,
  /** How often the entry was fetched again before giving up (0 or 1; see `SkillsClient`). */
  entryRefetches: Schema.optionalKey(Schema.Int)
}) {
  override get message(): string {
    return `${this.uri}: size ${this.actual} differs from the manifest size ${this.expected}${refetched(this.entryRefetches)}`
  }
}

/**
 * The SHA-256 of a file differs from the manifest `digest` (R120).
 *
 * @since 0.1.0
 * @category errors
 */
export class DigestMismatch extends Schema.TaggedError<DigestMismatch>()("DigestMismatch", {
  skill: Schema.String,
  uri: Schema.String,
  expected: Schema.String,
  actual: Schema.String,
  /** How often the entry was fetched again before giving up (0 or 1; see `SkillsClient`). */
  entryRefetches: Schema.optionalKey(Schema.Int)
}) {
  override get message(): string {
    return `${this.uri}: digest ${this.actual} differs from the manifest digest ${this.expected}${refetched(this.entryRefetches)}`
  }
}

/**
 * The frontmatter of the fetched `SKILL.md` differs from the entry (R126). `fields` names every
 * differing top-level key; `detail` explains a frontmatter that does not parse at all.
 *
 * @since 0.1.0
 * @category errors
 */
export class FrontmatterMismatch extends Schema.TaggedError<FrontmatterMismatch>()("FrontmatterMismatch", {
  uri: Schema.String,
  fields: Schema.Array(Schema.String),
  detail: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return this.detail !== undefined
      ? `${this.uri}: frontmatter does not parse: ${this.detail}`
      : `${this.uri}: frontmatter differs from the entry in ${this.fields.join(", ")}`
  }
}

/**
 * A `"dynamic"` skill was refused because the caller did not opt in (R12, R141).
 *
 * @since 0.1.0
 * @category errors
 */
export class DynamicSkillRefused extends Schema.TaggedError<DynamicSkillRefused>()("DynamicSkillRefused", {
  uri: Schema.String
}) {
  override get message(): string {
    return `${this.uri} is a "dynamic" skill (no digests); allow dynamic skills to load it`
  }
}

/**
 * A skill carries no signature while the client requires one (`trust.mode: "required"`). A
 * `"dynamic"` skill (`dynamic: true`) can never be signed: it has no digests; nor can a skill
 * rendered per caller. Either is loaded only when its URI is allowed unsigned (`trust.unsigned`).
 *
 * @since 0.1.0
 * @category errors
 */
export class UnsignedSkill extends Schema.TaggedError<UnsignedSkill>()("UnsignedSkill", {
  uri: Schema.String,
  dynamic: Schema.Boolean
}) {
  override get message(): string {
    return this.dynamic
      ? `${this.uri} is "dynamic" and cannot be signed (it has no digests); allow it unsigned by its URI to load it`
      : `${this.uri} carries no signature, and a signature by a trusted key is required (the server, or something between, may have dropped it)`
  }
}

/**
 * A signature by a trusted key (or a malformed signature record, `keyId` absent) does not verify
 * against the entry: its name, frontmatter or files differ from what the author signed. `problem`
 * says which check failed (`Signing.Problem`).
 *
 * @since 0.1.0
 * @category errors
 */
export class SignatureInvalid extends Schema.TaggedError<SignatureInvalid>()("SignatureInvalid", {
  uri: Schema.String,
  keyId: Schema.optionalKey(Schema.String),
  problem: Signing.Problem
}) {
  override get message(): string {
    return `${this.uri}: the signature${this.keyId === undefined ? "" : ` by ${this.keyId}`} does not verify: ${
      Signing.describeProblem(this.problem)
    }`
  }
}

/**
 * A skill is signed, but by no trusted key: `keyIds` are its signers' fingerprints.
 *
 * @since 0.1.0
 * @category errors
 */
export class UntrustedSigner extends Schema.TaggedError<UntrustedSigner>()("UntrustedSigner", {
  uri: Schema.String,
  keyIds: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.uri} is signed by ${this.keyIds.join(", ")}, which is not a trusted key`
  }
}

/**
 * Every failure of the signature check of an entry (see `SkillsClient.Options.trust`).
 *
 * @since 0.1.0
 * @category errors
 */
export type SignatureError = UnsignedSkill | SignatureInvalid | UntrustedSigner

/**
 * `skills/list` handed back a cursor it had already handed out (R34/R35).
 *
 * @since 0.1.0
 * @category errors
 */
export class RepeatedCursor extends Schema.TaggedError<RepeatedCursor>()("RepeatedCursor", {
  cursor: Schema.String,
  page: Schema.Int
}) {
  override get message(): string {
    return `skills/list repeated the cursor ${JSON.stringify(this.cursor)} on page ${this.page}`
  }
}

/**
 * A listing (`skills/list`, a directory read) kept going past what the client holds of one:
 * more entries than `maxEntries`, more bytes of pages than `maxListingBytes`, or
 * `ClientLimits.MaxEmptyPages` pages in a row without an entry (`bound` says which), after
 * `pages` pages.
 *
 * @since 0.1.0
 * @category errors
 */
export class RunawayListing extends Schema.TaggedError<RunawayListing>()("RunawayListing", {
  method: Schema.String,
  bound: Schema.Literals(["maxEntries", "maxListingBytes", "emptyPages"]),
  limit: Schema.Int,
  pages: Schema.Int,
  entries: Schema.Int,
  bytes: Schema.Int
}) {
  override get message(): string {
    const past = this.bound === "maxEntries"
      ? `${this.entries} entries, past the bound of ${this.limit} (maxEntries)`
      : this.bound === "maxListingBytes"
      ? `${this.bytes} bytes of pages, past the bound of ${this.limit} (maxListingBytes)`
      : `${this.limit} pages in a row without an entry`
    return `${this.method} did not end: ${past}, after ${this.pages} pages`
  }
}

/**
 * Every verification failure of a file read.
 *
 * @since 0.1.0
 * @category errors
 */
export type VerificationError =
  | UnlistedResource
  | ReferenceOutsideSkill
  | UnexpectedContents
  | WrongResourceReturned
  | InvalidResourceContents
  | SizeMismatch
  | DigestMismatch
  | FrontmatterMismatch
  | DynamicSkillRefused
  | LimitExceeded
  | SignatureError

/**
 * Every typed failure of the Skills client.
 *
 * @since 0.1.0
 * @category errors
 */
export type SkillsClientError =
  | ExtensionNotSupported
  | DirectoryReadNotSupported
  | SkillNotFound
  | ResourceNotFound
  | DirectoryNotFound
  | CursorRejected
  | Skill.InvalidSkillEntry
  | RepeatedCursor
  | RunawayListing
  | VerificationError
  | StdioError

/**
 * A stdio server's command could not be started (`SkillsClient.layerStdio`): no such command
 * (`ENOENT`), one that may not be run (`EACCES`), or a working folder that is not there. `code` is
 * the operating system's, when it gave one; `detail` says it in words.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerNotStarted extends Schema.TaggedError<ServerNotStarted>()("ServerNotStarted", {
  command: Schema.String,
  code: Schema.optionalKey(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return `cannot start the server command ${this.command}: ${this.detail}${this.code === undefined ? "" : ` (${this.code})`}`
  }
}

/**
 * How a stdio server ended: `Exited` with its exit code, `Killed` by a signal, or `Running`: it
 * closed its side of the pipes and had not exited within `ClientLimits.ExitWait`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ServerExit = Schema.Union([
  Schema.TaggedStruct("Exited", { code: Schema.Int }),
  Schema.TaggedStruct("Killed", { signal: Schema.String }),
  Schema.TaggedStruct("Running", {})
])

/**
 * @since 0.1.0
 * @category models
 */
export type ServerExit = typeof ServerExit.Type

/**
 * A stdio server stopped answering (`SkillsClient.layerStdio`), at the handshake or on any later
 * request: how it ended, and the last lines it wrote to stderr (at most `ClientLimits.StderrLines`
 * of its last `ClientLimits.StderrBytes` bytes), which usually say why. `server` is the client's
 * name for it (the command line by default). The message is one line, then the stderr lines.
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerStopped extends Schema.TaggedError<ServerStopped>()("ServerStopped", {
  server: Schema.String,
  exit: ServerExit,
  stderr: Schema.Array(Schema.String)
}) {
  override get message(): string {
    const how = this.exit._tag === "Exited"
      ? `exited with code ${this.exit.code}`
      : this.exit._tag === "Killed"
      ? `was killed by ${this.exit.signal}`
      : "closed its output but did not exit"
    return this.stderr.length === 0
      ? `the server ${this.server} ${how} and wrote nothing to stderr`
      : [`the server ${this.server} ${how}; its stderr ends with:`, ...this.stderr.map((line) => `  ${line}`)].join("\n")
  }
}

/**
 * The failures of a stdio server itself.
 *
 * @since 0.1.0
 * @category errors
 */
export type StdioError = ServerNotStarted | ServerStopped
