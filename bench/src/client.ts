/**
 * Client figures: pull one skill at the spec limits (512 files, 16 MiB) from our server and verify
 * every byte, against unverified reads of the same files. All clients read from the same server (ours)
 * with the same parallelism, so the differences are client costs.
 *
 * - raw: `fetch` + `JSON.parse` + base64 decode per `resources/read`; no checks (the floor).
 * - ours-unverified: effect's `McpClient.readResource` over our client's own connection.
 * - ours-verified: `SkillsClient.getSkill`, `loadSkill`, then `readSkillResource` for every other file
 *   (entry, size, digest and frontmatter checks), with a cache that never hits; over effect's
 *   `HttpClient` (`readTransport: "HttpClient"`) and over the lean `node:http` transport (`"lean"`,
 *   what the `mcp-skills` CLI uses).
 * - ours-pull: `Pull.pull` into a fresh folder (verifies, writes, renames, lock file), lean transport.
 * - sdk-unverified / sdk-verified: the official `@modelcontextprotocol/client` 2.4.0 `readResource`
 *   and `SkillsClient.read` (which checks size, digest and frontmatter), pinned to 2026-07-28.
 */
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import * as Pull from "@mcp-skills/client/Pull"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { SkillsClient as SdkSkillsClient } from "@modelcontextprotocol/client/ext/skills"
import * as Effect from "effect/Effect"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Fs from "node:fs/promises"
import type { SkillSpec } from "./catalogue.js"
import { fileUri, request, skillMdUri } from "./wire.js"

export const Parallelism = 8

const pool = async <A>(items: ReadonlyArray<A>, n: number, f: (a: A) => Promise<unknown>) => {
  let next = 0
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await f(items[next++]!)
  }))
}

const time = async (f: () => Promise<unknown>) => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

export const raw = (url: string, skill: SkillSpec) =>
  time(async () => {
    let bytes = 0
    await pool(skill.files, Parallelism, async (file) => {
      const req = request("read", "resources/read", { uri: fileUri(skill, file.path) }, () => {})
      const response = await fetch(url, { method: "POST", headers: req.headers, body: req.body })
      const content = ((await response.json()) as any).result.contents[0]
      bytes += typeof content.text === "string" ? Buffer.byteLength(content.text) : Buffer.from(content.blob, "base64").length
    })
    if (bytes === 0) throw new Error("raw read got nothing")
  })

/** A cache that never hits, so every measurement pulls from the server. */
const noCache = Layer.succeed(SkillCache.SkillCache)({ get: () => Effect.succeed(undefined), set: () => Effect.void })

const withOurs = <A, E>(
  url: string,
  use: (client: SkillsClient.Service) => Effect.Effect<A, E>,
  readTransport: "HttpClient" | "lean" = "lean"
) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* use(yield* SkillsClient.SkillsClient)
    }).pipe(
      Effect.provide(SkillsClient.layerHttp({ url, protocolVersion: "2026-07-28", readTransport, maxConnections: Parallelism }).pipe(Layer.provide([FetchHttpClient.layer, noCache])))
    ) as Effect.Effect<A, unknown>
  )

const timed = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    const start = performance.now()
    return Effect.map(effect, () => performance.now() - start)
  })

export const oursUnverified = (url: string, skill: SkillSpec) =>
  withOurs(url, (client) =>
    timed(Effect.forEach(skill.files, (file) => client.mcp.readResource({ uri: fileUri(skill, file.path) }), { concurrency: Parallelism, discard: true })))

export const oursVerified = (url: string, skill: SkillSpec, readTransport: "HttpClient" | "lean") =>
  withOurs(url, (client) =>
    timed(Effect.gen(function*() {
      const { skill: entry } = yield* client.getSkill(skillMdUri(skill))
      yield* client.loadSkill(entry)
      const rest = entry.resources === "dynamic" ? [] : entry.resources.slice(1)
      yield* Effect.forEach(rest, (resource) => client.readSkillResource(entry, resource.uri), { concurrency: Parallelism, discard: true })
    })), readTransport)

export const oursPull = async (url: string, skill: SkillSpec, into: string) => {
  await Fs.rm(into, { recursive: true, force: true })
  return withOurs(url, (client) => timed(Pull.pull(client, { into, uris: [skillMdUri(skill)] }).pipe(Effect.provide(NodeFileSystem.layer))))
}

const withSdk = async <A>(url: string, use: (client: Client, skills: SdkSkillsClient) => Promise<A>) => {
  const client = new Client({ name: "mcp-skills-bench", version: "0.1.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } })
  await client.connect(new StreamableHTTPClientTransport(new URL(url)))
  try {
    return await use(client, new SdkSkillsClient(client))
  } finally {
    await client.close()
  }
}

export const sdkUnverified = (url: string, skill: SkillSpec) =>
  withSdk(url, (client) => time(() => pool(skill.files, Parallelism, (file) => client.readResource({ uri: fileUri(skill, file.path) }))))

export const sdkVerified = (url: string, skill: SkillSpec) =>
  withSdk(url, (_, skills) =>
    time(async () => {
      const { skill: entry } = await skills.get(skillMdUri(skill))
      await skills.read(entry, "SKILL.md")
      await pool(skill.files.slice(1), Parallelism, (file) => skills.read(entry, file.path))
    }))
