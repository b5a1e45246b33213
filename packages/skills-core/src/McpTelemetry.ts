/**
 * The OpenTelemetry semantic conventions for MCP (`docs/gen-ai/mcp.md`, status: development) as
 * pure functions: what a span of one MCP request is named and carries, what labels its duration
 * series may have (never a URI, an id, a session or a user), and W3C Trace Context in
 * `params._meta` (SEP-414). Shared by the server's and the client's instrumentation.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Otlp from "effect/observability/Otlp"
import type * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as Tracer from "effect/Tracer"

/**
 * `network.transport` by the conventions: `tcp` under HTTP, `pipe` for stdio.
 *
 * @since 0.1.0
 * @category models
 */
export type Transport = "tcp" | "pipe"

/**
 * One MCP request or notification as the conventions describe it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operation {
  readonly method: string
  readonly protocolVersion: string | undefined
  /** The JSON-RPC id; absent for notifications (and never captured when null). */
  readonly requestId: string | number | undefined
  /** `params.uri` of the methods that name a resource. */
  readonly uri: string | undefined
  readonly sessionId: string | undefined
  readonly transport: Transport
  /** `params._meta`, where a client puts `traceparent`/`tracestate` (SEP-414). */
  readonly meta: unknown
}

/**
 * A failure as the conventions record it: the JSON-RPC code as a string, or `_OTHER`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Failure {
  readonly type: string
  readonly code: string | undefined
  readonly message: string | undefined
}

/**
 * What the transport knows of a request: its revision, its JSON-RPC id (any JSON value; only
 * strings and numbers are recorded) and its session, if any.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestContext {
  readonly protocolVersion: string | undefined
  readonly requestId: unknown
  readonly sessionId: string | undefined
}

/**
 * Metric labels: low-cardinality strings only, never a URI, session or user.
 *
 * @since 0.1.0
 * @category models
 */
export type Labels = Readonly<Record<string, string>>

/**
 * The conventions' advisory boundaries for MCP durations, in seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const DurationBoundaries: ReadonlyArray<number> = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]

/**
 * Our answers take microseconds to milliseconds: finer buckets below the conventions' first.
 *
 * @since 0.1.0
 * @category constants
 */
export const OperationBoundaries: ReadonlyArray<number> = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, ...DurationBoundaries]

const ResourceMethods: ReadonlySet<string> = new Set([
  "skills/get",
  "resources/read",
  "resources/directory/read",
  "resources/subscribe",
  "resources/unsubscribe"
])

/**
 * The operation of a request to `method` with `params`.
 *
 * @example
 * ```ts
 * import { McpTelemetry } from "@mcp-skills/core"
 *
 * const op = McpTelemetry.operation("resources/read", { uri: "skill://a/SKILL.md" }, {
 *   protocolVersion: "2026-07-28", requestId: 7, sessionId: undefined, transport: "tcp"
 * })
 * McpTelemetry.spanName(op, false) // "resources/read"
 * McpTelemetry.spanName(op, true)  // "resources/read skill://a/SKILL.md"
 * ```
 *
 * @since 0.1.0
 * @category telemetry
 */
export const operation = (
  method: string,
  params: unknown,
  context: RequestContext & { readonly transport: Transport }
): Operation => {
  const fields = typeof params === "object" && params !== null ? params as Record<string, unknown> : undefined
  const uri = fields?.uri
  const id = context.requestId
  return {
    method,
    protocolVersion: context.protocolVersion,
    requestId: typeof id === "string" || typeof id === "number" ? id : undefined,
    uri: ResourceMethods.has(method) && typeof uri === "string" ? uri : undefined,
    sessionId: context.sessionId,
    transport: context.transport,
    meta: fields?._meta
  }
}

/**
 * `{mcp.method.name}`, or with the URI as target when the operator opted in.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const spanName = (op: Operation, uriInSpanName: boolean): string =>
  uriInSpanName && op.uri !== undefined ? `${op.method} ${op.uri}` : op.method

/**
 * The span attributes of `op` (and of its failure, when it failed).
 *
 * @since 0.1.0
 * @category telemetry
 */
