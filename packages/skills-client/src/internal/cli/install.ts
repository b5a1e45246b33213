/**
 * `mcp-skills pull` and `mcp-skills sync`: skills verified into a folder (`--into`) or where an
 * agent host reads them (`--host`, `--scope`), once or for as long as the command runs.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Command, Flag } from "effect/cli"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Host from "../../Host.js"
import * as Pull from "../../Pull.js"
import * as PullModel from "../../PullModel.js"
import type * as PullError from "../../PullError.js"
import * as Sync from "../../Sync.js"
import { outcomeLine } from "../lines.js"
import { prefixProblem } from "../pull/names.js"
import { arity, type Common, common, fail, operandsOf, withReached, withTarget } from "./target.js"

const renderProgress = () => {
  let last = ""
  return (progress: { readonly skill: string; readonly bytes: number; readonly total: number }) => {
    if (!process.stderr.isTTY || progress.total < 1024 * 1024) return
    const ratio = Math.min(1, progress.bytes / progress.total)
    const width = 30
    const bar = "#".repeat(Math.round(ratio * width)).padEnd(width, ".")
    const line = `\r[${bar}] ${Math.round(ratio * 100)}% ${progress.skill}`
    if (line === last) return
    last = line
    process.stderr.write(line + (ratio >= 1 ? "\n" : ""))
  }
}

// What a pull replaced on disk (--overwrite-local), path by path.
const logOverwritten = (folder: string, local: PullError.Edits) =>
  Effect.forEach([
    ...local.modified.map((path) => `  ! ${path} (edited here, replaced)`),
    ...local.missing.map((path) => `  ! ${path} (deleted here, restored)`),
    ...local.added.map((path) => `  ! ${path} (added here, removed)`),
    ...(local.truncated ? [`  ! ${folder} (held more than the pull wrote; all of it replaced)`] : [])
  ], (line) => Console.log(line), { discard: true })

/** Where skills go: `--into`, or a host's folder; the flags pull, sync and status share. */
export const place = {
  into: Flag.String("into").pipe(Flag.withDescription("Target folder (wins over --host's folder)"), Flag.optional),
  host: Flag.Literals("host", Host.Host.literals).pipe(
    Flag.withDescription("Install where this agent host reads skills, one folder per skill (see --scope; the README has the table)"),
    Flag.optional
  ),
  scope: Flag.Literals("scope", Host.Scope.literals).pipe(
    Flag.withDescription("With --host: this project (below the current folder) or every project of the user (below HOME); default project"),
    Flag.optional
  )
}

const target = {
  ...place,
  prefix: Flag.String("prefix").pipe(
    Flag.withDescription("Install this server's skills under folders of their own (PREFIX-name with --host, PREFIX/... with --into)"),
    Flag.optional
  )
}

interface Placed {
  readonly into: Option.Option<string>
  readonly host: Option.Option<Host.Host>
  readonly scope: Option.Option<Host.Scope>
}

/**
 * The folder (and layout) of `--into`, `--host` and `--scope`, found before any server is asked;
 * `--into` wins over the host's folder. A host's folder of the project scope is recorded in the
 * project's `skills-lock.json` too (`skillsLock`), where `npx skills` looks. A home the user scope
 * cannot be below is one line.
 */
export const placed = <A, E, R>(
  input: Placed & { readonly prefix?: Option.Option<string> },
  f: (target: Host.Target & { readonly skillsLock?: string }) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const prefix = Option.getOrUndefined(input.prefix ?? Option.none())
    // `checked` made sure one of them is given.
    if (Option.isNone(input.host)) return { into: Option.getOrThrow(input.into), layout: PullModel.tree(prefix) }
    const scope = Option.getOrElse(input.scope, () => "project" as const)
    const places = yield* Host.places
    const hosted = yield* Host.target(input.host.value, scope, places, prefix)
    if (Option.isSome(input.into)) return { ...hosted, into: input.into.value }
    return scope === "project" ? { ...hosted, skillsLock: places.cwd } : hosted
  }).pipe(Effect.matchEffect({ onFailure: (error) => fail(error.message), onSuccess: f }))

const choices = {
  all: Flag.Boolean("all").pipe(Flag.withDescription("Every listed skill"), Flag.withDefault(false)),
  acceptSigner: Flag.Boolean("accept-signer").pipe(
    Flag.withDescription("With --trust: accept a skill signed by another trusted key than the lock file records"),
    Flag.withDefault(false)
  ),
  overwriteLocal: Flag.Boolean("overwrite-local").pipe(
    Flag.withDescription(
      "Replace installed files edited, deleted or added since they were pulled with the verified source (by default such a change is refused naming them)"
    ),
    Flag.withDefault(false)
  )
}

/** Where a command's placement flags are wrong, before anything is asked of a server. */
export const placeProblem = (input: Placed & { readonly prefix?: Option.Option<string> }): string | undefined => {
  if (Option.isNone(input.host) && Option.isSome(input.scope)) return "--scope needs --host"
  const prefix = Option.getOrUndefined(input.prefix ?? Option.none())
  return prefix === undefined ? undefined : prefixProblem(PullModel.tree(prefix))
}

