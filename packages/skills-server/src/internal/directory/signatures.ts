/**
 * A skill folder's signatures file: `.mcp-skills-signatures.json` at the skill root, beside its
 * `SKILL.md`. Its name is hidden, so a directory source never serves it and it is in no manifest:
 * signing a skill changes neither its files nor its entry, only the signatures relayed with it.
 *
 * @internal
 */
import { Signing } from "@mcp-skills/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describeError } from "./stamps.js"

/** The file name, at the skill root. */
export const FileName = ".mcp-skills-signatures.json"

/** The file's content: every signature of the skill, one per key. */
export const File = Schema.Struct({
  version: Schema.Literal(1),
  signatures: Schema.Array(Signing.Signature)
})

export type File = typeof File.Type

const decode = Schema.decodeUnknownResult(Schema.fromJsonString(File))

/**
 * The signatures stored in `folder` (absolute), none when there is no file; why not, when it is
 * not a signatures file.
 */
export const read = (folder: string): Result.Result<ReadonlyArray<Signing.Signature>, string> => {
  const path = NodePath.join(folder, FileName)
  let text: string
  try {
    // Most skills are not signed: a stat that finds nothing costs a fraction of a read that throws.
    if (NodeFs.statSync(path, { throwIfNoEntry: false }) === undefined) return Result.succeed([])
    text = NodeFs.readFileSync(path, "utf8")
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ENOENT" || code === "ENOTDIR" ? Result.succeed([]) : Result.fail(`cannot read: ${describeError(error)}`)
  }
  return Result.mapBoth(decode(text), {
    onFailure: (error) => `not a signatures file: ${error.message.replace(/\s*\n\s*/g, "; ")}`,
    onSuccess: (file) => file.signatures
  })
}

/** `signatures` with `signature` in place of any earlier one by the same key. */
export const merge = (signatures: ReadonlyArray<Signing.Signature>, signature: Signing.Signature): ReadonlyArray<Signing.Signature> => [
  ...signatures.filter((other) => other.keyId !== signature.keyId),
  signature
]

/** The file's text for these signatures. */
export const render = (signatures: ReadonlyArray<Signing.Signature>): string =>
  JSON.stringify({ version: 1, signatures } satisfies File, null, 2) + "\n"
