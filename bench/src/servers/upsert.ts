/**
 * Child process: adding one skill to a catalogue at runtime. Builds a
 * registry of N generated skills (8 files each) in memory, then upserts new skills one at a time
 * (each of 8 files, hashed by the upsert) and removes them again, timing each call; `replace` with
 * one more skill is timed once for comparison (what a program had before `upsert`).
 *
 * Usage: node upsert.js N [COUNT]. Prints one JSON line.
 */
import { Skill, SkillRegistry } from "@mcp-skills/server"
import * as Effect from "effect/Effect"
import * as Catalogue from "../catalogue.js"

const skills = Number(process.argv[2])
const count = Number(process.argv[3] ?? 200)
if (!Number.isSafeInteger(skills) || skills < 1) throw new Error("usage: upsert.js N [COUNT]")

const definitionsOf = (catalogue: Catalogue.Catalogue, prefix: string) =>
  catalogue.skills.map((skill) =>
    Skill.fromFiles({ path: `${prefix}/${skill.path}`.split("/"), files: skill.files.map((file) => ({ path: file.path, bytes: file.bytes })) })
  )

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const program = Effect.gen(function*() {
  const base = definitionsOf(Catalogue.generate({ skills }), "base")
  // Skills that are not in the catalogue, with their own names and bytes.
  const extra = definitionsOf(Catalogue.generate({ skills: count, seed: 13 }), "added")
  const registry = yield* SkillRegistry.make(base)
  const upserts: Array<number> = []
  const removes: Array<number> = []
  for (const definition of extra) {
    const start = performance.now()
    yield* registry.upsert([definition])
    upserts.push(performance.now() - start)
  }
  for (const definition of extra) {
    const start = performance.now()
    yield* registry.remove([SkillRegistry.keyOf(definition)])
    removes.push(performance.now() - start)
  }
  const start = performance.now()
  yield* registry.replace([...base, extra[0]!])
  const replaceMs = performance.now() - start
  return {
    skills,
    upserts: count,
    upsertMedianMs: median(upserts),
    upsertMaxMs: Math.max(...upserts),
    removeMedianMs: median(removes),
    removeMaxMs: Math.max(...removes),
    replaceMs
  }
})

console.log(JSON.stringify(await Effect.runPromise(Effect.scoped(program))))
