#!/usr/bin/env node
/**
 * `node demo/dist/src/family.js`: serves `examples/family` as a skill family,
 * `customers/{customer}/onboarding`, whose instances depend on the `x-team` request header, plus
 * one skill registered as its own layer (`SkillsServer.skill`), over streamable HTTP on 127.0.0.1
 * (port `PORT`, default 3001). With `--once` it shows what two teams see through `SkillsClient`,
 * every file verified, and a malformed customer refused, then exits (status 1 if a step failed).
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SkillsClient } from "@mcp-skills/client"
import { CliReport } from "@mcp-skills/core"
import { Skill, SkillsServer, Visibility } from "@mcp-skills/server"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import { McpProtocol, McpServer } from "effect/ai"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

class DemoError extends Data.TaggedError("DemoError")<{ readonly message: string }> {}

const folder = process.env.FAMILY_DIR ?? fileURLToPath(new URL("../../../examples/family", import.meta.url))
const read = (file: string) => readFileSync(path.join(folder, file), "utf8")

interface Customer {
  readonly name: string
  readonly plan: string
  readonly contact: string
}
const data = JSON.parse(read("customers.json")) as {
  readonly teams: Readonly<Record<string, ReadonlyArray<string>>>
  readonly customers: Readonly<Record<string, Customer>>
}
const templates = { "SKILL.md": read("onboarding.md"), "references/checklist.md": read("references/checklist.md") }

const teamOf = (headers: Readonly<Record<string, string | undefined>>) => headers["x-team"] ?? ""
const customersOf = (team: string) => data.teams[team] ?? []

const fill = (template: string, values: Readonly<Record<string, string>>) =>
  template.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => values[key] ?? whole)

const onboarding = Skill.family({
  path: "customers/{customer}/onboarding",
  list: ({ headers }) => Effect.succeed(customersOf(teamOf(headers)).map((customer) => ({ customer }))),
  render: ({ customer }, { headers }) => {
    const known = data.customers[customer]
    if (known === undefined) return Effect.fail(new DemoError({ message: `no customer ${customer}` }))
    const values = { customer, team: teamOf(headers), ...known }
    return Effect.succeed({
      "SKILL.md": fill(templates["SKILL.md"], values),
      "references/checklist.md": fill(templates["references/checklist.md"], values)
    })
  }
})

const Skills = SkillsServer.layer({
  skills: [onboarding],
  cacheHint: { ttl: "1 minute" },
  // A customer outside the caller's team is hidden everywhere, not only left out of the listing.
  visibility: ({ headers }) =>
    Effect.succeed((skill: Visibility.SkillInfo) =>
      skill.path[0] !== "customers" || customersOf(teamOf(headers)).includes(skill.path[1]!)
    )
})

// A module of the app contributes its own skill next to its code.
const Handbook = SkillsServer.skill(Skill.make({
  path: "team-handbook",
  files: { "SKILL.md": "---\nname: team-handbook\ndescription: How our teams work with customers\n---\n\n# Handbook\n" }
}))

const Server = McpServer.layerHttp({
  name: "family-demo",
  version: "1.0.0",
  path: "/mcp",
  protocols: SkillsServer.protocols([McpProtocol.v2026_07_28, McpProtocol.v2025_11_25]),
  registrations: Layer.mergeAll(Skills, Handbook.pipe(Layer.provide(Skills)))
})

const clientOf = (url: string, team: string) =>
  SkillsClient.layerHttp({ url, headers: { "x-team": team } }).pipe(Layer.provide(FetchHttpClient.layer))

const look = (url: string, team: string) =>
  SkillsClient.SkillsClient.use((client) =>
    Effect.gen(function*() {
      const listing = yield* client.listSkills()
      yield* Console.log(`\nteam ${team}: skills/list shows ${listing.skills.length} skills (${listing.cacheHint.cacheScope})`)
      for (const skill of listing.skills) {
        if (skill.resources === "dynamic") continue
        const checklist = skill.resources.find((resource) => resource.uri.endsWith("/references/checklist.md"))
        const loaded = yield* client.loadSkill(skill)
        yield* Console.log(`  ${skill.uri}: ${loaded.frontmatter.description} (SKILL.md size ✓ digest ✓)`)
        if (checklist === undefined) continue
        const file = yield* client.readSkillResource(skill, checklist.uri)
        if (!file.verified) return yield* new DemoError({ message: `${checklist.uri} did not verify` })
        yield* Console.log(`    references/checklist.md, ${file.bytes.byteLength} bytes, digest ✓: ${new TextDecoder().decode(file.bytes).split("\n")[0]}`)
      }
      const hidden = yield* Effect.result(client.getSkill("skill://customers/globex/onboarding/SKILL.md"))
      yield* Console.log(
        `  skills/get globex: ${hidden._tag === "Success" ? "served" : `refused (${hidden.failure.message})`}`
      )
      const malformed = yield* Effect.result(client.getSkill("skill://customers/%2E%2E/onboarding/SKILL.md"))
      if (malformed._tag === "Success") return yield* new DemoError({ message: "a malformed customer was served" })
      yield* Console.log(`  skills/get customers/%2E%2E: refused (${malformed.failure.message})`)
    })
  ).pipe(Effect.provide(clientOf(url, team)))

const program = Effect.gen(function*() {
  const once = process.argv.includes("--once")
  const port = process.env.PORT === undefined ? 3001 : Number(process.env.PORT)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    return yield* new DemoError({ message: `PORT must be a TCP port number, got ${process.env.PORT}` })
  }
  const built = yield* Layer.build(
    HttpRouter.serve(Server, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" }))
    )
  )
  const address = Context.get(built, HttpServer.HttpServer).address
  if (address._tag === "UnixPathAddress") return yield* new DemoError({ message: "expected a TCP address" })
  const url = `http://127.0.0.1:${address.port}/mcp`
  yield* Console.log(`listening ${url}`)
  yield* Console.log(`send x-team: support or x-team: sales to see that team's customers`)
  if (!once) return yield* Effect.never
  yield* look(url, "support")
  yield* look(url, "sales")
  yield* Console.log(`\nEvery check passed: each team verified the bytes rendered for it.`)
}).pipe(
  Effect.scoped,
  Effect.catch((error) =>
    // effect's ServeError has no message of its own: Node's error says which address and why.
    CliReport.fail("family demo")(error._tag !== "ServeError"
      ? error.message
      : `cannot listen: ${error.cause instanceof Error ? error.cause.message : String(error.cause)}`)
  )
)

program.pipe(
  NodeRuntime.runMain({
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)
