/**
 * Child process: search over a large catalogue. Builds a registry of N generated skills (one
 * SKILL.md each) in memory, the search index of its snapshot once, then times queries (a skill's
 * name, a word of many, two words with typos, two words) answered from the index, after as many
 * again to warm up (a server answers many); every tenth query is also answered by the linear scan
 * over every skill (the scan takes about a second a query at 50,000), checking both give the same
 * page.
 *
 * Usage: node search.js N [QUERIES]. Prints one JSON line.
 */
import { Skill, SkillRegistry, ToolLimits } from "@mcp-skills/server"
import * as Effect from "effect/Effect"
import * as Search from "../../../packages/skills-server/dist/src/internal/search.js"
import * as Catalogue from "../catalogue.js"

const skills = Number(process.argv[2])
const count = Number(process.argv[3] ?? 200)
if (!Number.isSafeInteger(skills) || skills < 1) throw new Error("usage: search.js N [QUERIES]")

const percentile = (values: ReadonlyArray<number>, p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!

const program = Effect.gen(function*() {
  const catalogue = Catalogue.generate({ skills, filesPerSkill: 1 })
  const registry = yield* SkillRegistry.make(catalogue.skills.map((skill) =>
    Skill.fromFiles({ path: skill.path.split("/"), files: skill.files.map((file) => ({ path: file.path, bytes: file.bytes })) })
  ))
  const { listed } = yield* registry.snapshot
  const buildStart = performance.now()
  const index = Search.make(listed)
  const buildMs = performance.now() - buildStart
  const random = Catalogue.prng(47)
  const name = () => listed[Math.floor(random() * listed.length)]!.name
  const typo = (word: string) => {
    const i = 1 + Math.floor(random() * (word.length - 2))
    return word.slice(0, i) + word.slice(i + 1)
  }
  const kinds = [
    () => name(),
    () => name().split("-")[0]!,
    () => name().split("-").slice(0, 2).map(typo).join(" "),
    () => name().split("-").slice(0, 2).join(" ")
  ]
  const options = { admits: () => true, limit: ToolLimits.SearchPageSize }
  const indexed: Array<number> = []
  const scanned: Array<number> = []
  let mismatches = 0
  for (let q = 0; q < count; q++) Search.search(index, kinds[q % kinds.length]!(), options)
  for (let q = 0; q < count; q++) {
    const query = kinds[q % kinds.length]!()
    let start = performance.now()
    const fast = Search.search(index, query, options)
    indexed.push(performance.now() - start)
    if (q % 10 !== 0) continue
    start = performance.now()
    const slow = Search.scan(listed, query, options)
    scanned.push(performance.now() - start)
    if (fast.hits.map((hit) => hit.uri).join() !== slow.hits.map((hit) => hit.uri).join()) mismatches++
  }
  return {
    skills,
    queries: count,
    scanned: scanned.length,
    indexBuildMs: buildMs,
    indexP50Ms: percentile(indexed, 0.5),
    indexP99Ms: percentile(indexed, 0.99),
    scanP50Ms: percentile(scanned, 0.5),
    scanP99Ms: percentile(scanned, 0.99),
    mismatches
  }
})

console.log(JSON.stringify(await Effect.runPromise(Effect.scoped(program))))
