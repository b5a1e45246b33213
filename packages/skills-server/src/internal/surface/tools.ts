/**
 * The catalogue as read-only tools, for hosts that do not speak the Skills extension:
 * `search_skills`, `load_skill` and `read_skill_file`, registered as an effect toolkit
 * (`McpServer.registerToolkit`). Each call is one skills request: it goes through `begin` with the
 * extension method it stands for (`skills/list`, `skills/get`, `resources/read`), so its one
 * visibility decision is made, and seen by a check, exactly as for that method, and a hidden
 * skill is as absent here as there. Answers carry the skills' URIs, so a host that later speaks
 * the extension finds the same skills, and are bounded (`ToolLimits`) and paged.
 *
 * @internal
 */
import { SkillUri } from "@mcp-skills/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { McpServer, Tool, Toolkit } from "effect/ai"
import * as ToolLimits from "../../ToolLimits.js"
import * as Cursor from "../cursor.js"
import * as Port from "../effect/port.js"
import type { RequestInfo, WireError } from "../effect/port.js"
import * as Kind from "../kind.js"
import type { Call } from "../kind.js"
import * as Search from "../search.js"
import type * as Visibility from "../visibility.js"
import { absent, resolveMissing, skillAt } from "./getSkill.js"
import { ownerOf } from "./owner.js"
import { begin, unknownCursor } from "./request.js"
import type * as Snapshot from "../../Snapshot.js"

/** A tool call that cannot be answered; the model reads its message (`isError: true`). */
export class SkillToolError extends Schema.TaggedError<SkillToolError>()("SkillToolError", {
  message: Schema.String
}) {}

const failWith = (error: WireError) => new SkillToolError({ message: error.message })

const Hit = Schema.Struct({
  uri: Schema.String,
  name: Schema.String,
  description: Schema.String
})

const Offset = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

// What every tool here is: it reads the catalogue, changes nothing, and reaches nothing else.
const ReadOnly = Context.make(Tool.Readonly, true).pipe(
  Context.add(Tool.Idempotent, true),
  Context.add(Tool.OpenWorld, false)
)

const SearchSkills = Tool.make("search_skills", {
  description: "Search the skills this server offers: packaged instructions, scripts and references for a kind " +
    "of task. Use it before starting a task a skill may cover (a file format, a tool, a team's procedure), with a " +
    "few words of the task; spelling mistakes are tolerated. Returns the best matches first, each with the uri to " +
    "pass to load_skill; when nextCursor is present, call again with the same query and that cursor for more.",
  parameters: Schema.Struct({
    query: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(ToolLimits.MaxQueryLength)),
    cursor: Schema.optionalKey(Schema.String)
  }),
  success: Schema.Struct({ skills: Schema.Array(Hit), nextCursor: Schema.optionalKey(Schema.String) }),
  failure: SkillToolError
})
  .annotate(Tool.Title, "Search skills")
  .annotateMerge(ReadOnly)

const LoadSkill = Tool.make("load_skill", {
  description: "Load one skill by its uri (a skill://.../SKILL.md uri from search_skills): returns its SKILL.md, the " +
    "instructions to follow for the task, and the list of its other files with their uris. Read a file the " +
    "instructions refer to with read_skill_file. When nextOffset is present the SKILL.md goes on: read the rest " +
    "with read_skill_file at that offset; when nextCursor is present, call again with it for more files.",
  parameters: Schema.Struct({ uri: Schema.String, cursor: Schema.optionalKey(Schema.String) }),
  success: Schema.Struct({
    ...Hit.fields,
    text: Schema.String,
    nextOffset: Schema.optionalKey(Schema.Int),
    files: Schema.Array(Schema.Struct({ path: Schema.String, uri: Schema.String, size: Schema.Int })),
    dynamic: Schema.optionalKey(Schema.Boolean),
    nextCursor: Schema.optionalKey(Schema.String)
  }),
  failure: SkillToolError
})
  .annotate(Tool.Title, "Load a skill")
  .annotateMerge(ReadOnly)

