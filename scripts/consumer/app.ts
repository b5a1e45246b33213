/**
 * A user's app, outside the repository, on the packed packages: a server with a skill in code
 * over loopback HTTP, and a client that lists it, loads it and reads one of its files, verified.
 * Type-checked with `skipLibCheck: false`, with `exactOptionalPropertyTypes` on and off.
 */
import { NodeHttpServer, NodeServices } from "@effect/platform-node"
import { SkillsClient } from "@mcp-skills/client"
import { Skill as Entry } from "@mcp-skills/core"
import { Skill, SkillsServer } from "@mcp-skills/server"
import { Context, Effect, Layer, Schema } from "effect"
import { type McpClient, McpProtocol, McpServer } from "effect/ai"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"

const greet = Skill.make({
  path: "greet",
  files: {
    "SKILL.md": "---\nname: greet\ndescription: Say hello\n---\n# Greet\n\nRead hello.md.\n",
    "hello.md": "Hello!\n"
  }
})

/** The URL the server listens on. */
export class ServerUrl extends Context.Service<ServerUrl, string>()("consumer/ServerUrl") {}

const App = McpServer.layerHttp({
  name: "consumer",
  version: "1.0.0",
  path: "/mcp",
  protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
  registrations: SkillsServer.layer({ skills: [greet] })
}).pipe(Layer.provide(NodeServices.layer))

/** The server on 127.0.0.1, on a free port. */
export const Served = Layer.merge(
  HttpRouter.serve(App, { disableLogger: true, disableListenLog: true }),
  Layer.effect(ServerUrl)(Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    return address._tag === "UnixPathAddress" ? yield* Effect.die("not TCP") : `http://127.0.0.1:${address.port}/mcp`
  }))
).pipe(Layer.provide(NodeHttpServer.layer(() => createServer(), { host: "127.0.0.1", port: 0 })))

/** Lists, loads `greet` and reads `hello.md` over `protocolVersion`. */
export const session = (protocolVersion: McpClient.ProtocolVersion) =>
  Effect.gen(function*() {
    const url = yield* ServerUrl
    return yield* Effect.gen(function*() {
      const client = yield* SkillsClient.SkillsClient
      const { skills } = yield* client.listSkills()
      const loaded = yield* client.loadSkill(skills[0]!)
      const hello = yield* client.readSkillResource(loaded.skill, "hello.md")
      return { uris: skills.map((skill) => skill.uri), body: loaded.body, hello: new TextDecoder().decode(hello.bytes) }
    }).pipe(Effect.provide(SkillsClient.layerHttp({ url, protocolVersion }).pipe(Layer.provide(FetchHttpClient.layer))))
  })

/** A skill entry's wire form decodes to the same entry. */
export const roundTrips = (entry: Entry.Skill): boolean => {
  const wire = JSON.parse(JSON.stringify(Schema.encodeSync(Entry.Skill)(entry)))
  return JSON.stringify(Schema.decodeUnknownSync(Entry.Skill)(wire)) === JSON.stringify(entry)
}
