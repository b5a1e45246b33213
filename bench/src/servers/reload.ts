/**
 * Child process: reload of one changed file in a catalogue (issue 6, acceptance 4). Loads DIR with
 * `DirectorySource.make` + `SkillRegistry.make` (what `serve --watch` runs), ages every file past the
 * racy-mtime window, edits one supporting file of the middle skill, reloads, and reports what the
 * reload read and hashed, and how long it took.
 *
 * Usage: node reload.js DIR. Prints one JSON line.
 */
import { NodeServices } from "@effect/platform-node"
import { DirectorySource, SkillRegistry } from "@mcp-skills/server"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as Path from "node:path"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: reload.js DIR")

const age = (folder: string, past: Date) => {
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = Path.join(folder, entry.name)
    if (entry.isDirectory()) age(full, past)
    else fs.utimesSync(full, past, past)
  }
}

const program = Effect.gen(function*() {
  age(dir, new Date(Date.now() - 3_600_000))
  const source = yield* DirectorySource.make([{ path: dir }], { log: () => Effect.void })
  const registry = yield* SkillRegistry.make(source.definitions)
  const snapshot = yield* registry.snapshot
  const skill = snapshot.skills[Math.floor(snapshot.skills.length / 2)]!
  const folder = Path.join(dir, ...skill.path)
  const target = fs.readdirSync(folder, { recursive: true, withFileTypes: true })
    .find((entry) => entry.isFile() && entry.name !== "SKILL.md" && entry.name.endsWith(".md"))!
  const file = Path.join(target.parentPath, target.name)
  const before = yield* source.stats
  fs.appendFileSync(file, "\nEdited by the benchmark.\n")
  const start = performance.now()
  const changes = yield* registry.reload
  const reloadMs = performance.now() - start
  const after = yield* source.stats
  return {
    skills: snapshot.skills.length,
    files: before.readFiles,
    edited: Path.relative(dir, file),
    changedSkills: changes.changed.length,
    changedFiles: changes.changed.flatMap((change) => change.filesChanged),
    readFiles: after.readFiles - before.readFiles,
    hashedFiles: after.hashedFiles - before.hashedFiles,
    hashedBytes: after.hashedBytes - before.hashedBytes,
    registryHashedFiles: (yield* registry.stats).hashedFiles,
    reloadMs
  }
})

console.log(JSON.stringify(await Effect.runPromise(Effect.provide(program, NodeServices.layer))))
