/**
 * The notification channel of a followed server (`Follow`): what a notification says (`Signal`)
 * and how the channel breaks (`ChannelError`). They live here so that the channel's internals name
 * them without importing the module that runs them.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * What a notification says: the listing may have changed (`ListChanged`), or one resource did
 * (`Updated`); or the channel is open (`Opened`: acknowledged), so what changed before it opened
 * must be looked for once.
 *
 * @example
 * ```ts
 * import { Follow, type FollowChannel } from "@mcp-skills/client"
 * import { Console, Effect, Stream } from "effect"
 *
 * const say = (signal: FollowChannel.Signal) =>
 *   signal._tag === "Updated" ? `changed: ${signal.uri}` : signal._tag === "ListChanged" ? "the listing changed" : "listening"
 *
 * // What a server's notifications say about one skill, until its channel breaks.
 * const watch = Effect.scoped(Effect.gen(function*() {
 *   const connection = yield* Follow.connect(Follow.http("http://127.0.0.1:3000/mcp"), {})
 *   yield* connection.signals(["skill://acme/refunds/SKILL.md"]).pipe(
 *     Stream.runForEach((signal) => Console.log(say(signal))),
 *     Effect.catchTag("ChannelError", (error: FollowChannel.ChannelError) =>
 *       Console.log(error.unsupported ? "no notifications offered: look again on ttlMs" : `channel broke: ${error.reason}`))
 *   )
 * }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Signal =
  | { readonly _tag: "Opened" }
  | { readonly _tag: "ListChanged" }
  | { readonly _tag: "Updated"; readonly uri: string }

/**
 * The notification channel broke; `unsupported`: the server offers none, so only `ttlMs`
 * re-checks remain.
 *
 * @since 0.1.0
 * @category errors
 */
export class ChannelError extends Schema.TaggedError<ChannelError>()("ChannelError", {
  reason: Schema.String,
  unsupported: Schema.Boolean
}) {
  override get message(): string {
    return this.reason
  }
}
