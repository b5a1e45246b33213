/** The `"auto"` protocol choice: 2026-07-28 first, 2025-11-25 when the server rejects that revision. */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { McpTelemetry } from "@mcp-skills/core"
import type * as McpClient from "effect/ai/McpClient"
import { McpClientError } from "effect/ai/McpClientError"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as Scope from "effect/Scope"
import type * as Transport from "./transport.js"

// Answers that mean "not this revision" rather than "server unreachable" or "not allowed".
const rejectsRevision = (error: McpClientError) => {
  const reason = error.reason
  return reason._tag === "ProtocolError" || reason._tag === "UnsupportedError" ||
    (reason._tag === "HttpError" && reason.status >= 400 && reason.status < 500 && reason.status !== 401 && reason.status !== 403)
}

/** Opens the transport of one connection attempt at `protocol`'s revision. */
export type Connect<E, R> = (
  protocol: McpProtocol.ProtocolAdapter<McpClient.ProtocolVersion>
) => Effect.Effect<
  {
    readonly transport: McpClient.Transport
    readonly send?: Transport.Send | undefined
    readonly network?: McpTelemetry.Transport | undefined
  },
  E,
  R | Scope.Scope
>

/** Connects with `connect` at the chosen revision and builds the client with `build`. */
export const negotiate = <S, E, C, R>(
  choice: McpClient.ProtocolVersion | "auto" | undefined,
  connect: Connect<C, R>,
  build: (
    transport: McpClient.Transport,
    send: Transport.Send | undefined,
    network: McpTelemetry.Transport | undefined
  ) => Effect.Effect<S, E, Scope.Scope>
): Effect.Effect<S, C | E, R | Scope.Scope> => {
  const attempt = (version: McpClient.ProtocolVersion) =>
    Effect.flatMap(connect(version === "2025-11-25" ? McpProtocol.v2025_11_25 : McpProtocol.v2026_07_28), ({ network, send, transport }) =>
      build(transport, send, network))
  if (choice !== undefined && choice !== "auto") return attempt(choice)
  return Effect.gen(function*() {
    // The first attempt gets its own scope, so a refused connection (a spawned server included)
    // is closed before the second one starts.
    const child = yield* Scope.fork(yield* Scope.Scope)
    const modern = yield* attempt("2026-07-28").pipe(Scope.provide(child), Effect.exit)
    if (Exit.isSuccess(modern)) return modern.value
    yield* Scope.close(child, modern)
    const error = modern.cause.reasons.find(Cause.isFailReason)?.error
    if (!(error instanceof McpClientError) || !rejectsRevision(error)) return yield* Effect.failCause(modern.cause)
    return yield* attempt("2025-11-25")
  })
}
