/**
 * The checks of spec §5.1 as pure functions: what an entry alone decides (R12, R15-R17), where a
 * reference points (R103, R125), what a `resources/read` answer may carry, the bytes of an item
 * against its manifest entry (R120, R121) and the frontmatter of a `SKILL.md` against its entry
 * (R126). `SkillsClient` composes them around its requests; each is testable without a server.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as McpSchema from "effect/ai/McpSchema"
import { Digest, Limits, Signing, Skill, SkillFrontmatter, SkillUri } from "@mcp-skills/core"
import * as NodeFs from "node:fs"
import {
  DigestMismatch,
  DynamicSkillRefused,
  FrontmatterMismatch,
  InvalidResourceContents,
  LimitExceeded,
  ReferenceOutsideSkill,
  type SignatureError,
  SignatureInvalid,
  SizeMismatch,
  UnexpectedContents,
  UnlistedResource,
  UnsignedSkill,
  UntrustedSigner,
  WrongResourceReturned
} from "./SkillsClientError.js"

/**
 * An entry that passed {@link checkEntry}, with its manifest by uri (the first listing of a uri
 * wins, as with `Skill.findResource`). Empty for `"dynamic"` skills.
 *
 * @since 0.1.0
 * @category models
 */
export interface CheckedEntry {
  readonly skill: Skill.Skill
  readonly byUri: ReadonlyMap<string, Skill.SkillResource>
  /**
   * The trusted keys whose signatures verify (empty: accepted unsigned); `undefined` when the
   * client trusts no key and checks no signature.
   */
  readonly signers: ReadonlyArray<Signing.KeyId> | undefined
}

/**
 * Which signers a client trusts: public keys (SPKI PEM text, or read with `Signing.publicKey`),
 * and whether every skill needs a signature by one of them (`"required"`) or only signatures that
 * are there must hold (`"optional"`: an unsigned skill, or one signed by other keys only, loads
 * unverified; a signature by a trusted key that does not verify never does). `unsigned` lists
 * skill URIs loaded without a signature even when one is required: `"dynamic"` skills and skills
 * rendered per caller cannot be signed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Trust {
  readonly keys: ReadonlyArray<string | Signing.PublicKey>
  readonly mode: "required" | "optional"
  readonly unsigned?: ReadonlyArray<string> | undefined
}

/**
 * A {@link Trust} with its keys read: trusted fingerprints, and URIs allowed unsigned.
 *
 * @since 0.1.0
 * @category models
 */
export interface TrustPolicy {
  readonly keyIds: ReadonlySet<Signing.KeyId>
  readonly required: boolean
  readonly unsigned: ReadonlySet<string>
}

/**
 * Reads the keys of a {@link Trust}; the first key that is not an ed25519 public key fails it.
 *
 * @since 0.1.0
 * @category verification
 */
export const trustPolicy = (trust: Trust): Result.Result<TrustPolicy, Signing.SigningError> => {
  const keyIds = new Set<Signing.KeyId>()
  for (const key of trust.keys) {
    const read = typeof key === "string" ? Signing.publicKey(key) : Result.succeed(key)
    if (Result.isFailure(read)) return Result.fail(read.failure)
    keyIds.add(read.success.keyId)
  }
  return Result.succeed({ keyIds, required: trust.mode === "required", unsigned: new Set(trust.unsigned ?? []) })
}

/**
 * The signature check of an entry (before any file of it is read): the trusted signers whose
 * signature verifies, or why the entry is refused. A signature by a trusted key that does not
 * verify is always refused; a skill signed by no trusted key, or not at all, only when a signature
 * is required and its URI is not allowed unsigned. The files themselves are then held to the
 * signed digests and sizes by every read, and `SKILL.md` to the signed frontmatter (R126).
 *
 * @since 0.1.0
 * @category verification
 */
