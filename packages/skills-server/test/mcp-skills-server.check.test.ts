/**
 * `mcp-skills-server check DIR [--lenient] [--json]`, run from `dist`: one line per finding, a table
 * of counts per kind, exit status 0 only where nothing is refused, and the same as JSON for CI. And
 * `serve --lenient` says each repair in one line at load, then their count per kind.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { spawnBin, stop, waitFor } from "./support/cli-server.js"
import { tree } from "./support/tree.js"

const repository = () => {
  const root = NodePath.join(tree({}), "repo")
  const files: Record<string, string> = {
    "skills/alpha/SKILL.md": "---\nname: alpha\ndescription: Alpha\n---\n",
    ".claude/skills/beta/SKILL.md": "---\nname: beta\ndescription: Beta\n---\n",
    "x/SKILL.md": "---\nname: vendor-x\ndescription: Reference: wind\n---\n",
    ".hidden/one/SKILL.md": "---\nname: one\ndescription: One\n---\n"
  }
  for (const [relative, content] of Object.entries(files)) {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, relative)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(root, relative), content)
  }
  return root
}

const run = (args: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const running = spawnBin("mcp-skills-server", args)
    running.child.stdin!.end()
    const code = await running.exited
    return { code, stdout: running.stdout(), stderr: running.stderr() }
  })

describe.concurrent("mcp-skills-server check", () => {
  it.live("strict: what is served and where it was found, what is refused, the counts; exit status 1", () =>
    Effect.gen(function*() {
      const root = repository()
      const result = yield* run(["check", root])
      assert.strictEqual(result.code, 1)
      assert.strictEqual(result.stderr, "mcp-skills-server: 1 skill folder refused (try --lenient)\n")
      const real = NodeFs.realpathSync(root)
      assert.deepStrictEqual(result.stdout.split("\n"), [
        "served skill://alpha/SKILL.md from skills/alpha (found in skills/)",
        "served skill://beta/SKILL.md from .claude/skills/beta (found in .claude/skills/)",
        "refused x: SKILL.md:3: Nested mappings are not allowed in compact mappings",
        `ignored .hidden: hidden folder holding 1 skill (a folder with a SKILL.md), not served; to serve it, serve the folder itself: mcp-skills-server serve ${real}/.hidden`,
        "",
        "kind      count",
        "served        2",
        "refused       1",
        "ignored       1",
        "warnings      0",
        ""
      ])
    }))

  it.live("--lenient: each repair in one line, counted per kind; nothing refused, exit status 0", () =>
    Effect.gen(function*() {
      const result = yield* run(["check", repository(), "--lenient"])
      assert.strictEqual(result.code, 0)
      assert.strictEqual(result.stderr, "")
      const lines = result.stdout.split("\n")
      assert.include(lines, "served skill://x/vendor-x/SKILL.md from x (found in the tree)")
      assert.include(
        lines,
        "repaired x/SKILL.md: the folder x is not the skill's name; served under its name, vendor-x (served as skill://x/vendor-x/SKILL.md)"
      )
      assert.include(
        lines,
        "repaired x/SKILL.md:3: description: YAML refuses it (Nested mappings are not allowed in compact mappings); read as its literal text (served as skill://x/vendor-x/SKILL.md)"
      )
      assert.deepStrictEqual(lines.slice(lines.indexOf("") + 1), [
        "kind          count",
        "served            3",
        "refused           0",
        "ignored           1",
        "warnings          0",
        "Renamed           1",
        "LiteralValue      1",
        ""
      ])
    }))

  it.live("--json: the findings and the counts, for CI", () =>
    Effect.gen(function*() {
      const strict = yield* run(["check", repository(), "--json"])
      assert.strictEqual(strict.code, 1)
      const report = JSON.parse(strict.stdout)
      assert.deepStrictEqual(report.counts, { served: 2, refused: 1, ignored: 1, warnings: 0 })
      assert.deepStrictEqual(report.refused, [{ directory: "x", reason: "x: SKILL.md:3: Nested mappings are not allowed in compact mappings" }])
      assert.deepStrictEqual(report.served[1], {
        uri: "skill://beta/SKILL.md",
        directory: ".claude/skills/beta",
        found: { _tag: "Container", container: ".claude/skills" }
      })
      const lenient = JSON.parse((yield* run(["check", repository(), "--lenient", "--json"])).stdout)
      assert.deepStrictEqual(lenient.counts, { served: 3, refused: 0, ignored: 1, warnings: 0, Renamed: 1, LiteralValue: 1 })
      assert.deepStrictEqual(lenient.repairs[1].repair, {
        _tag: "LiteralValue",
        key: "description",
        refused: "Nested mappings are not allowed in compact mappings"
      })
      assert.strictEqual(lenient.repairs[1].line, 3)
    }))

  it.live("a folder that does not exist is one line and exit status 1", () =>
    Effect.gen(function*() {
      const result = yield* run(["check", "/nonexistent/skills"])
      assert.strictEqual(result.code, 1)
      assert.match(result.stderr, /^mcp-skills-server: cannot load skills from \/nonexistent\/skills: .*\n$/)
    }))
})

describe("mcp-skills-server serve --lenient", () => {
  it.live("says each repair in one line at load, then their count per kind", () =>
    Effect.gen(function*() {
      const running = spawnBin("mcp-skills-server", ["serve", repository(), "--lenient", "--host", "127.0.0.1", "--port", "0"])
      yield* Effect.promise(() => waitFor(running, "stdout", /^listening http/m))
      yield* Effect.promise(() => stop(running))
      const stdout = running.stdout()
      assert.include(stdout, "repaired x/SKILL.md:3: description: YAML refuses it")
      assert.include(stdout, "2 repairs: 1 Renamed, 1 LiteralValue\n")
      assert.include(stdout, "loaded 3 skills from ")
      assert.include(stdout, "  skill://x/vendor-x/SKILL.md (1 file)")
    }))
})
