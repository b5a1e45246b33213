/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`, or `BENCH_CPU_PROF=DIR npm run bench`):
 * the functions with the most self time, and the inclusive time of project functions.
 *
 * Usage: node bench/dist/profile.js FILE.cpuprofile [TOP] [SKIP_MS]
 * (SKIP_MS leaves out the first milliseconds of the profile, e.g. start-up before a load window.)
 */
import { readFileSync } from "node:fs"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}

const [file, topArg] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: profile.js FILE.cpuprofile [TOP]")
const top = Number(topArg ?? 25)
const skipUs = Number(process.argv[4] ?? 0) * 1000
const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Array<Node>; samples: Array<number>; timeDeltas: Array<number> }

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const label = (n: Node) =>
  `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/.*node_modules\//, "").replace(/.*\/(packages|bench)\//, "$1/")}:${n.callFrame.lineNumber + 1}`

const sampled = new Map<number, number>()
let clock = 0
profile.samples.forEach((id, i) => {
  clock += profile.timeDeltas[i] ?? 0
  if (clock >= skipUs) sampled.set(id, (sampled.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
})
const total = [...sampled.values()].reduce((a, b) => a + b, 0)
const self = new Map<string, number>()
const inclusive = new Map<string, number>()
for (const [id, t] of sampled) {
  const k = label(byId.get(id)!)
  self.set(k, (self.get(k) ?? 0) + t)
  const seen = new Set<string>()
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const key = label(byId.get(cur)!)
    if (seen.has(key)) continue
    seen.add(key)
    inclusive.set(key, (inclusive.get(key) ?? 0) + t)
  }
}
const group = (n: Node) => {
  const url = n.callFrame.url
  if (url === "") return n.callFrame.functionName.startsWith("(") ? n.callFrame.functionName : "native (syscalls, builtins)"
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(url)
  if (pkg !== null) {
    const sub = pkg[1] === "effect" ? /effect\/dist\/(ai|rpc|http|internal\/schema|Schema|internal)/.exec(url)?.[1] : undefined
    return sub === undefined ? pkg[1]! : `effect/${sub}`
  }
  if (url.startsWith("node:")) return "node (http, streams, ...)"
  const own = /\/(packages\/[^/]+|bench)\//.exec(url)
  return own === null ? url : own[1]!
}
const groups = new Map<string, number>()
for (const [id, t] of sampled) {
  const g = group(byId.get(id)!)
  groups.set(g, (groups.get(g) ?? 0) + t)
}
const line = ([k, t]: [string, number]) => `${(t / 1000).toFixed(0).padStart(8)} ms ${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`
console.log(`total ${(total / 1000).toFixed(0)} ms sampled`)
console.log("-- self time by module")
for (const e of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 16)) console.log(line(e))
console.log("-- self time")
for (const e of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(line(e))
console.log("-- inclusive time, project code")
for (const e of [...inclusive].filter(([k]) => /^\S+ (packages|bench)\//.test(k)).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(line(e))