export const checkSignature = (
  skill: Skill.Skill,
  policy: TrustPolicy
): Result.Result<ReadonlyArray<Signing.KeyId>, SignatureError> => {
  const verdict = Signing.evaluate(skill, (keyId) => policy.keyIds.has(keyId))
  const demanded = policy.required && !policy.unsigned.has(skill.uri)
  switch (verdict._tag) {
    case "Verified":
      return Result.succeed(verdict.keyIds)
    case "Invalid":
      return Result.fail(new SignatureInvalid({ uri: skill.uri, ...(verdict.keyId === undefined ? {} : { keyId: verdict.keyId }), problem: verdict.problem }))
    case "Untrusted":
      return demanded ? Result.fail(new UntrustedSigner({ uri: skill.uri, keyIds: verdict.keyIds })) : Result.succeed([])
    case "Unsigned":
      return demanded ? Result.fail(new UnsignedSkill({ uri: skill.uri, dynamic: skill.resources === "dynamic" })) : Result.succeed([])
  }
}

/**
 * The checks an entry alone allows beyond its shape: limits, `"dynamic"` (R12, R15-R17) and, with
 * a trust policy, its signatures ({@link checkSignature}).
 *
 * @since 0.1.0
 * @category verification
 */
export const checkEntry = (
  skill: Skill.Skill,
  options: { readonly limits: Limits.Limits; readonly allowDynamic: boolean; readonly trust?: TrustPolicy | undefined }
): Result.Result<CheckedEntry, LimitExceeded | DynamicSkillRefused | SignatureError> => {
  const signers = options.trust === undefined ? Result.succeed(undefined) : checkSignature(skill, options.trust)
  if (Result.isFailure(signers)) return Result.fail(signers.failure)
  if (skill.resources === "dynamic") {
    return options.allowDynamic
      ? Result.succeed({ skill, byUri: new Map(), signers: signers.success })
      : Result.fail(new DynamicSkillRefused({ uri: skill.uri }))
  }
  const violation = Skill.limitViolations(skill, options.limits)[0]
  if (violation !== undefined) {
    return Result.fail(new LimitExceeded({ uri: skill.uri, limit: violation.limit, actual: violation.actual, max: violation.max }))
  }
  const byUri = new Map<string, Skill.SkillResource>()
  for (const resource of skill.resources) if (!byUri.has(resource.uri)) byUri.set(resource.uri, resource)
  return Result.succeed({ skill, byUri, signers: signers.success })
}

/**
 * What a read asks for: the resolved uri and its manifest entry (`undefined` for a `"dynamic"` skill).
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  readonly uri: string
  readonly resource: Skill.SkillResource | undefined
}

/**
 * Resolves a uri or a reference relative to the skill root (R103); a file the manifest does not
 * list is refused before any request (R125).
 *
 * @since 0.1.0
 * @category verification
 */
export const resolveTarget = (
  entry: CheckedEntry,
  uriOrReference: string
): Result.Result<Target, ReferenceOutsideSkill | UnlistedResource> => {
  const { skill } = entry
  const resolved = SkillUri.resolve(skill.uri, uriOrReference)
  if (Result.isFailure(resolved)) return Result.fail(new ReferenceOutsideSkill({ skill: skill.uri, reference: uriOrReference }))
  const uri: string = resolved.success
  const resource = entry.byUri.get(uri)
  if (skill.resources !== "dynamic" && resource === undefined) return Result.fail(new UnlistedResource({ skill: skill.uri, uri }))
  return Result.succeed({ uri, resource })
}

