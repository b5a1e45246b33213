/**
 * Skills repositories as they are published, served from their root: a `SKILL.md` at the root,
 * `skills/`, its dot-folders, the agents' folders, both plugin manifests (a path leaving the folder
 * refused with a line), a hidden folder (skipped with a line), two skills with one name (both served,
 * each under its own URI). Container folders are not part of a URI, so the root and `skills/` give
 * the same URIs; and where the `npx skills` installer is installed, our discovery lists exactly the
 * names `skills add FIXTURE --list` lists.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as DirectorySource from "../src/DirectorySource.js"
import { tree } from "./support/tree.js"
import { live, serve, sleep } from "./support/watched.js"

const skillMd = (name: string, description = `The ${name} skill`) => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`

/** Each layout, as files below a repository's root. */
export const layouts: Record<string, Record<string, string>> = {
  "root skill": {
    "SKILL.md": skillMd("repo"),
    "references/guide.md": "guide\n"
  },
  "skills/": {
    "README.md": "# Skills\n",
    "skills/alpha/SKILL.md": skillMd("alpha"),
    "skills/beta/SKILL.md": skillMd("beta"),
    "skills/group/gamma/SKILL.md": skillMd("gamma")
  },
  "dot-folders": {
    "skills/.curated/alpha/SKILL.md": skillMd("alpha"),
    "skills/.system/beta/SKILL.md": skillMd("beta"),
    "skills/.experimental/gamma/SKILL.md": skillMd("gamma")
  },
  "agents' folders": {
    ".claude/skills/alpha/SKILL.md": skillMd("alpha"),
    ".claude/settings.json": "{}\n",
    ".claude/commands/deploy.md": "# never served\n",
    ".agents/skills/beta/SKILL.md": skillMd("beta"),
    ".github/skills/gamma/SKILL.md": skillMd("gamma"),
    ".github/workflows/ci.yml": "on: push\n"
  },
  "plugin manifests": {
    ".claude-plugin/marketplace.json": JSON.stringify({
      name: "market",
      metadata: { pluginRoot: "./plugins" },
      plugins: [
        { name: "p", source: "./p", skills: ["./skills/alpha", "./../../../outside/x"] },
        { name: "away", source: "./../../elsewhere" }
      ]
    }),
    ".claude-plugin/plugin.json": JSON.stringify({ name: "tools", skills: ["./tools/delta"] }),
    "plugins/p/skills/alpha/SKILL.md": skillMd("alpha"),
    "plugins/p/skills/beta/SKILL.md": skillMd("beta"),
    "tools/delta/SKILL.md": skillMd("delta")
  },
  "hidden folder": {
    "skills/alpha/SKILL.md": skillMd("alpha"),
    ".hidden/one/SKILL.md": skillMd("one"),
    ".hidden/two/SKILL.md": skillMd("two"),
    "node_modules/pkg/skill/SKILL.md": skillMd("skill")
  },
  "one name twice": {
    "skills/dup/SKILL.md": skillMd("dup", "The first"),
    ".claude/skills/dup/SKILL.md": skillMd("dup", "The second"),
    "skills/solo/SKILL.md": skillMd("solo")
  },
  "named otherwise": {
    "x/SKILL.md": skillMd("vendor-x"),
    "template/SKILL.md": skillMd("template-skill"),
    "long/SKILL.md": skillMd("long", Array.from({ length: 300 }, (_, index) => `w${index}`).join(" "))
  }
}

/** A fixture's files under a folder named `repo` (a root skill is named after its folder). */
const repository = (files: Record<string, string>) => {
  const parent = tree({})
  const root = NodePath.join(parent, "repo")
  NodeFs.mkdirSync(root)
  for (const [relative, content] of Object.entries(files)) {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, relative)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(root, relative), content)
  }
  return root
}

const served = (root: string, lenient = false) =>
  Effect.map(DirectorySource.load(root, { lenient }), (loaded) => ({
    loaded,
    uris: loaded.skills.map((skill) => skill.manifest.uri),
    names: [...new Set(loaded.skills.map((skill) => skill.manifest.frontmatter.name as string))].sort()
  }))

