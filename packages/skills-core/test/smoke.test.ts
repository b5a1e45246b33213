import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"

describe("smoke", () => {
  it.effect("runs", () => Effect.sync(() => expect(1).toBe(1)))
})