export const spanAttributes = (op: Operation, failure?: Failure): Record<string, string> => {
  const attributes: Record<string, string> = {
    "mcp.method.name": op.method,
    "network.transport": op.transport
  }
  if (op.protocolVersion !== undefined) attributes["mcp.protocol.version"] = op.protocolVersion
  if (op.transport === "tcp") attributes["network.protocol.name"] = "http"
  if (op.requestId !== undefined) attributes["jsonrpc.request.id"] = String(op.requestId)
  if (op.uri !== undefined) attributes["mcp.resource.uri"] = op.uri
  if (op.sessionId !== undefined) attributes["mcp.session.id"] = op.sessionId
  if (failure !== undefined) Object.assign(attributes, failureAttributes(failure))
  return attributes
}

/**
 * What a failure adds to a span: `error.type`, and the JSON-RPC code as `rpc.response.status_code`.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const failureAttributes = (failure: Failure): Record<string, string> =>
  failure.code === undefined
    ? { "error.type": failure.type }
    : { "error.type": failure.type, "rpc.response.status_code": failure.code }

/**
 * The labels of `mcp.server.operation.duration` (and the client's): no URI, id or session.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const operationLabels = (op: Operation, failure?: Failure): Labels => {
  const labels: Record<string, string> = { "mcp.method.name": op.method, "network.transport": op.transport }
  if (op.protocolVersion !== undefined) labels["mcp.protocol.version"] = op.protocolVersion
  if (failure !== undefined) labels["error.type"] = failure.type
  return labels
}

/**
 * A handler's failure: a JSON-RPC error by its code, anything else `_OTHER`.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const failureOf = (error: unknown): Failure => {
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { readonly code?: unknown; readonly message?: unknown }
    if (typeof code === "number" && Number.isInteger(code)) {
      return { type: String(code), code: String(code), message: typeof message === "string" ? message : undefined }
    }
    if (typeof message === "string") return { type: "_OTHER", code: undefined, message }
  }
  return { type: "_OTHER", code: undefined, message: undefined }
}

/**
 * W3C `traceparent` (version 00): the remote parent it names, if it is well formed.
 *
 * @since 0.1.0
 * @category codecs
 */
export const parseTraceparent = (value: unknown): Tracer.ExternalSpan | undefined => {
  if (typeof value !== "string") return undefined
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value.trim())
  if (match === null || match[1] === "ff" || /^0+$/.test(match[2]!) || /^0+$/.test(match[3]!)) return undefined
  return Tracer.externalSpan({
    traceId: match[2]!,
    spanId: match[3]!,
    sampled: (parseInt(match[4]!, 16) & 1) === 1
  })
}

/**
 * The `traceparent` naming `span` as the parent of the peer's work.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const traceparentOf = (span: Tracer.AnySpan): string =>
  `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/**
 * The remote parent carried in `_meta`, if any.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const remoteParent = (meta: unknown): Tracer.ExternalSpan | undefined =>
  typeof meta === "object" && meta !== null ? parseTraceparent((meta as Record<string, unknown>).traceparent) : undefined

/**
 * What the instrumentation records.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /** Spans: MCP SERVER and CLIENT spans, and those of reloads, scans, bus messages and pulls (default true). */
  readonly spans?: boolean | undefined
  /** The series (default true). */
  readonly metrics?: boolean | undefined
  /**
   * Name spans `{mcp.method.name} {mcp.resource.uri}` rather than `{mcp.method.name}` (default
   * false: the conventions make the URI in a span name opt-in, as it has no bound).
   */
  readonly uriInSpanName?: boolean | undefined
}

/**
 * The instrumentation settings in effect (`layer`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Telemetry {
  readonly spans: boolean
  readonly metrics: boolean
  /** Puts `mcp.resource.uri` into span names (the conventions' opt-in: high cardinality). */
  readonly uriInSpanName: boolean
  /** The series of one label set, made once per set (label values are bounded). */
  readonly series: <M extends Metric.Metric<number, unknown>>(metric: M, labels: Labels) => M
  /** `series` under `operationLabels(op, failure)`, found without building the labels once made. */
  readonly operationSeries: <M extends Metric.Metric<number, unknown>>(metric: M, op: Operation, failure?: Failure) => M
}

/**
 * The telemetry of this fiber: `undefined` (the default) turns all instrumentation off.
 *
 * @since 0.1.0
 * @category models
 */
export const Current = Context.Reference<Telemetry | undefined>("@mcp-skills/core/McpTelemetry/Current", {
  defaultValue: () => undefined
})