describe("DirectorySource: repository layouts", () => {
  it.effect("serves each layout from its root, under URIs without their container folders", () =>
    Effect.gen(function*() {
      const uris: Record<string, ReadonlyArray<string>> = {}
      for (const [name, files] of Object.entries(layouts)) uris[name] = (yield* served(repository(files))).uris
      expect(uris).toEqual({
        "root skill": ["skill://repo/SKILL.md"],
        "skills/": ["skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://group/gamma/SKILL.md"],
        "dot-folders": ["skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://gamma/SKILL.md"],
        "agents' folders": ["skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://gamma/SKILL.md"],
        "plugin manifests": [
          "skill://plugins/p/skills/alpha/SKILL.md",
          "skill://plugins/p/skills/beta/SKILL.md",
          "skill://tools/delta/SKILL.md"
        ],
        "hidden folder": ["skill://alpha/SKILL.md"],
        "one name twice": [
          expect.stringMatching(/^skill:\/\/at-[0-9a-f]{8}\/dup\/SKILL\.md$/),
          expect.stringMatching(/^skill:\/\/at-[0-9a-f]{8}\/dup\/SKILL\.md$/),
          "skill://solo/SKILL.md"
        ],
        "named otherwise": []
      })
      expect(new Set(uris["one name twice"]).size).toBe(3)
    }))

  it.effect("the root and skills/ give the same URIs", () =>
    Effect.gen(function*() {
      for (const name of ["skills/", "dot-folders"]) {
        const root = repository(layouts[name]!)
        const fromRoot = yield* served(root)
        const fromSkills = yield* served(NodePath.join(root, "skills"))
        expect(fromSkills.uris).toEqual(fromRoot.uris)
      }
    }))

  it.effect("an agent's folder serves its skills and nothing else of it", () =>
    Effect.gen(function*() {
      const { loaded } = yield* served(repository(layouts["agents' folders"]!))
      const paths = loaded.skills.flatMap((skill) => Array.from({ length: skill.manifest.files.length }, (_, at) => skill.manifest.files.path(at)))
      expect(paths).toEqual(["SKILL.md", "SKILL.md", "SKILL.md"])
      expect(loaded.ignored).toEqual([])
    }))

  it.effect("says every skip: a manifest path leaving the folder, a hidden folder with skills, a shared URI", () =>
    Effect.gen(function*() {
      const manifests = yield* served(repository(layouts["plugin manifests"]!))
      expect(manifests.loaded.ignored).toEqual([{
        path: ".claude-plugin/marketplace.json",
        reason: "skill path \"./../../../outside/x\" leaves the folder: not served; " +
          "skill path \"./../../elsewhere\" leaves the folder: not served"
      }])
      const root = repository(layouts["hidden folder"]!)
      const hidden = yield* served(root)
      expect(hidden.loaded.ignored).toEqual([{
        path: ".hidden",
        reason: "hidden folder holding 2 skills (a folder with a SKILL.md), not served; to serve them, serve the folder itself: " +
          `mcp-skills-server serve ${NodeFs.realpathSync(root)}/.hidden`
      }])
      const twice = yield* served(repository(layouts["one name twice"]!))
      expect(twice.loaded.repairs.map((repaired) => [repaired.path, repaired.repair])).toEqual([
        [".claude/skills/dup/SKILL.md", { _tag: "SharedUri", uri: "skill://dup/SKILL.md", with: ["skills/dup"] }],
        ["skills/dup/SKILL.md", { _tag: "SharedUri", uri: "skill://dup/SKILL.md", with: [".claude/skills/dup"] }]
      ])
    }))

  it.effect("strict skips a skill named otherwise than its folder; lenient serves it under the installer's name", () =>
    Effect.gen(function*() {
      const root = repository(layouts["named otherwise"]!)
      const strict = yield* served(root)
      expect(strict.names).toEqual([])
      expect(strict.loaded.skipped.map((skipped) => skipped.directory)).toEqual(["long", "template", "x"])
      const lenient = yield* served(root, true)
      expect(lenient.names).toEqual(["long", "template-skill", "vendor-x"])
      expect(lenient.uris).toEqual([
        "skill://long/SKILL.md",
        "skill://template/template-skill/SKILL.md",
        "skill://x/vendor-x/SKILL.md"
      ])
    }))

  it.effect("check says where each skill was found, and counts each kind", () =>
    Effect.gen(function*() {
      const counts: Record<string, unknown> = {}
      for (const [name, files] of Object.entries(layouts)) counts[name] = (yield* DirectorySource.check(repository(files), { lenient: true })).counts
      expect(counts).toEqual({
        "root skill": { served: 1, refused: 0, ignored: 0, warnings: 0 },
        "skills/": { served: 3, refused: 0, ignored: 0, warnings: 0 },
        "dot-folders": { served: 3, refused: 0, ignored: 0, warnings: 0 },
        "agents' folders": { served: 3, refused: 0, ignored: 0, warnings: 0 },
        "plugin manifests": { served: 3, refused: 0, ignored: 1, warnings: 0 },
        "hidden folder": { served: 1, refused: 0, ignored: 1, warnings: 0 },
        "one name twice": { served: 3, refused: 0, ignored: 0, warnings: 0, SharedUri: 2 },
        "named otherwise": { served: 3, refused: 0, ignored: 0, warnings: 0, Renamed: 2, DescriptionCut: 1 }
      })
      const check = yield* DirectorySource.check(repository(layouts["plugin manifests"]!))
      expect(check.served.map((skill) => [skill.directory, skill.found])).toEqual([
        ["plugins/p/skills/alpha", { _tag: "Manifest", manifest: ".claude-plugin/marketplace.json" }],
        ["plugins/p/skills/beta", { _tag: "Manifest", manifest: ".claude-plugin/marketplace.json" }],
        ["tools/delta", { _tag: "Manifest", manifest: ".claude-plugin/plugin.json" }]
      ])
      const dots = yield* DirectorySource.check(repository(layouts["dot-folders"]!))
      expect(dots.served.map((skill) => skill.found)).toEqual([
        { _tag: "Container", container: "skills/.curated" },
        { _tag: "Container", container: "skills/.system" },
        { _tag: "Container", container: "skills/.experimental" }
      ])
    }))
})

