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
 */
export const LockFileName = "mcp-skills.lock.json"

/**
 * One pulled file as the lock file records it.
 *
 * @since 0.1.0
 */
export const LockFile = Schema.Struct({ uri: Schema.String, digest: Schema.String, size: Schema.Number, path: Schema.String })

/**
 * One pulled skill as the lock file records it.
 *
 * @since 0.1.0
 */
export const LockSkill = Schema.Struct({
  origin: Schema.String,
  uri: Schema.String,
  path: Schema.String,
  dynamic: Schema.Boolean,
  /** The fingerprint of the trusted key whose signature verified when it was pulled. */
  signer: Schema.optionalKey(Schema.String),
  files: Schema.Array(LockFile)
})

/**
 * @since 0.1.0
 */
export type LockSkill = typeof LockSkill.Type

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
