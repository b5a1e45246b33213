#!/usr/bin/env node
/**
 * `npm start`: serves `examples/skills` over HTTP on 127.0.0.1 (port `PORT`, default 3000), then
 * plays a client against it and prints the transcript: discovery, `skills/list`, and reads of a
 * `SKILL.md` and a binary file, each checked against the manifest (size, SHA-256 digest and, for
 * `SKILL.md`, frontmatter). It keeps serving until Ctrl-C; `--once` (or `DEMO_ONCE=1`) exits after
 * the transcript, with status 1 if any check failed.
 *
 * @since 0.1.0
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Digest, SkillFrontmatter } from "@mcp-skills/core"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Serve from "./serve.js"

class DemoError extends Data.TaggedError("DemoError")<{ readonly message: string }> {}

// The examples ship with the repository, not the package: walk up from this file to find them.
const findExamples = (): string => {
  if (process.env.SKILLS_DIR !== undefined) return path.resolve(process.env.SKILLS_DIR)
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = path.join(dir, "examples", "skills")
    if (fs.existsSync(candidate)) return candidate
    const parent = path.dirname(dir)
    if (parent === dir) return path.resolve("examples/skills")
    dir = parent
  }
}

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/skills": {} } },
  "io.modelcontextprotocol/clientInfo": { name: "mcp-skills-demo", version: Serve.serverInfo.version }
}

let nextId = 1

// One 2026-07-28 request: stateless, `_meta` in the params, routing headers on the HTTP request.
const call = (url: string, method: string, params: Record<string, unknown> = {}) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": method,
          ...(typeof params.uri === "string" && method === "resources/read" ? { "mcp-name": params.uri } : {})
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params: { ...params, _meta: meta } })
      })
      const text = await response.text()
      const json = response.headers.get("content-type")?.includes("text/event-stream")
        ? text.split("\n").filter((line) => line.startsWith("data:")).map((line) => JSON.parse(line.slice(5)))
          .find((message) => "result" in message || "error" in message)
        : JSON.parse(text)
      if (json?.error !== undefined) throw new Error(`${method}: ${json.error.code} ${json.error.message}`)
      return json.result as any
    },
    catch: (error) => new DemoError({ message: error instanceof Error ? error.message : String(error) })
  })

const mark = (ok: boolean) => (ok ? "✓" : "✗")

const transcript = Effect.fnUntraced(function*(url: string) {
  const failures: Array<string> = []
  const check = (label: string, ok: boolean) =>
    Effect.andThen(Effect.sync(() => ok || failures.push(label)), Console.log(`     ${mark(ok)} ${label}`))

  yield* Console.log(`\n--- a client at work (protocol 2026-07-28, plain JSON-RPC over HTTP) ---\n`)
  yield* Console.log(`→ server/discover`)
  const discover = yield* call(url, "server/discover")
  const capability = discover.capabilities?.extensions?.["io.modelcontextprotocol/skills"]
  yield* Console.log(`← ${discover._meta?.["io.modelcontextprotocol/serverInfo"]?.name} declares io.modelcontextprotocol/skills ${JSON.stringify(capability)}`)
  yield* check("the server declares the Skills extension", capability !== undefined)

  yield* Console.log(`\n→ skills/list`)
  const list = yield* call(url, "skills/list")
  yield* Console.log(`← ${list.skills.length} skills (ttlMs ${list.ttlMs}, cacheScope ${list.cacheScope}):`)
  for (const skill of list.skills) {
    const files = skill.resources === "dynamic" ? "dynamic" : `${skill.resources.length} files`
    yield* Console.log(`     ${skill.uri}  (${files})`)
    yield* Console.log(`       ${skill.frontmatter.description.slice(0, 96)}${skill.frontmatter.description.length > 96 ? "…" : ""}`)
  }

  const skill = list.skills.find((entry: any) => entry.uri === "skill://pdf-processing/SKILL.md") ?? list.skills[0]
  if (skill === undefined) return yield* new DemoError({ message: "the server lists no skills" })
  const targets = [
    skill.resources.find((resource: any) => resource.uri === skill.uri),
    skill.resources.find((resource: any) => !/\.(md|txt|py|sh|json|csv)$/.test(resource.uri))
  ].filter((resource) => resource !== undefined)

  for (const resource of targets) {
    yield* Console.log(`\n→ resources/read ${resource.uri}`)
    const read = yield* call(url, "resources/read", { uri: resource.uri })
    const content = read.contents.find((item: any) => item.uri === resource.uri)
    if (content === undefined) return yield* new DemoError({ message: `no content for ${resource.uri}` })
    // The digest covers raw bytes: the UTF-8 of `text`, or the decoded `blob`.
    const bytes: Uint8Array = typeof content.text === "string"
      ? new TextEncoder().encode(content.text)
      : Buffer.from(content.blob, "base64")
    yield* Console.log(`← ${typeof content.text === "string" ? "text" : "blob"}, ${content.mimeType}, ${bytes.byteLength} bytes`)
    yield* check(`size ${bytes.byteLength} = manifest size ${resource.size}`, bytes.byteLength === resource.size)
    const digest = Digest.make(bytes)
    yield* check(`digest ${digest.slice(0, 23)}… = manifest digest`, digest === resource.digest)
    if (resource.uri === skill.uri) {
      const parsed = SkillFrontmatter.parse(bytes)
      const same = parsed._tag === "Success" && SkillFrontmatter.diff(skill.frontmatter, parsed.success.frontmatter).length === 0
      yield* check("frontmatter in the file = frontmatter in the entry", same)
      if (parsed._tag === "Success") {
        const firstLines = parsed.success.body.trim().split("\n").slice(0, 3)
        for (const line of firstLines) yield* Console.log(`     | ${line}`)
      }
    }
  }

  yield* Console.log(
    failures.length === 0
      ? `\nEvery check passed: the bytes a host would load are the bytes the server published.`
      : `\n${failures.length} check(s) FAILED: ${failures.join("; ")}`
  )
  if (failures.length > 0) return yield* new DemoError({ message: `${failures.length} check(s) failed` })
})

const program = Effect.gen(function*() {
  const once = process.argv.includes("--once") || process.env.DEMO_ONCE === "1"
  const port = process.env.PORT === undefined ? 3000 : Number(process.env.PORT)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    return yield* new DemoError({ message: `PORT must be a TCP port number, got ${process.env.PORT}` })
  }
  const directory = findExamples()
  const { definitions } = yield* Serve.loadReported(directory, { strict: true, log: Console.log })
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
  yield* Console.log(`\nConnect any MCP client to ${url} (streamable HTTP, protocol 2026-07-28 or 2025-11-25), e.g.:`)
  yield* Console.log(
    `  curl -s ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \\\n` +
      `    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: skills/list' \\\n` +
      `    -d '{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'`
  )
  yield* transcript(url)
  if (once) return
  yield* Console.log(`\nStill serving ${url}; press Ctrl-C to stop.`)
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.catch((error) =>
    Effect.andThen(Console.error(`demo: ${error.message}`), Effect.sync(() => {
      process.exitCode = 1
    }))
  )
)

program.pipe(
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)
