/**
 * `mcp-skills-server check`: what `serve` would serve, repair and refuse in a folder, one line per
 * finding and a table of counts, or the same as JSON for CI.
 *
 * @since 0.2.0
 */
import { Manifest } from "@mcp-skills/core"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as DirectoryModel from "../DirectoryModel.js"
import * as DirectorySource from "../DirectorySource.js"
import * as Serve from "./serve.js"

const whereFound = (found: DirectoryModel.Found): string => {
  switch (found._tag) {
    case "Root":
      return "the folder itself"
    case "Container":
      return `${found.container}/`
    case "Manifest":
      return found.manifest
    case "Tree":
      return "the tree"
  }
}

/**
 * The check of a folder as lines: each skill served (with where it was found), repaired, refused,
 * left out and warned of, then the count of each kind.
 *
 * @since 0.2.0
 */
export const lines = (check: DirectoryModel.Check): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const skill of check.served) out.push(`served ${skill.uri} from ${skill.directory} (found in ${whereFound(skill.found)})`)
  for (const repaired of check.repairs) out.push(`repaired ${DirectoryModel.describeRepaired(repaired)}`)
  for (const refused of check.refused) out.push(`refused ${Serve.describeSkipped(refused)}`)
  for (const ignored of check.ignored) out.push(`ignored ${ignored.path}: ${ignored.reason}`)
  for (const warning of check.warnings) out.push(`warning: ${Manifest.describe(warning)}`)
  const width = Math.max(...Object.keys(check.counts).map((kind) => kind.length))
  out.push("", `${"kind".padEnd(width)}  count`)
  for (const [kind, count] of Object.entries(check.counts)) out.push(`${kind.padEnd(width)}  ${String(count).padStart(5)}`)
  return out
}

/**
 * The check as JSON: every finding with its line, and the counts.
 *
 * @since 0.2.0
 */
export const json = (check: DirectoryModel.Check): string =>
  JSON.stringify({
    root: check.root,
    served: check.served,
    repairs: check.repairs.map((repaired) => ({ ...repaired, text: DirectoryModel.describeRepaired(repaired) })),
    refused: check.refused.map((refused) => ({ directory: refused.directory, reason: Serve.describeSkipped(refused) })),
    ignored: check.ignored,
    warnings: check.warnings.map((warning) => ({ ...warning, text: Manifest.describe(warning) })),
    counts: check.counts
  }, null, 2)

/**
 * Checks `directory` and prints the result on stdout; fails with the number refused (exit status 1)
 * unless nothing is.
 *
 * @since 0.2.0
 */
export const run = Effect.fnUntraced(function*(
  directory: string,
  options: { readonly lenient: boolean; readonly json: boolean },
  fail: (message: string) => Effect.Effect<void>
) {
  const check = yield* DirectorySource.check(directory, { lenient: options.lenient })
  yield* Console.log(options.json ? json(check) : lines(check).join("\n"))
  const refused = check.counts.refused ?? 0
  if (refused > 0) {
    yield* fail(`${refused} skill folder${refused === 1 ? "" : "s"} refused${options.lenient ? "" : " (try --lenient)"}`)
  }
})
