/**
 * The folders agent hosts read skills from, so a pull or a sync can put skills where a host finds
 * them. Each host reads `<folder>/<name>/SKILL.md`, one level deep, and takes the folder's name as
 * the skill's (the frontmatter `name` must equal it), so skills go there in the flat layout
 * (`PullModel.flat`): `skill://acme/billing/refunds/SKILL.md` becomes `<folder>/refunds/`.
 *
 * | host | project (below the current folder) | user (below the home folder) |
 * | --- | --- | --- |
 * | `claude-code` | `.claude/skills` | `~/.claude/skills` |
 * | `codex` | `.agents/skills` | `~/.agents/skills` |
 * | `goose` | `.agents/skills` | `~/.agents/skills` |
 * | `copilot` (VS Code) | `.github/skills` | `~/.copilot/skills` |
 * | `cursor` | `.cursor/skills` | `~/.cursor/skills` |
 * | `agents` (any host of the shared convention) | `.agents/skills` | `~/.agents/skills` |
 *
 * @since 0.1.0
 */
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as PullModel from "./PullModel.js"

/**
 * The hosts with a preset.
 *
 * @since 0.1.0
 * @category models
 */
export const Host = Schema.Literals(["claude-code", "codex", "copilot", "cursor", "goose", "agents"])

/**
 * @since 0.1.0
 * @category models
 */
export type Host = typeof Host.Type

/**
 * Where skills apply: one project (below the current folder) or every project of a user (below
 * the home folder).
 *
 * @since 0.1.0
 * @category models
 */
export const Scope = Schema.Literals(["project", "user"])

/**
 * @since 0.1.0
 * @category models
 */
export type Scope = typeof Scope.Type

/**
 * Each host's skills folder, relative to the project (the current folder) and to the home folder.
 * Cursor documents its project folder; its user folder is the one it is reported to read.
 *
 * @since 0.1.0
 * @category models
 */
export const folders: { readonly [H in Host]: { readonly [S in Scope]: string } } = {
  "claude-code": { project: ".claude/skills", user: ".claude/skills" },
  codex: { project: ".agents/skills", user: ".agents/skills" },
  goose: { project: ".agents/skills", user: ".agents/skills" },
  copilot: { project: ".github/skills", user: ".copilot/skills" },
  cursor: { project: ".cursor/skills", user: ".cursor/skills" },
  agents: { project: ".agents/skills", user: ".agents/skills" }
}

/**
 * Where a pull puts skills: the folder and the layout.
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  readonly into: string
  readonly layout: PullModel.Layout
}

/**
 * Where the user's folders are: the project is `cwd`, `~` is `home`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Places {
  readonly cwd: string
  readonly home: string
}

/**
 * The target of a host and scope: its folder in `places`, the flat layout, and `prefix` if any.
 *
 * @example
 * ```ts
 * import { NodeServices } from "@effect/platform-node"
 * import { Host, Pull, SkillsClient } from "@mcp-skills/client"
 * import { Effect } from "effect"
 *
 * // Every skill of the server where Claude Code finds it in this project: .claude/skills/acme-<name>.
 * const install = Effect.gen(function*() {
 *   const client = yield* SkillsClient.SkillsClient
 *   const target = Host.target("claude-code", "project", yield* Host.places, "acme")
 *   return yield* Pull.pull(client, { ...target, all: true })
 * }).pipe(Effect.provide(NodeServices.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const target = (host: Host, scope: Scope, places: Places, prefix?: string): Target => ({
  into: Path.resolve(scope === "project" ? places.cwd : places.home, folders[host][scope]),
  layout: PullModel.flat(prefix)
})

/**
 * The places of this process: the current folder, and the home folder (`HOME` where it is set,
 * as `os.homedir()` reads it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const places: Effect.Effect<Places> = Effect.sync(() => ({ cwd: process.cwd(), home: Os.homedir() }))

/**
 * Every distinct host folder of `places`, with the hosts that read it: what `status` looks at
 * when given no folder.
 *
 * @since 0.1.0
 * @category constructors
 */
export const every = (places: Places): ReadonlyArray<{ readonly into: string; readonly scope: Scope; readonly hosts: ReadonlyArray<Host> }> => {
  const found = new Map<string, { readonly into: string; readonly scope: Scope; readonly hosts: Array<Host> }>()
  for (const scope of Scope.literals) {
    for (const host of Host.literals) {
      const { into } = target(host, scope, places)
      const seen = found.get(into)
      if (seen === undefined) found.set(into, { into, scope, hosts: [host] })
      else seen.hosts.push(host)
    }
  }
  return [...found.values()]
}