const ReadSkillFile = Tool.make("read_skill_file", {
  description: "Read one file of a skill: either its uri (from load_skill), or the skill's uri and the file's path " +
    "relative to the skill folder (as its SKILL.md refers to it, such as references/FORMS.md). Text comes as text, " +
    "other files as base64 in blob with their mimeType. A long file comes in parts: when nextOffset is present, " +
    "call again with that offset for the next part.",
  parameters: Schema.Struct({
    uri: Schema.optionalKey(Schema.String),
    skill: Schema.optionalKey(Schema.String),
    path: Schema.optionalKey(Schema.String),
    offset: Schema.optionalKey(Offset)
  }),
  success: Schema.Struct({
    uri: Schema.String,
    mimeType: Schema.String,
    text: Schema.optionalKey(Schema.String),
    blob: Schema.optionalKey(Schema.String),
    size: Schema.Int,
    nextOffset: Schema.optionalKey(Schema.Int)
  }),
  failure: SkillToolError
})
  .annotate(Tool.Title, "Read a skill file")
  .annotateMerge(ReadOnly)

/** The skills tools. */
export const SkillTools = Toolkit.make(SearchSkills, LoadSkill, ReadSkillFile)

// The request of this tool call; a server whose adapters are not wrapped has none to decide with.
const currentRequest = Effect.flatMap(Port.toolRequest, (request) =>
  request === undefined
    ? Effect.fail(new SkillToolError({ message: "the skills tools need the server's protocols wrapped by SkillsServer.protocols" }))
    : Effect.succeed(request))

const started = (request: RequestInfo, method: Visibility.Method) => Effect.mapError(begin(request, method), failWith)

const hitOf = (skill: Snapshot.ServedSkill) => {
  const description = skill.frontmatter["description"]
  return { uri: skill.uri, name: skill.name, description: typeof description === "string" ? description : "" }
}

const SearchScope = "search"

const searchCursor = (query: string, position: Search.Position) =>
  Cursor.make(SearchScope, JSON.stringify([query, position.rank, position.uri]))

// The position a cursor of this very query continues after; `undefined` for any other cursor.
const positionOf = (query: string, cursor: string): Search.Position | undefined => {
  const after = Cursor.decode(SearchScope, cursor)
  if (after === undefined) return undefined
  try {
    const [asked, rank, uri] = JSON.parse(after) as [unknown, unknown, unknown]
    return asked === query && Number.isSafeInteger(rank) && typeof uri === "string" ? { rank: rank as number, uri } : undefined
  } catch {
    return undefined
  }
}

const searchSkills = Effect.fnUntraced(function*(params: { readonly query: string; readonly cursor?: string }) {
  const { call, state } = yield* started(yield* currentRequest, "skills/list")
  const after = params.cursor === undefined ? undefined : positionOf(params.query, params.cursor)
  if (params.cursor !== undefined && after === undefined) return yield* failWith(unknownCursor)
  const page = Search.search(state.searchIndex(call.snapshot), params.query, {
    admits: (skill) => call.visible.skill(skill.index),
    after,
    limit: ToolLimits.SearchPageSize
  })
  return {
    skills: page.hits.map(hitOf),
    ...(page.next === undefined ? {} : { nextCursor: searchCursor(params.query, page.next) })
  }
})

// At most `MaxFileChars` of a file's content from `offset` on (characters of text, bytes of a
// blob), and where the rest starts.
const partOf = (content: Snapshot.WireContent, offset: number) => {
  const end = offset + ToolLimits.MaxFileChars
  if ("text" in content) {
    const size = content.text.length
    return { text: content.text.slice(offset, end), size, ...(end < size ? { nextOffset: end } : {}) }
  }
  const bytes = Buffer.from(content.blob, "base64")
  const size = bytes.byteLength
  return { blob: bytes.subarray(offset, end).toString("base64"), size, ...(end < size ? { nextOffset: end } : {}) }
}

const FilesScope = "files"

