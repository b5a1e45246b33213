/**
 * A skill folder's signatures file: `.mcp-skills-signatures.json` at the skill root, beside its
 * `SKILL.md`. Its name is hidden, so a directory source never serves it and it is in no manifest:
 * signing a skill changes neither its files nor its entry, only the signatures relayed with it. It
 * is found, stamped and read as the skill's files are (through `guard`, with the skill's files as
 * of one moment), bounded in bytes before it is read and in records once decoded.
 *
 * @internal
 */
import { Signing } from "@mcp-skills/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { SignaturesMaxRecords } from "../../ServerLimits.js"

/** The file name, at the skill root. */
export const FileName = ".mcp-skills-signatures.json"

const onePerKey = Schema.makeFilter((signatures: ReadonlyArray<Signing.Signature>) => {
  if (signatures.length > SignaturesMaxRecords) {
    return `${signatures.length} records, more than the ${SignaturesMaxRecords} allowed (one per key)`
  }
  const seen = new Set<string>()
  for (const signature of signatures) {
    if (seen.has(signature.keyId)) return `two records for key ${signature.keyId} (one per key)`
    seen.add(signature.keyId)
  }
  return undefined
})

/** The file's content: every signature of the skill, one per key, at most `SignaturesMaxRecords`. */
export const File = Schema.Struct({
  version: Schema.Literal(1),
  signatures: Schema.Array(Signing.Signature).check(onePerKey)
})

export type File = typeof File.Type

const fromJson = Schema.decodeUnknownResult(Schema.fromJsonString(File))

/** The signatures in a file's bytes; why not, when they are not a signatures file. */
export const decode = (bytes: Uint8Array): Result.Result<ReadonlyArray<Signing.Signature>, string> =>
  Result.mapBoth(fromJson(new TextDecoder().decode(bytes)), {
    onFailure: (error) => `not a signatures file: ${error.message.replace(/\s*\n\s*/g, "; ")}`,
    onSuccess: (file) => file.signatures
  })

/**
 * `signatures` with `signature` in place of any earlier one by the same key; why not, when that
 * would be more records than a signatures file may hold.
 */
export const merge = (
  signatures: ReadonlyArray<Signing.Signature>,
  signature: Signing.Signature
): Result.Result<ReadonlyArray<Signing.Signature>, string> => {
  const merged = [...signatures.filter((other) => other.keyId !== signature.keyId), signature]
  return merged.length > SignaturesMaxRecords
    ? Result.fail(`it already holds ${signatures.length} signatures by other keys, the most a signatures file may hold`)
    : Result.succeed(merged)
}

/** The file's text for these signatures. */
export const render = (signatures: ReadonlyArray<Signing.Signature>): string =>
  JSON.stringify({ version: 1, signatures } satisfies File, null, 2) + "\n"
