/**
 * Traces, metrics and structured logs of a skills server, by the OpenTelemetry semantic
 * conventions for MCP, with effect's own exporters (`effect/observability`).
 *
 * @since 0.1.0
 */
import { McpTelemetry } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import * as Telemetry from "./internal/telemetry.js"

/**
 * Turns on the instrumentation of every skills server built under it: a SERVER span per skills
 * method on every path and transport (`skills/list`, `skills/get`, `resources/directory/read`,
 * `resources/read`, `resources/list`, `resources/subscribe`, `resources/unsubscribe`) continuing
 * the client's trace from `params._meta.traceparent`; `mcp.server.operation.duration` and the
 * catalogue, reload, session and bus series in effect's metric registry. Where they go is up to
 * the app: `layerOtlp` exports both, `layerPrometheus` (or `prometheus`) serves the series.
 *
 * Without it nothing is measured: every hook reads one context reference and runs the request as
 * it was. Its options (`spans`, `metrics`, `uriInSpanName`) are core's `McpTelemetry.Options`.
 *
 * ```ts
 * const Main = SkillsServerHttp.pipe(
 *   Layer.provide(Observability.layer()),
 *   Layer.provide(Observability.layerOtlp({ protocol: "http/protobuf" }))
 * )
 * ```
 *
 * @example
 * ```ts
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { Observability, SkillsServer } from "@mcp-skills/server"
 * import { Layer } from "effect"
 * import { McpProtocol, McpServer } from "effect/ai"
 * import { HttpRouter } from "effect/http"
 * import { createServer } from "node:http"
 *
 * const Mcp = McpServer.layerHttp({
 *   name: "skills", version: "1.0.0", path: "/mcp",
 *   protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
 *   registrations: SkillsServer.layer({ skills: [] })
 * })
 *
 * // Spans and series on, and GET /metrics beside the MCP endpoint.
 * const Main = HttpRouter.serve(Layer.mergeAll(Mcp, Observability.layerPrometheus())).pipe(
 *   Layer.provide(NodeHttpServer.layer(createServer, { port: 3000 })),
 *   Layer.provide(Observability.layer())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (options?: McpTelemetry.Options) => Layer.Layer<never> = McpTelemetry.layer

/**
 * The OTLP protocol `OTEL_EXPORTER_OTLP_PROTOCOL` names (core's `McpTelemetry.otlpProtocol`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const otlpProtocol: (value: string | undefined) => McpTelemetry.OtlpProtocol | undefined = McpTelemetry.otlpProtocol

/**
 * OTLP/HTTP export from the standard variables (core's `McpTelemetry.layerOtlp`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerOtlp: typeof McpTelemetry.layerOtlp = McpTelemetry.layerOtlp

/**
 * The Prometheus name of a series: dots become underscores (effect's formatter), durations end
 * in `_seconds` and counters in `_total`, as the OpenTelemetry-to-Prometheus translation does.
 *
 * @since 0.1.0
 * @category metrics
 */
export const prometheusName = (name: string): string =>
  name.endsWith(".duration") ? `${name}_seconds` : counterNames.has(name) ? `${name}_total` : name

const counterNames: ReadonlySet<string> = new Set(
  Object.values(Telemetry.metrics).flatMap((metric) => metric.type === "Counter" ? [metric.id] : [])
)

/**
 * Every series in Prometheus text exposition format (0.0.4).
 *
 * @since 0.1.0
 * @category metrics
 */
export const prometheus: Effect.Effect<string> = PrometheusMetrics.format({ metricNameMapper: prometheusName })

/**
 * `prometheus` as an HTTP answer.
 *
 * @since 0.1.0
 * @category metrics
 */
export const prometheusResponse: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.map(
  prometheus,
  (body) => HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
)

/**
 * Serves `prometheus` at `GET path` (default `/metrics`) on the app's `HttpRouter`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPrometheus = (options: { readonly path?: `/${string}` | undefined } = {}): Layer.Layer<
  never,
  never,
  HttpRouter.HttpRouter
> => PrometheusMetrics.layerHttp({ path: options.path ?? "/metrics", metricNameMapper: prometheusName })

/**
 * Structured logs: one JSON object per line on stderr (stdout stays the protocol's over stdio),
 * with the message, level, timestamp, annotations, spans and the current trace and span ids.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerJsonLogs: Layer.Layer<never> = Logger.layer([Logger.withConsoleError(Logger.formatJson)])