describe("DirectorySource: an agent's folder, watched", () => {
  live("an edit below .claude/skills, and a skill added there, are served without a restart", () =>
    Effect.gen(function*() {
      const root = repository({ ".claude/skills/alpha/SKILL.md": skillMd("alpha"), ".claude/skills/alpha/guide.md": "v0\n" })
      const { read } = yield* serve(root)
      const servedAs = (relative: string, text: string) =>
        Effect.gen(function*() {
          for (let attempt = 0; attempt < 100; attempt++) {
            const bytes = yield* read(relative)
            if (bytes !== undefined && new TextDecoder().decode(bytes) === text) return
            yield* sleep(100)
          }
          throw new Error(`${relative} is not served as ${JSON.stringify(text)}`)
        })
      yield* servedAs("alpha/guide.md", "v0\n")
      NodeFs.writeFileSync(NodePath.join(root, ".claude/skills/alpha/guide.md"), "v1\n")
      yield* servedAs("alpha/guide.md", "v1\n")
      NodeFs.mkdirSync(NodePath.join(root, ".claude/skills/beta"))
      NodeFs.writeFileSync(NodePath.join(root, ".claude/skills/beta/SKILL.md"), skillMd("beta"))
      yield* servedAs("beta/SKILL.md", skillMd("beta"))
      // What else is in `.claude` is never served, watched or not.
      NodeFs.writeFileSync(NodePath.join(root, ".claude/settings.json"), "{}\n")
      yield* sleep(300)
      expect(yield* read("settings.json")).toBeUndefined()
    }))
})

const installer = NodePath.resolve(import.meta.dirname, "../../../node_modules/skills/bin/cli.mjs")

// The installer's `--list` of a local folder reads only that folder: it runs offline.
const listed = (root: string): ReadonlyArray<string> => {
  const output = NodeChild.execFileSync(process.execPath, [installer, "add", root, "--list"], {
    cwd: root,
    env: { ...process.env, DISABLE_TELEMETRY: "1", DO_NOT_TRACK: "1", NO_COLOR: "1", CI: "1" },
    encoding: "utf8",
    timeout: 60_000
  })
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "")
  // Each skill is a line `│    NAME`, its description a line indented further.
  return [...new Set([...plain.matchAll(/^│ {4}(\S[^\n]*?)\s*$/gm)].map((match) => match[1]!))].sort()
}

describe.skipIf(!NodeFs.existsSync(installer))("DirectorySource against the `npx skills` installer", () => {
  it.effect("lists exactly the names `skills add FIXTURE --list` lists, on every fixture", () =>
    Effect.gen(function*() {
      for (const [name, files] of Object.entries(layouts)) {
        const root = repository(files)
        const ours = yield* served(root, true)
        expect({ name, names: ours.names }).toEqual({ name, names: listed(root) })
      }
    }), 120_000)
})