/**
 * The telemetry for `options`, with its own cache of labelled series.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Telemetry => {
  const cache = new WeakMap<object, Map<string, unknown>>()
  const keyed = <M extends Metric.Metric<number, unknown>>(metric: M, key: string, labels: () => Labels): M => {
    let byKey = cache.get(metric)
    if (byKey === undefined) {
      byKey = new Map()
      cache.set(metric, byKey)
    }
    let labelled = byKey.get(key)
    if (labelled === undefined) {
      labelled = Metric.withAttributes(metric, labels())
      byKey.set(key, labelled)
    }
    return labelled as M
  }
  return {
    spans: options.spans ?? true,
    metrics: options.metrics ?? true,
    uriInSpanName: options.uriInSpanName ?? false,
    series: (metric, labels) => keyed(metric, JSON.stringify(labels), () => labels),
    // The hot path: a key of the label values alone (none of them holds the separator).
    operationSeries: (metric, op, failure) =>
      keyed(
        metric,
        `${op.method}\u0000${op.protocolVersion ?? ""}\u0000${op.transport}\u0000${failure?.type ?? ""}`,
        () => operationLabels(op, failure)
      )
  }
}

/**
 * Turns the instrumentation of the skills server and client on for everything built under it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<never> => Layer.succeed(Current, make(options))

/**
 * A span named `name` around `effect`, only while spans are on (`layer`): off, `effect` itself.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const span = (name: string, attributes?: Record<string, unknown>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withFiber((fiber) =>
    fiber.getRef(Current)?.spans === true ? Effect.withSpan(effect, name, { attributes, captureStackTrace: false }) : effect
  )

/**
 * OTLP wire formats (`OTEL_EXPORTER_OTLP_PROTOCOL`).
 *
 * @since 0.1.0
 * @category models
 */
export type OtlpProtocol = "http/json" | "http/protobuf"

/**
 * The OTLP protocol `OTEL_EXPORTER_OTLP_PROTOCOL` names: `http/protobuf` (the default of the
 * OpenTelemetry specification) unless it says `http/json`; `grpc` is not served by effect.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const otlpProtocol = (value: string | undefined): OtlpProtocol | undefined =>
  value === undefined || value.trim() === "" || value.trim() === "http/protobuf"
    ? "http/protobuf"
    : value.trim() === "http/json"
    ? "http/json"
    : undefined

/**
 * Exports traces, metrics and logs over OTLP/HTTP as the standard variables say
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` and the per-signal endpoints, `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SDK_DISABLED`,
 * `OTEL_{TRACES,METRICS,LOGS}_EXPORTER` (default `otlp`, as the specification says), ...: effect's
 * `Otlp.layerFromConfig`), in the given protocol. Without an endpoint it exports nothing. The
 * service name and version given here apply only where the environment names none. Its
 * `Flusher` exports what is buffered, for a process about to stop.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerOtlp = (options: {
  readonly protocol?: OtlpProtocol | undefined
  readonly serviceName?: string | undefined
  readonly serviceVersion?: string | undefined
} = {}): Layer.Layer<OtlpExporter.Flusher> =>
  Layer.unwrap(Effect.gen(function*() {
    const named = (key: string) => Config.option(Config.NonEmptyString(key))
    const environment = yield* Config.all({
      name: named("OTEL_SERVICE_NAME"),
      version: named("OTEL_SERVICE_VERSION"),
      attributes: Config.withDefault(Config.String("OTEL_RESOURCE_ATTRIBUTES"), "")
    })
    const given = (key: string) => environment.attributes.split(",").some((pair) => pair.split("=")[0]!.trim() === key)
    const serviceName = Option.isNone(environment.name) && !given("service.name") ? options.serviceName : undefined
    const serviceVersion = Option.isNone(environment.version) && !given("service.version") ? options.serviceVersion : undefined
    return Otlp.layerFromConfig({
      resource: serviceName === undefined && serviceVersion === undefined ? undefined : { serviceName, serviceVersion }
    }).pipe(
      Layer.provide(options.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
      Layer.provide(FetchHttpClient.layer),
      // The specification's default exporter of every signal is `otlp`; effect's default is none.
      Layer.provide(ConfigProvider.layerAdd(ConfigProvider.fromEnvRecord({
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_METRICS_EXPORTER: "otlp",
        OTEL_LOGS_EXPORTER: "otlp"
      })))
    )
  }).pipe(Effect.orDie))

/**
 * Whether the environment configures an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the
 * traces or metrics one): export is then on, as OpenTelemetry SDKs do.
 *
 * @since 0.1.0
 * @category telemetry
 */
export const otlpConfigured = (env: Readonly<Record<string, string | undefined>>): boolean =>
  ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"].some((name) =>
    (env[name] ?? "").trim() !== ""
  )
