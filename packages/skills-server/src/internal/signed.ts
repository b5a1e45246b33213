/**
 * Relaying authors' signatures: each static skill's entry carries them in `_meta`, built once per
 * snapshot where the entry is built, so both serializers of an answer (effect's objects, the fast
 * route's bytes) relays them without knowing of them.
 *
 * Before relaying, the registry checks each signature against the files it is about to serve
 * (every key counts here: trust is the reader's decision). One that no longer verifies (a file
 * edited behind the signature) is logged; with `requireSigned`, a skill without a signature that
 * verifies, or one that cannot be signed (dynamic, rendered, a family), is left out of the
 * catalogue with one log line.
 *
 * @internal
 */
import { Signing } from "@mcp-skills/core"
import type { Skill as CoreSkill } from "@mcp-skills/core"
import * as Effect from "effect/Effect"

/** The wire entry of a static skill: its manifest's entry, with its signatures in `_meta`. */
export const entryOf = (skill: CoreSkill.Skill, signatures: ReadonlyArray<Signing.Signature> | undefined): CoreSkill.Skill =>
  signatures === undefined || signatures.length === 0 ? skill : Signing.withSignatures(skill, signatures)

/** The signature records a static skill's entry relays, for comparing two versions of a skill. */
export const relayed = (signatures: ReadonlyArray<Signing.Signature> | undefined): string | undefined =>
  signatures === undefined || signatures.length === 0 ? undefined : JSON.stringify(signatures)

/**
 * What is being admitted: a static skill (its entry made only if a signature must be checked), or
 * a skill of a kind that carries no signature.
 */
export type Candidate =
  | {
    readonly _tag: "Static"
    readonly uri: string
    readonly signatures: ReadonlyArray<Signing.Signature> | undefined
    readonly entry: () => CoreSkill.Skill
    readonly judged: boolean
  }
  | { readonly _tag: "Unsignable"; readonly uri: string; readonly kind: string }

const short = (keyId: Signing.KeyId | undefined) => keyId === undefined ? "a malformed record" : keyId

/**
 * Whether to serve a skill, logging why not, or why it is served against its signature. `judged`
 * says the same entry with the same signatures was admitted by the previous snapshot (nothing to
 * check or say again).
 */
export const admit = (candidate: Candidate, requireSigned: boolean): Effect.Effect<boolean> => {
  if (candidate._tag === "Unsignable") {
    return requireSigned
      ? Effect.as(
        Effect.logWarning(`not serving ${candidate.uri}: a ${candidate.kind} skill cannot be signed, and signatures are required`),
        false
      )
      : Effect.succeed(true)
  }
  if (candidate.judged) return Effect.succeed(true)
  const verdict: Signing.Verdict = relayed(candidate.signatures) === undefined ? { _tag: "Unsigned" } : Signing.evaluate(candidate.entry())
  switch (verdict._tag) {
    case "Verified":
      return Effect.succeed(true)
    case "Unsigned":
      return requireSigned
        ? Effect.as(Effect.logWarning(`not serving ${candidate.uri}: it is not signed, and signatures are required`), false)
        : Effect.succeed(true)
    case "Untrusted":
    case "Invalid": {
      const keyId = verdict._tag === "Invalid" ? verdict.keyId : verdict.keyIds[0]
      const why = `its files no longer match its signature by ${short(keyId)} (${
        Signing.describeProblem(verdict._tag === "Invalid" ? verdict.problem : "signature")
      })`
      return requireSigned
        ? Effect.as(Effect.logWarning(`not serving ${candidate.uri}: ${why}`), false)
        : Effect.as(Effect.logWarning(`serving ${candidate.uri} although ${why}; clients that verify will refuse it`), true)
    }
  }
}
