/**
 * Child process: our server as a library user embeds it (`SkillsServer.layer` on
 * `McpServer.layerHttp`, the same wiring as `mcp-skills-server serve`), with the skill files read by
 * a plain recursive `readdir` + `readFileSync` instead of `DirectorySource.load`. It isolates the
 * serving path from the directory loader's start-up cost.
 *
 * Usage: node ours-layer.js DIR [--no-fast-route] [--metrics] [--page-size N]. Prints `loaded ...`
 * and `listening URL`. With `--no-fast-route` every request takes effect's dispatch (the bench's
 * "route off" row); `--metrics` turns the series of `Observability.layer` on (the bench's metrics
 * row); `--page-size` sets the `skills/list` page (the growth series lists 10 per page at every
 * size, so that it compares catalogue sizes, not page sizes).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Observability, Skill } from "@mcp-skills/server"
// The CLI's wiring is not among the server package's exports (`bin/*` is blocked): taken from the
// workspace package's build (bench/dist/servers and bench/src/servers are as deep).
import * as Serve from "../../../packages/skills-server/dist/src/bin/serve.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: ours-layer.js DIR")

const pageAt = process.argv.indexOf("--page-size")
const pageSize = pageAt === -1 ? undefined : Number(process.argv[pageAt + 1])

const started = performance.now()
const definitions: Array<Skill.Definition> = []
const walk = (folder: string, relative: Array<string>) => {
  const entries = readdirSync(folder, { withFileTypes: true })
  if (entries.some((e) => e.isFile() && e.name === "SKILL.md")) {
    const files: Array<Skill.File> = []
    const collect = (sub: string, prefix: string) => {
      for (const e of readdirSync(sub, { withFileTypes: true })) {
        if (e.isDirectory()) collect(Path.join(sub, e.name), `${prefix}${e.name}/`)
        else if (e.isFile()) files.push({ path: `${prefix}${e.name}`, bytes: readFileSync(Path.join(sub, e.name)) })
      }
    }
    collect(folder, "")
    definitions.push(Skill.fromFiles({ path: relative, files }))
    return
  }
  for (const e of entries) if (e.isDirectory()) walk(Path.join(folder, e.name), [...relative, e.name])
}
walk(dir, [])
const readMs = performance.now() - started

Layer.launch(Serve.http(definitions, {
  host: "127.0.0.1",
  port: 0,
  path: "/mcp",
  protocols: [],
  allowedOrigins: [],
  fastRoute: !process.argv.includes("--no-fast-route"),
  pageSize,
  onListening: (url) =>
    Effect.sync(() => {
      console.log(`loaded ${definitions.length} skills (files read in ${readMs.toFixed(0)} ms, registered in ${(performance.now() - started - readMs).toFixed(0)} ms)`)
      console.log(`listening ${url}`)
    })
})).pipe(
  // As `serve --metrics` without an OTLP endpoint: the series, no spans.
  Effect.provide(process.argv.includes("--metrics") ? Observability.layer({ spans: false }) : Layer.empty),
  NodeRuntime.runMain
)
