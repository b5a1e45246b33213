/**
 * `npm run test:observability`: observability with real parts, all on 127.0.0.1 on free ports,
 * stopped at the end. The `mcp-skills-server` CLI serves the examples with `--metrics` and OTLP
 * export (`OTEL_EXPORTER_OTLP_*`) to a loopback receiver in this process, which collects what is
 * posted (http/json decoded; http/protobuf checked for the span names it carries).
 *
 * Covered: a SERVER span for every skills method on both revisions, fast-route answers included
 * (spans with no effect RPC span above them), named and attributed by the MCP conventions; a
 * trace started by our `mcp-skills` CLI (exporting its own spans) continues on the server; `promtool check
 * metrics` accepts `/metrics`; a real Prometheus (Debian's `prometheus`) scrapes the server and
 * its HTTP API returns the series after a few requests, with no URI in any label.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Cluster from "../src/cluster.js"

const repoRoot = fileURLToPath(new URL("../../", import.meta.url))
const examples = path.join(repoRoot, "examples/skills")
const serverCli = path.join(repoRoot, "packages/skills-server/dist/src/bin/mcp-skills-server.js")
const clientCli = path.join(repoRoot, "packages/skills-client/dist/src/bin/mcp-skills.js")

const locate = (name: string) =>
  ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/bin"].map((dir) => path.join(dir, name)).find((file) => fs.existsSync(file))

interface Posted {
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

/** A loopback OTLP/HTTP receiver: keeps every POST and answers 200 with an empty export response. */
const receiver = async () => {
  const posted: Array<Posted> = []
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      posted.push({ path: request.url ?? "", contentType: request.headers["content-type"] ?? "", body: Buffer.concat(chunks) })
      const json = (request.headers["content-type"] ?? "").includes("json")
      response.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" })
      response.end(json ? "{}" : "")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    posted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The spans of every http/json trace export received so far. */
const jsonSpans = (posted: ReadonlyArray<Posted>) =>
  posted.filter((post) => post.path === "/v1/traces" && post.contentType.includes("json")).flatMap((post) => {
    const body = JSON.parse(post.body.toString("utf8"))
    return (body.resourceSpans ?? []).flatMap((resource: any) =>
      (resource.scopeSpans ?? []).flatMap((scope: any) =>
        (scope.spans ?? []).map((span: any) => ({
          ...span,
          service: resource.resource?.attributes?.find((a: any) => a.key === "service.name")?.value?.stringValue,
          attributes: Object.fromEntries(
            (span.attributes ?? []).map((a: any) => [a.key, a.value.stringValue ?? a.value.intValue ?? a.value.boolValue])
          )
        }))
      )
    )
  })

interface Server {
  readonly url: string
  readonly metrics: string
  readonly stop: () => Promise<void>
}

/** `mcp-skills-server serve examples --port 0 ...args`, with `env` added. */
const serve = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [serverCli, "serve", examples, "--port", "0", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env }
    })
    let out = ""
    const exited = new Promise<void>((done) => child.on("exit", () => done()))
    const timer = setTimeout(() => reject(new Error(`the server did not start within 20 s: ${out}`)), 20_000)
    const take = (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const url = /listening (http:\/\/\S+)/.exec(out)?.[1]
      const metrics = /metrics at (http:\/\/\S+)/.exec(out)?.[1] ?? (url === undefined ? undefined : url.replace(/\/mcp$/, "/metrics"))
      if (url !== undefined && metrics !== undefined && (!args.includes("--metrics-port") || out.includes("metrics at"))) {
        clearTimeout(timer)
        resolve({
          url,
          metrics,
          stop: () => {
            child.kill("SIGTERM")
            return exited
          }
        })
      }
    }
    child.stdout.on("data", take)
    child.stderr.on("data", take)
    child.on("exit", (code) => reject(new Error(`mcp-skills-server exited (${code}): ${out}`)))
  })

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "observability-test", version: "0.0.0" }
}

