/** What tests read of an Exit. */
import { assert } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"

/** The error or defect `exit` failed with; asserts it failed. */
export const failureOf = (exit: Exit.Exit<unknown, unknown>): unknown => {
  assert.isTrue(Exit.isFailure(exit))
  return Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
}
