/** What a client keeps per entry object it holds: until when it is fresh, and what it alone decides. */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import type { CacheHint, Skill } from "@mcp-skills/core"
import type { DynamicSkillRefused, LimitExceeded, SignatureError } from "../SkillsClientError.js"
import * as Verification from "../Verification.js"

/** The per-entry state of one connected client, held as long as the entries themselves. */
export const make = (options: Parameters<typeof Verification.checkEntry>[1]) => {
  // Until when each entry this client fetched is fresh by its server's `ttlMs` (R36); entries
  // not from this client, or past their ttl, may be stale.
  const freshUntil = new WeakMap<Skill.Skill, number>()
  const remember = (skills: ReadonlyArray<Skill.Skill>, hint: CacheHint.CacheHint) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      for (const skill of skills) freshUntil.set(skill, now + hint.ttlMs)
    })
  const isFresh = (skill: Skill.Skill) =>
    Effect.map(Clock.currentTimeMillis, (now) => now < (freshUntil.get(skill) ?? 0))

  // What an entry alone decides, computed once per entry object rather than on every read (a
  // pull reads every file of an entry: per-read sums and scans would be quadratic in its files).
  const checked = new WeakMap<Skill.Skill, Result.Result<Verification.CheckedEntry, LimitExceeded | DynamicSkillRefused | SignatureError>>()
  const checkedOf = (skill: Skill.Skill) => {
    let entry = checked.get(skill)
    if (entry === undefined) {
      entry = Verification.checkEntry(skill, options)
      checked.set(skill, entry)
    }
    return entry
  }

  return { remember, isFresh, checkedOf }
}
