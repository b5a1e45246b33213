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
import * as FileSystem from "effect/FileSystem"
import * as Schema from "effect/Schema"
import { reasonOf } from "./internal/systemError.js"
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
 * A home folder the user scope cannot be below: `variable` (`HOME`, `USERPROFILE` on Windows) is
 * empty, relative, or names nothing that is a folder (`problem` says which). Without the check an
 * empty or relative home resolves against the current folder, and a user-scope install lands in
 * the project.
 *
 * @since 0.2.0
 * @category errors
 */
export class HomeFolderError extends Schema.TaggedError<HomeFolderError>()("HomeFolderError", {
  variable: Schema.String,
  home: Schema.String,
  problem: Schema.String
}) {
  override get message(): string {
    const what = this.home === "" ? "is empty" : `is ${JSON.stringify(this.home)} (${this.problem})`
    return `${this.variable} ${what}; the user scope is below the home folder, so set ${this.variable} to the absolute path of an existing folder`
  }
}

// What `Os.homedir()` reads first.
const homeVariable = process.platform === "win32" ? "USERPROFILE" : "HOME"

// `places.home`, once it is an absolute path to a folder.
const homeOf = (places: Places): Effect.Effect<string, HomeFolderError, FileSystem.FileSystem> => {
  const refuse = (problem: string) => new HomeFolderError({ variable: homeVariable, home: places.home, problem })
  if (places.home === "") return Effect.fail(refuse("empty"))
  if (!Path.isAbsolute(places.home)) return Effect.fail(refuse("not an absolute path"))
  return Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* fs.stat(places.home).pipe(Effect.mapError((error) => refuse(reasonOf(error))))
    return info.type === "Directory" ? places.home : yield* refuse("not a folder")
  })
}

/**
 * The target of a host and scope: its folder in `places`, the flat layout, and `prefix` if any.
 * The user scope's folder is below `places.home`, which must be an absolute path to a folder
 * ({@link HomeFolderError} otherwise).
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
 *   const target = yield* Host.target("claude-code", "project", yield* Host.places, "acme")
 *   return yield* Pull.pull(client, { ...target, all: true })
 * }).pipe(Effect.provide(NodeServices.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const target = (
  host: Host,
  scope: Scope,
  places: Places,
  prefix?: string
): Effect.Effect<Target, HomeFolderError, FileSystem.FileSystem> =>
  Effect.map(scope === "project" ? Effect.succeed(places.cwd) : homeOf(places), (base) => ({
    into: Path.resolve(base, folders[host][scope]),
    layout: PullModel.flat(prefix)
  }))

/**
 * The places of this process: the current folder, and the home folder (`HOME` where it is set,
 * as `os.homedir()` reads it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const places: Effect.Effect<Places> = Effect.sync(() => ({ cwd: process.cwd(), home: Os.homedir() }))

/**
 * Every distinct host folder of `places` (of `scope` only, when given), with the hosts that read
 * it: what `status` looks at when given no folder.
 *
 * @since 0.1.0
 * @category constructors
 */
export const every = (
  places: Places,
  scope?: Scope
): Effect.Effect<
  ReadonlyArray<{ readonly into: string; readonly scope: Scope; readonly hosts: ReadonlyArray<Host> }>,
  HomeFolderError,
  FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const found = new Map<string, { readonly into: string; readonly scope: Scope; readonly hosts: Array<Host> }>()
    for (const each of scope === undefined ? Scope.literals : [scope]) {
      for (const host of Host.literals) {
        const { into } = yield* target(host, each, places)
        const seen = found.get(into)
        if (seen === undefined) found.set(into, { into, scope: each, hosts: [host] })
        else seen.hosts.push(host)
      }
    }
    return [...found.values()]
  })
