/** Lines a person reads of what a pull or a sync did: one per skill, the same in both. */
import type { Outcome } from "../Pull.js"

export const counted = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`

// "(3 files, 195 bytes)"
export const sizes = (files: number, bytes: number) => `${counted(files, "file")}, ${counted(bytes, "byte")}`

/** The line of one skill's outcome. */
export const outcomeLine = (outcome: Outcome): string => {
  switch (outcome._tag) {
    case "Added":
      return `added ${outcome.uri} -> ${outcome.path} (${sizes(outcome.files, outcome.bytes)})`
    case "Updated":
      return `updated ${outcome.uri} -> ${outcome.path} (${sizes(outcome.files, outcome.bytes)})` +
        (outcome.movedFrom === undefined ? "" : `, moved from ${outcome.movedFrom}`)
    case "Restored":
      return `restored ${outcome.uri} -> ${outcome.path} (${sizes(outcome.files, outcome.bytes)})`
    case "Unchanged":
      return `unchanged ${outcome.uri}`
    case "Nested":
      return `nested ${outcome.uri} -> ${outcome.path} (inside ${outcome.within})`
    case "Gone":
      return `gone ${outcome.uri}: no longer served; ${outcome.path} kept (--prune removes it)`
    case "Pruned":
      return `pruned ${outcome.uri}: no longer served; its files under ${outcome.path} removed`
  }
}
