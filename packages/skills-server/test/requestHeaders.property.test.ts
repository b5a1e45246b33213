/**
 * The headers the router admission and the fast route read (`Port.requestHeaders`: Node's own
 * object while effect has no copy or override) have the values effect's `request.headers` has,
 * whatever a client sends: any names in any case, repeated ones (which Node joins, or keeps the
 * first of, by name) and the headers the admissions read (`Host`, `Origin`, `Content-Type`,
 * `Content-Length`, `Mcp-*`). Sent as raw HTTP/1.1 over loopback to effect's Node server, compared
 * inside its handler, where each request answers both views as JSON.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Port from "../src/internal/effect/port.js"
import { socketAnswer } from "./support/raw.js"
import { serveApp, ServerUrl } from "./support/wire.js"

// Both views of each request: Node's (through the port), then effect's copy.
const Views = HttpRouter.add(
  "POST",
  "/mcp",
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const ours = { ...Port.requestHeaders(request) }
    return HttpServerResponse.jsonUnsafe({ ours, effect: { ...request.headers } })
  })
)

const Name = Schema.Literals([
  "Host", "host", "HOST", "Origin", "origin", "Content-Type", "content-type", "Accept", "Mcp-Method", "mcp-method",
  "MCP-Protocol-Version", "Mcp-Name", "Mcp-Session-Id", "X-Custom", "x-custom", "Authorization", "User-Agent", "Cookie"
])
const Value = Schema.String.check(Schema.isPattern(/^[!-~]([ -~]{0,20}[!-~])?$/))
const Header = Schema.Tuple([Name, Value])

// One raw request: the headers as generated (repeats included), a body the length says.
const send = (url: string, headers: ReadonlyArray<readonly [string, string]>) => {
  const body = "{}"
  const names = new Set(headers.map(([name]) => name.toLowerCase()))
  const lines = [
    "POST /mcp HTTP/1.1",
    ...headers.map(([name, value]) => `${name}: ${value}`),
    ...(names.has("host") ? [] : [`Host: 127.0.0.1:${new URL(url).port}`]),
    `Content-Length: ${body.length}`,
    "Connection: close",
    "",
    body
  ]
  return Effect.flatMap(socketAnswer(url, lines.join("\r\n")), (answer) =>
    answer.status === 200
      ? Effect.succeed(JSON.parse(answer.body) as { readonly ours: Record<string, string>; readonly effect: Record<string, string> })
      : Effect.die(new Error(`status ${answer.status}: ${answer.body}`)))
}

describe("the port's request headers", () => {
  layer(serveApp(Views as Layer.Layer<any, never, any>))("over loopback HTTP/1.1", (it) => {
    it.effect.prop("have effect's values for every name a client sends, repeats and case included", [
      Schema.Array(Header).check(Schema.isMaxLength(12))
    ], ([headers]) =>
      Effect.gen(function*() {
        const views = yield* send(yield* ServerUrl, headers)
        assert.deepStrictEqual(views.ours, views.effect)
      }), { arbitrary: { runs: 60 } })
  })
})