const checked = <I extends Common & Placed & { readonly all: boolean; readonly prefix: Option.Option<string> }>(command: string) =>
  arity<I>(command, (rest, input) =>
    input.all === (rest.length > 0)
      ? "needs SKILL_URI arguments or --all, not both"
      : Option.isNone(input.host) && Option.isNone(input.into)
      ? "needs --into DIR or --host HOST"
      : placeProblem(input))

const pull = Command.make("pull", {
  ...common,
  ...target,
  ...choices,
  args: operandsOf("TARGET [SKILL_URI...]", "; SKILL_URI: the SKILL.md URI of a skill to pull (or --all)"),
  acceptChanges: Flag.Boolean("accept-changes").pipe(
    Flag.withDescription("Replace skills whose files changed since the last pull"),
    Flag.withDefault(false)
  ),
  prune: Flag.Boolean("prune").pipe(
    Flag.withDescription("With --all: remove the skills the server no longer serves, folder and lock file record"),
    Flag.withDefault(false)
  )
}, (input) =>
  placed(input, ({ into, layout, skillsLock }) =>
    withTarget("pull", input, (client, rest) =>
      Effect.gen(function*() {
        const summary = yield* Pull.pull(client, {
          into,
          layout,
          skillsLock,
          uris: rest,
          all: input.all,
          acceptChanges: input.acceptChanges,
          acceptSigner: input.acceptSigner,
          overwriteLocal: input.overwriteLocal,
          prune: input.prune,
          onProgress: renderProgress()
        })
        for (const outcome of summary.skills) {
          yield* Console.log(outcomeLine(outcome))
          if (outcome._tag === "Updated") {
            for (const uri of outcome.added) yield* Console.log(`  + ${uri}`)
            for (const uri of outcome.removed) yield* Console.log(`  - ${uri}`)
            for (const uri of outcome.changed) yield* Console.log(`  ~ ${uri}`)
          }
          if (outcome._tag === "Updated" || outcome._tag === "Restored") yield* logOverwritten(outcome.path, outcome.local)
        }
        for (const { error } of summary.refused) yield* fail(error.message)
      })))).pipe(
  checked("pull"),
  Command.withDescription(
    "Verify skills into a folder (--into) or where an agent host reads them (--host, --scope), all or nothing, and record them in mcp-skills.lock.json (and in a project's skills-lock.json, as npx skills does); with --all a skill that fails verification is left out and named (exit status 1)"
  ),
  Command.withExamples([
    { command: "mcp-skills pull http://127.0.0.1:3000/mcp --all --into ./skills", description: "every skill the server lists" },
    { command: "mcp-skills pull http://127.0.0.1:3000/mcp --all --host claude-code", description: "into .claude/skills of this project" },
    {
      command: "mcp-skills pull http://127.0.0.1:3000/mcp skill://pdf-processing/SKILL.md --host codex --scope user --trust acme.public.pem",
      description: "one skill into ~/.agents/skills, only if a trusted key signed it"
    }
  ])
)

const sync = Command.make("sync", {
  ...common,
  ...target,
  ...choices,
  args: operandsOf("TARGET [SKILL_URI...]", "; SKILL_URI: the SKILL.md URI of a skill to keep in sync (or --all)"),
  prune: Flag.Boolean("prune").pipe(
    Flag.withDescription("Remove the skills the server no longer serves, folder and lock file record"),
    Flag.withDefault(false)
  )
}, (input) =>
  placed(input, ({ into, layout, skillsLock }) =>
    withReached("sync", input, ({ cache, options, rest, transport }) =>
      Sync.run({
        transport,
        client: options,
        pull: {
          into,
          layout,
          skillsLock,
          uris: rest,
          all: input.all,
          acceptSigner: input.acceptSigner,
          overwriteLocal: input.overwriteLocal,
          prune: input.prune
        },
        onEvent: (event) => Console.log(Sync.describe(event))
      }).pipe(
        Effect.provide(Layer.mergeAll(FetchHttpClient.layer, NodeServices.layer, cache)),
        Effect.onInterrupt(() => Console.log(`stopped; ${into} holds what was last installed whole`)),
        Effect.catch((error) => fail(error.message))
      )))).pipe(
  checked("sync"),
  Command.withDescription(
    "Keep a folder in sync with a server until Ctrl-C: each verified change installed whole (add, update, and with --prune remove), one line each; a change that fails a check, or would overwrite a local edit, is refused and what is installed stays"
  ),
  Command.withExamples([
    { command: "mcp-skills sync http://127.0.0.1:3000/mcp --all --prune --host claude-code", description: "keep .claude/skills in sync" },
    {
      command: "mcp-skills sync http://127.0.0.1:4000/mcp --all --host claude-code --prefix vendor",
      description: "a second server into the same folder, its skills as vendor-NAME"
    }
  ])
)

/** The commands that install skills. */
export const commands = [pull, sync] as const
