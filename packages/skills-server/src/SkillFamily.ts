/**
 * Skill families: one definition that publishes a skill per set of path parameters (an onboarding
 * skill per customer, a runbook per service), addressed by a `PathTemplate`.
 *
 * - `skills/get`, `resources/read` and `resources/directory/read` resolve a URI against the
 *   template (`PathTemplate.match`) and render that one instance; nothing is enumerated. A URI with
 *   the template's shape but an invalid parameter (`..`, `/`, empty, over-long, not canonically
 *   encoded) is the caller's mistake (-32602) and reaches no `render`.
 * - `skills/list` and `resources/list` enumerate instances through `list`, which runs with the
 *   caller's request and services (the ones the visibility check sees) and may page. A family
 *   without `list` is unlisted: its instances answer by URI only.
 * - `render` produces an instance's files from its parameters and the caller; `SKILL.md` is
 *   required and its frontmatter `name` must equal the last path segment, as for every skill. Each
 *   instance passes the server's visibility decision like any skill, and its entry carries the
 *   digests of the bytes that caller is served, so a verifying client succeeds for every caller.
 * - `render` (or `list`) fails with `NoSuchInstance` when the caller asked for an instance that
 *   does not exist (an unknown customer), and with `NotAllowed` when the caller may not have it:
 *   either is answered exactly as a URI no skill serves (-32602, which clients see as "not
 *   found"; left out of listings), and nothing is logged, whoever asks and however often.
 * - A `render` (or `list`) that fails otherwise or exceeds `timeout` answers -32603 naming that
 *   instance, logs one line (no stack trace; at most one a minute per family, counting the rest)
 *   and never breaks the listing of other skills.
 * - Results about instances are `cacheScope: "private"` unless `cacheHint.scope` is `"public"`.
 * - `changes` says when the instances changed: every listener that may see one of a listed
 *   family's instances (its `list` run for that listener) is told `list_changed`.
 *
 * ```ts
 * import { Effect } from "effect"
 * import { SkillFamily } from "@mcp-skills/server"
 *
 * const onboarding = SkillFamily.make({
 *   path: "customers/{customer}/onboarding",
 *   list: () => Effect.succeed([{ customer: "acme" }, { customer: "globex" }]),
 *   render: ({ customer }) =>
 *     Effect.succeed({
 *       "SKILL.md": `---\nname: onboarding\ndescription: Onboarding ${customer}\n---\n\n# Welcome, ${customer}\n`
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 */

import * as Schema from "effect/Schema"
import * as Skill from "./Skill.js"

/**
 * What `render` or `list` fails with when the caller asked for an instance that does not exist:
 * answered exactly as a URI no skill serves, and never logged.
 *
 * ```ts
 * const onboarding = SkillFamily.make({
 *   path: "customers/{customer}/onboarding",
 *   render: ({ customer }) =>
 *     customers.has(customer)
 *       ? Effect.succeed({ "SKILL.md": `---\nname: onboarding\ndescription: Onboarding ${customer}\n---\n` })
 *       : Effect.fail(new SkillFamily.NoSuchInstance())
 * })
 * ```
 *
 * @example
 * ```ts
 * import { Skill, SkillFamily } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * const customers = new Set(["acme", "initech"])
 *
 * // An unknown customer looks exactly like a URI no skill serves (-32602), and nothing is logged.
 * const onboarding = Skill.family({
 *   path: "onboarding/{customer}",
 *   list: () => Effect.succeed([...customers].map((customer) => ({ customer }))),
 *   render: ({ customer }) =>
 *     customers.has(customer)
 *       ? Effect.succeed({ "SKILL.md": `---\nname: ${customer}\ndescription: Onboard ${customer}\n---\n` })
 *       : Effect.fail(new SkillFamily.NoSuchInstance())
 * })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class NoSuchInstance extends Schema.TaggedError<NoSuchInstance>()("NoSuchInstance", {}) {}

/**
 * What `render` or `list` fails with when the caller may not have the instance (or list the
 * family): answered exactly as a URI no skill serves, as a skill a visibility check hides is, and
 * never logged.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotAllowed extends Schema.TaggedError<NotAllowed>()("NotAllowed", {}) {}

/**
 * A skill family (see the module description); the same constructor as `Skill.family`. Nothing
 * is validated here: the registry parses the template and reports an invalid one with every other
 * registration problem.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Skill.family
