import { NodeHttpServer, NodeServices } from "@effect/platform-node"
import { SkillsClient } from "@mcp-skills/client"
import { DirectorySource, Skill, SkillsServer, Visibility } from "@mcp-skills/server"
import { Console, Context, Effect, Layer } from "effect"
import { McpProtocol, McpServer } from "effect/ai"
import { FetchHttpClient, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"

// Who is asking, as your auth resolves it: a signed-in user, or nobody.
export class Caller extends Context.Service<Caller, { readonly user: string | undefined }>()("example/Caller") {}

// Stands in for your identity provider: bearer token -> user (a Map, so "constructor" is no token).
const users = new Map([["token-of-ada", "ada"]])

// Auth in front of the MCP route: no Authorization header is an anonymous caller, a token nobody
// issued is refused with 401, a known token is that user.
export const Auth = HttpRouter.middleware<{ provides: Caller }>()((effect) =>
  Effect.gen(function*() {
    const header = (yield* HttpServerRequest.HttpServerRequest).headers["authorization"]
    if (header === undefined) return yield* Effect.provideService(effect, Caller, { user: undefined })
    const user = header.startsWith("Bearer ") ? users.get(header.slice("Bearer ".length)) : undefined
    if (user === undefined) return HttpServerResponse.empty({ status: 401, headers: { "www-authenticate": "Bearer" } })
    return yield* Effect.provideService(effect, Caller, { user })
  })
)

// One registry: a skill in code and the folder of skills next to this file.
const oncall = Skill.make({
  path: "internal/oncall",
  files: {
    "SKILL.md": "---\nname: oncall\ndescription: Page the engineer on call\n---\n# On call\n",
    "references/rota.md": "# Rota\n\nWeek 1: ada\n"
  }
})

const Skills = SkillsServer.layer({
  skills: SkillsServer.combine(oncall, DirectorySource.definitions(fileURLToPath(new URL("skills", import.meta.url)))),
  // Decided once per request from what Auth provided: signed-in users see every skill, anonymous
  // callers only those outside internal/ and acme/ (a hidden skill looks exactly like an absent one).
  visibility: () =>
    Effect.gen(function*() {
      const { user } = yield* Caller
      return user !== undefined || ((skill: Visibility.SkillInfo) => skill.path[0] !== "internal" && skill.path[0] !== "acme")
    })
})

export const Server = McpServer.layerHttp({
  name: "docs", version: "1.0.0", path: "/mcp",
  protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
  registrations: Skills
}).pipe(Layer.provide([Auth.layer, NodeServices.layer]))

// A client that lists and loads every skill it may see (SKILL.md verified against the listing's
// digest), sending the token, if it has one, with every request.
export const Client = (url: string, token?: string) =>
  SkillsClient.layerHttp({ url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )

export const listAndLoad = Effect.gen(function*() {
  const client = yield* SkillsClient.SkillsClient
  const { skills } = yield* client.listSkills()
  return yield* Effect.forEach(skills, (skill) =>
    Effect.map(client.loadSkill(skill), ({ body }) => ({ uri: skill.uri, body })))
})

// `node examples/server-and-client.ts` (after `npm run build`): serve on port 3000, then list and
// load as ada and as an anonymous caller.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const Main = HttpRouter.serve(Server, { disableLogger: true }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 3000 }))
  )
  const url = "http://127.0.0.1:3000/mcp"
  Effect.gen(function*() {
    for (const token of ["token-of-ada", undefined]) {
      const loaded = yield* Effect.provide(listAndLoad, Client(url, token))
      yield* Console.log(`${token ?? "anonymous"}:`, loaded.map(({ uri }) => uri))
    }
  }).pipe(Effect.provide(Main), Effect.runPromise)
}
