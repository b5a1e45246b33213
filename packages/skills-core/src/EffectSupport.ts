/**
 * Which effect the packages run on. The server and the client rely on parts of effect that are
 * not documented (hooks of its MCP protocol adapters and of `McpClient`), verified against the
 * versions in `range`; building their layers checks those hooks first and fails with
 * `UnsupportedEffect` when one is missing, rather than answering requests wrongly later.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Version from "effect/Version"

/**
 * The effect versions the packages support: the `effect` and `@effect/platform-node` peer range
 * of every `@mcp-skills` package. It starts at 4.1.2, the first release with the Skills extension
 * in effect's own `McpServer` (4.1.1) that also has an `@effect/platform-node` of its own (4.1.1
 * has none, and `@effect/platform-node` 4.1.0 resolves a shared package that wants effect 4.1.5),
 * and ends before the next minor, whose internals are not verified.
 *
 * @since 0.1.0
 * @category utils
 */
export const range = ">=4.1.2 <4.2.0"

/**
 * The installed effect lacks a hook a package relies on: `missing` names each one.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnsupportedEffect extends Schema.TaggedError<UnsupportedEffect>()("UnsupportedEffect", {
  /** The package that cannot run, such as `@mcp-skills/server`. */
  package: Schema.String,
  /** The version of the effect in use. */
  installed: Schema.String,
  /** The versions the package supports. */
  supported: Schema.String,
  missing: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.package} supports effect ${this.supported}, but runs on effect ${this.installed}, which lacks ` +
      `${this.missing.join(", ")}; install an effect in ${this.supported}`
  }
}

/**
 * Succeeds when every hook is present (`true`), and otherwise fails naming the absent ones, the
 * effect in use and `range`.
 *
 * @example
 * ```ts
 * import { EffectSupport } from "@mcp-skills/core"
 * import { Effect } from "effect"
 *
 * const hooks = { "McpServer.layerHttp": true, "McpClient.make": false }
 * const check = EffectSupport.verify("@my/package", hooks).pipe(
 *   Effect.catchTag("UnsupportedEffect", (error) => Effect.logError(error.message)) // names McpClient.make and the range
 * )
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const verify = (pkg: string, hooks: Readonly<Record<string, boolean>>): Effect.Effect<void, UnsupportedEffect> => {
  const missing = Object.keys(hooks).filter((hook) => !hooks[hook])
  return missing.length === 0
    ? Effect.void
    : Effect.fail(
      new UnsupportedEffect({ package: pkg, installed: Version.getCurrentVersion(), supported: range, missing })
    )
}
