/**
 * Child process: one edited file in a watched catalogue, end to end. Loads DIR
 * with `DirectorySource.make` + `SkillRegistry.make` and watches it as `serve --watch` does (ages
 * every file past the racy-mtime window first), appends to one supporting file of the middle skill,
 * and times the write until the registry serves the new bytes (debounce included). Reports what
 * that reload looked at, read and hashed, then times a full rescan (`reload` without events) and
 * the registry's share of it (`replace` with the same definitions).
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

const marker = `\nEdited by the benchmark at ${Date.now()}.\n`

const program = Effect.gen(function*() {
  age(dir, new Date(Date.now() - 3_600_000))
  const source = yield* DirectorySource.make([{ path: dir }], { log: () => Effect.void })
  const registry = yield* SkillRegistry.make(source.definitions)
  yield* DirectorySource.watch(source, { sweep: false }).pipe(Effect.provideService(SkillRegistry.SkillRegistry, registry))
  const snapshot = yield* registry.snapshot
  const skill = snapshot.skills[Math.floor(snapshot.skills.length / 2)]!
  const folder = Path.join(dir, ...skill.path)
  const target = fs.readdirSync(folder, { recursive: true, withFileTypes: true })
    .find((entry) => entry.isFile() && entry.name !== "SKILL.md" && entry.name.endsWith(".md"))!
  const file = Path.join(target.parentPath, target.name)
  const relative = Path.relative(folder, file).split(Path.sep).join("/")
  const served = Effect.map(registry.snapshot, (now) => {
    const entry = now.byUri.get(skill.uri)
    if (entry?._tag !== "Static") return false
    const index = entry.manifest.files.indexOf(relative)
    return index !== -1 && Buffer.from(entry.manifest.files.bytes(index)!).toString("utf8").endsWith(marker)
  })
  const before = yield* source.stats
  const start = performance.now()
  fs.appendFileSync(file, marker)
  while (!(yield* served)) yield* Effect.sleep("2 millis")
  const watchedMs = performance.now() - start
  const after = yield* source.stats

  const fullStart = performance.now()
  yield* registry.reload
  const fullReloadMs = performance.now() - fullStart
  const definitions = yield* source.definitions
  const replaceStart = performance.now()
  yield* registry.replace(definitions)
  const registryMs = performance.now() - replaceStart
  return {
    skills: snapshot.skills.length,
    files: before.readFiles,
    edited: Path.relative(dir, file),
    lookedAt: after.lookedAt - before.lookedAt,
    readFiles: after.readFiles - before.readFiles,
    hashedFiles: after.hashedFiles - before.hashedFiles,
    hashedBytes: after.hashedBytes - before.hashedBytes,
    registryHashedFiles: (yield* registry.stats).hashedFiles,
    watchedMs,
    fullReloadMs,
    registryMs
  }
})

console.log(JSON.stringify(await Effect.runPromise(Effect.scoped(Effect.provide(program, NodeServices.layer)))))
process.exit(0)
