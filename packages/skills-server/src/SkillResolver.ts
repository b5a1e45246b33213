/**
 * Skills a catalogue serves without holding them until one is asked for: a source whose skills
 * cannot all be listed (an upstream server's get-only skills, behind a gateway). Provided to
 * `SkillsServer.layer`, the resolver is asked on `skills/get` of a `SKILL.md` URI the current
 * snapshot does not hold, before the request reads its snapshot: it fetches, verifies and
 * registers the skill in the registry it is given (or leaves it absent), so the answer, made from
 * the new snapshot under the request's one visibility decision, finds it or answers -32602 as for
 * any absent skill. A resolver bounds its own work: any caller can ask for any URI.
 *
 * @since 0.1.0
 */
import type { SkillUri } from "@mcp-skills/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as SkillRegistry from "./SkillRegistry.js"

/**
 * The resolver the skills layer asks (see the module description). `resolve` never fails: why a
 * skill could not be resolved is the source's to log.
 *
 * @since 0.1.0
 * @category services
 */
export class SkillResolver extends Context.Service<SkillResolver, {
  readonly resolve: (uri: SkillUri.SkillMdUri, registry: SkillRegistry.SkillRegistry["Service"]) => Effect.Effect<void>
}>()("@mcp-skills/server/SkillResolver") {}