/**
 * One item of a `resources/read` answer as raw bytes: the UTF-8 encoding of `text` exactly as
 * received, or the decoded `blob`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Item {
  readonly uri: string
  readonly mimeType: string | undefined
  readonly bytes: Uint8Array
}

// The shape of effect's `McpSchema.ReadResourceResult` with `blob` left as its string: the schema's
// own base64 decoding costs about six times the native one below, which a 16 MiB pull feels.
const decodeReadResult = Schema.decodeUnknownResult(Schema.toEncoded(McpSchema.ReadResourceResult))
const utf8 = new TextEncoder()
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

// Strict base64 decoded to fresh bytes, or undefined. `Buffer.from` skips characters outside the
// alphabet, so its answer is trusted only when it re-encodes to the exact input (canonical
// base64, the common case); anything else must match the pattern, which admits non-zero pad bits.
const decodeBase64 = (blob: string): Uint8Array | undefined => {
  const decoded = Buffer.from(blob, "base64")
  if (decoded.toString("base64") !== blob && !base64.test(blob)) return undefined
  // A copy: small Buffers share a pooled ArrayBuffer with unrelated data.
  return new Uint8Array(decoded)
}

/**
 * Decodes a `resources/read` result with the shape of effect's `McpSchema.ReadResourceResult`:
 * per item `text`, or a strict base64 `blob`.
 *
 * @since 0.1.0
 * @category codecs
 */
export const decodeContents = (uri: string, result: unknown): Result.Result<ReadonlyArray<Item>, InvalidResourceContents> => {
  const decoded = decodeReadResult(result)
  if (Result.isFailure(decoded)) {
    // One line: the schema's report spans several.
    return Result.fail(new InvalidResourceContents({ uri, detail: decoded.failure.message.replace(/\s*\n\s*/g, "; ") }))
  }
  const items: Array<Item> = []
  for (const item of decoded.success.contents) {
    const bytes = "text" in item ? utf8.encode(item.text) : decodeBase64(item.blob)
    if (bytes === undefined) {
      const detail = item.uri === uri ? "blob is not valid base64" : `the blob of ${item.uri} is not valid base64`
      return Result.fail(new InvalidResourceContents({ uri, detail }))
    }
    items.push({ uri: item.uri, mimeType: item.mimeType, bytes })
  }
  return Result.succeed(items)
}

/**
 * The length of an item against its manifest entry, without hashing (R121): all a cache hit needs,
 * as a `SkillCache` store answers only bytes whose digest is the one asked for.
 *
 * @since 0.1.0
 * @category verification
 */
export const checkSize = (
  skill: string,
  resource: Skill.SkillResource,
  bytes: Uint8Array
): Result.Result<void, SizeMismatch> =>
  bytes.byteLength === resource.size
    ? Result.succeed(undefined)
    : Result.fail(new SizeMismatch({ skill, uri: resource.uri, expected: resource.size, actual: bytes.byteLength }))

/**
 * The bytes of an item against its manifest entry: length first, without hashing (R121), then
 * the digest (R120).
 *
 * @example
 * ```ts
 * import { Verification } from "@mcp-skills/client"
 * import { Manifest, Skill, SkillUri } from "@mcp-skills/core"
 * import { Result } from "effect"
 *
 * const bytes = new TextEncoder().encode("---\nname: refunds\ndescription: Refunds\n---\n")
 * const uri = Result.getOrThrow(SkillUri.skillMd("skill", ["refunds"]))
 * const skill = Manifest.entry(Result.getOrThrow(Manifest.make({ uri, files: [{ path: "SKILL.md", bytes }] })))
 * const resource = Skill.findResource(skill, uri)! // SKILL.md: its uri, digest and size
 *
 * Result.isSuccess(Verification.checkContent(uri, resource, bytes)) // true
 * Verification.checkContent(uri, resource, bytes.map((byte) => byte ^ 1))
 * // Failure: DigestMismatch, with the expected and the actual digest
 * ```
 *
 * @since 0.1.0
 * @category verification
 */
export const checkContent = (
  skill: string,
  resource: Skill.SkillResource,
  bytes: Uint8Array
): Result.Result<void, SizeMismatch | DigestMismatch> => {
  const size = checkSize(skill, resource, bytes)
  if (Result.isFailure(size)) return size
  const digest = Digest.make(bytes)
  return digest === resource.digest
    ? Result.succeed(undefined)
    : Result.fail(new DigestMismatch({ skill, uri: resource.uri, expected: resource.digest, actual: digest }))
}