let nextId = 1

const post = async (url: string, body: unknown, headers: Record<string, string>) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000)
  })
  const text = await response.text()
  const data = text.split("\n").find((line) => line.startsWith("data:"))
  return { status: response.status, headers: response.headers, body: text.length === 0 ? undefined : JSON.parse(data === undefined ? text : data.slice(5)) }
}

const modern = (url: string, method: string, params: Record<string, unknown> = {}) =>
  post(url, { jsonrpc: "2.0", id: nextId++, method, params: { ...params, _meta: modernMeta } }, {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...(method === "resources/read" ? { "mcp-name": String(params.uri) } : {})
  })

/** Every skills method on both revisions, and one refused request. */
const traffic = async (url: string) => {
  for (let i = 0; i < 3; i++) expect((await modern(url, "skills/list")).status).toBe(200)
  const uri = "skill://pdf-processing/SKILL.md"
  expect((await modern(url, "skills/get", { uri })).body.result).toBeDefined()
  expect((await modern(url, "skills/get", { uri })).body.result).toBeDefined()
  expect((await modern(url, "resources/read", { uri })).body.result).toBeDefined()
  expect((await modern(url, "resources/directory/read", { uri: "skill://pdf-processing" })).body.result).toBeDefined()
  expect((await modern(url, "resources/list")).body.result).toBeDefined()
  expect((await modern(url, "skills/get", { uri: "skill://absent/SKILL.md" })).body.error.code).toBe(-32602)
  const init = await post(url, {
    jsonrpc: "2.0",
    id: nextId++,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "observability-test", version: "0.0.0" } }
  }, {})
  const session = init.headers.get("mcp-session-id")!
  expect(session).toBeTruthy()
  const legacy = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }
  await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, legacy)
  for (const [method, params] of [
    ["skills/list", {}],
    ["skills/get", { uri }],
    ["resources/read", { uri }],
    ["resources/subscribe", { uri }],
    ["resources/unsubscribe", { uri }]
  ] as const) {
    const answer = await post(url, { jsonrpc: "2.0", id: nextId++, method, params }, legacy)
    expect(answer.body.result, `${method}: ${JSON.stringify(answer.body)}`).toBeDefined()
  }
  return session
}

const until = async <A>(what: string, check: () => Promise<A | undefined> | A | undefined, seconds = 30): Promise<A> => {
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    const found = await check()
    if (found !== undefined) return found
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`${what}: not within ${seconds} s`)
}

const exportEnv = (endpoint: string, protocol: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_SERVICE_NAME: "skills-ci",
  OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=ci",
  OTEL_BSP_SCHEDULE_DELAY: "200",
  OTEL_METRIC_EXPORT_INTERVAL: "500"
})

