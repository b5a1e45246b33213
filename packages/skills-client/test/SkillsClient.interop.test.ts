/**
 * Interop: our client lists, verifies and pulls every skill from a server
 * built with the official MCP TypeScript SDK (`@modelcontextprotocol/server` 2.4.0, `ext/skills`),
 * over HTTP (`createMcpHandler`) and stdio (`serveStdio`), on both revisions.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Layer from "effect/Layer"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { loadSkills } from "@modelcontextprotocol/server/ext/skills/node"
import { Pull, SkillsClient } from "@mcp-skills/client"
import { tempDir, versions, withClient } from "./support/helpers.js"
import { fixture, makeFixture } from "./support/fixture.js"

const officialHttp = (dir: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const catalog = await loadSkills(dir, { strict: true })
      const handler = createMcpHandler(() => {
        const mcp = new McpServer({ name: "official-sdk-interop", version: "1.0.0" })
        catalog.attach(mcp)
        return mcp
      })
      const server = Http.createServer(async (req, res) => {
        const chunks: Array<Buffer> = []
        for await (const chunk of req) chunks.push(chunk as Buffer)
        const headers = new Headers()
        for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value)
        const response = await handler.fetch(
          new Request(`http://127.0.0.1${req.url}`, {
            method: req.method!,
            headers,
            ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {})
          })
        )
        res.writeHead(response.status, Object.fromEntries(response.headers))
        res.end(Buffer.from(await response.arrayBuffer()))
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { server, handler, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` }
    }),
    ({ handler, server }) =>
      Effect.promise(async () => {
        await handler.close()
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      })
  )

// Lists, loads every skill (SKILL.md verified first), verifies every file and pulls everything.
const exercise = (client: SkillsClient.Service, into: string) =>
  Effect.gen(function*() {
    const listing = yield* client.listSkills({ invalid: "fail" })
    assert.deepStrictEqual(listing.skills.map((s) => s.uri).sort(), [
      "skill://pdf-processing/SKILL.md",
      "skill://release-notes/SKILL.md"
    ])
    for (const skill of listing.skills) {
      const loaded = yield* client.loadSkill(skill)
      assert.strictEqual(loaded.frontmatter.name, skill.frontmatter.name)
      const fetched = yield* client.getSkill(skill.uri)
      assert.deepStrictEqual(fetched.skill, skill)
    }
    const summary = yield* Pull.pull(client, { into, all: true }).pipe(Effect.provide(NodeFileSystem.layer))
    assert.deepStrictEqual(summary.skills.map((s) => s._tag), ["Added", "Added"])
    for (const [path, bytes] of fixture) {
      const pulled = yield* Effect.promise(() => Fs.readFile(Path.join(into, path)))
      assert.isTrue(Buffer.from(bytes).equals(pulled), path)
    }
  })

describe.each(versions)("official SDK server %s", (protocolVersion) => {
  it.live("over HTTP: lists, verifies and pulls every skill byte for byte", () =>
    Effect.gen(function*() {
      const dir = yield* makeFixture
      const { url } = yield* officialHttp(dir)
      const into = yield* tempDir("official-sdk-pull-")
      yield* withClient(url, (client) => exercise(client, into), { protocolVersion })
    }))

  it.live("over stdio: lists, verifies and pulls every skill byte for byte", () =>
    Effect.gen(function*() {
      const dir = yield* makeFixture
      const into = yield* tempDir("official-sdk-pull-")
      yield* SkillsClient.SkillsClient.use((client) => exercise(client, into)).pipe(
        Effect.provide(
          SkillsClient.layerStdio({
            command: process.execPath,
            args: [Path.join(import.meta.dirname, "fixtures/official-stdio-server.mjs"), dir],
            protocolVersion
          }).pipe(Layer.provide(NodeServices.layer))
        )
      )
    }))
})
