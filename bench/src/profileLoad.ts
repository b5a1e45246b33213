/**
 * Profiles our server under one kind of load: starts `mcp-skills-server serve` over the throughput
 * catalogue under `node --cpu-prof`, sends one request for `SECONDS` with autocannon, stops the
 * server (the profile is written on exit) and prints the summary of `profile.ts`.
 *
 * Usage: node bench/dist/profileLoad.js list|get|read|read1m|directory [SECONDS] [ours|layer]
 */
import { execFileSync } from "node:child_process"
import { readdirSync, rmSync } from "node:fs"
import * as Path from "node:path"
import * as Catalogue from "./catalogue.js"
import * as Children from "./child.js"
import { measureOnce } from "./load.js"
import * as Wire from "./wire.js"

const [kind = "read", secondsArg = "10", which = "ours"] = process.argv.slice(2)
const catalogue = Catalogue.generate({ skills: 100, bigFile: true, fullSkill: true })
const dir = await Catalogue.tempDir("profile")
Catalogue.write(catalogue, dir)
const sorted = Wire.sortedSkills(catalogue).filter((s) => s.path.startsWith("team-"))
const one = sorted[Math.floor(sorted.length / 2)]!
const big = catalogue.skills.find((s) => s.path === "big/huge-asset")!
const requests: Record<string, Wire.Request> = {
  list: Wire.listFirstPage(catalogue),
  get: Wire.getSkill(one),
  read: Wire.readFile("read", one, "references/guide.md"),
  read1m: Wire.readFile("read1m", big, "assets/big.bin"),
  directory: Wire.readDirectory(one)
}
const request = requests[kind]
if (request === undefined) throw new Error(`unknown request kind ${kind}`)

const profiles = `${dir}.cpuprofile`
process.env["BENCH_CPU_PROF"] = profiles
const server = which === "layer" ? await Children.oursLayer(dir) : await Children.ours(dir)
delete process.env["BENCH_CPU_PROF"]
try {
  // The first request teaches the fast route the endpoint (effect answers it, keys in its own
  // order); the expected body is the second, the one the load gets.
  await Wire.verify(server.name, server.url, request)
  const probe = await Wire.verify(server.name, server.url, request)
  const m = await measureOnce(server.url, request, probe.body, 32, Number(secondsArg))
  console.log(`${kind}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms, errors ${m.errors}`)
} finally {
  await server.stop()
}
const file = readdirSync(profiles).find((f) => f.endsWith(".cpuprofile"))
if (file === undefined) throw new Error("no profile written")
// Only the load window: skip start-up (the server's own clock starts a little after spawn).
console.log(execFileSync(process.execPath, [Path.join(Children.repoRoot, "bench/dist/profile.js"), Path.join(profiles, file), "30", String(Math.round(server.startMs + 300))], { encoding: "utf8" }))
rmSync(dir, { recursive: true, force: true })
console.log(`profile: ${Path.join(profiles, file)}`)
