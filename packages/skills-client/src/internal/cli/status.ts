/**
 * `mcp-skills status`: what is installed where (every host folder, or the one of `--host`,
 * `--scope` or `--into`), from which server, verified when, edited here or not, and, asking each
 * server once (unless `--offline`), what is out of date or gone; in the project's host folders,
 * the skills `npx skills` installed too (its `skills-lock.json`).
 */
import * as Path from "node:path"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { Command, Flag } from "effect/cli"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { CliReport } from "@mcp-skills/core"
import * as Follow from "../../Follow.js"
import * as Host from "../../Host.js"
import type { LockSkill } from "../../LockFile.js"
import * as PullError from "../../PullError.js"
import * as SkillCache from "../../SkillCache.js"
import * as SkillsClient from "../../SkillsClient.js"
import * as SkillsLock from "../../SkillsLock.js"
import { counted } from "../lines.js"
import { inspect, isEdited, recordedPaths } from "../pull/disk.js"
import { readLock } from "../pull/paths.js"
import { place } from "./install.js"
import { commandLine, fail, program, Usage } from "./target.js"

// The skills of a project's host folder that `npx skills` installed (its `skills-lock.json`, entries
// not a pull's), one line each: edited here when the folder's hash is no longer the one recorded.
const installedByNpxSkills = (into: string, project: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const lock = yield* SkillsLock.read(project)
    const lines: Array<string> = []
    for (const [name, entry] of Object.entries(lock.skills)) {
      if (entry["sourceType"] === SkillsLock.SourceType || name.includes("/") || name.startsWith(".")) continue
      const folder = Path.join(into, name)
      if (!(yield* fs.exists(Path.join(folder, "SKILL.md")))) continue
      const hash = yield* SkillsLock.computedHash(folder)
      const source = `${String(entry["source"])}${typeof entry["sourceType"] === "string" ? ` (${entry["sourceType"]})` : ""}`
      lines.push(`  ${name}\tinstalled by npx skills\tfrom ${source}\t${hash === entry["computedHash"] ? "as installed" : "edited here (its computedHash differs)"}`)
    }
    return lines
  }).pipe(Effect.catch((error) => Effect.succeed([`  ${Path.join(project, SkillsLock.FileName)}: ${error.message}`])))

type Freshness = "up to date" | "out of date" | "gone from the server" | "dynamic: not comparable"

const sameFiles = (record: LockSkill, skill: SkillsClient.Listing["skills"][number]) => {
  if (skill.resources === "dynamic") return false
  const now = new Map<string, string>(skill.resources.map((file) => [file.uri, file.digest]))
  return now.size === record.files.length && record.files.every((file) => now.get(file.uri) === file.digest)
}

// How each record of one server compares with what it serves now.
const compare = (client: SkillsClient.Service, records: ReadonlyArray<LockSkill>) =>
  Effect.gen(function*() {
    const listing = yield* client.listSkills()
    const out = new Map<string, Freshness>()
    for (const record of records) {
      if (record.dynamic) {
        out.set(record.uri, "dynamic: not comparable")
        continue
      }
      const listed = listing.skills.find((skill) => skill.uri === record.uri) ??
        (yield* client.getSkill(record.uri).pipe(
          Effect.map((got) => got.skill),
          Effect.catchTag("SkillNotFound", () => Effect.succeed(undefined))
        ))
      out.set(record.uri, listed === undefined ? "gone from the server" : sameFiles(record, listed) ? "up to date" : "out of date")
    }
    return out
  })

// A server as the lock file names it: its URL, or the command line of a stdio server.
const transportOf = (origin: string, token: Option.Option<Redacted.Redacted<string>>): Follow.Transport => {
  if (/^https?:\/\//.test(origin)) {
    return Follow.http(origin, Option.isSome(token) ? { authorization: `Bearer ${Redacted.value(token.value)}` } : {})
  }
  const [command, ...args] = commandLine(origin)
  return Follow.stdio(command!, args)
}

