/**
 * CPU per request of two servers loaded at the same time, one request each: both see the same
 * machine (a shared VM's speed moves by 2x within minutes here, so servers loaded one after the
 * other compare their hours as much as themselves), and the ratio of their CPU per request is
 * taken round by round. CPU is the server process's user + system time from `/proc`, over the
 * requests autocannon completed in the round.
 *
 * Usage: node bench/dist/pairLoad.js list|get|read|directory [SECONDS] [ROUNDS] A B
 * where A and B are each `ours` (`mcp-skills-server serve`), `layer` (`servers/ours-layer.js`),
 * `floor` (`servers/floor.js`), `effect` (`servers/effectFloor.js`: effect's server alone) or the
 * path of another build's `mcp-skills-server.js` (a copy of `packages/skills-server/bin` and
 * `dist/src/bin/mcp-skills-server.bundle.js` beside it), served as `ours` is: two builds compared.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import * as Catalogue from "./catalogue.js"
import * as Children from "./child.js"
import * as FloorAnswers from "./floorAnswers.js"
import { measureOnce, median } from "./load.js"
import * as Wire from "./wire.js"

const [kind = "read", secondsArg = "2", roundsArg = "8", ...names] = process.argv.slice(2)
if (names.length !== 2) throw new Error("usage: pairLoad.js KIND [SECONDS] [ROUNDS] A B")
const catalogue = Catalogue.generate({ skills: 100, bigFile: true, fullSkill: true })
const dir = await Catalogue.tempDir("pair")
Catalogue.write(catalogue, dir)
const one = Wire.sortedSkills(catalogue).filter((s) => s.path.startsWith("team-"))[45]!
const requests: Record<string, Wire.Request> = {
  list: Wire.listFirstPage(catalogue),
  get: Wire.getSkill(one),
  read: Wire.readFile("read", one, "references/guide.md"),
  directory: Wire.readDirectory(one)
}
const request = requests[kind]
if (request === undefined) throw new Error(`unknown request kind ${kind}`)
const answers = `${dir}.answers.json`
writeFileSync(answers, JSON.stringify([[request.body, FloorAnswers.answer(catalogue, request)]]))

const start = (name: string) => {
  switch (name) {
    case "ours":
      return Children.ours(dir)
    case "layer":
      return Children.oursLayer(dir)
    case "floor":
      return Children.floor(answers)
    case "effect":
      return Children.start("effect", [Path.join(Children.repoRoot, "bench/dist/servers/effectFloor.js"), answers])
  }
  if (name.endsWith(".js")) return Children.start(name, [name, "serve", dir, ...Children.loopback])
  throw new Error(`unknown server ${name}`)
}
// Our servers' answers are checked; the two floors answer every request alike.
const ours = (name: string) => name === "ours" || name === "layer" || name.endsWith(".js")

const cpuMicros = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / 100
}

const servers: Array<Children.Child> = []
try {
  for (const name of names) servers.push(await start(name))
  const expected: Array<string | undefined> = []
  for (const [i, server] of servers.entries()) {
    // Ours twice: the first request teaches the fast route the endpoint; the load gets the second's answer.
    if (ours(names[i]!)) await Wire.verify(server.name, server.url, request)
    const probe = ours(names[i]!) ? await Wire.verify(server.name, server.url, request) : undefined
    expected.push(probe?.body)
    await measureOnce(server.url, request, expected[i], 16, 1)
  }
  const seconds = Number(secondsArg)
  const micros: Array<Array<number>> = [[], []]
  const ratios: Array<number> = []
  for (let round = 0; round < Number(roundsArg); round++) {
    const before = servers.map((server) => cpuMicros(server.process.pid!))
    const loads = await Promise.all(servers.map((server, i) => measureOnce(server.url, request, expected[i], 16, seconds)))
    const perRequest = servers.map((server, i) => (cpuMicros(server.process.pid!) - before[i]!) / loads[i]!.requests)
    perRequest.forEach((value, i) => micros[i]!.push(value))
    ratios.push(perRequest[1]! / perRequest[0]!)
  }
  names.forEach((name, i) =>
    console.log(`${name}: CPU per ${kind} ${median(micros[i]!).toFixed(1)} µs (median of ${micros[i]!.length}: ${micros[i]!.map((m) => m.toFixed(1)).join(" ")})`)
  )
  console.log(`${names[1]} / ${names[0]}: ${median(ratios).toFixed(3)} (rounds: ${ratios.map((r) => r.toFixed(2)).join(" ")})`)
} finally {
  for (const server of servers) await server.stop()
  rmSync(dir, { recursive: true, force: true })
  rmSync(answers, { force: true })
}
