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
import { Digest, Limits, Skill, SkillFrontmatter, SkillUri } from "@mcp-skills/core"
import {
  DigestMismatch,
  DynamicSkillRefused,
  FrontmatterMismatch,
  InvalidResourceContents,
  LimitExceeded,
  ReferenceOutsideSkill,
  SizeMismatch,
  UnexpectedContents,
  UnlistedResource,
  WrongResourceReturned
} from "./SkillsClientError.js"

/**
 * An entry that passed {@link checkEntry}, with its manifest by uri (the first listing of a uri
 * wins, as with `Skill.findResource`). Empty for `"dynamic"` skills.
 *
 * @since 0.1.0
 */
export interface CheckedEntry {
  readonly skill: Skill.Skill
  readonly byUri: ReadonlyMap<string, Skill.SkillResource>
}

/**
 * The checks an entry alone allows beyond its shape: limits and `"dynamic"` (R12, R15-R17).
 *
 * @since 0.1.0
 */
export const checkEntry = (
  skill: Skill.Skill,
  options: { readonly limits: Limits.Limits; readonly allowDynamic: boolean }
): Result.Result<CheckedEntry, LimitExceeded | DynamicSkillRefused> => {
  if (skill.resources === "dynamic") {
    return options.allowDynamic ? Result.succeed({ skill, byUri: new Map() }) : Result.fail(new DynamicSkillRefused({ uri: skill.uri }))
  }
  const violation = Skill.limitViolations(skill, options.limits)[0]
  if (violation !== undefined) {
    return Result.fail(new LimitExceeded({ uri: skill.uri, limit: violation.limit, actual: violation.actual, max: violation.max }))
  }
  const byUri = new Map<string, Skill.SkillResource>()
  for (const resource of skill.resources) if (!byUri.has(resource.uri)) byUri.set(resource.uri, resource)
  return Result.succeed({ skill, byUri })
}

/**
 * What a read asks for: the resolved uri and its manifest entry (`undefined` for a `"dynamic"` skill).
 *
 * @since 0.1.0
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
 * The bytes of an item against its manifest entry: length first, without hashing (R121), then
 * the digest (R120).
 *
 * @since 0.1.0
 */
export const checkContent = (
  skill: string,
  resource: Skill.SkillResource,
  bytes: Uint8Array
): Result.Result<void, SizeMismatch | DigestMismatch> => {
  if (bytes.byteLength !== resource.size) {
    return Result.fail(new SizeMismatch({ skill, uri: resource.uri, expected: resource.size, actual: bytes.byteLength }))
  }
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
