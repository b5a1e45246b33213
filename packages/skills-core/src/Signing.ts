/**
 * Signed skills: what an author's signature covers, and signing and verifying it with ed25519.
 *
 * A signature covers the skill's content and nothing about where it is served: its name, its
 * frontmatter and every file's path relative to the skill root with its digest and size. Not the
 * URI, so a signature survives re-hosting under another prefix, scheme or gateway. The signed bytes
 * are the RFC 8785 (JSON Canonicalization Scheme) form of
 * `{ purpose, name, frontmatter, files: [{ path, digest, size }] }`, files sorted by path: the same
 * value gives the same bytes whatever its key order or whitespace. The bytes of the files are
 * covered through their digests, which a client checks on every read (spec §5.1), so an entry
 * whose signature verifies, read by a verifying client, gives the author's bytes.
 *
 * Signatures travel in the entry's `_meta` under {@link MetaKey}, a prefix of our own (R139: never
 * `io.modelcontextprotocol.skills/`). Each record names its key by fingerprint (`sha256:` of the
 * key's SPKI DER) and carries the public key, so anyone can check that a signature verifies;
 * whether its signer is trusted is the reader's decision, by fingerprint.
 *
 * @since 0.1.0
 */
import * as NodeCrypto from "node:crypto"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Digest from "./Digest.js"
import * as Skill from "./Skill.js"
import * as SkillUri from "./SkillUri.js"

/**
 * The `_meta` key of an entry's signatures: a prefix of this project's own (R139).
 *
 * @since 0.1.0
 * @category constants
 */
export const MetaKey = "dev.mcp-skills/signatures" as const

/**
 * The one signature algorithm.
 *
 * @since 0.1.0
 * @category constants
 */
export const Algorithm = "ed25519" as const

/**
 * Names what the signed bytes are, so that a signature over a skill can never be taken for a
 * signature over anything else made with the same key.
 *
 * @since 0.1.0
 * @category constants
 */
export const Purpose = "mcp-skills-signature/v1" as const

/**
 * A key's fingerprint: `sha256:` and the lowercase hex SHA-256 of its SPKI DER encoding.
 *
 * @since 0.1.0
 * @category schemas
 */
export const KeyId = Schema.String.check(Schema.isPattern(/^sha256:[0-9a-f]{64}$/)).pipe(Schema.brand("KeyId"))

/**
 * @since 0.1.0
 * @category models
 */
export type KeyId = typeof KeyId.Type

const Base64 = Schema.String.check(Schema.isPattern(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/))

/**
 * One signature record as published in `_meta`: the signer's fingerprint, the algorithm, the
 * signer's public key (SPKI DER, base64) and the signature (base64).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Signature = Schema.Struct({
  keyId: KeyId,
  algorithm: Schema.Literal(Algorithm),
  publicKey: Base64,
  signature: Base64
})

/**
 * @since 0.1.0
 * @category models
 */
export type Signature = typeof Signature.Type

/**
 * A signing or key problem: a key that is not an ed25519 PEM key, or an entry that cannot be signed.
 *
 * @since 0.1.0
 * @category errors
 */
