/**
 * `mcp-skills-server serve DIR [DIR...]` and `--root DIR=PREFIX`: several roots in one
 * catalogue, and a URI collision between roots as a start-up error naming both places.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { httpServer, spawnBin } from "./support/cli-server.js"
import { modernHttp } from "./support/wire.js"
import { tree } from "./support/tree.js"

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`

const list = (url: string) =>
  Effect.map(modernHttp(url).call("skills/list"), (result) => result.skills.map((skill: { uri: string }) => skill.uri))

describe("mcp-skills-server serve with several roots", () => {
  it.live("serves every root, --root DIR=PREFIX under its prefix", () =>
    Effect.gen(function*() {
      const one = tree({ "alpha/SKILL.md": skillMd("alpha") })
      const two = tree({ "beta/SKILL.md": skillMd("beta") })
      const three = tree({ "alpha/SKILL.md": skillMd("alpha") })
      const { url, running } = yield* httpServer(one, [two, "--root", `${three}=acme/team`])
      expect(yield* list(url)).toEqual([
        "skill://acme/team/alpha/SKILL.md",
        "skill://alpha/SKILL.md",
        "skill://beta/SKILL.md"
      ])
      expect(running.stdout()).toContain(`loaded 1 skill from ${three}`)
    }))

  it.live("two roots serving the same URI refuse to start, naming both folders", () =>
    Effect.gen(function*() {
      const one = tree({ "alpha/SKILL.md": skillMd("alpha") })
      const two = tree({ "alpha/SKILL.md": skillMd("alpha") })
      const running = spawnBin("mcp-skills-server", ["serve", one, two, "--port", "0"])
      expect(yield* Effect.promise(() => running.exited)).toBe(1)
      expect(running.stderr()).toBe(
        `mcp-skills-server: skill://alpha/SKILL.md is served from both ${one}/alpha and ${two}/alpha; give one of the roots a prefix\n`
      )
    }))
})
