/**
 * The admission of every route of a router (`HttpAdmission.layerRouter`, and the default the skills
 * layer puts in front of its router): a request naming a foreign `Host` (a DNS-rebinding page) or
 * coming from a foreign `Origin` is refused alike by the MCP endpoint (fast route included),
 * `/metrics`, an app's own route and an unknown path, over loopback HTTP.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"
import * as Layer from "effect/Layer"
import { McpServer } from "effect/ai"
import { HttpRouter, HttpServerResponse } from "effect/http"
import * as NetAddress from "effect/net/NetAddress"
import { HttpAdmission, Observability, SkillsServer } from "../src/index.js"
import * as RouterAdmission from "../src/internal/routerAdmission.js"
import { constants } from "./support/arbitraries.js"
import { catalogue } from "./support/catalogue.js"
import { http10Status, rawRequest, refusalOf, socketStatus } from "./support/raw.js"
import { adapters, modernRequest, serveApp, ServerUrl } from "./support/wire.js"

const allowedOrigins = ["https://app.example"]

const endpoint = (origins?: ReadonlyArray<string>) =>
  McpServer.layerHttp({
    name: "router-admission-test",
    version: "1.0.0",
    path: "/mcp",
    protocols: adapters(),
    ...(origins === undefined ? {} : { allowedOrigins: origins }),
    registrations: SkillsServer.layer({ skills: catalogue })
  })

// An app's own route, beside the server's.
const hello = HttpRouter.add("GET", "/hello", HttpServerResponse.text("hello"))

const routes = (origins?: ReadonlyArray<string>) => Layer.mergeAll(endpoint(origins), Observability.layerPrometheus(), hello)

/** Each route of the app: how to ask it, and the status it answers an admitted request. */
const asks = (url: string) => {
  const base = url.slice(0, -"/mcp".length)
  const list = modernRequest("skills/list", {})
  return [
    { route: "the MCP endpoint", url, method: "POST", headers: list.headers, body: list.body, status: 200 },
    { route: "/metrics", url: `${base}/metrics`, method: "GET", headers: {}, body: undefined, status: 200 },
    { route: "an app route", url: `${base}/hello`, method: "GET", headers: {}, body: undefined, status: 200 },
    { route: "an unknown path", url: `${base}/nothing`, method: "GET", headers: {}, body: undefined, status: 404 }
  ]
}

const ask = (
  request: ReturnType<typeof asks>[number],
  headers: Record<string, string>
) => rawRequest(request.url, { method: request.method, headers: { ...request.headers, ...headers }, body: request.body })

const portOf = (url: string) => new URL(url).port

