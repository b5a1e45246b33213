/**
 * Observability by the OpenTelemetry MCP conventions: the attribute and label sets as pure
 * functions (no URI, id, session or user in any label), and spans and series from real requests
 * over loopback HTTP (effect's path and the fast route) and stdio, with the client's trace
 * continued from `_meta.traceparent`.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Tracer from "effect/Tracer"
import { McpServer } from "effect/ai"
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import { McpTelemetry } from "@mcp-skills/core"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { HttpAdmission, Observability, ServerLimits, SkillsServer } from "../src/index.js"
import * as ListenPacing from "../src/internal/effect/listenPacing.js"
import * as Telemetry from "../src/internal/telemetry.js"
import { catalogue } from "./support/catalogue.js"
import { pdfProcessing, simple } from "./support/fixtures.js"
import { listen, poll } from "./support/session.js"
import { adapters, legacyHttp, legacyStdio, modernHttp, serveApp, ServerUrl, StdioPipe, stdioServer } from "./support/wire.js"

describe("Observability", () => {
  it("Prometheus names: seconds for durations, _total for counters", () => {
    assert.strictEqual(Observability.prometheusName("mcp.server.operation.duration"), "mcp.server.operation.duration_seconds")
    assert.strictEqual(Observability.prometheusName("mcp_skills.reloads"), "mcp_skills.reloads_total")
    assert.strictEqual(Observability.prometheusName("mcp_skills.catalogue.skills"), "mcp_skills.catalogue.skills")
  })

  it("OTEL_EXPORTER_OTLP_PROTOCOL", () => {
    assert.strictEqual(Observability.otlpProtocol(undefined), "http/protobuf")
    assert.strictEqual(Observability.otlpProtocol("http/json"), "http/json")
    assert.strictEqual(Observability.otlpProtocol(" http/protobuf "), "http/protobuf")
    assert.isUndefined(Observability.otlpProtocol("grpc"))
  })

  it.effect("off, a wrapper is the effect it was given", () =>
    Effect.gen(function*() {
      const effect = Effect.succeed(1)
      const served = Telemetry.serve("skills/list", {}, { protocolVersion: undefined, requestId: 1, sessionId: undefined }, effect)
      assert.strictEqual(yield* served, 1)
      const changes = Effect.succeed(unchanged)
      assert.strictEqual(yield* Telemetry.applied("code", changes), unchanged)
    }))
})

const unchanged = { added: [], removed: [], changed: [], listChanged: false, updated: [] }

describe("series at their events", () => {
  const On = McpTelemetry.layer()
  const valueOf = (metric: Metric.Metric<number, any>, labels: Record<string, string>) =>
    Effect.map(Metric.value(Metric.withAttributes(metric, labels)), (state: any) => state.count ?? state.value)

  it.effect("a listen stream past its bound counts the updates it folded into one list_changed", () =>
    Effect.gen(function*() {
      const handed: Array<string> = []
      const pacer = ListenPacing.make({ listChanged: true, subscribed: () => true }, (notice) =>
        Effect.sync(() => void handed.push(notice._tag)))
      const extra = 5
      for (let i = 0; i < ServerLimits.ListenBound + extra; i++) yield* pacer.offer({ _tag: "ResourceUpdated", uri: `skill://s/${i}` })
      // Held: the window's worth handed out; the rest (past the bound) folded.
      const folded = yield* valueOf(Telemetry.metrics.notifications, { outcome: "coalesced" })
      assert.strictEqual(folded, ServerLimits.ListenBound + extra - ServerLimits.ListenWindow)
    }).pipe(Effect.provide(On), Effect.provideService(Metric.MetricRegistry, new Map())))

  it.effect("visibility decisions by method and outcome; changes by source and outcome; bus messages by kind", () =>
    Effect.gen(function*() {
      const check = Telemetry.visibility((request: { readonly method: string }) =>
        Effect.succeed(request.method === "skills/list" ? true : request.method === "skills/get" ? false : () => true))
      yield* check({ method: "skills/list" })
      yield* check({ method: "skills/get" })
      yield* check({ method: "skills/get" })
      yield* check({ method: "resources/read" })
      assert.strictEqual(yield* valueOf(Telemetry.metrics.decisions, { "mcp.method.name": "skills/get", decision: "none" }), 2)
      assert.strictEqual(yield* valueOf(Telemetry.metrics.decisions, { "mcp.method.name": "skills/list", decision: "all" }), 1)
      assert.strictEqual(yield* valueOf(Telemetry.metrics.decisions, { "mcp.method.name": "resources/read", decision: "some" }), 1)
      yield* Telemetry.applied("watch", Effect.succeed(unchanged))
      yield* Telemetry.applied("watch", Effect.succeed({ ...unchanged, added: ["skill://a/SKILL.md"], listChanged: true }))
      yield* Effect.ignore(Telemetry.applied("bus", Effect.fail("broken")))
      assert.strictEqual(yield* valueOf(Telemetry.metrics.reloads, { source: "watch", outcome: "unchanged" }), 1)
      assert.strictEqual(yield* valueOf(Telemetry.metrics.reloads, { source: "watch", outcome: "changed" }), 1)
      assert.strictEqual(yield* valueOf(Telemetry.metrics.reloads, { source: "bus", outcome: "failure" }), 1)
      yield* Effect.void.pipe(Telemetry.busMessage("received", "Revision"))
      assert.strictEqual(
        yield* valueOf(Telemetry.metrics.busMessages, { direction: "received", kind: "Revision", outcome: "success" }),
        1
      )
      yield* Telemetry.busLag("Revision")(Effect.void)
      assert.strictEqual(yield* valueOf(Telemetry.metrics.busApplyDuration, { kind: "Revision" }), 1)
    }).pipe(Effect.provide(On), Effect.provideService(Metric.MetricRegistry, new Map())))

  it.effect("off, nothing is recorded", () =>
    Effect.gen(function*() {
      yield* Telemetry.applied("code", Effect.succeed(unchanged))
      yield* Telemetry.count(Telemetry.metrics.rescans)
      assert.strictEqual((yield* Metric.snapshot).length, 0)
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))
})

// Every span any tracer made, ended or not, in order of creation.
const recorded: Array<Tracer.Span> = []
const Recording = Layer.succeed(Tracer.Tracer, Tracer.make({
  span: (options) => {
    const span = Tracer.nativeTracer.span(options)
    recorded.push(span)
    return span
  }
}))

const Observed = Layer.mergeAll(Observability.layer(), Recording)

const mcpSpans = (method: string) =>
  recorded.filter((span) => span.name === method && span.kind === "server" && span.attributes.get("mcp.method.name") === method)

const ended = (span: Tracer.Span) => span.status._tag === "Ended"

describe("over HTTP", () => {
  // As the CLI composes it: the fast route needs to know the endpoint's body limit.
  const app = McpServer.layerHttp({
    name: "observed",
    version: "1.0.0",
    path: "/mcp",
    protocols: adapters(),
    // Static skills only: the fast route answers nothing that touches another kind.
    registrations: SkillsServer.layer({ skills: [pdfProcessing, simple("alpha")] })
  }).pipe(Layer.provide(HttpAdmission.layer({})))
  layer(serveApp<never>(app as Layer.Layer<any, never, any>).pipe(Layer.provide(Observed)))((it) => {
    it.effect("effect's path and the fast route: one SERVER span per request, the client's trace continued", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const client = modernHttp(url)
        recorded.length = 0
        // The first request teaches the fast route the endpoint; the next ones it answers itself.
        yield* client.call("skills/list")
        yield* client.call("skills/list")
        const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
        const traceparent = `00-${traceId}-00f067aa0ba902b7-01`
        const meta = {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "skills-test", version: "0.0.0" },
          traceparent
        }
        const got = yield* client.send("skills/get", { uri: "skill://pdf-processing/SKILL.md", _meta: meta })
        assert.isDefined(got.body.result)
        const missing = yield* client.send("skills/get", { uri: "skill://absent/SKILL.md", _meta: meta })
        assert.strictEqual(missing.body.error.code, -32602)
        const lists = mcpSpans("skills/list")
        assert.strictEqual(lists.length, 2)
        assert.isTrue(lists.every(ended))
        // One SERVER span per request on either path: on effect's, effect's own span (4.1.4 and
        // later) carries the skills layer's attributes, with no second span nested in it.
        const parentOf = (span: Tracer.Span) => span.parent._tag === "Some" && span.parent.value._tag === "Span"
          ? span.parent.value
          : undefined
        for (const span of [...lists, ...mcpSpans("skills/get")]) {
          assert.strictEqual(span.kind, "server")
          assert.isUndefined(parentOf(span)?.attributes.get("mcp.method.name"))
        }
        for (const span of lists) {
          assert.strictEqual(span.attributes.get("network.transport"), "tcp")
          assert.strictEqual(span.attributes.get("mcp.protocol.version"), "2026-07-28")
          assert.isString(span.attributes.get("jsonrpc.request.id"))
        }
        const gets = mcpSpans("skills/get")
        assert.strictEqual(gets.length, 2)
        for (const span of gets) {
          assert.strictEqual(span.traceId, traceId)
          assert.strictEqual(span.parent._tag === "Some" ? span.parent.value.spanId : undefined, "00f067aa0ba902b7")
        }
        const failed = gets.find((span) => span.attributes.get("mcp.resource.uri") === "skill://absent/SKILL.md")!
        assert.strictEqual(failed.attributes.get("error.type"), "-32602")
        assert.strictEqual(failed.attributes.get("rpc.response.status_code"), "-32602")
        const text = yield* Observability.prometheus
        assert.match(text, /mcp_server_operation_duration_seconds_count\{[^}]*mcp_method_name="skills\/list"[^}]*\} 2/)
        assert.match(text, /mcp_server_operation_duration_seconds_count\{[^}]*error_type="-32602"[^}]*\} 1/)
        assert.notMatch(text, /skill:\/\//)
        assert.match(text, /mcp_skills_catalogue_skills [1-9]/)
      }))

    it.effect("a trace the client starts continues on the server, on both revisions; verification outcome and client series", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        for (const protocolVersion of ["2026-07-28", "2025-11-25"] as const) {
          recorded.length = 0
          yield* SkillsClient.SkillsClient.use((client) =>
            Effect.gen(function*() {
              const fetched = yield* client.getSkill("skill://pdf-processing/SKILL.md")
              yield* client.loadSkill(fetched.skill)
            })
          ).pipe(
            Effect.provide(
              SkillsClient.layerHttp({ url, protocolVersion }).pipe(
                Layer.provide([FetchHttpClient.layer, SkillCache.layerMemory()])
              )
            ),
            // The client's own instrumentation, with the same recording tracer.
            Effect.provide(Observed)
          )
          for (const method of ["skills/get", "resources/read"]) {
            const client = recorded.find((span) => span.name === method && span.kind === "client")!
            assert.isDefined(client, `${protocolVersion} ${method}: a CLIENT span`)
            assert.strictEqual(client.attributes.get("network.transport"), "tcp")
            const server = recorded.find((span) => span.name === method && span.kind === "server")!
            assert.isDefined(server, `${protocolVersion} ${method}: a SERVER span`)
            assert.strictEqual(server.traceId, client.traceId)
            assert.strictEqual(server.parent._tag === "Some" ? server.parent.value.spanId : undefined, client.spanId)
          }
          const verified = recorded.filter((span) => span.name === "mcp_skills.read_verified")
          assert.isAbove(verified.length, 0)
          assert.isTrue(verified.every((span) => span.attributes.get("mcp_skills.verification") === "verified"))
        }
        const text = yield* Observability.prometheus
        assert.match(text, /mcp_client_operation_duration_seconds_count\{[^}]*mcp_method_name="resources\/read"/)
      }))

    it.effect("open subscriptions/listen streams are a gauge: up while open, down once closed", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const gauge = Effect.map(Metric.value(Telemetry.metrics.listens), (state) => state.value)
        const before = yield* gauge
        yield* Effect.scoped(Effect.gen(function*() {
          yield* listen(url, {}, { resourcesListChanged: true })
          assert.strictEqual(yield* gauge, before + 1)
        }))
        yield* poll("the listen's end", Effect.map(gauge, (value) => value === before ? true : undefined))
      }))

    it.effect("2025-11-25 sessions: the session id on the span, the resource URI on reads", () =>
      Effect.gen(function*() {
        const client = yield* legacyHttp(yield* ServerUrl)
        recorded.length = 0
        yield* client.call("resources/read", { uri: "skill://pdf-processing/SKILL.md" })
        const [read] = mcpSpans("resources/read")
        assert.isDefined(read)
        assert.isString(read!.attributes.get("mcp.session.id"))
        assert.strictEqual(read!.attributes.get("mcp.protocol.version"), "2025-11-25")
        assert.strictEqual(read!.attributes.get("mcp.resource.uri"), "skill://pdf-processing/SKILL.md")
      }))
  })
})

describe("over stdio", () => {
  layer(stdioServer(SkillsServer.layer({ skills: catalogue })).pipe(Layer.provide(Observed)))((it) => {
    it.effect("network.transport is pipe", () =>
      Effect.gen(function*() {
        const client = yield* legacyStdio(yield* StdioPipe)
        recorded.length = 0
        yield* client.call("skills/list")
        const [list] = mcpSpans("skills/list")
        assert.isDefined(list)
        assert.strictEqual(list!.attributes.get("network.transport"), "pipe")
        assert.isUndefined(list!.attributes.get("network.protocol.name"))
      }))

    it.effect("a stdio connection that initializes again ends its session: mcp.server.session.duration by pipe", () =>
      Effect.gen(function*() {
        const series = Metric.withAttributes(Telemetry.metrics.sessionDuration, {
          "mcp.protocol.version": "2025-11-25",
          "network.transport": "pipe"
        })
        const before = (yield* Metric.value(series)).count
        yield* legacyStdio(yield* StdioPipe)
        yield* legacyStdio(yield* StdioPipe)
        assert.isAbove((yield* Metric.value(series)).count, before)
      }))
  })
})
