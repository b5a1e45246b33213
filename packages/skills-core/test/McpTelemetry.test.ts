/**
 * The OpenTelemetry MCP conventions as pure functions: the span attribute sets, the label sets
 * (never a URI, an id, a session or a message), span names and W3C traceparent.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"
import * as Telemetry from "../src/McpTelemetry.js"

const op = (overrides: Partial<Telemetry.Operation> = {}): Telemetry.Operation => ({
  method: "resources/read",
  protocolVersion: "2026-07-28",
  requestId: 7,
  uri: "skill://pdf/SKILL.md",
  sessionId: "abc",
  transport: "tcp",
  meta: undefined,
  ...overrides
})

describe("attribute and label sets", () => {
  it("a span carries the conventions' attributes, a failure its JSON-RPC code", () => {
    assert.deepStrictEqual(Telemetry.spanAttributes(op()), {
      "mcp.method.name": "resources/read",
      "mcp.protocol.version": "2026-07-28",
      "network.transport": "tcp",
      "network.protocol.name": "http",
      "jsonrpc.request.id": "7",
      "mcp.resource.uri": "skill://pdf/SKILL.md",
      "mcp.session.id": "abc"
    })
    const failure = Telemetry.failureOf({ code: -32602, message: "no skill" })
    assert.deepStrictEqual(failure, { type: "-32602", code: "-32602", message: "no skill" })
    const failed = Telemetry.spanAttributes(op({ transport: "pipe", sessionId: undefined, requestId: "r-1" }), failure)
    assert.strictEqual(failed["error.type"], "-32602")
    assert.strictEqual(failed["rpc.response.status_code"], "-32602")
    assert.strictEqual(failed["network.transport"], "pipe")
    assert.strictEqual(failed["jsonrpc.request.id"], "r-1")
    assert.isUndefined(failed["network.protocol.name"])
    assert.isUndefined(failed["mcp.session.id"])
    assert.deepStrictEqual(Telemetry.failureOf(new Error("boom")), { type: "_OTHER", code: undefined, message: "boom" })
    assert.deepStrictEqual(Telemetry.failureOf(undefined), { type: "_OTHER", code: undefined, message: undefined })
  })

  it("span names leave the URI out unless opted in", () => {
    assert.strictEqual(Telemetry.spanName(op(), false), "resources/read")
    assert.strictEqual(Telemetry.spanName(op(), true), "resources/read skill://pdf/SKILL.md")
    assert.strictEqual(Telemetry.spanName(op({ method: "skills/list", uri: undefined }), true), "skills/list")
  })

  it("operations take the URI of resource methods only, and ids only when string or number", () => {
    const context = { protocolVersion: "2025-11-25", requestId: null, sessionId: undefined, transport: "pipe" as const }
    const list = Telemetry.operation("skills/list", { cursor: "x", uri: "skill://a/SKILL.md" }, context)
    assert.isUndefined(list.uri)
    assert.isUndefined(list.requestId)
    assert.strictEqual(Telemetry.operation("skills/get", { uri: "skill://a/SKILL.md" }, context).uri, "skill://a/SKILL.md")
    assert.strictEqual(Telemetry.operation("skills/get", undefined, { ...context, requestId: 3 }).requestId, 3)
  })

  it.prop(
    "labels never hold a URI, an id, a session or a message",
    {
      method: Schema.Literals(["skills/list", "skills/get", "resources/read", "resources/directory/read"]),
      uri: Schema.String,
      session: Schema.String,
      id: Schema.Union([Schema.String, Schema.Int]),
      code: Schema.Int,
      message: Schema.String
    },
    ({ code, id, message, method, session, uri }) => {
      const operation = op({ method, uri, sessionId: session, requestId: id })
      const failure = Telemetry.failureOf({ code, message })
      for (const labels of [Telemetry.operationLabels(operation), Telemetry.operationLabels(operation, failure)]) {
        for (const key of Object.keys(labels)) {
          assert.include(["mcp.method.name", "mcp.protocol.version", "network.transport", "error.type"], key)
        }
        assert.strictEqual(labels["mcp.method.name"], method)
        if (labels["error.type"] !== undefined) assert.strictEqual(labels["error.type"], String(code))
      }
    }
  )

  it("traceparent: well-formed W3C version-00 values only", () => {
    const parent = Telemetry.parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
    assert.strictEqual(parent?.traceId, "0af7651916cd43dd8448eb211c80319c")
    assert.strictEqual(parent?.spanId, "00f067aa0ba902b7")
    assert.strictEqual(parent?.sampled, true)
    assert.strictEqual(Telemetry.parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00")?.sampled, false)
    for (
      const bad of [
        undefined,
        42,
        "",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7"
      ]
    ) assert.isUndefined(Telemetry.parseTraceparent(bad))
    assert.strictEqual(
      Telemetry.traceparentOf(Tracer.externalSpan({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "00f067aa0ba902b7" })),
      "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
    )
  })

})