describe("HttpAdmission.layerRouter", () => {
  layer(serveApp(routes(allowedOrigins).pipe(Layer.provide(HttpAdmission.layerRouter({ allowedOrigins })))))(
    "provided to the app's routes",
    (it) => {
      it.effect("a foreign Host is refused by every route with 403 and a JSON-RPC error naming it", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const host = `rebound.example:${portOf(url)}`
          for (const request of asks(url)) {
            const answer = yield* ask(request, { host })
            assert.strictEqual(answer.status, 403, `${request.route}: ${answer.body}`)
            assert.deepStrictEqual(refusalOf(answer), { code: -32600, message: `Host ${host} is not allowed` })
          }
        }))

      it.effect("a foreign Origin is refused by every route; a listed one is admitted", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          for (const request of asks(url)) {
            const refused = yield* ask(request, { origin: "https://evil.example" })
            assert.strictEqual(refused.status, 403, request.route)
            assert.deepStrictEqual(refusalOf(refused), { code: -32600, message: "Origin https://evil.example is not allowed" })
            const admitted = yield* ask(request, { origin: "https://app.example" })
            assert.strictEqual(admitted.status, request.status, `${request.route}: ${admitted.body}`)
          }
        }))

      it.effect("the loopback names are admitted, with any port or none", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          for (const host of ["127.0.0.1", "localhost", "[::1]", `LOCALHOST:${portOf(url)}`, "127.0.0.1:1"]) {
            for (const request of asks(url)) {
              const answer = yield* ask(request, { host })
              assert.strictEqual(answer.status, request.status, `${request.route} with Host ${host}: ${answer.body}`)
            }
          }
        }))

      it.effect("a DNS-rebinding page is refused: its POST (Host and Origin its own) and its GET (Host only)", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const host = `evil.example.com:${portOf(url)}`
          const [mcp, metrics] = asks(url)
          assert.strictEqual((yield* ask(mcp!, { host, origin: `http://${host}` })).status, 403)
          assert.strictEqual((yield* ask(metrics!, { host })).status, 403)
        }))

      it.effect("the fast route answers nothing the admission refuses", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const [mcp] = asks(url)
          // Taught its path, the fast route answers the next well-formed read itself.
          for (let i = 0; i < 2; i++) assert.strictEqual((yield* ask(mcp!, {})).status, 200)
          const answer = yield* ask(mcp!, { host: `rebound.example:${portOf(url)}` })
          assert.strictEqual(answer.status, 403)
        }))

      it.effect("an absolute-form target's authority is the Host checked, on every route, fast route included", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          const port = portOf(url)
          const [mcp] = asks(url)
          // Taught its path, the fast route would answer a well-formed read itself.
          for (let i = 0; i < 2; i++) assert.strictEqual((yield* ask(mcp!, {})).status, 200)
          // effect takes the host from the target (RFC 9112 §3.2.2), whatever the Host header says.
          const send = (authority: string, host: string) =>
            socketStatus(url, [
              `POST http://${authority}/mcp HTTP/1.1`,
              `Host: ${host}`,
              "Connection: close",
              ...Object.entries(mcp!.headers).map(([name, value]) => `${name}: ${value}`),
              `Content-Length: ${Buffer.byteLength(mcp!.body!)}`,
              "",
              mcp!.body
            ].join("\r\n"))
          assert.strictEqual(yield* send(`rebound.example:${port}`, `127.0.0.1:${port}`), 403)
          assert.strictEqual(yield* send(`127.0.0.1:${port}`, `rebound.example:${port}`), 200)
          for (const request of asks(url).slice(1)) {
            const path = new URL(request.url).pathname
            const status = yield* socketStatus(url, `GET http://rebound.example:${port}${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)
            assert.strictEqual(status, 403, request.route)
          }
        }))

      it.effect("a request without Host (HTTP/1.0) is refused", () =>
        Effect.gen(function*() {
          const url = yield* ServerUrl
          assert.strictEqual(yield* http10Status(url.replace(/\/mcp$/, "/metrics")), 403)
        }))
    }
  )

  layer(
    serveApp(routes().pipe(Layer.provide(HttpAdmission.layerRouter({ allowedHosts: ["skills.example.com", "[fd00::1]"] }))))
  )("with allowedHosts", (it) => {
    it.effect("the named hosts and the loopback names are admitted, others refused", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const [, metrics] = asks(url)
        for (const host of ["skills.example.com", "Skills.Example.COM:443", "[fd00::1]:80", "localhost"]) {
          assert.strictEqual((yield* ask(metrics!, { host })).status, 200, host)
        }
        for (const host of ["example.com", "skills.example.com.evil.example", "[fd00::2]"]) {
          assert.strictEqual((yield* ask(metrics!, { host })).status, 403, host)
        }
      }))
  })

  layer(serveApp(routes()))("not provided: the skills layer's default", (it) => {
    it.effect("a foreign Host is refused by every route of the skills layer's router", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        for (const request of asks(url)) {
          const answer = yield* ask(request, { host: `rebound.example:${portOf(url)}` })
          assert.strictEqual(answer.status, 403, request.route)
          const admitted = yield* ask(request, { host: `localhost:${portOf(url)}` })
          assert.strictEqual(admitted.status, request.status, request.route)
        }
      }))

    it.effect("Origin stays each route's: effect's endpoint refuses one outside its list, /metrics does not check", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const [mcp, metrics] = asks(url)
        assert.strictEqual((yield* ask(mcp!, { origin: "https://evil.example" })).status, 403)
        assert.strictEqual((yield* ask(metrics!, { origin: "https://evil.example" })).status, 200)
      }))
  })

  it("an allowedHosts entry that is no host name is refused when the layer is made", () => {
    for (const name of ["skills.example.com:443", "https://skills.example.com", "::1", "a/b", ""]) {
      assert.throws(() => HttpAdmission.layerRouter({ allowedHosts: [name] }), RangeError)
    }
  })
})

describe("the Host names a listener admits", () => {
  const at = (ip: string) => NetAddress.inetAddressFromIpStringUnsafe(ip, 3000)
  const names = (hosts: RouterAdmission.Hosts) => hosts._tag === "Any" ? "any" : [...hosts.names].sort()

  it("a loopback listener: the loopback names and its address; any other listener: any Host, unless names are given", () => {
    assert.deepStrictEqual(names(RouterAdmission.hostsFor(at("127.0.0.1"), [])), ["127.0.0.1", "[::1]", "localhost"])
    assert.deepStrictEqual(names(RouterAdmission.hostsFor(at("127.0.0.2"), [])), ["127.0.0.1", "127.0.0.2", "[::1]", "localhost"])
    assert.deepStrictEqual(names(RouterAdmission.hostsFor(at("::1"), [])), ["127.0.0.1", "[::1]", "localhost"])
    assert.strictEqual(names(RouterAdmission.hostsFor(at("0.0.0.0"), [])), "any")
    assert.strictEqual(names(RouterAdmission.hostsFor(at("::"), [])), "any")
    assert.strictEqual(names(RouterAdmission.hostsFor(at("10.1.2.3"), [])), "any")
    assert.strictEqual(names(RouterAdmission.hostsFor(undefined, [])), "any")
    assert.deepStrictEqual(
      names(RouterAdmission.hostsFor(at("10.1.2.3"), ["skills.example.com"])),
      ["10.1.2.3", "127.0.0.1", "[::1]", "localhost", "skills.example.com"]
    )
    assert.deepStrictEqual(names(RouterAdmission.hostsFor(at("0.0.0.0"), ["a.example"])), ["127.0.0.1", "[::1]", "a.example", "localhost"])
    assert.strictEqual(names(RouterAdmission.hostsFor(at("127.0.0.1"), ["*"])), "any")
  })

  it("a listener's own origins: the loopback names on loopback, its address elsewhere, none on every interface", () => {
    assert.deepStrictEqual(RouterAdmission.ownOrigins(at("127.0.0.1")), [
      "http://localhost:3000",
      "http://127.0.0.1:3000",
      "http://[::1]:3000"
    ])
    assert.deepStrictEqual(RouterAdmission.ownOrigins(at("::1")), ["http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000"])
    assert.deepStrictEqual(RouterAdmission.ownOrigins(at("10.1.2.3")), ["http://10.1.2.3:3000"])
    assert.deepStrictEqual(RouterAdmission.ownOrigins(at("0.0.0.0")), [])
    assert.deepStrictEqual(RouterAdmission.ownOrigins(NetAddress.unixPathAddress("/tmp/skills.sock")), [])
  })

  it("a Host header's name: lower-cased, without its port; anything else is no name", () => {
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ["localhost", "localhost"],
      ["LocalHost:3000", "localhost"],
      ["[::1]:8080", "[::1]"],
      ["[::1]", "[::1]"],
      ["127.0.0.1:65535", "127.0.0.1"],
      ["my_service:80", "my_service"],
      ["localhost:", undefined],
      ["localhost:80:80", undefined],
      ["localhost:http", undefined],
      ["[::1", undefined],
      ["evil.example/localhost", undefined],
      ["user@localhost", undefined],
      [" localhost", undefined],
      ["localhost.", undefined]
    ]
    for (const [header, name] of cases) assert.strictEqual(RouterAdmission.hostnameOf(header), name, header)
  })

  it.prop("a loopback name with any port is its name; a longer name ending in one is not", {
    name: constants(RouterAdmission.loopbackNames),
    port: Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }))),
    label: Arbitrary.schema(Schema.String.check(Schema.isPattern(/^[a-z0-9]{1,10}$/)))
  }, ({ label, name, port }) => {
    assert.strictEqual(RouterAdmission.hostnameOf(`${name}:${port}`), name)
    assert.notStrictEqual(RouterAdmission.hostnameOf(`${label}.${name}:${port}`), name)
  })
})
