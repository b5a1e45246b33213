/**
 * Round trip against our own server: `mcp-skills-server serve DIR` over
 * HTTP and stdio, on 2026-07-28 and 2025-11-25; a pull reproduces every file byte for byte.
 * Sources: a fixture with binary files and nested folders, and the repository's `examples/skills`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Layer from "effect/Layer"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { existsSync } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { LockFile, Pull, SkillsClient, type SkillsClientError } from "@mcp-skills/client"
import { filesUnder, makeFixture } from "./support/fixture.js"
import { serveHttp, serverCli, tempDir, versions, withClient } from "./support/helpers.js"

const repo = Path.resolve(import.meta.dirname, "../../..")
const examples = Path.join(repo, "examples/skills")

// Pulls everything and compares every file of the source folder with its pulled copy.
const pullAndCompare = (client: SkillsClient.Service, source: string) =>
  Effect.gen(function*() {
    const into = yield* tempDir("roundtrip-pull-")
    const summary = yield* Pull.pull(client, { into, all: true }).pipe(Effect.provide(NodeFileSystem.layer))
    assert.isAbove(summary.skills.length, 0)
    // Every file inside a skill folder (one holding a SKILL.md); files beside the skills are not served.
    const all = yield* Effect.promise(() => filesUnder(source))
    const roots = all.filter((f) => f === "SKILL.md" || f.endsWith("/SKILL.md")).map((f) => f.slice(0, -"SKILL.md".length))
    const expected = all.filter((f) => roots.some((root) => f.startsWith(root) && root !== ""))
    const actual = yield* Effect.promise(() => filesUnder(into))
    assert.deepStrictEqual(actual, [...expected, LockFile.LockFileName].sort())
    for (const file of expected) {
      const [a, b] = yield* Effect.promise(() => Promise.all([Fs.readFile(Path.join(source, file)), Fs.readFile(Path.join(into, file))]))
      assert.isTrue(a.equals(b), file)
    }
  }).pipe(Effect.scoped)

const sources: ReadonlyArray<readonly [string, Effect.Effect<string, never, import("effect/Scope").Scope>]> = [
  ["fixture", makeFixture],
  ...(existsSync(examples) ? [["examples/skills", Effect.succeed(examples)] as const] : [])
]

describe.skipIf(!existsSync(serverCli)).concurrent("round trip with mcp-skills-server", () => {
  for (const [name, source] of sources) {
    describe.each(versions)(`${name} %s`, (protocolVersion) => {
      it.live("over HTTP: pull reproduces every file byte for byte", () =>
        Effect.gen(function*() {
          const dir = yield* source
          const { url } = yield* serveHttp(dir)
          yield* withClient(url, (client) => pullAndCompare(client, dir), { protocolVersion })
        }))

      it.live("over stdio: pull reproduces every file byte for byte", () =>
        Effect.gen(function*() {
          const dir = yield* source
          yield* SkillsClient.SkillsClient.use((client) => pullAndCompare(client, dir)).pipe(
            Effect.provide(
              SkillsClient.layerStdio({ command: process.execPath, args: [serverCli, "serve", dir, "--stdio"], protocolVersion })
                .pipe(Layer.provide(NodeServices.layer))
            )
          )
        }))
    })
  }
})

describe.skipIf(!existsSync(serverCli)).concurrent("a file removed from mcp-skills-server after getSkill", () => {
  // Files served from disk on each read, so a deleted one is noticed on its read.
  const args = ["--on-demand-above", "1"]
  const removed = (client: SkillsClient.Service, dir: string) =>
    Effect.gen(function*() {
      const { skill } = yield* client.getSkill("skill://release-notes/SKILL.md")
      yield* Effect.promise(() => Fs.rm(Path.join(dir, "release-notes/guide/STYLE.md")))
      return yield* client.readSkillResource(skill, "guide/STYLE.md").pipe(
        Effect.as(undefined),
        Effect.catchTag("ResourceNotFound", Effect.succeed)
      )
    })
  const expectRemoved = (error: SkillsClientError.ResourceNotFound | undefined) =>
    assert.deepInclude(error, {
      _tag: "ResourceNotFound",
      skill: "skill://release-notes/SKILL.md",
      uri: "skill://release-notes/guide/STYLE.md",
      entryRefetches: 1
    })

  for (const protocolVersion of versions) {
    it.live(`over stdio, through effect's McpClient transport (${protocolVersion})`, () =>
      Effect.gen(function*() {
        const dir = yield* makeFixture
        const error = yield* SkillsClient.SkillsClient.use((client) => removed(client, dir)).pipe(
          Effect.provide(
            SkillsClient.layerStdio({ command: process.execPath, args: [serverCli, "serve", dir, "--stdio", ...args], protocolVersion })
              .pipe(Layer.provide(NodeServices.layer))
          )
        )
        expectRemoved(error)
      }))

    it.live(`over HTTP, lean read transport (${protocolVersion})`, () =>
      Effect.gen(function*() {
        const dir = yield* makeFixture
        const { url } = yield* serveHttp(dir, args)
        expectRemoved(yield* withClient(url, (client) => removed(client, dir), { protocolVersion, readTransport: "lean" }))
      }))
  }
})
