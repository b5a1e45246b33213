/**
 * Test support: a folder served as `mcp-skills-server serve --watch` serves it, in process over
 * loopback HTTP, with what it logged and a check that every file on disk is served with its bytes.
 */
import { NodeServices } from "@effect/platform-node"
import { it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import * as DirectorySource from "../../src/DirectorySource.js"
import * as SkillRegistry from "../../src/SkillRegistry.js"
import * as Serve from "../../src/bin/serve.js"
import { modernHttp } from "./wire.js"
import type * as Snapshot from "../../src/Snapshot.js"
import type * as DirectoryModel from "../../src/DirectoryModel.js"

export const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Every regular file below `root` outside hidden folders (links not followed), relative and `/`-separated. */
export const filesOnDisk = (root: string, below = ""): Array<string> =>
  fs.readdirSync(path.join(root, below), { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith("."))
    .flatMap((entry) => {
      const relative = below === "" ? entry.name : `${below}/${entry.name}`
      return entry.isDirectory() ? filesOnDisk(root, relative) : entry.isFile() ? [relative] : []
    })
    .sort()

/**
 * `root` served with `--watch` (the periodic check every `sweep`, off by default): `read` reads one
 * file over the wire, `settled` waits until every file on disk is served with its bytes, and
 * `lines` holds what the source and the watcher logged.
 */
export const serve = (root: string, sweep: DirectorySource.WatchOptions["sweep"] = false) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const log = (line: string) => Effect.sync(() => void lines.push(line))
    const source = yield* DirectorySource.make([{ path: root }], { log })
    const listening = yield* Deferred.make<string>()
    yield* Layer.build(Serve.http(source, {
      host: "127.0.0.1",
      port: 0,
      path: "/mcp",
      protocols: [],
      allowedOrigins: [],
      watch: { log, warn: log, sweep },
      onListening: (url) => Deferred.succeed(listening, url).pipe(Effect.asVoid)
    }))
    const client = modernHttp(yield* Deferred.await(listening))
    const read = (relative: string) =>
      Effect.map(client.send("resources/read", { uri: `skill://${relative}` }), (response): Uint8Array | undefined => {
        const content = response.body?.result?.contents?.[0]
        if (content === undefined) return undefined
        return content.text !== undefined ? new TextEncoder().encode(content.text) : Buffer.from(content.blob, "base64")
      })
    const stale = Effect.gen(function*() {
      const out: Array<string> = []
      for (const relative of filesOnDisk(root)) {
        const served = yield* read(relative)
        const disk = fs.readFileSync(path.join(root, relative))
        if (served === undefined || !Buffer.from(served).equals(disk)) out.push(relative)
      }
      return out
    })
    /** Waits (bounded, generously) until every file on disk is served with its bytes. */
    const settled = (what: string) =>
      Effect.gen(function*() {
        let last: Array<string> = []
        for (let attempt = 0; attempt < 200; attempt++) {
          last = yield* stale
          if (last.length === 0) return
          yield* sleep(100)
        }
        throw new Error(`${what}: still serving old bytes of ${last.slice(0, 5).join(", ")} (${last.length} in all)`)
      })
    return { client, read, settled, lines }
  })

/** A live test with a scope and the Node services, bounded generously. */
export const live = <A, E>(name: string, body: () => Effect.Effect<A, E, any>) =>
  it.live(name, () => body().pipe(Effect.scoped, Effect.provide(NodeServices.layer)) as Effect.Effect<A, E>, {
    timeout: 120_000
  })

/**
 * Watches `source` into `registry` (events only, no periodic check) for the rest of the scope; the
 * returned array collects the changes of every reload that succeeded.
 */
export const watchReloads = (source: DirectoryModel.Source, registry: SkillRegistry.SkillRegistry["Service"]) =>
  Effect.gen(function*() {
    const reloads: Array<Snapshot.Changes> = []
    yield* DirectorySource.watch(source, {
      sweep: false,
      onReload: (exit) => Effect.sync(() => Exit.isSuccess(exit) && reloads.push(exit.value))
    }).pipe(Effect.provideService(SkillRegistry.SkillRegistry, registry))
    return reloads
  })
