/**
 * The client's spans and series by the OpenTelemetry MCP conventions (core's `McpTelemetry`):
 * a CLIENT span per extension request whose context travels to the server in `params._meta`
 * (`traceparent`, SEP-414), `mcp.client.operation.duration`, and verification failures by kind.
 * Off (no `McpTelemetry.layer`), each wrapper returns what it was given.
 *
 * @internal
 */
import { McpTelemetry } from "@mcp-skills/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type { VerificationError } from "../SkillsClientError.js"

/** The series of the client, by their OpenTelemetry names. */
export const metrics = {
  operationDuration: Metric.histogram("mcp.client.operation.duration", {
    description: "Duration of MCP requests the client sent, until their answer, in seconds",
    boundaries: McpTelemetry.OperationBoundaries
  }),
  verificationFailures: Metric.counter("mcp_skills.client.verification.failures", {
    description: "Skill entries and files the client refused, by kind (DigestMismatch, SizeMismatch, ...)",
    incremental: true
  })
} as const

/** What a failed request records: the JSON-RPC code, `timeout`, or `_OTHER`. */
export const failureOf = (code: number | undefined, tag: string | undefined): McpTelemetry.Failure =>
  code !== undefined
    ? { type: String(code), code: String(code), message: undefined }
    : { type: tag === "TimeoutError" ? "timeout" : "_OTHER", code: undefined, message: undefined }

/**
 * One extension request: a CLIENT span named by the conventions, the trace context `send` puts
 * in `_meta` (`undefined` when spans are off), and its duration. `failed` reads the JSON-RPC code
 * and the reason of a failure.
 */
export const request = <A, E, R>(
  method: string,
  params: Record<string, unknown>,
  context: {
    readonly protocolVersion: string
    readonly requestId: string
    readonly transport: McpTelemetry.Transport | undefined
  },
  failed: (error: E) => { readonly code: number | undefined; readonly tag: string | undefined },
  send: (traceContext: { readonly traceparent: string } | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry === undefined) return send(undefined)
    const op = McpTelemetry.operation(method, params, {
      protocolVersion: context.protocolVersion,
      requestId: context.requestId,
      sessionId: undefined,
      transport: context.transport ?? "tcp"
    })
    const attributes = McpTelemetry.spanAttributes(op)
    if (context.transport === undefined) {
      delete attributes["network.transport"]
      delete attributes["network.protocol.name"]
    }
    const run = telemetry.spans
      ? Effect.withSpan(
        Effect.flatMap(Effect.currentSpan, (span) => send({ traceparent: McpTelemetry.traceparentOf(span) })).pipe(
          Effect.catchTag("NoSuchElementError", () => send(undefined)),
          Effect.tapError((error) => {
            const { code, tag } = failed(error as E)
            return Effect.annotateCurrentSpan(McpTelemetry.failureAttributes(failureOf(code, tag)))
          })
        ) as Effect.Effect<A, E, R>,
        McpTelemetry.spanName(op, telemetry.uriInSpanName),
        { kind: "client", attributes, captureStackTrace: false }
      )
      : send(undefined)
    if (!telemetry.metrics) return run
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    return Effect.onExit(run, (exit) => {
      const seconds = Number(clock.currentTimeNanosUnsafe() - start) / 1e9
      if (Exit.isSuccess(exit)) return Metric.update(telemetry.operationSeries(metrics.operationDuration, op), seconds)
      const error = Option.getOrUndefined(Exit.findErrorOption(exit))
      const reason = error === undefined ? undefined : failed(error)
      const failure = failureOf(reason?.code, reason?.tag)
      return Metric.update(telemetry.operationSeries(metrics.operationDuration, op, failure), seconds)
    })
  })

/**
 * A verified read or fetch: its span records the outcome (`verified`, or the kind of refusal),
 * and each refusal counts under its kind. `kindOf` names a verification failure, `undefined` for
 * any other error.
 */
export const verified = <A, E, R>(
  name: string,
  kindOf: (error: E) => string | undefined,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry === undefined) return effect
    const outcome = Effect.onExit(effect, (exit) => {
      const error = Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined
      const kind = error === undefined ? undefined : kindOf(error)
      const annotated = telemetry.spans
        ? Effect.annotateCurrentSpan("mcp_skills.verification", Exit.isSuccess(exit) ? "verified" : kind ?? "not_verified")
        : Effect.void
      return kind === undefined || !telemetry.metrics
        ? annotated
        : Effect.andThen(annotated, Metric.update(telemetry.series(metrics.verificationFailures, { kind }), 1))
    })
    return telemetry.spans ? Effect.withSpan(outcome, name, { captureStackTrace: false }) : outcome
  })

// The refusals of verification, by tag: the record names every kind, so a new one must be added.
const verificationKinds: Readonly<Record<VerificationError["_tag"] | "InvalidSkillEntry", true>> = {
  UnlistedResource: true,
  ReferenceOutsideSkill: true,
  UnexpectedContents: true,
  WrongResourceReturned: true,
  InvalidResourceContents: true,
  SizeMismatch: true,
  DigestMismatch: true,
  FrontmatterMismatch: true,
  DynamicSkillRefused: true,
  LimitExceeded: true,
  InvalidSkillEntry: true,
  SignatureInvalid: true,
  UnsignedSkill: true,
  UntrustedSigner: true
}

/** The kind of a verification refusal, for {@link verified}; `undefined` for any other error. */
export const verificationKind = (error: unknown): string | undefined => {
  const tag = (error as { readonly _tag?: unknown } | undefined)?._tag
  return typeof tag === "string" && Object.hasOwn(verificationKinds, tag) ? tag : undefined
}