export class SigningError extends Schema.TaggedError<SigningError>()("SigningError", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

/**
 * An ed25519 public key and its fingerprint.
 *
 * @since 0.1.0
 * @category models
 */
export interface PublicKey {
  readonly keyId: KeyId
  /** The SPKI DER encoding the fingerprint is taken of. */
  readonly spki: Uint8Array
  readonly key: NodeCrypto.KeyObject
}

/**
 * An ed25519 private key with its public half.
 *
 * @since 0.1.0
 * @category models
 */
export interface PrivateKey {
  readonly publicKey: PublicKey
  readonly key: NodeCrypto.KeyObject
}

/**
 * A new key pair as PEM text: PKCS#8 for the private key, SPKI for the public key.
 *
 * @since 0.1.0
 * @category models
 */
export interface KeyPair {
  readonly privateKey: string
  readonly publicKey: string
  readonly keyId: KeyId
}

/**
 * The fingerprint of a public key from its SPKI DER encoding.
 *
 * @since 0.1.0
 * @category signing
 */
export const fingerprint = (spki: Uint8Array): KeyId => Digest.make(spki) as string as KeyId

const fromKeyObject = (key: NodeCrypto.KeyObject): Result.Result<PublicKey, SigningError> => {
  if (key.asymmetricKeyType !== Algorithm) {
    return Result.fail(new SigningError({ reason: `the key is ${key.asymmetricKeyType ?? "not asymmetric"}, not ${Algorithm}` }))
  }
  const spki = new Uint8Array(key.export({ type: "spki", format: "der" }))
  return Result.succeed({ keyId: fingerprint(spki), spki, key })
}

const privatePem = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * Reads an ed25519 public key: SPKI PEM text, or SPKI DER bytes.
 *
 * @since 0.1.0
 * @category signing
 */
export const publicKey = (input: string | Uint8Array): Result.Result<PublicKey, SigningError> => {
  // `createPublicKey` takes a private key's PEM too (it derives the public half): one given where
  // a trust key is asked for is a mistake, and a private key copied where it does not belong.
  if (typeof input === "string" && privatePem.test(input)) {
    return Result.fail(new SigningError({ reason: "a private key, not a public key: trust the public key `keygen` wrote beside it" }))
  }
  try {
    const key = typeof input === "string"
      ? NodeCrypto.createPublicKey(input)
      : NodeCrypto.createPublicKey({ key: Buffer.from(input), format: "der", type: "spki" })
    return fromKeyObject(key)
  } catch (error) {
    return Result.fail(new SigningError({ reason: `not an ed25519 public key (SPKI PEM): ${describe(error)}` }))
  }
}

/**
 * Reads an ed25519 private key from PKCS#8 PEM text.
 *
 * @since 0.1.0
 * @category signing
 */
export const privateKey = (pem: string): Result.Result<PrivateKey, SigningError> => {
  try {
    const key = NodeCrypto.createPrivateKey(pem)
    return Result.map(fromKeyObject(NodeCrypto.createPublicKey(key)), (publicKey) => ({ publicKey, key }))
  } catch (error) {
    return Result.fail(new SigningError({ reason: `not an ed25519 private key (PKCS#8 PEM): ${describe(error)}` }))
  }
}

/**
 * Generates a key pair from the system's randomness.
 *
 * @since 0.1.0
 * @category signing
 */
export const generateKeyPair: Effect.Effect<KeyPair> = Effect.sync(() => {
  const pair = NodeCrypto.generateKeyPairSync("ed25519", {
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" }
  })
  const keyId = Result.getOrThrow(publicKey(pair.publicKey)).keyId
  return { privateKey: pair.privateKey, publicKey: pair.publicKey, keyId }
})

/**
 * RFC 8785 (JCS) serialization of a JSON value: object keys sorted by UTF-16 code units, no
 * whitespace, strings and numbers as ECMAScript's `JSON.stringify` writes them (which is what
 * RFC 8785 specifies; numbers must be finite, as in any JSON).
 *
 * @since 0.1.0
 * @category signing
 */
export const canonicalize = (value: Schema.Json): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonicalize).join(",")}]`
  const object = value as { readonly [key: string]: Schema.Json }
  const keys = Object.keys(object).sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalize(object[key]!)}`).join(",")}}`
}

/**
 * What a signature covers, as a JSON value: the skill's name and frontmatter, and every file's path
 * relative to the skill root, digest and size, sorted by path. `undefined` for a `"dynamic"`
 * entry, which has no digests to sign.
 *
 * @since 0.1.0
 * @category signing
 */
export const covered = (skill: Skill.Skill): Schema.Json | undefined => {
  if (skill.resources === "dynamic") return undefined
  const files = skill.resources
    .map((resource) => ({ path: SkillUri.relativePath(skill.uri, resource.uri) ?? resource.uri, digest: resource.digest, size: resource.size }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return {
    purpose: Purpose,
    name: skill.frontmatter.name,
    frontmatter: skill.frontmatter as Schema.JsonObject,
    files
  }
}

const encoder = new TextEncoder()

/**
 * The bytes a signature is made over: the UTF-8 of the canonical form of {@link covered}.
 *
 * @since 0.1.0
 * @category signing
 */
export const payload = (skill: Skill.Skill): Uint8Array | undefined => {
  const value = covered(skill)
  return value === undefined ? undefined : encoder.encode(canonicalize(value))
}

const notSignable = (skill: Skill.Skill) =>
  new SigningError({ reason: `${skill.uri} is "dynamic": it has no digests, so nothing stable can be signed` })

/**
 * Signs an entry.
 *
 * @since 0.1.0
 * @category signing
 */
export const sign = (skill: Skill.Skill, key: PrivateKey): Result.Result<Signature, SigningError> => {
  const bytes = payload(skill)
  if (bytes === undefined) return Result.fail(notSignable(skill))
  return Result.succeed({
    keyId: key.publicKey.keyId,
    algorithm: Algorithm,
    publicKey: Buffer.from(key.publicKey.spki).toString("base64"),
    signature: NodeCrypto.sign(null, bytes, key.key).toString("base64")
  })
}

/**
 * Why a signature record does not verify: the entry is `"dynamic"`, the record is malformed, its
 * public key does not have the fingerprint it names, or the signature does not match the entry.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Problem = Schema.Literals(["dynamic", "malformed", "fingerprint", "signature"])

/**
 * @since 0.1.0
 * @category models
 */
export type Problem = typeof Problem.Type

/**
 * Plain words for a {@link Problem}.
 *
 * @since 0.1.0
 * @category signing
 */
export const describeProblem = (problem: Problem): string => {
  switch (problem) {
    case "dynamic":
      return "a \"dynamic\" skill has no digests to sign"
    case "malformed":
      return "the signature record is malformed"
    case "fingerprint":
      return "the public key does not have the fingerprint the record names"
    case "signature":
      return "the signature does not match the skill's name, frontmatter and files"
  }
}

/**
 * Checks one signature record against an entry; the signer's public key when it verifies.
 *
 * @since 0.1.0
 * @category signing
 */
export const verify = (skill: Skill.Skill, signature: Signature): Result.Result<PublicKey, Problem> =>
  verifyPayload(payload(skill), signature)

// `verify` against the entry's payload made once (an entry may carry a signature per key).
const verifyPayload = (bytes: Uint8Array | undefined, signature: Signature): Result.Result<PublicKey, Problem> => {
  if (bytes === undefined) return Result.fail("dynamic")
  const key = publicKey(Buffer.from(signature.publicKey, "base64"))
  if (Result.isFailure(key)) return Result.fail("malformed")
  if (key.success.keyId !== signature.keyId) return Result.fail("fingerprint")
  const value = Buffer.from(signature.signature, "base64")
  let valid = false
  try {
    valid = NodeCrypto.verify(null, bytes, key.success.key, value)
  } catch {
    return Result.fail("malformed")
  }
  return valid ? Result.succeed(key.success) : Result.fail("signature")
}

const decodeSignature = Schema.decodeUnknownResult(Signature)

/**
 * The signature records of an entry's `_meta`; `malformed` counts records that are not one
 * (a value under {@link MetaKey} that is not an array counts as one malformed record).
 *
 * @since 0.1.0
 * @category signing
 */
export const signaturesOf = (skill: Skill.Skill): { readonly signatures: ReadonlyArray<Signature>; readonly malformed: number } => {
  const value = skill._meta?.[MetaKey]
  if (value === undefined) return { signatures: [], malformed: 0 }
  if (!Array.isArray(value)) return { signatures: [], malformed: 1 }
  const signatures: Array<Signature> = []
  let malformed = 0
  for (const record of value) {
    const decoded = decodeSignature(record)
    if (Result.isSuccess(decoded)) signatures.push(decoded.success)
    else malformed++
  }
  return { signatures, malformed }
}

/**
 * The entry with these signature records in its `_meta` (other `_meta` keys kept); no records
 * leaves the entry without the key.
 *
 * @since 0.1.0
 * @category signing
 */
export const withSignatures = (skill: Skill.Skill, signatures: ReadonlyArray<Signature>): Skill.Skill => {
  const { [MetaKey]: _, ...rest } = skill._meta ?? {}
  const meta = signatures.length === 0 ? rest : { ...rest, [MetaKey]: signatures as unknown as Schema.Json }
  const { _meta: __, ...entry } = skill
  return Object.keys(meta).length === 0 ? entry : { ...entry, _meta: meta }
}

/**
 * What the signatures of an entry say to a reader who trusts some keys:
 *
 * - `Verified`: a signature by a trusted key verifies (`keyIds`: every such key, in record order);
 * - `Invalid`: a signature by a trusted key (or, when nothing verifies, a malformed record) does
 *   not verify;
 * - `Untrusted`: signatures verify, or not, but none is by a trusted key (`keyIds`: their signers);
 * - `Unsigned`: no signature at all.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Verified"; readonly keyIds: ReadonlyArray<KeyId> }
  | { readonly _tag: "Invalid"; readonly keyId: KeyId | undefined; readonly problem: Problem }
  | { readonly _tag: "Untrusted"; readonly keyIds: ReadonlyArray<KeyId> }
  | { readonly _tag: "Unsigned" }

/**
 * Judges an entry's signatures. `trusted` decides by fingerprint; without it every key is trusted
 * (what a server checks before relaying: that the signatures it holds still match the skill).
 *
 * @example
 * ```ts
 * import { Manifest, Signing, SkillUri } from "@mcp-skills/core"
 * import { Effect, Result } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const keys = yield* Signing.generateKeyPair
 *   const uri = Result.getOrThrow(SkillUri.skillMd("skill", ["refunds"]))
 *   const skill = Manifest.entry(Result.getOrThrow(Manifest.make({
 *     uri,
 *     files: [{ path: "SKILL.md", bytes: new TextEncoder().encode("---\nname: refunds\ndescription: Refunds\n---\n") }]
 *   })))
 *   const signature = Result.getOrThrow(Signing.sign(skill, Result.getOrThrow(Signing.privateKey(keys.privateKey))))
 *   const signed = Signing.withSignatures(skill, [signature])
 *   return Signing.evaluate(signed, (keyId) => keyId === keys.keyId) // { _tag: "Verified", keyIds: [keys.keyId] }
 * })
 * ```
 *
 * @since 0.1.0
 * @category signing
 */
export const evaluate = (skill: Skill.Skill, trusted?: (keyId: KeyId) => boolean): Verdict => {
  const { signatures, malformed } = signaturesOf(skill)
  if (signatures.length === 0 && malformed === 0) return { _tag: "Unsigned" }
  const relevant = trusted === undefined ? signatures : signatures.filter((signature) => trusted(signature.keyId))
  const verified: Array<KeyId> = []
  let failed: { readonly keyId: KeyId; readonly problem: Problem } | undefined
  const bytes = relevant.length === 0 ? undefined : payload(skill)
  for (const signature of relevant) {
    const result = verifyPayload(bytes, signature)
    if (Result.isSuccess(result)) verified.push(signature.keyId)
    else failed ??= { keyId: signature.keyId, problem: result.failure }
  }
  if (verified.length > 0) return { _tag: "Verified", keyIds: verified }
  if (failed !== undefined) return { _tag: "Invalid", ...failed }
  if (malformed > 0 && signatures.length === 0) return { _tag: "Invalid", keyId: undefined, problem: "malformed" }
  return { _tag: "Untrusted", keyIds: signatures.map((signature) => signature.keyId) }
}
