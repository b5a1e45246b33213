/**
 * Failures of the authors' code met while answering a request (a dynamic skill's `read`, a
 * rendered skill's or a family's `render`, a family's `list`): the caller gets -32603, the log one
 * line per skill at most every `Interval`, never a stack trace. Any caller can make a failing
 * render run again, so the log must not grow with the requests: the lines left out are counted on
 * the next line about that skill.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/** The least time between two lines about one skill. */
export const Interval = 60_000

/** Most skills whose last line is remembered; past it the oldest is forgotten. */
export const MaxSkills = 1024

/** Longest text of a failure in a line: an author's message may quote what the caller sent. */
export const MaxText = 300

/** The failure log of one skills layer. */
export interface Faults {
  /**
   * Logs `line` about `skill` (a skill URI, or a family's key) unless a line about it was logged
   * less than `Interval` ago.
   */
  readonly report: (skill: string, line: string) => Effect.Effect<void>
}

/** What a failure says: its message (never its stack), at most `MaxText` characters of it. */
export const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const text = typeof error === "string"
    ? error
    : typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message !== ""
    ? error.message
    : typeof error === "object" && error !== null && "_tag" in error
    ? String(error._tag)
    : String(error)
  return text.length > MaxText ? `${text.slice(0, MaxText)}...` : text
}

// One line, whatever an author's message or a caller's URI holds.
const oneLine = (text: string) => text.replace(/[\u0000-\u001f\u007f]+/g, " ")

/** A failure log, its memory in the layer that makes it. */
export const make: Effect.Effect<Faults> = Effect.sync(() => {
  const last = new Map<string, { readonly at: number; left: number }>()
  return {
    report: (skill, line) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const known = last.get(skill)
        if (known !== undefined && now - known.at < Interval) {
          known.left++
          return Effect.void
        }
        last.delete(skill)
        last.set(skill, { at: now, left: 0 })
        if (last.size > MaxSkills) last.delete(last.keys().next().value!)
        const left = known === undefined || known.left === 0 ? "" : ` (${known.left} more failures of it since the last line)`
        return Effect.logError(oneLine(line) + left)
      })
  }
})
