#!/usr/bin/env node
/**
 * `npm start`: serves `examples/skills` over streamable HTTP on 127.0.0.1 (port `PORT`, default 3000)
 * with the `mcp-skills-server` code, then shows a host using `SkillsClient` against it: discovery,
 * the listing, loading a skill (SKILL.md verified first), a supporting file through a relative
 * reference, a directory read, and a reference that tries to leave the skill being refused. It keeps
 * serving until Ctrl-C; `--once` (or `DEMO_ONCE=1`) exits after the transcript, with status 1 if any
 * step failed.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { SkillsClient } from "@mcp-skills/client"
import { CliReport, Skill } from "@mcp-skills/core"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import { FetchHttpClient } from "effect/http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type * as ServeModule from "../../packages/skills-server/src/bin/serve.js"

// The CLI's wiring is not among the server package's exports (`bin/*` is blocked); the demo, which
// lives in this repository, loads it from the workspace package's build.
const Serve: typeof ServeModule = await import(new URL("bin/serve.js", import.meta.resolve("@mcp-skills/server")).href)

class DemoError extends Data.TaggedError("DemoError")<{ readonly message: string }> {}

const examples = process.env.SKILLS_DIR ?? path.join(fileURLToPath(new URL("../../../examples/skills", import.meta.url)))

const transcript = Effect.gen(function*() {
  const client = yield* SkillsClient.SkillsClient
  yield* Console.log(`\n--- a host at work: SkillsClient from @mcp-skills/client, protocol ${client.protocolVersion} ---\n`)
  yield* Console.log(`server ${client.server} declares io.modelcontextprotocol/skills ${JSON.stringify(client.capability)}`)

  const listing = yield* client.listSkills()
  yield* Console.log(`\nskills/list: ${listing.skills.length} skills (ttlMs ${listing.cacheHint.ttlMs}, ${listing.cacheHint.cacheScope}), no file read yet`)
  for (const skill of listing.skills) {
    const files = Skill.isDynamic(skill) ? "dynamic" : `${skill.resources.length} files`
    yield* Console.log(`  ${skill.uri}  (${files})`)
    yield* Console.log(`    ${skill.frontmatter.description.slice(0, 100)}${skill.frontmatter.description.length > 100 ? "…" : ""}`)
  }

  const skill = listing.skills.find((entry) => entry.uri === "skill://pdf-processing/SKILL.md") ?? listing.skills[0]
  if (skill === undefined) return yield* new DemoError({ message: "the server lists no skills" })

  const loaded = yield* client.loadSkill(skill)
  yield* Console.log(`\nloadSkill ${skill.uri}: ${loaded.skillMd.bytes.byteLength} bytes, size ✓ digest ✓ frontmatter ✓`)
  for (const line of loaded.body.trim().split("\n").slice(0, 3)) yield* Console.log(`  | ${line}`)

  const logo = yield* client.readSkillResource(skill, "assets/logo.png")
  yield* Console.log(`\nreadSkillResource "assets/logo.png" → ${logo.uri}: ${logo.mimeType}, ${logo.bytes.byteLength} bytes, size ✓ digest ✓`)

  if (client.capability?.directoryRead === true) {
    const root = skill.uri.slice(0, -"/SKILL.md".length)
    const children = yield* client.readResourceDirectory(root)
    yield* Console.log(`\nresources/directory/read ${root}:`)
    for (const child of children) yield* Console.log(`  ${child.uri}  (${child.mimeType})`)
  }

  const escape = yield* Effect.result(client.readSkillResource(skill, "../git-workflow/SKILL.md"))
  if (escape._tag === "Success") return yield* new DemoError({ message: "a reference outside the skill was read" })
  yield* Console.log(`\nreadSkillResource "../git-workflow/SKILL.md" → refused before any request: ${escape.failure.message}`)

  yield* Console.log(`\nEvery check passed: the bytes a host would load are the bytes the server published.`)
})

const program = Effect.gen(function*() {
  const once = process.argv.includes("--once") || process.env.DEMO_ONCE === "1"
  const port = process.env.PORT === undefined ? 3000 : Number(process.env.PORT)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    return yield* new DemoError({ message: `PORT must be a TCP port number, got ${process.env.PORT}` })
  }
  const { definitions } = yield* Serve.loadReported(examples, { strict: true, log: Console.log })
  const listening = yield* Deferred.make<string>()
  yield* Layer.build(Serve.http(definitions, {
    host: "127.0.0.1",
    port,
    path: "/mcp",
    protocols: [],
    allowedOrigins: [],
    onListening: (url) => Deferred.succeed(listening, url).pipe(Effect.asVoid)
  }))
  const url = yield* Deferred.await(listening)
  yield* Console.log(`listening ${url}`)
  yield* Console.log(`\nConnect any MCP client to ${url} (streamable HTTP, protocol 2026-07-28 or 2025-11-25), or try:`)
  yield* Console.log(`  node packages/skills-client/dist/src/bin/mcp-skills.js list ${url}`)
  yield* Console.log(`  node packages/skills-client/dist/src/bin/mcp-skills.js pull ${url} --all --into /tmp/skills`)
  yield* transcript.pipe(
    Effect.provide(SkillsClient.layerHttp({ url }).pipe(Layer.provide(FetchHttpClient.layer)))
  )
  if (once) return
  yield* Console.log(`\nStill serving ${url}; press Ctrl-C to stop.`)
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  // A listen failure names the listener, its address and the errno (`Serve.ListenError`).
  Effect.catch((error) => CliReport.fail("demo")(error.message))
)

program.pipe(
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)
