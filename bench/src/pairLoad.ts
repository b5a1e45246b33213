/**
 * CPU per request of two servers loaded at the same time, one request each: both see the same
 * machine (a shared VM's speed moves by 2x within minutes here, so servers loaded one after the
 * other compare their hours as much as themselves), and the ratio of their CPU per request is
 * taken round by round. CPU is the server process's user + system time from `/proc`, over the
 * requests autocannon completed in the round.
 *
 * Usage: node bench/dist/pairLoad.js list|get|read|directory [SECONDS] [ROUNDS] A B [--alone]
 * where A and B are each `ours` (`mcp-skills-server serve`), `layer` (`servers/ours-layer.js`),
 * `floor` (`servers/floor.js`), `effect` (`servers/effectFloor.js`: effect's server alone) or the
 * path of another build's `mcp-skills-server.js` (a copy of `packages/skills-server/bin` and
 * `dist/src/bin/mcp-skills-server.bundle.js` beside it), served as `ours` is: two builds compared.
 *
 * With `--alone`, each round loads the two one after the other instead (32 connections, as the
 * bench's throughput rows do, the first in alternate order round by round) and prints for each its
 * rate, its main thread's CPU per request and share of a core, its other threads' CPU, and the
 * load generator's CPU per request (autocannon runs in this process): what a rate ratio is made
 * of when a server is loaded alone.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import * as Catalogue from "./catalogue.js"
import * as Children from "./child.js"
import * as FloorAnswers from "./floorAnswers.js"
import { measureOnce, median } from "./load.js"
import * as Wire from "./wire.js"

const alone = process.argv.includes("--alone")
const [kind = "read", secondsArg = "2", roundsArg = "8", ...names] = process.argv.slice(2).filter((arg) => arg !== "--alone")
if (names.length !== 2) throw new Error("usage: pairLoad.js KIND [SECONDS] [ROUNDS] A B [--alone]")
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

// User + system time in /proc's `stat` of a process or of one of its threads, in microseconds.
const statMicros = (path: string) => {
  const fields = readFileSync(path, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / 100
}
const cpuMicros = (pid: number) => statMicros(`/proc/${pid}/stat`)

// The main thread's CPU and the other threads' (V8's compiler and collector helpers, libuv's pool).
const threadMicros = (pid: number) => {
  const main = statMicros(`/proc/${pid}/task/${pid}/stat`)
  let other = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    if (Number(task) === pid) continue
    try {
      other += statMicros(`/proc/${pid}/task/${task}/stat`)
    } catch {
      // A thread may end between the listing and its read.
    }
  }
  return { main, other }
}

interface Alone {
  readonly rps: number
  readonly main: number
  readonly core: number
  readonly other: number
  readonly client: number
}

// One server loaded alone for `seconds`: its rate and what each request cost whom.
const loadAlone = async (server: Children.Child, expected: string | undefined, seconds: number): Promise<Alone> => {
  const pid = server.process.pid!
  const before = threadMicros(pid)
  const client = process.cpuUsage()
  const started = performance.now()
  const load = await measureOnce(server.url, request, expected, 32, seconds)
  const after = threadMicros(pid)
  const used = process.cpuUsage(client)
  const elapsed = (performance.now() - started) * 1000
  return {
    rps: load.rps,
    main: (after.main - before.main) / load.requests,
    core: (after.main - before.main) / elapsed,
    other: (after.other - before.other) / load.requests,
    client: (used.user + used.system) / load.requests
  }
}

const servers: Array<Children.Child> = []

// Both loaded at once, 16 connections each: CPU per request, compared round by round.
const together = async (expected: ReadonlyArray<string | undefined>, seconds: number) => {
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
}

// Each loaded alone in turn, the first in alternate order round by round.
const inTurn = async (expected: ReadonlyArray<string | undefined>, seconds: number) => {
  const rounds: Array<ReadonlyArray<Alone>> = []
  for (let round = 0; round < Number(roundsArg); round++) {
    const results: Array<Alone> = []
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) results[i] = await loadAlone(servers[i]!, expected[i], seconds)
    rounds.push(results)
  }
  names.forEach((name, i) => {
    const of = (field: keyof Alone) => median(rounds.map((round) => round[i]![field]))
    console.log(
      `${name}: ${of("rps").toFixed(0)} req/s; main thread ${of("main").toFixed(1)} µs a request, ${(of("core") * 100).toFixed(0)}% of a core; ` +
        `other threads ${of("other").toFixed(1)} µs; load generator ${of("client").toFixed(1)} µs (medians of ${rounds.length})`
    )
  })
  const ratio = (field: keyof Alone) => median(rounds.map((round) => round[1]![field] / round[0]![field]))
  console.log(
    `${names[1]} / ${names[0]}, medians of the rounds' ratios: rate ${ratio("rps").toFixed(3)} ` +
      `(rounds: ${rounds.map((round) => (round[1]!.rps / round[0]!.rps).toFixed(2)).join(" ")}), ` +
      `main thread per request ${ratio("main").toFixed(3)}, load generator per request ${ratio("client").toFixed(3)}`
  )
}

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
  await (alone ? inTurn : together)(expected, Number(secondsArg))
} finally {
  for (const server of servers) await server.stop()
  rmSync(dir, { recursive: true, force: true })
  rmSync(answers, { force: true })
}
