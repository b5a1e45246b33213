/**
 * Traces, metrics and structured logs of a skills server, by the OpenTelemetry semantic
 * conventions for MCP, with effect's own exporters (`effect/observability`).
 *
 * @since 0.1.0
 */
import { McpTelemetry } from "@mcp-skills/core"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Otlp from "effect/observability/Otlp"
import type * as OtlpExporter from "effect/observability/OtlpExporter"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import * as Telemetry from "./internal/telemetry.js"

/**
 * What `layer` records (`spans`, `metrics`, `uriInSpanName`).
 *
 * @since 0.1.0
 */
export type Options = McpTelemetry.Options

/**
 * Turns on the instrumentation of every skills server built under it: a SERVER span per skills
 * method on every path and transport (`skills/list`, `skills/get`, `resources/directory/read`,
 * `resources/read`, `resources/list`, `resources/subscribe`, `resources/unsubscribe`) continuing
 * the client's trace from `params._meta.traceparent`; `mcp.server.operation.duration` and the
 * catalogue, reload, session and bus series in effect's metric registry. Where they go is up to
 * the app: `layerOtlp` exports both, `layerPrometheus` (or `prometheus`) serves the series.
 *
 * Without it nothing is measured: every hook reads one context reference and runs the request as
 * it was.
 *
 * ```ts
 * const Main = SkillsServerHttp.pipe(
 *   Layer.provide(Observability.layer()),
 *   Layer.provide(Observability.layerOtlp({ protocol: "http/protobuf" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (options?: Options) => Layer.Layer<never> = McpTelemetry.layer

/**
 * OTLP wire formats (`OTEL_EXPORTER_OTLP_PROTOCOL`).
 *
 * @since 0.1.0
 */
export type OtlpProtocol = "http/json" | "http/protobuf"

/**
 * The OTLP protocol `OTEL_EXPORTER_OTLP_PROTOCOL` names: `http/protobuf` (the default of the
 * OpenTelemetry specification) unless it says `http/json`; `grpc` is not served by effect.
 *
 * @since 0.1.0
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
 * The Prometheus name of a series: dots become underscores (effect's formatter), durations end
 * in `_seconds` and counters in `_total`, as the OpenTelemetry-to-Prometheus translation does.
 *
 * @since 0.1.0
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
 */
export const prometheus: Effect.Effect<string> = PrometheusMetrics.format({ metricNameMapper: prometheusName })

/**
 * `prometheus` as an HTTP answer.
 *
 * @since 0.1.0
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
