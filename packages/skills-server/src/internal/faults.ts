/**
 * Failures of the authors' code met while answering a request (a dynamic skill's `read`, a
 * rendered skill's or a family's `render`, a family's `list`, the visibility check): the caller
 * gets -32603, the log one line per skill (or check) at most every `ServerLimits.FaultInterval`, never a stack
 * trace. Any caller can make a failing render run again, so the log must not grow with the
 * requests: the lines left out are counted on the next line about that skill.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { McpSchema } from "effect/ai"
import type { WireError } from "./effect/port.js"
import * as ServerLimits from "../ServerLimits.js"

const Interval = Duration.toMillis(ServerLimits.FaultInterval)

/** The failure log of one skills layer. */
export interface Faults {
  /**
   * Logs `line` about `skill` (a skill URI, or a family's key) unless a line about it was logged
   * less than `ServerLimits.FaultInterval` ago.
   */
  readonly report: (skill: string, line: string) => Effect.Effect<void>
}

/** What a failure says: its message (never its stack), at most `ServerLimits.FaultText` characters of it. */
export const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const text = typeof error === "string"
    ? error
    : typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message !== ""
    ? error.message
    : typeof error === "object" && error !== null && "_tag" in error
    ? String(error._tag)
    : String(error)
  return text.length > ServerLimits.FaultText ? `${text.slice(0, ServerLimits.FaultText)}...` : text
}

// One line, whatever an author's message or a caller's URI holds.
const oneLine = (text: string) => text.replace(/[\u0000-\u001f\u007f]+/g, " ")

/** What a caller is told of a failure of the author's code. */
export const internalError: WireError = { code: McpSchema.INTERNAL_ERROR_CODE, message: "Internal error" }

/**
 * `effect`, whose failures (but those `passes` lets through) and defects are the author's: one
 * line about `key` (`what`, then what the failure says), and `error` to the caller. An
 * interruption (the caller went away) is not a failure.
 */
export const guard = <E, K extends E = never>(
  faults: Faults,
  key: string,
  what: string,
  error: WireError = internalError,
  passes?: (failure: E) => failure is K
) =>
<A, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, K | WireError, R> =>
  Effect.catchCause(effect, (cause): Effect.Effect<never, K | WireError> => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
    const failure = Cause.findErrorOption(cause)
    if (passes !== undefined && failure._tag === "Some" && passes(failure.value)) return Effect.fail(failure.value)
    return Effect.andThen(faults.report(key, `${what}: ${describe(cause)}`), Effect.fail(error))
  })

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
        if (last.size > ServerLimits.FaultSkills) last.delete(last.keys().next().value!)
        const left = known === undefined || known.left === 0 ? "" : ` (${known.left} more failures of it since the last line)`
        return Effect.logError(oneLine(line) + left)
      })
  }
})
