/**
 * Signed skills for tests: keys made once per test file, and code skills signed as an author
 * would sign them (over the entry the registry builds from their files).
 */
import { Manifest, Signing, type Skill as CoreSkill, SkillUri } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Skill } from "../../src/index.js"

/** A fresh key pair: PEM text, fingerprint and the private key read back. */
export const makeKey = () => {
  const pair = Effect.runSync(Signing.generateKeyPair)
  return { ...pair, key: Result.getOrThrow(Signing.privateKey(pair.privateKey)) }
}

/** The entry of a static skill as the registry builds it (no nested skills). */
export const entryOf = (skill: Skill.Static): CoreSkill.Skill =>
  Manifest.entry(Result.getOrThrow(Manifest.make({ uri: Result.getOrThrow(SkillUri.skillMd(skill.scheme, skill.path)), files: skill.files })))

/** The skill with signatures by these keys over its current files. */
export const signed = (skill: Skill.Static, ...keys: ReadonlyArray<Signing.PrivateKey>): Skill.Static => ({
  ...skill,
  signatures: keys.map((key) => Result.getOrThrow(Signing.sign(entryOf(skill), key)))
})