/**
 * The requested item of an answer, every item checked: the requested uri must be there, and
 * every item, the requested one included, must be a file of the skill listed in its manifest
 * whose bytes verify. A `"dynamic"` skill vouches for nothing, so its answers must hold the
 * requested item alone. Items are refused before the requested one is checked, so a server
 * appending content nobody listed is always told.
 *
 * @since 0.1.0
 * @category verification
 */
export const selectItem = (
  entry: CheckedEntry,
  target: Target,
  items: ReadonlyArray<Item>
): Result.Result<Item, WrongResourceReturned | UnexpectedContents | SizeMismatch | DigestMismatch> => {
  const requested = items.find((item) => item.uri === target.uri)
  if (requested === undefined) return Result.fail(new WrongResourceReturned({ uri: target.uri, returned: items.map((item) => item.uri) }))
  const extra = items.filter((item) => item.uri !== target.uri && !entry.byUri.has(item.uri)).map((item) => item.uri)
  if (extra.length > 0) return Result.fail(new UnexpectedContents({ uri: target.uri, extra }))
  for (const item of items) {
    const resource = entry.byUri.get(item.uri)
    if (resource === undefined) {
      // Only the requested item of a "dynamic" skill gets here; a repeat of it must be identical.
      if (item !== requested && !bytesEqual(item.bytes, requested.bytes)) {
        return Result.fail(new UnexpectedContents({ uri: target.uri, extra: [item.uri] }))
      }
      continue
    }
    const checked = checkContent(entry.skill.uri, resource, item.bytes)
    if (Result.isFailure(checked)) return Result.fail(checked.failure)
  }
  return Result.succeed(requested)
}

const bytesEqual = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i])

/**
 * The frontmatter of a fetched `SKILL.md` must be exactly the entry's (R126).
 *
 * @since 0.1.0
 * @category verification
 */
export const checkFrontmatter = (
  skill: Skill.Skill,
  bytes: Uint8Array
): Result.Result<SkillFrontmatter.Document, FrontmatterMismatch> => {
  const parsed = SkillFrontmatter.parse(bytes)
  if (Result.isFailure(parsed)) {
    return Result.fail(new FrontmatterMismatch({ uri: skill.uri, fields: [], detail: parsed.failure.message }))
  }
  const differences = SkillFrontmatter.diff(skill.frontmatter, parsed.success.frontmatter)
  return differences.length > 0
    ? Result.fail(new FrontmatterMismatch({ uri: skill.uri, fields: differences.map((d) => d.field) }))
    : Result.succeed(parsed.success)
}

// A PEM public key is a few hundred bytes; anything past this is not one.
const MaxKeyFileBytes = 64 * 1024

/**
 * Reads a signer's public key from a PEM file named on a command line (`--trust`): opened without
 * blocking (a FIFO or a device of that name never holds the process), a regular file of at most
 * 64 KiB, then an ed25519 SPKI key. The key, or why not, naming the file.
 *
 * @since 0.1.0
 * @category verification
 */
export const readPublicKeyFile = (path: string): Result.Result<Signing.PublicKey, string> => {
  let fd: number
  try {
    fd = NodeFs.openSync(path, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK | NodeFs.constants.O_NOCTTY)
  } catch (error) {
    return Result.fail(`${path}: ${error instanceof Error ? error.message : String(error)}`)
  }
  try {
    const stats = NodeFs.fstatSync(fd)
    if (!stats.isFile()) return Result.fail(`${path}: not a regular file`)
    if (stats.size > MaxKeyFileBytes) return Result.fail(`${path}: larger than ${MaxKeyFileBytes} bytes, not a public key`)
    const bytes = Buffer.alloc(stats.size)
    const read = NodeFs.readSync(fd, bytes, 0, stats.size, 0)
    const key = Signing.publicKey(bytes.subarray(0, read).toString("utf8"))
    return Result.isFailure(key) ? Result.fail(`${path}: ${key.failure.reason}`) : Result.succeed(key.success)
  } catch (error) {
    return Result.fail(`${path}: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    NodeFs.closeSync(fd)
  }
}
