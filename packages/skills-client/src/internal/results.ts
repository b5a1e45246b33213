/**
 * How the client reads a server's answers: results decoded with the core schemas, and a -32602
 * refusal turned into the caller's typed error.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { McpClientError, ValidationError } from "effect/ai/McpClientError"
import { Extension, Protocol, Skill } from "@mcp-skills/core"
import * as Transport from "./transport.js"

export const invalidResult = (method: string, detail: string, cause?: unknown) =>
  new McpClientError({
    reason: new ValidationError({ description: `Invalid ${method} result: ${detail}`, ...(cause === undefined ? {} : { cause }) })
  })

// Results are decoded with the core envelope schemas; entries one by one, so one bad entry
// never hides the others (R6, spec §7 item 8).
export const decodeResult = <S extends Schema.Decoder<unknown>>(schema: S, method: string) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return (result: unknown): Effect.Effect<S["Type"], McpClientError> =>
    Effect.mapError(decode(result), (cause) => invalidResult(method, cause.message, cause))
}
export const decodeListPage = decodeResult(Protocol.ListSkillsPage, Extension.ListSkillsMethod)
export const decodeGetEnvelope = decodeResult(Protocol.GetSkillEnvelope, Extension.GetSkillMethod)
export const decodeDirectoryPage = decodeResult(Protocol.ReadResourceDirectoryResult, Extension.ReadResourceDirectoryMethod)

export const decodeCapability = Schema.decodeUnknownOption(Extension.Capability)

// A listing page's entries, one by one: a bad entry is reported beside the others.
export const decodeEntries = (raw: ReadonlyArray<unknown>) => {
  const skills: Array<Skill.Skill> = []
  const invalid: Array<Skill.InvalidSkillEntry> = []
  for (const entry of raw) {
    const decoded = Skill.decode(entry)
    if (decoded._tag === "Failure") invalid.push(decoded.failure)
    else skills.push(decoded.success)
  }
  return { skills, invalid }
}

// One uri on two entries (or two pages) makes both ambiguous: neither is loaded (R31).
export const withoutRepeated = (skills: ReadonlyArray<Skill.Skill>) => {
  const counts = new Map<string, number>()
  for (const skill of skills) counts.set(skill.uri, (counts.get(skill.uri) ?? 0) + 1)
  return {
    unique: skills.filter((skill) => counts.get(skill.uri) === 1),
    repeated: skills.filter((skill) => counts.get(skill.uri)! > 1).map((skill) =>
      new Skill.InvalidSkillEntry({ uri: skill.uri, problems: [`${skill.uri} is listed more than once (R31)`] })
    )
  }
}

// The direct children of the directory asked for, and the entries outside it (R52).
export const directChildren = (uri: string, resources: ReadonlyArray<Protocol.ResourceEntry>) => {
  const children: Array<Protocol.ResourceEntry> = []
  const outside: Array<string> = []
  for (const item of resources) {
    const rest = item.uri.startsWith(uri + "/") ? item.uri.slice(uri.length + 1) : ""
    if (rest.length === 0 || rest.includes("/")) outside.push(item.uri)
    else children.push(item)
  }
  return { children, outside }
}

export const InvalidParams = -32602
// effect's McpServer, and servers like it, answer a resource they do not have with -32002 on
// 2025-11-25; the extension answers -32602 on both revisions (R65, R66).
export const ResourceNotFoundCodes: ReadonlyArray<number> = [InvalidParams, -32002]

// A -32602 answer, the server's "not there" (R35, R41, R65), as the typed error of the caller.
export const refusedWith = <E>(onInvalid: (error: McpClientError) => E, codes: ReadonlyArray<number> = [InvalidParams]) =>
<A, F>(effect: Effect.Effect<A, F>): Effect.Effect<A, F | E> =>
  Effect.catchIf(
    effect,
    (error): error is F & McpClientError => error instanceof McpClientError && codes.includes(Transport.errorCode(error) ?? 0),
    (error) => Effect.fail(onInvalid(error))
  )
