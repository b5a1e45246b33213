/**
 * Test support for the gateway: upstreams on loopback (our own server with its registry in hand,
 * a server built with the official MCP TypeScript SDK 2.4 `ext/skills`), and a gateway in process
 * over them, each stopped with the test's scope.
 */
import { NodeServices } from "@effect/platform-node"
import { SkillCache, SkillsClient } from "@mcp-skills/client"
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { loadSkills } from "@modelcontextprotocol/server/ext/skills/node"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { SkillRegistry, SkillsServer, UpstreamSource } from "../../src/index.js"
import type { Skill } from "../../src/index.js"
import { httpServer, ServerUrl } from "./wire.js"

const enc = new TextEncoder()

/** The official SDK upstream's folder: text, binary, nested folders, a space in a name. */
export const sdkFixture: ReadonlyArray<readonly [string, Uint8Array]> = [
  ["form-filling/SKILL.md", enc.encode("---\nname: form-filling\ndescription: Fill PDF forms\n---\n\n# Form filling\n")],
  ["form-filling/references/FORMS.md", enc.encode("# Forms\n")],
  ["form-filling/references/my notes.md", enc.encode("Notes with a space in the name.\n")],
  [
    "release-notes/SKILL.md",
    enc.encode("---\nname: release-notes\ndescription: \"Write release notes: summary first\"\nlicense: MIT\nmetadata:\n  owner: docs\n---\n\nRead `guide/STYLE.md`.\n")
  ],
  ["release-notes/guide/STYLE.md", enc.encode("# Style\n")],
  ["release-notes/data.bin", Uint8Array.from([0, 255, 1, 254, 0x80, 0x81])]
]

/** A fresh folder holding `files`, removed with the scope. */
export const folder = (files: ReadonlyArray<readonly [string, Uint8Array | string]>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gateway-upstream-"))
      for (const [path, bytes] of files) {
        Fs.mkdirSync(Path.dirname(Path.join(dir, path)), { recursive: true })
        Fs.writeFileSync(Path.join(dir, path), bytes)
      }
      return dir
    }),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

/** The official SDK serving `dir` over HTTP (`createMcpHandler`, both revisions); `reload` rescans and notifies. */
export const officialUpstream = (dir: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const catalog = await loadSkills(dir, { strict: true })
      const handler = createMcpHandler(() => {
        const mcp = new McpServer({ name: "official-sdk-upstream", version: "1.0.0" })
        catalog.attach(mcp)
        return mcp
      })
      const server = Http.createServer(async (req, res) => {
        const chunks: Array<Buffer> = []
        for await (const chunk of req) chunks.push(chunk as Buffer)
        const headers = new Headers()
        for (const [key, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(key, value)
        const controller = new AbortController()
        res.on("close", () => controller.abort())
        const response = await handler.fetch(
          new Request(`http://127.0.0.1${req.url}`, {
            method: req.method!,
            headers,
            signal: controller.signal,
            ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {})
          })
        )
        res.writeHead(response.status, Object.fromEntries(response.headers))
        if (response.body === null) return res.end()
        const reader = response.body.getReader()
        for (;;) {
          const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }))
          if (done) return res.end()
          res.write(value)
        }
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return {
        server,
        handler,
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
        reload: async () => {
          await catalog.reload()
          await handler.notify.resourcesChanged()
        }
      }
    }),
    ({ handler, server }) =>
      Effect.promise(async () => {
        await handler.close()
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      })
  )

/** Our server over HTTP with `skills`: its URL and its registry (to add, change and remove skills). */
export const ourUpstream = (
  skills: ReadonlyArray<Skill.Definition>,
  options: { readonly cacheHint?: Skill.CacheHint | undefined } = {}
) =>
  Effect.gen(function*() {
    const registry = yield* Deferred.make<SkillRegistry.SkillRegistry["Service"]>()
    const Skills = SkillsServer.layer({ skills, cacheHint: options.cacheHint })
    const Capture = Layer.effectDiscard(Effect.gen(function*() {
      yield* Deferred.succeed(registry, yield* SkillRegistry.SkillRegistry)
    })).pipe(Layer.provide(Skills))
    const built = yield* Layer.build(httpServer(Layer.merge(Skills, Capture)))
    return { url: Context.get(built, ServerUrl), registry: yield* Deferred.await(registry) }
  })

/** What every gateway test needs besides a scope: HTTP and child processes. */
export const platform = Layer.mergeAll(FetchHttpClient.layer, NodeServices.layer)

/**
 * A gateway in process over HTTP: `upstreams` (and `local` skills) behind one endpoint; its URL,
 * its upstreams and its registry.
 */
export const gateway = (
  upstreams: ReadonlyArray<UpstreamSource.Upstream>,
  options: UpstreamSource.Options & {
    readonly local?: ReadonlyArray<Skill.Definition> | undefined
    readonly requireSigned?: boolean | undefined
  } = {}
) =>
  Effect.gen(function*() {
    const followed = yield* UpstreamSource.make(upstreams, options)
    const registry = yield* Deferred.make<SkillRegistry.SkillRegistry["Service"]>()
    const Skills = SkillsServer.layer({ skills: followed.catalogue(options.local ?? []), requireSigned: options.requireSigned }).pipe(
      Layer.provide(followed.resolver)
    )
    const Capture = Layer.effectDiscard(Effect.gen(function*() {
      yield* Deferred.succeed(registry, yield* SkillRegistry.SkillRegistry)
    }))
    const built = yield* Layer.build(httpServer(Layer.mergeAll(followed.follow, Capture).pipe(Layer.provideMerge(Skills))))
    return { url: Context.get(built, ServerUrl), upstreams: followed, registry: yield* Deferred.await(registry) }
  })

/** Runs `f` with our verifying client on `url` (no cache shared between tests). */
export const withClient = <A, E>(
  url: string,
  f: (client: SkillsClient.Service) => Effect.Effect<A, E>,
  options: Omit<Parameters<typeof SkillsClient.layerHttp>[0], "url"> = {}
): Effect.Effect<A, E | unknown> =>
  SkillsClient.SkillsClient.use(f).pipe(
    Effect.provide(SkillsClient.layerHttp({ url, ...options }).pipe(Layer.provide([FetchHttpClient.layer, SkillCache.layerMemory()])))
  )

/** Polls `check` on real time until it gives a value (a generous bound). */
export const eventually = <A, R>(what: string, check: Effect.Effect<A | undefined, unknown, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

/** Waits until the gateway hears every upstream's notifications, so a change made now is told. */
export const hearing = (upstreams: UpstreamSource.Upstreams) =>
  eventually("every upstream's notifications", Effect.map(upstreams.status, (all) =>
    all.every((status) => status.notifications === "open") ? true : undefined))
