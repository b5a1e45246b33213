/**
 * effect's own skills (`McpServer.skill`) in the layer's answers: the layer is the one answerer
 * of the extension's methods, so `skills/list`, `skills/get` and `resources/directory/read`
 * answer for both. effect's visibility decides effect's skills (`RequestInfo.native` asks
 * effect's core for this request), and the layer's one decision of the request covers them too
 * (`Call.admits`). effect's skills come first in a listing, on its first page: effect has no
 * cursor, its registrations are few and in code, and a client finds them without paging.
 * `resources/read` and `resources/list` of their files stay effect's, whose resources they are.
 *
 * @internal
 */
import { SkillUri } from "@mcp-skills/core"
import type { Protocol, Skill as CoreSkill } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { NativeChild, NativeEntry, RequestInfo, WireError } from "../effect/port.js"
import type { Call } from "../kind.js"
import type * as Snapshot from "../../Snapshot.js"
import type * as Visibility from "../../Visibility.js"
import * as PathTemplate from "../../PathTemplate.js"
import { familyKey } from "../../Snapshot.js"
import * as Answer from "./answer.js"

// What a visibility check sees of one of effect's skills: the fields it sees of the layer's own.
const infoOf = (entry: NativeEntry): Visibility.SkillInfo => {
  const parsed = SkillUri.parse(entry.uri)
  const path = Result.isSuccess(parsed) ? parsed.success.segments.slice(0, -1) : entry.uri.split("/").slice(2, -1)
  return {
    uri: entry.uri as SkillUri.SkillMdUri,
    root: entry.uri.slice(0, -"/SKILL.md".length),
    path,
    name: path.at(-1) ?? "",
    frontmatter: entry.frontmatter,
    listed: true
  }
}

const present = (request: RequestInfo) => request.native.present

// A result about the layer's skills and effect's: the shortest ttl, public only if both are.
const joined = (hint: Snapshot.Hint, other: Snapshot.Hint): Snapshot.Hint => ({
  ttlMs: Math.min(hint.ttlMs, other.ttlMs),
  cacheScope: hint.cacheScope === "public" && other.cacheScope === "public" ? "public" : "private"
})

/**
 * The first page of `skills/list` with effect's skills this request may see in front; any other
 * page as it is. A URI the layer serves is the layer's (a clash is refused when the server starts).
 */
export const withListed = (
  call: Call,
  cursor: string | undefined,
  answer: Answer.Answer<Protocol.ListSkillsResult>
): Effect.Effect<Answer.Answer<Protocol.ListSkillsResult>, WireError> =>
  cursor !== undefined ? Effect.succeed(answer) : Effect.flatMap(present(call.request), (held) =>
    !held ? Effect.succeed(answer) : Effect.map(call.request.native.list, (entries) => {
      const shown = entries.filter((entry) => !call.snapshot.byUri.has(entry.uri) && call.admits(infoOf(entry)))
      if (shown.length === 0) return answer
      return Answer.make(
        { ...answer.body, skills: [...shown as ReadonlyArray<unknown> as ReadonlyArray<CoreSkill.Skill>, ...answer.body.skills] },
        joined(answer.hint, call.request.native.hint),
        answer.checked
      )
    }))

/** `skills/get` of a URI the layer does not serve: effect's skill there, if this request may see it. */
export const get = (call: Call, uri: string): Effect.Effect<Answer.Answer<Protocol.GetSkillResult> | undefined, WireError> =>
  Effect.flatMap(present(call.request), (held) =>
    !held ? Effect.succeed(undefined) : Effect.map(call.request.native.get(uri), (entry) =>
      entry === undefined || !call.admits(infoOf(entry))
        ? undefined
        : Answer.make({ skill: entry as unknown as CoreSkill.Skill }, call.request.native.hint, call.visible.checked)))

/**
 * effect's children of the directory `uri` this request may see (effect answers one page), the
 * URIs of `others` left out; `undefined` where effect serves no such directory. effect's
 * visibility decided its own skills' folders; with a check of the layer's, a folder of an effect
 * skill it refuses is absent, and so is everything in it.
 */
export const directory = (
  call: Call,
  uri: string,
  others: ReadonlySet<string>
): Effect.Effect<ReadonlyArray<NativeChild> | undefined, WireError> =>
  Effect.flatMap(present(call.request), (held) =>
    !held ? Effect.succeed(undefined) : Effect.flatMap(call.request.native.directory(uri), (children) => {
      if (children === undefined) return Effect.succeed(undefined)
      const fresh = children.filter((child) => !others.has(child.uri))
      if (!call.visible.checked) return Effect.succeed(fresh)
      return Effect.map(call.request.native.list, (entries) => {
        const refused = entries.filter((entry) => !call.admits(infoOf(entry))).map((entry) => entry.uri.slice(0, -"SKILL.md".length))
        // A skill's folder, or anything in it (directory URIs carry no trailing slash).
        const inRefused = (child: string) => refused.some((root) => child.startsWith(root) || child === root.slice(0, -1))
        return inRefused(uri) ? undefined : fresh.filter((child) => !inRefused(child.uri))
      })
    }))

/**
 * Which skills of `snapshot` share a `SKILL.md` URI or a folder (one inside the other) with the
 * skills registered through effect's own `McpServer.skill` (`effectSkills`, their `SKILL.md`
 * URIs): one answerer serves both, and neither manifest could list the other's files.
 */
export const clashes = (
  snapshot: Snapshot.Snapshot,
  effectSkills: ReadonlyArray<string>
): Array<{ readonly skill: string; readonly reason: string }> => {
  const problems: Array<{ skill: string; reason: string }> = []
  for (const uri of effectSkills) {
    const theirs = uri.slice(0, -"SKILL.md".length)
    for (const skill of snapshot.skills) {
      const ours = skill.root.endsWith("/") ? skill.root : `${skill.root}/`
      const relation = ours === theirs
        ? "the same skill URI as"
        : theirs.startsWith(ours)
        ? "a folder that holds"
        : ours.startsWith(theirs)
        ? "a folder inside"
        : undefined
      if (relation !== undefined) {
        problems.push({ skill: skill.uri, reason: `has ${relation} the skill ${uri} registered with effect's McpServer.skill` })
      }
    }
    const family = snapshot.families.find((family) => PathTemplate.match(family.template, uri)._tag !== "Outside")
    if (family !== undefined) {
      problems.push({ skill: familyKey(family), reason: `would serve ${uri}, a skill registered with effect's McpServer.skill` })
    }
  }
  return problems
}

/** The hint effect gives its skills' results, for a result holding some of them. */
export const hintWith = (call: Call, hint: Snapshot.Hint): Snapshot.Hint => joined(hint, call.request.native.hint)