describe("observability with real parts", () => {
  let otlp: Awaited<ReturnType<typeof receiver>>
  let server: Server
  let session: string
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-skills-observability-"))

  beforeAll(async () => {
    otlp = await receiver()
    server = await serve(["--metrics"], exportEnv(otlp.url, "http/json"))
    session = await traffic(server.url)
  })

  afterAll(async () => {
    await server?.stop()
    await otlp?.close()
    fs.rmSync(scratch, { recursive: true, force: true })
  })

  it("OTLP http/json: a SERVER span for every skills method on both revisions, fast-route answers included", async () => {
    const methods = ["skills/list", "skills/get", "resources/read", "resources/directory/read", "resources/list", "resources/subscribe", "resources/unsubscribe"]
    const spans = await until("every method's span exported", () => {
      const spans = jsonSpans(otlp.posted)
      return methods.every((method) => spans.some((span: any) => span.name === method)) ? spans : undefined
    })
    const byId = new Map(spans.map((span: any) => [span.spanId, span]))
    for (const method of methods) {
      const mine = spans.filter((span: any) => span.name === method)
      for (const span of mine) {
        expect(span.kind).toBe(2) // SPAN_KIND_SERVER
        expect(span.service).toBe("skills-ci")
        expect(span.attributes["mcp.method.name"]).toBe(method)
        expect(span.attributes["network.transport"]).toBe("tcp")
        expect(["2026-07-28", "2025-11-25"]).toContain(span.attributes["mcp.protocol.version"])
        expect(span.attributes["jsonrpc.request.id"]).toBeDefined()
      }
    }
    // The fast route answers the 2nd and 3rd skills/list itself: one SERVER span each, and no MCP
    // span above any of them (effect's own span is the SERVER span on effect's path).
    const fast = spans.filter((span: any) =>
      span.name === "skills/list" && span.attributes["mcp.protocol.version"] === "2026-07-28" &&
      !String(byId.get(span.parentSpanId)?.name ?? "").startsWith("McpServer.")
    )
    expect(fast.length).toBeGreaterThanOrEqual(2)
    const refused = spans.find((span: any) => span.attributes["mcp.resource.uri"] === "skill://absent/SKILL.md")
    expect(refused?.attributes["error.type"]).toBe("-32602")
    // effect's own span (4.1.4+) counts -32602 as the caller's error: no error status on the
    // SERVER span, as the OpenTelemetry conventions have it for a client's mistake.
    expect(refused?.status?.code).not.toBe(2) // STATUS_CODE_ERROR
    const legacy = spans.find((span: any) => span.name === "resources/subscribe")
    expect(legacy?.attributes["mcp.session.id"]).toBe(session)
    expect(legacy?.attributes["mcp.resource.uri"]).toBe("skill://pdf-processing/SKILL.md")
  })

  it("OTLP metrics reach the receiver", async () => {
    await until("mcp.server.operation.duration exported", () =>
      otlp.posted.some((post) => post.path === "/v1/metrics" && post.body.toString("utf8").includes("mcp.server.operation.duration"))
        ? true
        : undefined)
  })

  it("the mcp-skills CLI exports its CLIENT spans, and the server continues its trace", async () => {
    const listed = spawnSync(process.execPath, [clientCli, "read", server.url, "skill://pdf-processing/SKILL.md"], {
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, ...exportEnv(otlp.url, "http/json"), OTEL_SERVICE_NAME: "" }
    })
    expect(listed.status, listed.stderr).toBe(0)
    const client = await until("the CLI's CLIENT span of resources/read", () =>
      jsonSpans(otlp.posted).find((span: any) => span.service === "mcp-skills" && span.name === "resources/read" && span.kind === 3))
    expect(client.attributes["network.transport"]).toBe("tcp")
    const continued = await until("the server's span in the CLI's trace", () =>
      jsonSpans(otlp.posted).find((span: any) => span.service === "skills-ci" && span.traceId === client.traceId && span.kind === 2))
    expect(continued.parentSpanId).toBe(client.spanId)
    const verified = jsonSpans(otlp.posted).find((span: any) => span.service === "mcp-skills" && span.name === "mcp_skills.read_verified")
    expect(verified?.attributes["mcp_skills.verification"]).toBe("verified")
  })

  it("promtool check metrics accepts /metrics", async () => {
    const promtool = locate("promtool")
    expect(promtool, "promtool (Debian's prometheus package) is installed").toBeDefined()
    const text = await (await fetch(server.metrics, { signal: AbortSignal.timeout(10_000) })).text()
    expect(text).toContain("mcp_server_operation_duration_seconds_bucket")
    expect(text).not.toMatch(/skill:\/\//)
    const checked = spawnSync(promtool!, ["check", "metrics"], { input: text, encoding: "utf8", timeout: 20_000 })
    expect(checked.status, `${checked.stdout}${checked.stderr}`).toBe(0)
  })

  it("a real Prometheus scrapes the server and answers the series", async () => {
    const prometheus = locate("prometheus")
    expect(prometheus, "prometheus (Debian's package) is installed").toBeDefined()
    const target = new URL(server.metrics)
    const port = await Cluster.freePort()
    const config = path.join(scratch, "prometheus.yml")
    fs.writeFileSync(
      config,
      [
        "global:",
        "  scrape_interval: 1s",
        "scrape_configs:",
        "  - job_name: mcp-skills",
        `    metrics_path: ${target.pathname}`,
        "    static_configs:",
        `      - targets: ["${target.host}"]`,
        ""
      ].join("\n")
    )
    const child = spawn(prometheus!, [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(scratch, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`
    ], { stdio: ["ignore", "pipe", "pipe"] })
    let log = ""
    child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")))
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
    try {
      const query = async (expression: string) => {
        try {
          const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expression)}`, {
            signal: AbortSignal.timeout(5_000)
          })
          const body = await response.json() as any
          return body.status === "success" && body.data.result.length > 0 ? body.data.result as Array<any> : undefined
        } catch {
          return undefined
        }
      }
      await traffic(server.url)
      const series = await until(`Prometheus has the series (log: ${log.slice(-2000)})`, () =>
        query("mcp_server_operation_duration_seconds_count"), 60)
      const methods = new Set(series.map((sample) => sample.metric.mcp_method_name))
      for (const method of ["skills/list", "skills/get", "resources/read", "resources/directory/read"]) expect(methods).toContain(method)
      for (const sample of series) {
        expect(sample.metric.job).toBe("mcp-skills")
        for (const [label, value] of Object.entries(sample.metric)) {
          expect(["__name__", "job", "instance", "mcp_method_name", "mcp_protocol_version", "network_transport", "error_type"]).toContain(label)
          expect(String(value)).not.toMatch(/skill:\/\//)
        }
      }
      const skills = await until("the catalogue gauge", () => query("mcp_skills_catalogue_skills"))
      expect(Number(skills[0].value[1])).toBeGreaterThan(0)
      await until("the session gauge", () => query("mcp_skills_sessions_open >= 1"))
    } finally {
      child.kill("SIGTERM")
      await exited
    }
  })

  it("stdio with --metrics-port: /metrics answers while serving, and the server still exits when input ends", async () => {
    const child = spawn(process.execPath, [serverCli, "serve", examples, "--stdio", "--metrics-port", "0"], { stdio: ["pipe", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    try {
      const metrics = await until("the metrics listener", () => /metrics at (http:\/\/\S+)/.exec(err)?.[1], 20)
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "skills/list", params: { _meta: modernMeta } }) + "\n")
      await until("the answer on stdout", () => out.includes(`"id":1`) ? true : undefined, 20)
      const text = await (await fetch(metrics, { signal: AbortSignal.timeout(10_000) })).text()
      expect(text).toMatch(/mcp_server_operation_duration_seconds_count\{[^}]*network_transport="pipe"/)
      child.stdin.end()
      const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("still running"), 10_000))])
      expect(code).toBe(0)
    } finally {
      child.kill("SIGKILL")
    }
  })

  it("OTLP http/protobuf and --metrics-port: spans reach the receiver, /metrics on its own listener", async () => {
    const other = await receiver()
    const second = await serve(["--metrics-port", "0"], exportEnv(other.url, "http/protobuf"))
    try {
      expect(new URL(second.metrics).port).not.toBe(new URL(second.url).port)
      await modern(second.url, "skills/list")
      await modern(second.url, "skills/list")
      await until("protobuf trace exports with the span names", () => {
        const traces = Buffer.concat(other.posted.filter((post) => post.path === "/v1/traces").map((post) => post.body))
        return other.posted.every((post) => post.path !== "/v1/traces" || post.contentType === "application/x-protobuf") &&
            traces.includes("skills/list") && traces.includes("mcp.method.name")
          ? true
          : undefined
      })
      const text = await (await fetch(second.metrics, { signal: AbortSignal.timeout(10_000) })).text()
      expect(text).toContain("mcp_server_operation_duration_seconds_count")
    } finally {
      await second.stop()
      await other.close()
    }
  })
})
