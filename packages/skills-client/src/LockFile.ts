/**
 * The lock file a pull keeps in its target folder: its name and its schema. `Pull` re-exports both.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The lock file name inside the target folder.
 *
 * @since 0.1.0
 * @category constants
 */
export const LockFileName = "mcp-skills.lock.json"

/**
 * The largest lock file a pull reads (64 MiB): some 200,000 files' records. Anything larger was
 * not written by a pull, and is refused before it is read.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxLockFileBytes = 64 * 1024 * 1024

// A pull writes only below its target, through plain segments: a record naming `..`, an absolute
// path or a hidden name (a staging folder) would have a prune or a check reach outside a skill.
const isPlainPath = (path: string) =>
  path.length > 0 && path.split("/").every((segment) =>
    segment.length > 0 && !segment.startsWith(".") && !segment.includes("\\") && !segment.includes("\u0000")
  )

/**
 * A path below the target as the lock file records it: `/`-separated plain segments, none empty,
 * hidden (`.`, `..` included) or holding a backslash or NUL.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RelativePath = Schema.String.check(
  Schema.makeFilter((path: string) => isPlainPath(path) || "a relative path of plain segments (no empty, hidden, . or .. segment)")
)

/**
 * One pulled file as the lock file records it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LockFile = Schema.Struct({
  uri: Schema.String,
  digest: Schema.String,
  size: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  path: RelativePath
})

/**
 * One pulled skill as the lock file records it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LockSkill = Schema.Struct({
  origin: Schema.String,
  uri: Schema.String,
  path: RelativePath,
  dynamic: Schema.Boolean,
  /** The fingerprint of the trusted key whose signature verified when it was pulled. */
  signer: Schema.optionalKey(Schema.String),
  /**
   * When its files were last fetched and verified (ISO 8601, UTC); absent in lock files written
   * before it was recorded.
   */
  verifiedAt: Schema.optionalKey(Schema.String),
  files: Schema.Array(LockFile)
})

/**
 * @since 0.1.0
 * @category models
 */
export type LockSkill = typeof LockSkill.Type

/**
 * The lock file: for every pulled skill its origin (the host-assigned server label, R23: the URL,
 * or the command line of a stdio server), its URI and folder, every file with digest and size,
 * when it was verified, and the signer that verified it (pulled with `trust`). One lock file per
 * folder, whichever servers its skills came from.
 *
 * @example
 * ```ts
 * import { LockFile } from "@mcp-skills/client"
 * import { Schema } from "effect"
 * import * as fs from "node:fs"
 *
 * // What the last pull into ./vendor-skills installed, decoded by the lock file's schema.
 * const lock = Schema.decodeUnknownSync(LockFile.Lock)(
 *   JSON.parse(fs.readFileSync(`./vendor-skills/${LockFile.LockFileName}`, "utf8"))
 * )
 * const uris = lock.skills.map((skill) => skill.uri)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Lock = Schema.Struct({
  version: Schema.Literal(1),
  skills: Schema.Array(LockSkill)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Lock = typeof Lock.Type
