/**
 * Interoperability: the official MCP TypeScript SDK client (`@modelcontextprotocol/client` and its
 * `ext/skills` `SkillsClient`, which verifies size, digest and frontmatter of every read) against our
 * server serving examples/skills over HTTP, on both protocol revisions.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import type { Transport } from "@modelcontextprotocol/client"
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { bin, exampleUris, examples, node, serveExamples } from "./support/cli-server.js"


const connect = (url: string | Transport, mode: "legacy" | { pin: string }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "interop-test", version: "0.0.0" }, { versionNegotiation: { mode } })
      await client.connect(typeof url === "string" ? new StreamableHTTPClientTransport(new URL(url)) : url)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )


// examples/skills is served without a prefix, so a URI's path is the file's path under the folder.
const onDisk = (uri: string) =>
  fs.readFileSync(path.join(examples, ...uri.slice("skill://".length).split("/").map(decodeURIComponent)))

describe("interop with the official SDK SkillsClient", () => {
  for (const mode of ["legacy", { pin: "2026-07-28" }] as const) {
    const label = mode === "legacy" ? "2025-11-25" : "2026-07-28"
    it.live(`${label}: lists every example skill, gets each, and reads and verifies every file`, () =>
      Effect.gen(function*() {
        const url = yield* serveExamples()
        const client = yield* connect(url, mode)
        const skills = new SkillsClient(client)
        expect(skills.supported).toBe(true)
        expect(skills.directoryRead).toBe(true)

        const listing = yield* Effect.promise(() => skills.list())
        expect(listing.invalid).toEqual([])
        expect(listing.skills.map((skill) => skill.uri)).toEqual(exampleUris)
        if (label === "2026-07-28") expect(listing.cacheScope).toBeDefined()
        else expect(listing.ttlMs).toBeUndefined()

        let files = 0
        for (const skill of listing.skills) {
          const got = yield* Effect.promise(() => skills.get(skill.uri))
          expect(got.skill).toEqual(skill)
          if (skill.resources === "dynamic") throw new Error(`${skill.uri} is unexpectedly dynamic`)
          for (const resource of skill.resources) {
            const file = yield* Effect.promise(() => skills.read(skill, resource.uri))
            expect(file.verified).toBe(true)
            expect(Buffer.from(file.bytes).equals(onDisk(resource.uri)), resource.uri).toBe(true)
            if (resource.uri === skill.uri) expect(file.frontmatter).toEqual(skill.frontmatter)
            files++
          }
        }
        expect(files).toBe(23)

        // Relative references resolve against the skill root (R103), the way a model would follow them.
        const pdf = listing.skills.find((skill) => skill.uri === "skill://pdf-processing/SKILL.md")!
        const forms = yield* Effect.promise(() => skills.read(pdf, "references/FORMS.md"))
        expect(forms.text).toContain("# Filling PDF forms")
        const logo = yield* Effect.promise(() => skills.read(pdf, "assets/logo.png"))
        expect(logo.mimeType).toBe("image/png")
        expect(logo.text).toBeUndefined()
      }))

    // The SDK client insists on ttlMs and cacheScope in 2026-07-28 directory results, although the
    // spec does not make them required there (§2.3); serving them costs nothing and keeps it working.
    it.live(`${label}: reads a skill directory`, () =>
      Effect.gen(function*() {
        const url = yield* serveExamples()
        const skills = new SkillsClient(yield* connect(url, mode))
        const root = yield* Effect.promise(() => skills.readDirectory("skill://pdf-processing"))
        expect(root.resources.map((entry) => [entry.uri, entry.mimeType])).toEqual([
          ["skill://pdf-processing/SKILL.md", "text/markdown"],
          ["skill://pdf-processing/assets", "inode/directory"],
          ["skill://pdf-processing/references", "inode/directory"],
          ["skill://pdf-processing/scripts", "inode/directory"],
          ["skill://pdf-processing/templates", "inode/directory"]
        ])
        const references = yield* Effect.promise(() => skills.readDirectory("skill://pdf-processing/references"))
        expect(references.resources.map((entry) => entry.uri)).toEqual(["skill://pdf-processing/references/FORMS.md"])
      }))
  }

  // The built CLI as a subprocess, as MCP hosts launch local servers.
  for (const mode of ["legacy", { pin: "2026-07-28" }] as const) {
    const label = mode === "legacy" ? "2025-11-25" : "2026-07-28"
    it.live(`${label} over stdio (mcp-skills-server serve --stdio): lists every skill and verifies every file`, () =>
      Effect.gen(function*() {
        const transport = new StdioClientTransport({
          command: node,
          args: [bin("mcp-skills-server"), "serve", examples, "--stdio"],
          stderr: "pipe"
        })
        const skills = new SkillsClient(yield* connect(transport, mode))
        const listing = yield* Effect.promise(() => skills.list())
        expect(listing.skills.map((skill) => skill.uri)).toEqual(exampleUris)
        let files = 0
        for (const skill of listing.skills) {
          if (skill.resources === "dynamic") throw new Error(`${skill.uri} is unexpectedly dynamic`)
          for (const resource of skill.resources) {
            const file = yield* Effect.promise(() => skills.read(skill, resource.uri))
            expect(Buffer.from(file.bytes).equals(onDisk(resource.uri)), resource.uri).toBe(true)
            files++
          }
        }
        expect(files).toBe(23)
      }))
  }
})
