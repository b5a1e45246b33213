/**
 * Child process: effect's HTTP server alone, as our route uses it. `@effect/platform-node`'s
 * server and `HttpRouter`, one global middleware (where the fast route sits) that reads each
 * request's body as the route does (`Port.readBody`) and parses it, then answers the floor's
 * precomputed bytes:
 * everything a fast-route answer passes through except our own work (admission, the Host check,
 * `_meta`, the snapshot, the envelope). `pairLoad.ts` measures ours against it.
 *
 * Usage: node effectFloor.js ANSWERS.json (as `floor.js`: one answer is used for every request).
 * Prints `listening URL`.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
// The fast route's own reads of the headers and the body, from the server package's build (as
// `ours-layer.ts` takes the CLI's wiring): the same code, not a copy of it.
import * as Port from "../../../packages/skills-server/dist/src/internal/effect/port.js"

const file = process.argv[2]
if (file === undefined) throw new Error("usage: effectFloor.js ANSWERS.json")
const answer = Buffer.from((JSON.parse(readFileSync(file, "utf8")) as Array<[string, string]>)[0]![1])
const decoder = new TextDecoder()

const answering = (_httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const length = Number(Port.requestHeaders(request)["content-length"])
    return Effect.map(Port.readBody(request, length), (bytes) => {
      JSON.parse(decoder.decode(bytes))
      return HttpServerResponse.uint8Array(answer, { contentType: "application/json" })
    })
  })

const Routes = Layer.effectDiscard(Effect.gen(function*() {
  const router = yield* HttpRouter.HttpRouter
  // It answers every request itself and never runs the router's effect: typed as a middleware
  // that handles errors, which the router's type refuses (the skills layer casts its own alike).
  yield* router.addGlobalMiddleware(answering as any)
  yield* router.add("POST", "/mcp", HttpServerResponse.empty({ status: 404 }))
})) as Layer.Layer<never, never, HttpRouter.HttpRouter>

const Listening = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const address = server.address
  if (address._tag === "UnixPathAddress") throw new Error("not listening on TCP")
  console.log(`listening http://127.0.0.1:${address.port}/mcp`)
}))

Layer.launch(Listening.pipe(
  Layer.provideMerge(HttpRouter.serve(Routes, { disableListenLog: true, disableLogger: true })),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)).pipe(NodeRuntime.runMain)
