/**
 * The types a visibility check is written against: what it sees of a request and what it may
 * decide. `SkillsServer.layer({ visibility })` takes the check; one decision per request governs
 * every skills surface and the notifications a listener hears.
 *
 * @since 0.1.0
 */
import type { McpSchema } from "effect/ai"
import type * as Effect from "effect/Effect"
import type * as Headers from "effect/http/Headers"
import type * as Snapshot from "./Snapshot.js"

/**
 * The methods a visibility decision is made for. A call of the skills tools (`tools: true`) is
 * decided as the method it stands for: `search_skills` as `skills/list`, `load_skill` as
 * `skills/get`, `read_skill_file` as `resources/read`; so a check written for the extension
 * decides the tools alike, and nothing it hides there is shown through them.
 *
 * @since 0.1.0
 * @category models
 */
export type Method =
  | "skills/list"
  | "skills/get"
  | "resources/read"
  | "resources/list"
  | "resources/directory/read"

/**
 * What a visibility check sees of the request.
 *
 * @since 0.1.0
 * @category models
 */
export interface VisibilityRequest {
  readonly method: Method
  readonly protocolVersion: string
  readonly headers: Headers.Headers
  readonly sessionId: string | undefined
  readonly requestContext: McpSchema.McpRequestContext["Service"]
}

/**
 * What the check may look at for each skill.
 *
 * @since 0.1.0
 * @category models
 */
export type SkillInfo = Pick<Snapshot.SkillEntry, "uri" | "root" | "path" | "name" | "frontmatter" | "listed">

/**
 * The decision for one request: all skills, none, or a predicate (called at most once per skill).
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = boolean | ((skill: SkillInfo) => boolean)

/**
 * An error a visibility check may fail with; it is sent as this JSON-RPC error.
 *
 * @since 0.1.0
 * @category models
 */
export interface CheckError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/**
 * A visibility check. `R` are per-request services (from `HttpRouter` or `McpServer` middleware).
 *
 * **Details**
 *
 * The check runs once per request, inside effect's middleware stack, so services an
 * `McpServer.middleware` or an `HttpRouter` middleware provides are there. A skill it hides is
 * absent from `skills/list` and `resources/list`, and its `skills/get`, reads and directory
 * reads fail exactly as for an absent skill; a check that fails fails the request with its error.
 * Results computed under a check are `cacheScope: "private"`.
 *
 * @example
 * ```ts
 * import { Visibility } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * // Signed-in callers see everything; others nothing under internal/, and nothing at all on
 * // directory reads.
 * const check: Visibility.Check<never, never> = (request) =>
 *   Effect.succeed(
 *     request.method === "resources/directory/read" && request.headers["authorization"] === undefined
 *       ? false
 *       : request.headers["authorization"] !== undefined || ((skill: Visibility.SkillInfo) => skill.path[0] !== "internal")
 *   )
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Check<E extends CheckError, R> = (request: VisibilityRequest) => Effect.Effect<Decision, E, R>
