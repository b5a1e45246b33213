/**
 * Interoperability with effect's own Skills extension (effect 4.1.1 and later), both ways, both
 * revisions: effect's `McpClient` (`extensions: { skills: true }`) lists our server's skills and
 * reads every file with `readSkillResource`, which checks each against the manifest; our
 * `SkillsClient` and `mcp-skills pull` read a server built with effect's `McpServer.skill` alone.
 */
import { NodeHttpServer, NodeServices } from "@effect/platform-node"
import { SkillsClient } from "@mcp-skills/client"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpClient, McpProtocol, McpServer } from "effect/ai"
import { FetchHttpClient, HttpRouter, HttpServer } from "effect/http"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { createServer } from "node:http"
import * as path from "node:path"
import { Skill } from "../src/index.js"
import { exampleUris, node, repoRoot, serveExamples } from "./support/cli-server.js"
import { tempDir } from "./support/tree.js"

const revisions = [
  ["2026-07-28", McpProtocol.v2026_07_28],
  ["2025-11-25", McpProtocol.v2025_11_25]
] as const

const effectClient = (url: string, protocol: (typeof revisions)[number][1]) =>
  McpClient.layerHttp({ name: "effect-client", version: "1.0.0", url, protocol, extensions: { skills: true } }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )

// Generated skills beside the examples: binary files, nested folders, names of every length.
const generated = Array.from({ length: 40 }, (_, i) => {
  const name = `generated-${i}`
  return Skill.make({
    path: `generated/${name}`,
    files: {
      "SKILL.md": `---\nname: ${name}\ndescription: Generated skill ${i}\nmetadata:\n  index: "${i}"\n---\n# ${name}\n`,
      [`references/deep/${"x".repeat(i + 1)}.md`]: `reference ${i}\n`,
      "assets/blob.bin": new Uint8Array(Array.from({ length: 64 + i }, (_, j) => (i * 31 + j) % 256))
    }
  })
})

describe("effect's McpClient reads our server", () => {
  for (const [label, protocol] of revisions) {
    it.live(`${label}: lists every skill and verifies every file with readSkillResource`, () =>
      Effect.gen(function*() {
        const url = yield* serveExamples(generated)
        const client = yield* Layer.build(effectClient(url, protocol)).pipe(Effect.map((context) => McpClient.McpClient.pipe(Effect.provide(context))))
        const mcp = yield* client
        const skills = yield* mcp.listSkills()
        expect(skills.map((skill) => skill.uri).filter((uri) => exampleUris.includes(uri))).toEqual(exampleUris)
        expect(skills.length).toBe(exampleUris.length + generated.length)
        let files = 0
        for (const skill of skills) {
          if (skill.resources === "dynamic") throw new Error(`${skill.uri} is unexpectedly dynamic`)
          for (const resource of skill.resources) {
            yield* mcp.readSkillResource({ skill, uri: resource.uri })
            files++
          }
        }
        expect(files).toBeGreaterThan(exampleUris.length + 2 * generated.length)
      }))
  }
})

const refundsMd = "---\nname: refunds\ndescription: Decide refund requests\n---\n# Refunds\n"
const policy = "Refunds above 500 need approval.\n"
const logo = new Uint8Array(Array.from({ length: 300 }, (_, i) => (i * 7) % 256))

// A server built with effect alone: its own McpServer.skill, its own adapters.
const effectOnly = Effect.gen(function*() {
  const url = yield* Deferred.make<string>()
  const app = McpServer.layerHttp({
    name: "effect-only",
    version: "1.0.0",
    path: "/mcp",
    protocols: [McpProtocol.v2026_07_28, McpProtocol.v2025_11_25],
    registrations: Layer.mergeAll(
      McpServer.skill({
        uri: "skill://acme/refunds/SKILL.md",
        files: { "SKILL.md": refundsMd, "references/policy.md": policy, "assets/logo.bin": logo }
      }),
      McpServer.skill({
        uri: "skill://notes/SKILL.md",
        files: { "SKILL.md": "---\nname: notes\ndescription: Notes\n---\n" }
      })
    )
  })
  const listening = Layer.effectDiscard(Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag !== "UnixPathAddress") yield* Deferred.succeed(url, `http://127.0.0.1:${address.port}/mcp`)
  }))
  yield* Layer.build(
    Layer.merge(HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }), listening).pipe(
      Layer.provide(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" })),
      Layer.provide(NodeServices.layer)
    )
  )
  return yield* Deferred.await(url)
})

describe("our client reads a server built with effect alone", () => {
  it.live("SkillsClient lists, gets and reads every file verified", () =>
    Effect.gen(function*() {
      const url = yield* effectOnly
      const { skills } = yield* SkillsClient.SkillsClient.use((client) => client.listSkills()).pipe(
        Effect.provide(SkillsClient.layerHttp({ url }).pipe(Layer.provide(FetchHttpClient.layer)))
      )
      expect(skills.map((skill) => skill.uri).sort()).toEqual(["skill://acme/refunds/SKILL.md", "skill://notes/SKILL.md"])
      const bytes = yield* SkillsClient.SkillsClient.use((client) =>
        Effect.gen(function*() {
          const { skill } = yield* client.getSkill("skill://acme/refunds/SKILL.md")
          const { frontmatter } = yield* client.loadSkill(skill)
          expect(frontmatter["name"]).toBe("refunds")
          return [
            (yield* client.readSkillResource(skill, "references/policy.md")).bytes,
            (yield* client.readSkillResource(skill, "assets/logo.bin")).bytes
          ]
        })
      ).pipe(Effect.provide(SkillsClient.layerHttp({ url }).pipe(Layer.provide(FetchHttpClient.layer))))
      expect(new TextDecoder().decode(bytes[0])).toBe(policy)
      expect(Buffer.from(bytes[1]!).equals(Buffer.from(logo))).toBe(true)
    }))

  it.live("mcp-skills pull --all installs its skills byte-identical", () =>
    Effect.gen(function*() {
      const url = yield* effectOnly
      const into = path.join(yield* tempDir("interop-effect-"), "vendor")
      const cli = path.join(repoRoot, "packages/skills-client/dist/src/bin/mcp-skills.js")
      const code = yield* Effect.promise(() =>
        new Promise<number | null>((resolve) => {
          const child = spawn(node, [cli, "pull", url, "--all", "--into", into], { stdio: ["ignore", "ignore", "inherit"] })
          child.on("exit", resolve)
        })
      )
      expect(code).toBe(0)
      const find = (name: string) => {
        const hits: Array<string> = []
        const walk = (dir: string) => {
          for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
            const full = path.join(dir, entry.name)
            if (entry.isDirectory()) walk(full)
            else if (full.endsWith(name)) hits.push(full)
          }
        }
        walk(into)
        return hits
      }
      expect(find(path.join("refunds", "SKILL.md")).map((file) => fs.readFileSync(file, "utf8"))).toEqual([refundsMd])
      expect(find(path.join("references", "policy.md")).map((file) => fs.readFileSync(file, "utf8"))).toEqual([policy])
      expect(find(path.join("assets", "logo.bin")).map((file) => Buffer.from(fs.readFileSync(file)).equals(Buffer.from(logo)))).toEqual([true])
      expect(find(path.join("notes", "SKILL.md")).length).toBe(1)
    }))
})
