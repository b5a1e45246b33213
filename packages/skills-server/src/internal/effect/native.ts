/**
 * effect's own skills (`McpServer.skill` / `registerSkill`, effect 4.1.1 and later), read for one
 * request. The skills layer is the one answerer of the extension's methods on a server; what an
 * app registers through effect's API is one more source of its answers, asked at request time
 * through the core handle effect's runtime gives each adapter (`installHandlers(core, ...)`), so
 * effect's own visibility (`EnabledWhen`, `McpServer.visibility` around the skill) decides effect's
 * skills as it would alone, and one registered after start is on the next listing.
 *
 * effect's core has no skill-source hook: `core.skills` (`list`, `get`, `readDirectory`,
 * `ownsFile`) and `core.registrationPresence` are internals (`internal/mcpCore.ts`), named here
 * once and checked by `hooks.ts`. A public skill-source port on effect's `McpServer` (list, get,
 * directory, file, changes) would let this module go.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { McpSchema } from "effect/ai"
import type { NativeChild, NativeEntry, NativeSkills, WireError } from "./shapes.js"

/** The core handle's members this module reads. */
export interface Core {
  readonly skills: {
    readonly list: (invocation: unknown) => Effect.Effect<ReadonlyArray<NativeEntry>, unknown>
    readonly get: (uri: string, invocation: unknown) => Effect.Effect<NativeEntry, unknown>
    readonly readDirectory: (uri: string, invocation: unknown) => Effect.Effect<ReadonlyArray<NativeChild>, unknown>
    readonly ownsFile: (uri: string) => boolean
  }
  readonly registrationPresence: Effect.Effect<{ readonly skills: boolean; readonly resources: boolean }>
}

/** Whether effect's registrations hold a skill now (they only grow: effect has no removal). */
export const holds = (core: Core): boolean => Effect.runSync(core.registrationPresence).skills

// effect's not-found failures of its skills core: the request falls back to "absent".
const isNotFound = (error: unknown) => {
  const tag = (error as { readonly _tag?: unknown } | undefined)?._tag
  return tag === "SkillNotFound" || tag === "DirectoryNotFound"
}

// A `RequestRejected` (effect's middleware failed the request) carries the MCP error it sends.
const toWire = (error: unknown): WireError => {
  const rejected = error as { readonly code?: unknown; readonly message?: unknown; readonly data?: unknown }
  if (typeof rejected?.code === "number" && typeof rejected.message === "string") {
    return rejected.data === undefined
      ? { code: rejected.code, message: rejected.message }
      : { code: rejected.code, message: rejected.message, data: rejected.data }
  }
  return { code: McpSchema.INTERNAL_ERROR_CODE, message: "Internal error" }
}

const absentOnNotFound = <A>(effect: Effect.Effect<A, unknown>): Effect.Effect<A | undefined, WireError> =>
  Effect.catch(effect, (error) => isNotFound(error) ? Effect.succeed(undefined) : Effect.fail(toWire(error)))

/**
 * effect's skills as one request sees them: the invocation is built as effect builds its own
 * (`invocationFromRequestContext`, with the session's client where there is one).
 */
export const forRequest = (
  core: Core,
  requestContext: McpSchema.McpRequestContext["Service"],
  serverClient: unknown,
  hint: NativeSkills["hint"]
): NativeSkills => {
  const invocation = {
    clientId: requestContext.clientId,
    protocol: {
      protocolVersion: requestContext.protocolVersion,
      clientCapabilities: requestContext.clientCapabilities,
      clientInfo: requestContext.clientInfo,
      requestMetadata: requestContext.requestMetadata
    },
    requestContext,
    ...(serverClient === undefined ? {} : { serverClient })
  }
  return {
    present: Effect.map(core.registrationPresence, (presence) => presence.skills),
    list: Effect.mapError(Effect.suspend(() => core.skills.list(invocation)), toWire),
    get: (uri) => absentOnNotFound(Effect.suspend(() => core.skills.get(uri, invocation))),
    directory: (uri) => absentOnNotFound(Effect.suspend(() => core.skills.readDirectory(uri, invocation))),
    hint
  }
}

/**
 * The `SKILL.md` URIs of effect's skills among `resources` (the URIs `McpServer.resources`
 * lists): files effect's skills own, named `SKILL.md`, inside no other such file's folder
 * (effect refuses nested skills, so a deeper `SKILL.md` is a file of the skill around it).
 */
export const skillUris = (core: Core, resources: ReadonlyArray<string>): ReadonlyArray<string> => {
  const roots = resources
    .filter((uri) => uri.endsWith("/SKILL.md") && core.skills.ownsFile(uri))
    .map((uri) => uri.slice(0, -"SKILL.md".length))
    .sort()
  const outermost: Array<string> = []
  for (const root of roots) {
    if (!outermost.some((outer) => root.startsWith(outer))) outermost.push(root)
  }
  return outermost.map((root) => `${root}SKILL.md`)
}
