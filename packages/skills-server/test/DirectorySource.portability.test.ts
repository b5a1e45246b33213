/**
 * A skill whose frontmatter effect's `McpClient` reads otherwise than YAML 1.2 (and so refuses) is
 * still served, with one warning line naming the skill, its `SKILL.md` and line, and the portable
 * way to write it; a source says it once for each version, and no more once it is fixed. effect's
 * own `McpClient`, reading each `SKILL.md` of a served folder, refuses exactly the skills warned of.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Skill } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Result from "effect/Result"
import { McpClient, McpProtocol } from "effect/ai"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as DirectorySource from "../src/DirectorySource.js"
import { tree, write } from "./support/tree.js"
import { httpServer, ServerUrl } from "./support/wire.js"

const lastKeyBlock = "---\nname: refunds\ndescription: |\n  Issue refunds\n  within the policy\n---\n# Refunds\n"
const portable = "---\nname: refunds\ndescription: |-\n  Issue refunds\n  within the policy\n---\n# Refunds\n"
const line =
  "acme/refunds/SKILL.md:3: served, but effect's McpClient refuses skill://acme/refunds/SKILL.md, as its reader reads the " +
  "frontmatter otherwise: description (line 3): effect's reader drops the final line break of this block scalar, the " +
  "frontmatter's last value; end it with |- or >- (no final line break for either reader), or put another key after it"

describe("DirectorySource: frontmatter effect's McpClient reads otherwise", () => {
  it.effect("is served, with one warning naming the skill, the file, the line and the portable way", () =>
    Effect.gen(function*() {
      const root = tree({
        "acme/refunds/SKILL.md": lastKeyBlock,
        "deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy\nmode: 0755\nsince: 2024-01-01\n---\n",
        "notes/SKILL.md": portable.replaceAll("refunds", "notes")
      })
      const loaded = yield* DirectorySource.load(root)
      expect(loaded.skills.map((skill) => skill.manifest.uri)).toEqual([
        "skill://acme/refunds/SKILL.md",
        "skill://deploy/SKILL.md",
        "skill://notes/SKILL.md"
      ])
      expect(loaded.skipped).toEqual([])
      expect(loaded.skills[0]!.manifest.frontmatter.description).toBe("Issue refunds\nwithin the policy\n")
      expect(loaded.warnings).toHaveLength(2)
      expect(loaded.warnings[0]).toMatchObject({ path: "acme/refunds/SKILL.md", line: 3 })
      expect(loaded.warnings[1]).toMatchObject({ path: "deploy/SKILL.md", line: 4 })
      expect(loaded.warnings[1]!.reason).toContain("mode (line 4): effect's reader reads the string \"0755\", YAML 1.2 the number 755; quote it")

      const logged: Array<string> = []
      yield* DirectorySource.definitions(root).pipe(
        Effect.provide(Logger.layer([Logger.make(({ message }) => void logged.push(([] as Array<unknown>).concat(message).join(" ")))]))
      )
      expect(logged).toEqual([line, expect.stringMatching(/^deploy\/SKILL\.md:4: served, but /)])
    }))

  it.effect("a source says it once for each version, and no more once it is fixed", () =>
    Effect.gen(function*() {
      const root = tree({ "acme/refunds/SKILL.md": lastKeyBlock })
      const logged: Array<string> = []
      const source = yield* DirectorySource.make([{ path: root }], { log: (text) => Effect.sync(() => void logged.push(text)) })
      yield* source.definitions
      yield* source.definitions
      expect(logged).toEqual([line])
      write(root, "acme/refunds/SKILL.md", portable)
      const definitions = yield* source.definitions
      expect(definitions).toHaveLength(1)
      expect(logged).toEqual([line])
      // Two roots: the line names the root too.
      const other = tree({ "acme/refunds/SKILL.md": lastKeyBlock })
      const two = yield* DirectorySource.make([{ path: root }, { path: other, prefix: ["team"] }], { log: () => Effect.void })
      const scan = yield* two.scan
      expect(scan.newWarnings).toEqual([`${other}/${line.replace("skill://acme", "skill://team/acme")}`])
    }))
})

const skillMd = (name: string, lines: string) => `---\nname: ${name}\ndescription: The ${name} skill\n${lines}\n---\n# ${name}\n`
const served = tree({
  "last-block/SKILL.md": "---\nname: last-block\ndescription: >\n  Folded, and the last key\n---\n",
  "block-then-key/SKILL.md": "---\nname: block-then-key\ndescription: >\n  Folded, then a key\nlicense: MIT\n---\n",
  "stripped/SKILL.md": "---\nname: stripped\ndescription: |-\n  Literal, stripped\n---\n",
  "nested-block/SKILL.md": skillMd("nested-block", "metadata:\n  note: |\n    last"),
  "octal/SKILL.md": skillMd("octal", "mode: 0755"),
  "quoted-octal/SKILL.md": skillMd("quoted-octal", "mode: \"0755\""),
  "underscores/SKILL.md": skillMd("underscores", "count: 1_000"),
  "words/SKILL.md": skillMd("words", "flag: yes\nother: no\nsince: 2024-01-01\nversion: \"1.0\"\nratio: 1.5"),
  "tagged/SKILL.md": skillMd("tagged", "version: !!str 1"),
  "merged/SKILL.md": skillMd("merged", "<<: {team: billing}")
})

const EffectClient = Layer.unwrap(Effect.gen(function*() {
  const url = yield* ServerUrl
  return McpClient.layerHttp({ name: "effect-client", version: "1.0.0", url, protocol: McpProtocol.v2026_07_28, extensions: { skills: true } })
})).pipe(Layer.provide(FetchHttpClient.layer))

layer(httpServer(DirectorySource.layer(served)))("effect's McpClient against a served folder", (it) => {
  it.effect("refuses the SKILL.md of exactly the skills the loader warns of", () =>
    Effect.gen(function*() {
      const loaded = yield* DirectorySource.load(served)
      const client = yield* McpClient.McpClient
      const skills = yield* client.listSkills()
      expect(skills).toHaveLength(10)
      const refused: Array<string> = []
      for (const skill of skills) {
        // The listed entry is one of ours too.
        expect(Result.isSuccess(Skill.fromMcpSchema(skill))).toBe(true)
        const read = yield* Effect.result(client.readSkillResource({ skill, uri: skill.uri }))
        if (Result.isFailure(read)) {
          expect(read.failure.message).toContain("differs from the frontmatter listed")
          refused.push(skill.uri)
        }
      }
      expect(refused.sort()).toEqual(loaded.warnings.map((warning) => `skill://${warning.path}`).sort())
      expect(refused.sort()).toEqual([
        "skill://last-block/SKILL.md",
        "skill://merged/SKILL.md",
        "skill://nested-block/SKILL.md",
        "skill://octal/SKILL.md",
        "skill://tagged/SKILL.md",
        "skill://underscores/SKILL.md"
      ])
    }).pipe(Effect.provide(EffectClient)))
})
