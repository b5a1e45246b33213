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
 * - A `render` (or `list`) that fails or exceeds `timeout` answers a clear error for that instance
 *   (logged on the server) and never breaks the listing of other skills.
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
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type * as PathTemplate from "./PathTemplate.js"
import type * as Skill from "./Skill.js"

/**
 * What `list` sees: the request it enumerates for, and the cursor of the page it is asked for
 * (`undefined` for the first).
 *
 * @since 0.1.0
 */
export interface ListRequest extends Skill.RenderRequest {
  readonly cursor: string | undefined
}

/**
 * One page of instances. `nextCursor` is the family's own opaque cursor for the page after it;
 * the server wraps it in its listing cursor, so the family never sees another's cursor.
 *
 * @since 0.1.0
 */
export interface Page<P> {
  readonly instances: ReadonlyArray<P>
  readonly nextCursor?: string | undefined
}

/**
 * Instances of one `list` call: all of them, or one page.
 *
 * @since 0.1.0
 */
export type Instances<P> = ReadonlyArray<P> | Page<P>

/**
 * A family as the registry receives it. The template's parameter names are erased here (the
 * constructor checked them against the template at compile time); `R` are the per-request
 * services `list` and `render` read.
 *
 * @since 0.1.0
 */
export interface Family<R = never> {
  readonly _tag: "Family"
  /** The skill-path template (`customers/{customer}/onboarding`), validated on registration. */
  readonly path: string
  /** URI scheme, lower case; `skill` unless a domain scheme is wanted (R100). */
  readonly scheme: string
  /** Enumerates instances for `skills/list` and `resources/list`; `undefined`: unlisted. */
  readonly list: ((request: ListRequest) => Effect.Effect<Instances<PathTemplate.Params>, unknown, R>) | undefined
  readonly render: (
    params: PathTemplate.Params,
    request: Skill.RenderRequest
  ) => Effect.Effect<Readonly<Record<string, Skill.Content>>, unknown, R>
  /** The instances' own hint; its scope is `private` unless it says `public`. */
  readonly cacheHint: Skill.CacheHint | undefined
  /** The time limit of one `render` and of one `list` call. */
  readonly timeout: Duration.Input
  /**
   * Emits whenever the family's instances changed (a customer added, a runbook edited): each
   * listener that may see an instance of a listed family is told `list_changed`, and re-lists.
   */
  readonly changes: Stream.Stream<unknown> | undefined
}

/**
 * The time limit of `render` and `list` when a family sets none.
 *
 * @since 0.1.0
 */
export const DefaultTimeout: Duration.Input = "10 seconds"

/**
 * Options of `make`. The parameter names in `render`'s and `list`'s types come from `path` alone.
 *
 * @since 0.1.0
 */
export interface Options<T extends string, R> {
  readonly path: T
  readonly scheme?: string | undefined
  readonly list?: ((request: ListRequest) => Effect.Effect<Instances<NoInfer<PathTemplate.Params<T>>>, unknown, R>) | undefined
  readonly render: (
    params: NoInfer<PathTemplate.Params<T>>,
    request: Skill.RenderRequest
  ) => Effect.Effect<Readonly<Record<string, Skill.Content>>, unknown, R>
  readonly cacheHint?: Skill.CacheHint | undefined
  readonly timeout?: Duration.Input | undefined
  readonly changes?: Stream.Stream<unknown> | undefined
}

/**
 * A skill family (see the module description). Nothing is validated here: the registry parses
 * the template and reports an invalid one with every other registration problem.
 *
 * @since 0.1.0
 */
export const make = <const T extends string, R = never>(options: Options<T, R>): Family<R> => ({
  _tag: "Family",
  path: options.path,
  scheme: options.scheme ?? "skill",
  // The registry only ever passes parameters that matched this template, so the names agree.
  list: options.list as Family<R>["list"],
  render: options.render as Family<R>["render"],
  cacheHint: options.cacheHint,
  timeout: options.timeout ?? DefaultTimeout,
  changes: options.changes
})
