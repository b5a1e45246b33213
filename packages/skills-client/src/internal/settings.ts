/** The options of a client whose values need a check, checked once at the edge: a positive timeout, a valid trust policy. */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { ConfigurationError, McpClientError } from "effect/ai/McpClientError"
import * as ClientLimits from "../ClientLimits.js"
import * as Verification from "../Verification.js"

/** The name and version the client gives in its handshake, unless `clientInfo` is given. */
export const clientInfo = { name: "mcp-skills-client", version: "0.1.0" }

/** The `timeout` and `trust` options as the client uses them, or the `ConfigurationError` naming the one that is wrong. */
export const settle = Effect.fnUntraced(function*(timeoutOption: Duration.Input | undefined, trustOption: Verification.Trust | undefined) {
  const timeout = Option.getOrUndefined(Duration.fromInput(timeoutOption ?? ClientLimits.Timeout))
  if (timeout === undefined || !Duration.isGreaterThan(timeout, Duration.zero)) {
    return yield* new McpClientError({
      reason: new ConfigurationError({ description: `timeout must be a positive duration, got ${String(timeoutOption)}` })
    })
  }
  const trust = trustOption === undefined ? undefined : Verification.trustPolicy(trustOption)
  if (trust !== undefined && Result.isFailure(trust)) {
    return yield* new McpClientError({
      reason: new ConfigurationError({ description: `trust: ${trust.failure.reason}` })
    })
  }
  return { timeout, trust: trust?.success }
})