const status = Command.make("status", {
  ...place,
  offline: Flag.Boolean("offline").pipe(Flag.withDescription("Ask no server what changed; show only what is installed"), Flag.withDefault(false)),
  timeout: Flag.Finite("timeout").pipe(Flag.withDescription("Seconds to wait for each server (default 30)"), Flag.withDefault(30))
}, (input) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const token = yield* Config.option(Config.Redacted("MCP_SKILLS_TOKEN")).pipe(Effect.orDie)
    const places = yield* Host.places
    // `--into` is one folder; else every host folder, or those of `--host` and `--scope`.
    const folders: ReadonlyArray<{ readonly into: string; readonly label: string; readonly project?: string }> = Option.isSome(input.into)
      ? [{ into: input.into.value, label: "--into" }]
      : (yield* Host.every(places, Option.getOrUndefined(input.scope)))
        .filter((found) => Option.match(input.host, { onNone: () => true, onSome: (host) => found.hosts.includes(host) }))
        .map((found) => ({
          into: found.into,
          label: `${found.hosts.join(", ")}, ${found.scope}`,
          ...(found.scope === "project" ? { project: places.cwd } : {})
        }))
    let shown = 0
    for (const { into, label, project } of folders) {
      if (!(yield* fs.exists(into).pipe(Effect.orElseSucceed(() => false)))) continue
      const lock = yield* readLock(into)
      const theirs = project === undefined ? [] : yield* installedByNpxSkills(into, project)
      shown++
      yield* Console.log(`${into} (${label}): ${counted(lock.skills.length + theirs.length, "skill")}`)
      const recorded = recordedPaths(lock)
      const origins = [...new Set(lock.skills.map((skill) => skill.origin))]
      // By server and URI: two servers may serve a skill of one URI into one folder (with --prefix).
      const fresh = new Map<string, Freshness | string>()
      if (!input.offline) {
        for (const origin of origins) {
          const records = lock.skills.filter((skill) => skill.origin === origin)
          const compared = yield* Effect.suspend(() =>
            SkillsClient.SkillsClient.use((c) => compare(c, records)).pipe(
              Effect.provide(
                Follow.clientLayer(transportOf(origin, token), { server: origin, timeout: `${input.timeout} seconds`, allowDynamic: true })
                  .pipe(Layer.provide([FetchHttpClient.layer, NodeServices.layer, SkillCache.layerMemory()]))
              )
            )
          ).pipe(
            // An origin that is no command line to run (shell syntax) is not checked, as a server that does not answer.
            Effect.catchDefect((defect) =>
              defect instanceof Usage ? Effect.fail(new PullError.PullError({ check: "transport", detail: defect.message })) : Effect.die(defect)
            ),
            Effect.map((found): ReadonlyMap<string, string> => found),
            Effect.catch((error) =>
              Effect.succeed(
                new Map(records.map((r) => [
                  r.uri,
                  `not checked: ${error._tag === "UnsupportedEffect" ? error.message : PullError.toPullError(error).message}`
                ]))
              )
            )
          )
          for (const [uri, said] of compared) fresh.set(`${origin} ${uri}`, said)
        }
      }
      for (const record of lock.skills) {
        const local = yield* inspect(into, record, recorded)
        const edited = isEdited(local)
          ? `; edited here (${counted(local.modified.length + local.missing.length + local.added.length, "file")})`
          : ""
        yield* Console.log(
          `  ${record.path}\t${record.uri}\tfrom ${record.origin}\tverified ${record.verifiedAt ?? "(not recorded)"}` +
            `${record.signer === undefined ? "" : `\tsigned by ${record.signer}`}\t${fresh.get(`${record.origin} ${record.uri}`) ?? "not checked"}${edited}`
        )
      }
      for (const skill of theirs) yield* Console.log(skill)
    }
    if (shown === 0) yield* Console.log(`no skills installed in ${folders.map((folder) => folder.into).join(", ")}`)
  }).pipe(
    Effect.catch((error) => fail(error._tag === "HomeFolderError" ? error.message : PullError.toPullError(error).message)),
    Effect.catchDefect((defect) => defect instanceof Usage ? CliReport.usageIn([program, "status"])(defect.message) : Effect.die(defect))
  )).pipe(
    Command.withDescription(
      "What is installed where (every host folder, or --host/--scope/--into): each skill's server, when it was verified, whether it was edited here, and whether the server changed it since"
    ),
    Command.withExamples([
      { command: "mcp-skills status", description: "every host folder of this project and of the user" },
      { command: "mcp-skills status --host claude-code --scope user --offline", description: "~/.claude/skills, without asking any server" }
    ])
  )

/** The command that reports what is installed. */
export const command = status
