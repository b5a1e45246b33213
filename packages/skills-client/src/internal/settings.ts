/** The options a client is made with, checked once at the edge: defaults filled, a positive timeout, a valid trust policy. */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { ConfigurationError, McpClientError } from "effect/ai/McpClientError"
import { Limits } from "@mcp-skills/core"
import type { Options } from "../SkillsClient.js"
import * as Verification from "../Verification.js"

const DefaultTimeout = Duration.seconds(60)
const DefaultMaxPages = 100
export const defaultClientInfo = { name: "mcp-skills-client", version: "0.1.0" }

/** The settings of one client, or the `ConfigurationError` naming the option that is wrong. */
export const settle = Effect.fnUntraced(function*(options: Options) {
  const timeout = Option.getOrUndefined(Duration.fromInput(options.timeout ?? DefaultTimeout))
  if (timeout === undefined || !Duration.isGreaterThan(timeout, Duration.zero)) {
    return yield* new McpClientError({
      reason: new ConfigurationError({ description: `timeout must be a positive duration, got ${String(options.timeout)}` })
    })
  }
  const trust = options.trust === undefined ? undefined : Verification.trustPolicy(options.trust)
  if (trust !== undefined && Result.isFailure(trust)) {
    return yield* new McpClientError({
      reason: new ConfigurationError({ description: `trust: ${trust.failure.reason}` })
    })
  }
  return {
    timeout,
    limits: options.limits ?? Limits.defaults,
    maxPages: options.maxPages ?? DefaultMaxPages,
    allowDynamic: options.allowDynamic ?? false,
    trust: trust?.success,
    clientInfo: options.clientInfo ?? defaultClientInfo
  }
})