const loadSkill = Effect.fnUntraced(function*(params: { readonly uri: string; readonly cursor?: string }) {
  const request = yield* currentRequest
  yield* Effect.mapError(resolveMissing(request, params.uri), failWith)
  const { call } = yield* started(request, "skills/get")
  const found = yield* Effect.mapError(skillAt(call, params.uri), failWith)
  if (found === undefined) return yield* failWith(absent(params.uri))
  const { skill, entry } = found
  const after = params.cursor === undefined ? undefined : Cursor.decode(`${FilesScope} ${skill.uri}`, params.cursor)
  if (params.cursor !== undefined && after === undefined) return yield* failWith(unknownCursor)
  const read = yield* Effect.mapError(Kind.kindOf(skill).read(call, skill, skill.uri), failWith)
  if (read === undefined) return yield* failWith(absent(params.uri))
  const part = partOf(read.content, 0)
  const dynamic = entry.resources === "dynamic"
  const files = dynamic ? [] : [...(entry.resources as ReadonlyArray<{ readonly uri: string; readonly size: number }>)]
    .filter((resource) => resource.uri !== skill.uri)
    .sort((a, b) => a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)
  const from = Cursor.startAfter(files, (file) => file.uri, after)
  const page = files.slice(from, from + ToolLimits.FilesPerPage)
  return {
    ...hitOf(skill),
    text: "text" in part ? part.text : "",
    ...(part.nextOffset === undefined ? {} : { nextOffset: part.nextOffset }),
    files: page.map((file) => ({ path: SkillUri.relativePath(skill.uri, file.uri) ?? file.uri, uri: file.uri, size: file.size })),
    ...(dynamic ? { dynamic } : {}),
    ...(from + page.length < files.length ? { nextCursor: Cursor.make(`${FilesScope} ${skill.uri}`, page.at(-1)!.uri) } : {})
  }
})

// The file URI a `read_skill_file` names: its own, or its path in a skill.
const fileUriOf = (params: { readonly uri?: string; readonly skill?: string; readonly path?: string }) => {
  if (params.uri !== undefined) {
    return params.skill === undefined && params.path === undefined
      ? Effect.succeed(params.uri)
      : Effect.fail(new SkillToolError({ message: "give either uri, or skill and path, not both" }))
  }
  if (params.skill === undefined || params.path === undefined) {
    return Effect.fail(new SkillToolError({ message: "give the file's uri, or the skill's uri and the file's path" }))
  }
  const skill = SkillUri.parseSkillMd(params.skill)
  if (Result.isFailure(skill)) return Effect.fail(new SkillToolError({ message: skill.failure.message }))
  const uri = SkillUri.file(skill.success, params.path)
  return Result.isFailure(uri) ? Effect.fail(new SkillToolError({ message: uri.failure.message })) : Effect.succeed(uri.success)
}

const readFile = (call: Call, uri: string) => {
  const owner = ownerOf(call, uri, call.snapshot.files.get(uri))
  if (owner !== undefined && "code" in owner) return Effect.fail(owner)
  return owner === undefined ? Effect.succeed(undefined) : Kind.kindOf(owner.skill).read(call, owner.skill, uri)
}

const readSkillFile = Effect.fnUntraced(function*(params: {
  readonly uri?: string
  readonly skill?: string
  readonly path?: string
  readonly offset?: number
}) {
  const uri = yield* fileUriOf(params)
  // Decided before the look-up, so a refused caller gets the same answer for present and absent files.
  const { call } = yield* started(yield* currentRequest, "resources/read")
  const answer = yield* Effect.mapError(readFile(call, uri), failWith)
  if (answer === undefined) return yield* new SkillToolError({ message: `no file is served at ${uri}` })
  const offset = params.offset ?? 0
  const part = partOf(answer.content, offset)
  if (offset > 0 && offset >= part.size) {
    return yield* new SkillToolError({ message: `offset ${offset} is past the end of ${uri} (${part.size})` })
  }
  return { uri, mimeType: answer.mimeType, ...part }
})

/** The registration of the skills tools on the layer's `McpServer`. */
export const register = McpServer.registerToolkit(SkillTools).pipe(
  Effect.provide(SkillTools.toLayer({
    search_skills: searchSkills,
    load_skill: loadSkill,
    read_skill_file: readSkillFile
  }))
)
