/**
 * Profiles start-up alone: `DirectorySource.load` of DIR, then `SkillRegistry.make` (what
 * `mcp-skills-server serve` does before listening), under `node --cpu-prof`, and prints the summary
 * of `profile.ts` with each phase's time.
 *
 * Usage: node bench/dist/profileStartup.js DIR
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Children from "./child.js"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: profileStartup.js DIR")
const profiles = mkdtempSync(Path.join(Os.tmpdir(), "startup-profile-"))
const phases = execFileSync(process.execPath, [
  "--cpu-prof",
  `--cpu-prof-dir=${profiles}`,
  "--input-type=module",
  "-e",
  `
import { Skill, SkillRegistry } from "@mcp-skills/server"
import * as DirectorySource from "@mcp-skills/server/DirectorySource"
import * as Effect from "effect/Effect"
const t0 = performance.now()
const loaded = await Effect.runPromise(DirectorySource.load(${JSON.stringify(dir)}))
const t1 = performance.now()
await Effect.runPromise(Effect.scoped(SkillRegistry.make(loaded.skills.map((skill) => Skill.fromFiles(skill)))))
const t2 = performance.now()
console.log("directory " + (t1 - t0).toFixed(0) + " ms, registry " + (t2 - t1).toFixed(0) + " ms, rss " + (process.resourceUsage().maxRSS / 1024).toFixed(0) + " MiB")
`
], { encoding: "utf8", cwd: Path.join(Children.repoRoot, "bench") })
console.log(phases.trim())
const file = readdirSync(profiles).find((f) => f.endsWith(".cpuprofile"))!
console.log(execFileSync(process.execPath, [Path.join(Children.repoRoot, "bench/dist/profile.js"), Path.join(profiles, file), "30"], { encoding: "utf8" }))
console.log(`profile: ${Path.join(profiles, file)}`)
