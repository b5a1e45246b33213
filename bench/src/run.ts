/**
 * The benchmark: `npm run bench -- [--quick] [--only throughput,growth,startup,client,metrics]`.
 *
 * 1. throughput: our server, the official SDK server and a floor server, each in its own child
 *    process over the same catalogue; autocannon in interleaved rounds; req/s, p50, p99, ratios.
 * 2. growth: at 10, 1,000, 10,000 and 100,000 skills of 8 files (up to 10,000 in --quick): our
 *    server's unloaded p50 for skills/list, skills/get and resources/read, `mcp-skills-server serve`
 *    start-up time and RSS, and the official SDK server's start-up time and RSS as a peer row (up to
 *    10,000 skills; 1,000 in --quick); one edited file under `--watch` at 10,000 skills, end to end.
 * 3. startup: loading 1,000 skills from disk against readFileSync + SHA-256 of the same files.
 * 4. client: pulling and verifying a 512-file, 16 MiB skill against unverified reads.
 * 5. upsert: adding one skill to a registry of 10 and of 10,000 skills at runtime.
 * 7. fixed: spawn to exit of `node -e 0` and of both executables' `--help`, and `serve` of 10 skills
 *    to listening, interleaved: the fixed cost of starting, as ratios of bare node.
 * 6. gateway: skills/list, skills/get, resources/read through `serve --upstream` against our server
 *    directly, and the time from an upstream change to the gateway's list_changed.
 * 8. search: `search_skills`'s search at 50,000 skills, p50 and p99, from the index and by a linear
 *    scan over every skill in the same run.
 *
 * `--against=DIR` adds the server of another checkout (built, e.g. a `git worktree` of an older
 * commit) to the throughput rounds as `before`: the code before a change measured in the same run
 * as ours, against the same SDK and floor, so a regression is told from the machine's drift.
 *
 * Prints one table and writes the figures to bench/results/ (JSON).
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Catalogue from "./catalogue.js"
import * as Children from "./child.js"
import * as ClientBench from "./client.js"
import * as FixedCost from "./fixedCost.js"
import * as Gateway from "./gateway.js"
import { answer } from "./floorAnswers.js"
import { sequential } from "./latency.js"
import { median, rounds, type Row, type Target } from "./load.js"
import * as Wire from "./wire.js"

const argv = process.argv.slice(2)
const quick = argv.includes("--quick")
const onlyArg = argv.find((a) => a.startsWith("--only="))?.slice("--only=".length) ?? (argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined)
const sections = new Set((onlyArg ?? "throughput,growth,startup,client,upsert,metrics,gateway,fixed,search").split(","))

// `--against=DIR`: a built checkout whose server joins the throughput rounds as `before`.
const againstArg = argv.find((a) => a.startsWith("--against="))?.slice("--against=".length)
const against = againstArg === undefined ? undefined : Children.checkout(Path.resolve(againstArg))

// `--client-runs=N` (at least 2: the cold run and one warm) gives the client rows more warm runs
// than the mode's, for a comparison on a noisy machine.
const clientRunsArg = Number(argv.find((a) => a.startsWith("--client-runs="))?.slice("--client-runs=".length))
const config = {
  ...(quick
    ? { rounds: 2, seconds: 1, warmup: 0.3, connections: 32, latencyCount: 300, latencyWarmup: 100, clientRuns: 3, growth: [10, 1000, 10000], sdkGrowthMax: 1000, cliStartTimeoutMs: 120_000, changeRuns: 3 }
    : { rounds: 5, seconds: 5, warmup: 1, connections: 32, latencyCount: 2000, latencyWarmup: 200, clientRuns: 7, growth: [10, 1000, 10000, 100000], sdkGrowthMax: 10000, cliStartTimeoutMs: 900_000, changeRuns: 7 }),
  ...(Number.isInteger(clientRunsArg) && clientRunsArg >= 2 ? { clientRuns: clientRunsArg } : {})
}

const log = (line: string) => console.error(line)
const children = new Set<Children.Child>()
const dirs = new Set<string>()

const cleanup = () => {
  for (const child of children) child.process.kill("SIGKILL")
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}
process.on("SIGINT", () => {
  cleanup()
  process.exit(130)
})

const started = async (make: () => Promise<Children.Child>) => {
  const child = await make()
  children.add(child)
  return child
}
const stop = async (child: Children.Child) => {
  await child.stop()
  children.delete(child)
}
const catalogueDir = async (label: string, catalogue: Catalogue.Catalogue) => {
  const dir = await Catalogue.tempDir(label)
  dirs.add(dir)
  Catalogue.write(catalogue, dir)
  return dir
}
const removeDir = (dir: string) => {
  rmSync(dir, { recursive: true, force: true })
  dirs.delete(dir)
}

const version = (pkg: string) => {
  try {
    return JSON.parse(readFileSync(Path.join(Children.repoRoot, "node_modules", pkg, "package.json"), "utf8")).version as string
  } catch {
    return "?"
  }
}

const results: Record<string, unknown> = {
  startedAt: new Date().toISOString(),
  mode: quick ? "quick" : "full",
  protocol: Wire.ProtocolVersion,
  config,
  machine: {
    cpus: Os.cpus().length,
    cpuModel: Os.cpus()[0]?.model,
    memoryBytes: Os.totalmem(),
    node: process.version,
    platform: `${Os.platform()} ${Os.release()} ${Os.arch()}`,
    loadAverageAtStart: Os.loadavg()
  },
  packages: Object.fromEntries(
    ["@mcp-skills/core", "@mcp-skills/server", "@mcp-skills/client", "effect", "@effect/platform-node", "@modelcontextprotocol/server", "@modelcontextprotocol/client", "autocannon"].map((p) => [p, version(p)])
  ),
  against: against === undefined ? undefined : { dir: against.dir, commit: against.commit },
  commit: (() => {
    try {
      return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: Children.repoRoot, encoding: "utf8" }).trim() +
        (spawnSync("git", ["diff", "--quiet", "HEAD"], { cwd: Children.repoRoot }).status === 0 ? "" : "+dirty")
    } catch {
      return "?"
    }
  })()
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`
const x = (ratio: number) => (Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : "n/a")
const targets: Array<{ target: string; measured: string; met: boolean | undefined }> = []
const check = (target: string, measured: string, met: boolean | undefined) => targets.push({ target, measured, met })

// Every request sent twice to every server and checked; an answer that is the same both times is
// the body the load compares byte for byte.
const verifiedTargets = async (
  servers: ReadonlyArray<Children.Child>,
  requests: ReadonlyArray<Wire.Request>,
  notes: Array<string>
): Promise<Array<Target>> => {
  const targetsOf: Array<Target> = []
  for (const server of servers) {
    const bodies = new Map<string, string>()
    for (const request of requests) {
      const first = await Wire.verify(server.name, server.url, request)
      const second = await Wire.verify(server.name, server.url, request)
      if (first.body === second.body) bodies.set(request.label, first.body)
      else notes.push(`${server.name} ${request.label}: answers differ between requests; only status and transport errors counted`)
    }
    targetsOf.push({ name: server.name, url: server.url, bodies })
  }
  return targetsOf
}

// ---------------------------------------------------------------------------------------------
// 1 + 4. Throughput (and the client, against the same running server)

const throughput = async () => {
  log(`throughput: generating the catalogue`)
  const catalogue = Catalogue.generate({ skills: 100, bigFile: true, fullSkill: true })
  const dir = await catalogueDir("main", catalogue)
  const sorted = Wire.sortedSkills(catalogue)
  const regular = sorted.filter((s) => s.path.startsWith("team-"))
  const one = regular[Math.floor(regular.length / 2)]!
  const big = catalogue.skills.find((s) => s.path === "big/huge-asset")!
  const full = catalogue.skills.find((s) => s.path === "bulk/full-skill")!
  const requests = [
    Wire.listFirstPage(catalogue),
    Wire.getSkill(one),
    Wire.readFile("resources/read small text", one, "references/guide.md"),
    Wire.readFile("resources/read 1 MiB blob", big, "assets/big.bin"),
    Wire.readDirectory(one)
  ]
  const answers = `${dir}.answers.json`
  writeFileSync(answers, JSON.stringify(requests.map((r) => [r.body, answer(catalogue, r)])))
  dirs.add(answers)

  // `--only=client` starts our server alone, for the client rows, and loads nothing else.
  const measured = sections.has("throughput")
  log(`throughput: starting servers over ${catalogue.skills.length} skills, ${catalogue.files} files, ${mb(catalogue.bytes)}`)
  const ours = await started(() => Children.ours(dir))
  const servers = measured
    ? [
      ours,
      await started(() => Children.sdk(dir, Wire.PageSize)),
      await started(() => Children.floor(answers)),
      await started(() => Children.oursRouteOff(dir)),
      ...(against === undefined ? [] : [await started(() => Children.before(against, dir, Wire.PageSize))])
    ]
    : [ours]
  const memoryAtStart = Object.fromEntries(servers.map((s) => [s.name, Children.memoryOf(s.process.pid!)]))

  const notes: Array<string> = []
  const targetsOf = await verifiedTargets(servers, requests, notes)
  if (measured) log(`throughput: every answer verified (status 200, JSON-RPC result, digests); ${config.rounds} interleaved rounds of ${config.seconds} s, ${config.connections} connections`)
  const rows = measured ? await rounds(targetsOf, requests, { ...config, log }) : []
  const memoryAfterLoad = Object.fromEntries(servers.map((s) => [s.name, Children.memoryOf(s.process.pid!)]))

  let client: Record<string, unknown> | undefined
  if (sections.has("client")) client = await clientBench(ours.url, full, `${dir}.pull`)

  for (const s of servers) await stop(s)
  removeDir(dir)
  removeDir(answers)
  rmSync(`${dir}.pull`, { recursive: true, force: true })
  return {
    catalogue: { skills: catalogue.skills.length, files: catalogue.files, bytes: catalogue.bytes },
    startMs: Object.fromEntries(servers.map((s) => [s.name, s.startMs])),
    memoryAtStart,
    memoryAfterLoad,
    notes,
    rows,
    client
  }
}

// ---------------------------------------------------------------------------------------------
// Metrics on against off: the same server with `--metrics` (spans and series on), on the fast
// route (the CLI) and on effect's dispatch (the Layer with the route off).

const metricsBench = async () => {
  log(`metrics: generating the catalogue`)
  const catalogue = Catalogue.generate({ skills: 100, bigFile: false, fullSkill: false })
  const dir = await catalogueDir("metrics", catalogue)
  const one = Wire.sortedSkills(catalogue).filter((s) => s.path.startsWith("team-"))[0]!
  const requests = [
    Wire.listFirstPage(catalogue),
    Wire.getSkill(one),
    Wire.readFile("resources/read small text", one, "references/guide.md"),
    Wire.readDirectory(one)
  ]
  const servers = [
    await started(() => Children.ours(dir)),
    await started(() => Children.oursMetrics(dir)),
    await started(() => Children.oursRouteOff(dir)),
    await started(() => Children.oursRouteOffMetrics(dir))
  ]
  const notes: Array<string> = []
  const rows = await rounds(await verifiedTargets(servers, requests, notes), requests, { ...config, log })
  for (const s of servers) await stop(s)
  removeDir(dir)
  return { rows, notes }
}

// ---------------------------------------------------------------------------------------------
// The gateway: through `serve --upstream` against our server directly, and change to notification.

const gatewayBench = async () => {
  log(`gateway: generating the catalogue`)
  const catalogue = Catalogue.generate({ skills: 100, bigFile: false, fullSkill: false })
  const dir = await catalogueDir("gateway", catalogue)
  const result = await Gateway.run(catalogue, dir, { ...config, log }, { started, stop, verifiedTargets })
  removeDir(dir)
  return result
}

// ---------------------------------------------------------------------------------------------
// 4. Client

const clientBench = async (url: string, full: Catalogue.SkillSpec, pullDir: string) => {
  log(`client: ${full.files.length} files, ${mb(full.files.reduce((n, f) => n + f.bytes.length, 0))}, ${ClientBench.Parallelism} requests in flight, ${config.clientRuns} runs each (interleaved)`)
  const kinds: Array<[string, () => Promise<number>]> = [
    ["raw (unverified fetch)", () => ClientBench.raw(url, full)],
    ["ours unverified (McpClient.readResource)", () => ClientBench.oursUnverified(url, full)],
    ["ours verified, lean transport", () => ClientBench.oursVerified(url, full, "lean")],
    ["ours verified, HttpClient transport", () => ClientBench.oursVerified(url, full, "HttpClient")],
    ["ours pull to disk (Pull.pull, lean)", () => ClientBench.oursPull(url, full, pullDir)],
    ["sdk unverified (Client.readResource)", () => ClientBench.sdkUnverified(url, full)],
    ["sdk verified (SkillsClient.read)", () => ClientBench.sdkVerified(url, full)]
  ]
  const times = new Map<string, Array<number>>(kinds.map(([k]) => [k, []]))
  const cold = new Map<string, number>()
  const errors = new Map<string, string>()
  for (let run = 0; run < config.clientRuns; run++) {
    for (const [kind, f] of kinds) {
      if (errors.has(kind)) continue
      try {
        const ms = await f()
        // Run 1 is the cold row (first use in this process: JIT, new connections); later runs are warm.
        if (run === 0) cold.set(kind, ms)
        else times.get(kind)!.push(ms)
        log(`  run ${run + 1} ${kind.padEnd(42)} ${ms.toFixed(0)} ms`)
      } catch (error) {
        errors.set(kind, String(error).slice(0, 300))
        log(`  ${kind} FAILED: ${String(error).slice(0, 300)}`)
      }
    }
  }
  return {
    files: full.files.length,
    bytes: full.files.reduce((n, f) => n + f.bytes.length, 0),
    parallelism: ClientBench.Parallelism,
    coldMs: Object.fromEntries(cold),
    medianMs: Object.fromEntries([...times].map(([k, v]) => [k, median(v)])),
    runsMs: Object.fromEntries(times),
    errors: Object.fromEntries(errors)
  }
}

// ---------------------------------------------------------------------------------------------
// 2 + 3. Growth and start-up

const GrowthPageSize = 10

const growth = async () => {
  const out: Array<Record<string, unknown>> = []
  for (const skills of config.growth) {
    log(`growth: ${skills} skills x 8 files: generating`)
    // 100,000 skills hold more than Node's default heap limit: the servers get room to hold them.
    if (skills >= 100_000) process.env["NODE_OPTIONS"] = `${inheritedNodeOptions ?? ""} --max-old-space-size=16384`
    const catalogue = Catalogue.generate({ skills })
    const dir = await catalogueDir(`growth-${skills}`, catalogue)
    const sorted = Wire.sortedSkills(catalogue)
    const one = sorted[Math.floor(sorted.length / 2)]!
    // A page of 10 at every size (the 10-skill catalogue lists all 10 in one page), so the series
    // compares catalogue sizes, not page sizes.
    const requests = [Wire.listFirstPage(catalogue, GrowthPageSize), Wire.getSkill(one), Wire.readFile("resources/read small text", one, "references/guide.md")]
    const row: Record<string, unknown> = { skills, files: catalogue.files, bytes: catalogue.bytes }
    if (skills === 1000 && sections.has("startup")) row["startup"] = startup(dir, catalogue)
    log(`growth: ${skills} skills: our server (Layer, files read by the bench)`)
    const server = await started(() => Children.oursLayer(dir, ["--page-size", String(GrowthPageSize)]))
    row["startMs"] = server.startMs
    row["loaded"] = server.output().split("\n").find((l) => l.startsWith("loaded"))
    row["memoryAtStart"] = Children.memoryOf(server.process.pid!)
    const latency: Record<string, unknown> = {}
    for (const request of requests) {
      const probe = await Wire.verify(server.name, server.url, request)
      const l = await sequential(server.url, request, probe.body, config.latencyCount, config.latencyWarmup)
      latency[request.label] = l
      log(`  ${request.label.padEnd(26)} p50 ${l.p50.toFixed(3)} ms  p99 ${l.p99.toFixed(3)} ms${l.errors > 0 ? `  ERRORS ${l.errors}` : ""}`)
    }
    row["latency"] = latency
    row["memoryAfter"] = Children.memoryOf(server.process.pid!)
    await stop(server)
    // After the latency probes, which compare answers with the generated catalogue: it edits a file.
    if (skills === 10000 && sections.has("startup")) row["reload"] = reload(dir)
    log(`growth: ${skills} skills: mcp-skills-server serve start-up (timeout ${config.cliStartTimeoutMs / 1000} s)`)
    // Best of 3 up to 10,000 skills, where the start-up targets are: the figures they compare.
    row["cli"] = await startUp(() => Children.ours(dir, config.cliStartTimeoutMs), skills <= 10_000 ? 3 : 1)
    // What start-up is compared with: a plain script reading and hashing the same files.
    if (skills > 10 && skills <= 10_000) row["readHash"] = FixedCost.readHash(dir)
    if (skills <= config.sdkGrowthMax) {
      log(`growth: ${skills} skills: official SDK server start-up`)
      row["sdk"] = await startUp(() => Children.sdk(dir, Wire.PageSize, config.cliStartTimeoutMs))
    } else row["sdk"] = { error: `not tried above ${config.sdkGrowthMax} skills${quick ? " in --quick" : ""}` }
    removeDir(dir)
    out.push(row)
    if (inheritedNodeOptions === undefined) delete process.env["NODE_OPTIONS"]
    else process.env["NODE_OPTIONS"] = inheritedNodeOptions
  }
  return out
}

const inheritedNodeOptions = process.env["NODE_OPTIONS"]

// Start-up time (spawn to listening) and RSS once listening, then stopped. Over `runs` start-ups,
// the best time (as the read-and-hash script's, which it is compared with: one spawn swings with
// the machine by half) and the median RSS.
const startUp = async (make: () => Promise<Children.Child>, runs = 1) => {
  try {
    const times: Array<number> = []
    const memories: Array<NonNullable<ReturnType<typeof Children.memoryOf>>> = []
    for (let run = 0; run < runs; run++) {
      const child = await started(make)
      const memory = Children.memoryOf(child.process.pid!)
      log(`  listening after ${child.startMs.toFixed(0)} ms, RSS ${mb(memory?.rss ?? NaN)}`)
      await stop(child)
      times.push(child.startMs)
      if (memory !== undefined) memories.push(memory)
    }
    memories.sort((a, b) => a.rss - b.rss)
    return {
      startMs: Math.min(...times),
      ...(runs > 1 ? { startRuns: times } : {}),
      memoryAtStart: memories[Math.floor(memories.length / 2)]
    }
  } catch (error) {
    log(`  ${String(error).split("\n")[0]}`)
    for (const child of children) await stop(child)
    return { error: String(error).split("\n")[0] }
  }
}

const reload = (dir: string) => {
  log("reload: one edited file in the watched 10,000-skill catalogue")
  const result = spawnSync(process.execPath, [Path.join(Children.repoRoot, "bench/dist/servers/reload.js"), dir], { encoding: "utf8", timeout: 900_000 })
  if (result.status !== 0) return { error: `reload child failed: ${result.stderr.slice(-500)}` }
  return JSON.parse(result.stdout.trim().split("\n").pop()!)
}

const upsert = (skills: number) => {
  log(`upsert: one skill at a time into ${skills} skills x 8 files (in process)`)
  const result = spawnSync(process.execPath, [Path.join(Children.repoRoot, "bench/dist/servers/upsert.js"), String(skills), quick ? "50" : "200"], {
    encoding: "utf8",
    timeout: 900_000
  })
  if (result.status !== 0) return { skills, error: `upsert child failed: ${result.stderr.slice(-500)}` }
  const figures = JSON.parse(result.stdout.trim().split("\n").at(-1)!)
  log(`  upsert p50 ${figures.upsertMedianMs.toFixed(3)} ms (max ${figures.upsertMaxMs.toFixed(2)}), remove p50 ${figures.removeMedianMs.toFixed(3)} ms, replace ${figures.replaceMs.toFixed(1)} ms`)
  return figures
}

const search = (skills: number) => {
  log(`search: ${quick ? 100 : 400} queries over ${skills} skills, from the index and by a linear scan (in process)`)
  const result = spawnSync(process.execPath, [Path.join(Children.repoRoot, "bench/dist/servers/search.js"), String(skills), quick ? "100" : "400"], {
    encoding: "utf8",
    timeout: 900_000
  })
  if (result.status !== 0) return { skills, error: `search child failed: ${result.stderr.slice(-500)}` }
  const figures = JSON.parse(result.stdout.trim().split("\n").at(-1)!)
  log(`  index p50 ${figures.indexP50Ms.toFixed(3)} ms, p99 ${figures.indexP99Ms.toFixed(3)} ms; scan p50 ${figures.scanP50Ms.toFixed(1)} ms`)
  return figures
}

// The fixed cost of starting: bare node, both `--help`, and `serve` of 10 skills, interleaved.
const fixedCost = async () => {
  const runs = quick ? 5 : 11
  log(`fixed: node -e 0, both --help and serve of 10 skills, ${runs} interleaved runs`)
  const dir = await catalogueDir("fixed-10", Catalogue.generate({ skills: 10 }))
  const serve: Array<number> = []
  const commands: Array<Record<string, number>> = []
  for (let run = 0; run < runs; run++) {
    commands.push(FixedCost.commandStarts(1))
    const figures = await startUp(() => Children.ours(dir))
    if ("startMs" in figures) serve.push(figures.startMs)
  }
  removeDir(dir)
  const median = (values: Array<number>) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const out: Record<string, number | undefined> = { "serve (10 skills) to listening": median(serve) }
  for (const name of Object.keys(commands[0]!)) out[name] = median(commands.map((c) => c[name]!))
  return out
}

const startup = (dir: string, catalogue: Catalogue.Catalogue) => {
  log(`startup: loading ${catalogue.skills.length} skills (${catalogue.files} files, ${mb(catalogue.bytes)}) in a fresh process`)
  const result = spawnSync(process.execPath, [Path.join(Children.repoRoot, "bench/dist/servers/startup.js"), dir], { encoding: "utf8", timeout: 900_000 })
  if (result.status !== 0) return { error: `startup child failed: ${result.stderr.slice(-500)}` }
  const figures = JSON.parse(result.stdout.trim().split("\n").at(-1)!)
  log(`  load ${figures.loadMs.toFixed(0)} ms (directory ${figures.directoryLoadMs.toFixed(0)} + registry ${figures.registryMs.toFixed(0)}), SHA-256 alone ${figures.hashMs.toFixed(1)} ms, read+hash ${figures.readHashMs.toFixed(0)} ms, peak RSS ${mb(figures.peakRss)}`)
  return figures
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const t0 = performance.now()
  if (sections.has("throughput") || sections.has("client")) results["throughput"] = await throughput()
  if (sections.has("growth") || sections.has("startup")) results["growth"] = await growth()
  if (sections.has("upsert")) results["upsert"] = [10, 10_000].map(upsert)
  if (sections.has("metrics")) results["metrics"] = await metricsBench()
  if (sections.has("gateway")) results["gateway"] = await gatewayBench()
  if (sections.has("fixed")) results["fixed"] = await fixedCost()
  if (sections.has("search")) results["search"] = search(50_000)
  results["elapsedSeconds"] = (performance.now() - t0) / 1000
  ;(results["machine"] as Record<string, unknown>)["loadAverageAtEnd"] = Os.loadavg()
  report()
  const dir = Path.join(Children.repoRoot, "bench/results")
  mkdirSync(dir, { recursive: true })
  const file = Path.join(dir, `${new Date().toISOString().replace(/[:.]/g, "-")}-${quick ? "quick" : "full"}.json`)
  results["targets"] = targets
  writeFileSync(file, JSON.stringify(results, null, 2))
  writeFileSync(Path.join(dir, "latest.json"), JSON.stringify(results, null, 2))
  console.log(`\nresults: ${Path.relative(process.cwd(), file)}`)
}

// The code before (`--against`), in the same rounds: ours is within its noise when ours' median
// is at least the slowest of its rounds.
const beforeRows = (byRequest: ReadonlyMap<string, Record<string, Row>>): Array<string> => {
  const lines = [
    "",
    `Against the code before (${against!.dir}, commit ${against!.commit}), same rounds`,
    `${pad("request", 28)}${pad("ours req/s", 12)}${pad("before req/s", 14)}${pad("before rounds", 22)}${pad("ours/before", 13)}${pad("ours/sdk", 10)}${pad("before/sdk", 12)}${pad("ours/floor", 12)}before/floor`
  ]
  for (const [request, r] of byRequest) {
    const ours = r["ours"]!, sdk = r["sdk"]!, floor = r["floor"]!, before = r["before"]!
    const slowest = Math.min(...before.rounds.map((m) => m.rps))
    const spread = `${num(slowest)}-${num(Math.max(...before.rounds.map((m) => m.rps)))}`
    lines.push(
      `${pad(request, 28)}${pad(num(ours.rps), 12)}${pad(num(before.rps), 14)}${pad(spread, 22)}${pad(x(ours.rps / before.rps), 13)}` +
        `${pad(x(ours.rps / sdk.rps), 10)}${pad(x(before.rps / sdk.rps), 12)}${pad(`${(ours.rps / floor.rps * 100).toFixed(0)}%`, 12)}${(before.rps / floor.rps * 100).toFixed(0)}%`
    )
    check(`${request}: ours within the noise of the code before (median >= its slowest round)`, `${num(ours.rps)} against ${spread}`, ours.rps >= slowest)
  }
  return lines
}

const pad = (s: string, n: number) => s.padEnd(n)
const num = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? "n/a" : n.toFixed(digits))

const report = () => {
  const m = results["machine"] as Record<string, any>
  const lines: Array<string> = []
  lines.push(`MCP Skills benchmark (${results["mode"]}), protocol ${Wire.ProtocolVersion}, ${new Date().toISOString()}`)
  lines.push(`machine: ${m["cpus"]} x ${m["cpuModel"]}, ${mb(m["memoryBytes"])}, node ${m["node"]}, load avg ${m["loadAverageAtStart"].map((l: number) => l.toFixed(2)).join(" ")} -> ${m["loadAverageAtEnd"].map((l: number) => l.toFixed(2)).join(" ")}`)
  lines.push(`packages: ${Object.entries(results["packages"] as Record<string, string>).map(([k, v]) => `${k}@${v}`).join(", ")}; commit ${results["commit"]}`)
  const t = results["throughput"] as any
  if (t !== undefined && t.rows.length > 0) {
    lines.push("")
    lines.push(`Throughput: ${t.catalogue.skills} skills, ${t.catalogue.files} files, ${mb(t.catalogue.bytes)}; ${config.connections} connections, median of ${config.rounds} interleaved rounds x ${config.seconds} s`)
    lines.push(`${pad("request", 28)}${pad("ours req/s", 12)}${pad("sdk req/s", 12)}${pad("floor req/s", 13)}${pad("ours/sdk", 10)}${pad("ours/floor", 12)}${pad("p50 ours/sdk/floor ms", 24)}${pad("p99 ours/sdk/floor ms", 24)}${pad("errors", 10)}${pad("route off req/s", 17)}${pad("off/sdk", 9)}off/floor`)
    const byRequest = new Map<string, Record<string, Row>>()
    for (const row of t.rows as Array<Row>) byRequest.set(row.request, { ...byRequest.get(row.request), [row.server]: row })
    for (const [request, r] of byRequest) {
      const ours = r["ours"]!, sdk = r["sdk"]!, floor = r["floor"]!, off = r["ours-off"]
      const vsSdk = ours.rps / sdk.rps, vsFloor = ours.rps / floor.rps
      // The fast route disabled: effect's dispatch answers every request.
      const offColumns = off === undefined
        ? ""
        : `${pad(num(off.rps), 17)}${pad(x(off.rps / sdk.rps), 9)}${(off.rps / floor.rps * 100).toFixed(0)}%`
      lines.push(`${pad(request, 28)}${pad(num(ours.rps), 12)}${pad(num(sdk.rps), 12)}${pad(num(floor.rps), 13)}${pad(x(vsSdk), 10)}${pad(`${(vsFloor * 100).toFixed(0)}%`, 12)}${pad(`${ours.p50}/${sdk.p50}/${floor.p50}`, 24)}${pad(`${ours.p99}/${sdk.p99}/${floor.p99}`, 24)}${pad(`${ours.errors}/${sdk.errors}/${floor.errors}`, 10)}${offColumns}`)
      if (request !== "resources/read 1 MiB blob") {
        check(`${request}: ours >= 2x SDK`, x(vsSdk), Number.isFinite(vsSdk) ? vsSdk >= 2 : undefined)
        check(`${request}: ours >= 50% of floor`, `${(vsFloor * 100).toFixed(0)}%`, vsFloor >= 0.5)
      }
      const errors = ours.errors + sdk.errors + floor.errors
      if (errors > 0) check(`${request}: zero errors`, String(errors), false)
    }
    if (against !== undefined) lines.push(...beforeRows(byRequest))
    for (const note of t.notes) lines.push(`note: ${note}`)
    lines.push(`start-up to listening (ms): ${Object.entries(t.startMs).map(([k, v]) => `${k} ${num(v as number)}`).join(", ")}`)
    lines.push(`RSS after start / after load / peak: ${Object.entries(t.memoryAfterLoad).map(([k, v]: [string, any]) => `${k} ${mb(t.memoryAtStart[k]?.rss ?? NaN)} / ${mb(v?.rss ?? NaN)} / ${mb(v?.peak ?? NaN)}`).join("; ")}`)
  }
  const c = t?.client
  if (c !== undefined) {
    lines.push("")
    lines.push(`Client: pull one skill of ${c.files} files, ${mb(c.bytes)} from our server, ${c.parallelism} in flight; cold = first run in the process, warm = median of ${config.clientRuns - 1} later runs`)
    const cold = c.coldMs as Record<string, number>
    const warm = c.medianMs as Record<string, number>
    lines.push(`  ${pad("", 44)}${pad("cold ms", 9)}${pad("of raw", 9)}${pad("warm ms", 9)}of raw`)
    for (const k of Object.keys(cold)) {
      lines.push(`  ${pad(k, 44)}${pad(num(cold[k]!), 9)}${pad(x(cold[k]! / cold["raw (unverified fetch)"]!), 9)}${pad(num(warm[k] ?? NaN), 9)}${x((warm[k] ?? NaN) / warm["raw (unverified fetch)"]!)}`)
    }
    for (const [k, v] of Object.entries(c.errors)) lines.push(`  ${k} FAILED: ${v}`)
    for (const [row, of] of [["cold", cold], ["warm", warm]] as const) {
      const ratio = of["ours verified, lean transport"]! / of["raw (unverified fetch)"]!
      check(`client verified pull (lean) <= 1.25x raw unverified fetch, ${row}`, x(ratio), ratio <= 1.25)
    }
    lines.push(`  verification overhead within our client (lean verified / McpClient unverified, warm): ${x(warm["ours verified, lean transport"]! / warm["ours unverified (McpClient.readResource)"]!)}`)
  }
  const g = results["growth"] as Array<any> | undefined
  if (g !== undefined && sections.has("growth")) {
    lines.push("")
    lines.push(`Catalogue growth: our server (SkillsServer.layer; files read by the bench), unloaded p50 ms over ${config.latencyCount} sequential requests, ${GrowthPageSize} skills per page at every size; start-up = spawn to listening (best of 3 up to 10,000 skills), RSS once listening (median)`)
    lines.push(`${pad("skills", 8)}${pad("files", 8)}${pad("bytes", 11)}${pad("list p50", 10)}${pad("get p50", 10)}${pad("read p50", 10)}${pad("serve start", 13)}${pad("serve RSS", 11)}${pad("SDK start", 13)}SDK RSS`)
    const started = (figures: any) => figures?.startMs !== undefined ? `${num(figures.startMs)} ms` : "n/a"
    const rss = (figures: any) => figures?.memoryAtStart !== undefined ? mb(figures.memoryAtStart.rss) : "n/a"
    for (const row of g) {
      const l = row.latency ?? {}
      lines.push(`${pad(String(row.skills), 8)}${pad(String(row.files), 8)}${pad(mb(row.bytes), 11)}${pad(num(l["skills/list"]?.p50, 3), 10)}${pad(num(l["skills/get"]?.p50, 3), 10)}${pad(num(l["resources/read small text"]?.p50, 3), 10)}${pad(started(row.cli), 13)}${pad(rss(row.cli), 11)}${pad(started(row.sdk), 13)}${rss(row.sdk)}`)
    }
    for (const row of g) {
      for (const [who, figures] of [["serve", row.cli], ["SDK", row.sdk]] as const) {
        if (figures?.error !== undefined) lines.push(`  ${row.skills} skills, ${who}: ${figures.error}`)
      }
    }
    const small = g.find((r) => r.skills === 10), largest = g.at(-1), tenThousand = g.find((r) => r.skills === 10000)
    for (const label of ["skills/list", "skills/get", "resources/read small text"]) {
      const a = small?.latency?.[label]?.p50, b = largest?.latency?.[label]?.p50
      check(`${label} p50 at ${largest?.skills} skills <= 1.2x at 10`, b === undefined ? "not measured" : x(b / a), b === undefined ? undefined : b / a <= 1.2)
    }
    const startMs = tenThousand?.cli?.startMs
    check("serve to listening at 10,000 skills x 8 files <= 3 s", startMs === undefined ? tenThousand?.cli?.error ?? "not measured" : `${num(startMs)} ms`, startMs === undefined ? false : startMs <= 3000)
    const baseline = small?.cli?.memoryAtStart?.rss
    if (baseline !== undefined) {
      lines.push(`RSS baseline (serve, 10 skills): ${mb(baseline)}`)
      for (const row of g) {
        const rss = row.cli?.memoryAtStart?.rss
        if (row === small || rss === undefined) continue
        const limit = baseline + 1.5 * row.bytes
        check(`serve RSS at ${row.skills.toLocaleString("en")} skills <= baseline + 1.5 x ${mb(row.bytes)}`, `${mb(rss)} (limit ${mb(limit)})`, rss <= limit)
      }
    }
    // Start-up against a plain script reading and hashing the same files, both spawn to the end;
    // below 10,000 skills the part of start-up above the 10-skill start, against the script's own time.
    const tenStart = small?.cli?.startMs
    for (const row of g) {
      const start = row.cli?.startMs, readHash = row.readHash
      if (start === undefined || readHash === undefined) continue
      const whole = row.skills >= 10_000
      const ours = whole ? start : start - tenStart
      const floor = whole ? readHash.wallMs : readHash.ms
      lines.push(`start-up at ${row.skills.toLocaleString("en")} skills: serve ${num(start)} ms${whole ? "" : ` (${num(ours)} above the 10-skill start)`}; read+hash script ${num(readHash.wallMs)} ms spawn to exit, ${num(readHash.ms)} ms in the script`)
      check(
        `serve start-up at ${row.skills.toLocaleString("en")} skills${whole ? "" : " (above the 10-skill start)"} <= 2x read+hash of the same files`,
        x(ours / floor),
        Number.isFinite(ours / floor) ? ours / floor <= 2 : undefined
      )
    }
  }
  const f = results["fixed"] as Record<string, number | undefined> | undefined
  if (f !== undefined) {
    const bare = f["node -e 0"]!
    lines.push("")
    lines.push(`Fixed cost of starting (median spawn to exit, or to listening): ${Object.entries(f).map(([k, v]) => `${k} ${num(v)} ms (${x((v ?? NaN) / bare)})`).join("; ")}`)
    for (const [name, ms] of Object.entries(f)) {
      if (name !== "node -e 0") check(`${name} <= 10x node -e 0`, x((ms ?? NaN) / bare), ms === undefined ? undefined : ms / bare <= 10)
    }
  }
  const s = g?.find((r) => r.startup !== undefined)?.startup
  if (s !== undefined) {
    lines.push("")
    if (s.error !== undefined) lines.push(`Start-up: ${s.error}`)
    else {
      lines.push(`Start-up: ${s.skills} skills, ${s.files} files, ${mb(s.bytes)} (in process, after module load)`)
      lines.push(`  load ${num(s.loadMs)} ms (DirectorySource.load ${num(s.directoryLoadMs)} + SkillRegistry.make ${num(s.registryMs)}), peak RSS ${mb(s.peakRss)}`)
      lines.push(`  SHA-256 of the same bytes in memory ${num(s.hashMs, 1)} ms; readFileSync + SHA-256 of the same files ${num(s.readHashMs)} ms`)
      check("load of 1,000 skills <= 2x readFileSync + SHA-256", x(s.loadMs / s.readHashMs), s.loadMs / s.readHashMs <= 2)
    }
  }
  const r = g?.find((row) => row.reload !== undefined)?.reload
  if (r !== undefined) {
    lines.push("")
    if (r.error !== undefined) lines.push(`Reload: ${r.error}`)
    else {
      lines.push(`Reload under --watch: appended to ${r.edited} in ${r.skills} skills (${r.files} files): served ${num(r.watchedMs)} ms after the write (debounce 100 ms included)`)
      lines.push(`  looked at ${r.lookedAt} path(s), re-read ${r.readFiles} file(s), re-hashed ${r.hashedFiles} (${r.hashedBytes} bytes), registry re-hashed ${r.registryHashedFiles}`)
      lines.push(`  for comparison: a full rescan (reload without events) ${num(r.fullReloadMs)} ms; the registry's rebuild alone (replace) ${num(r.registryMs)} ms`)
      check("one-file reload at 10,000 skills (watch, end to end) <= 1 s", `${num(r.watchedMs)} ms`, r.watchedMs <= 1000)
      check("that reload re-reads and re-hashes only the edited file", `${r.readFiles} read, ${r.hashedFiles} hashed`, r.hashedFiles === 1 && r.readFiles === 1 && r.registryHashedFiles === 0)
    }
  }
  const metrics = results["metrics"] as { readonly rows: Array<Row> } | undefined
  if (metrics !== undefined) {
    lines.push("")
    lines.push(`Metrics on (--metrics: spans and series) against off, same server, ${config.connections} connections, median of ${config.rounds} interleaved rounds x ${config.seconds} s`)
    lines.push(`${pad("request", 28)}${pad("route off", 11)}${pad("route on", 10)}${pad("on/off", 8)}${pad("dispatch off", 14)}${pad("dispatch on", 13)}on/off`)
    const byRequest = new Map<string, Record<string, Row>>()
    for (const row of metrics.rows) byRequest.set(row.request, { ...byRequest.get(row.request), [row.server]: row })
    for (const [request, r] of byRequest) {
      const route = r["ours-metrics"]!.rps / r["ours"]!.rps
      const dispatch = r["ours-off-metrics"]!.rps / r["ours-off"]!.rps
      lines.push(`${pad(request, 28)}${pad(num(r["ours"]!.rps), 11)}${pad(num(r["ours-metrics"]!.rps), 10)}${pad(`${(route * 100).toFixed(0)}%`, 8)}${pad(num(r["ours-off"]!.rps), 14)}${pad(num(r["ours-off-metrics"]!.rps), 13)}${(dispatch * 100).toFixed(0)}%`)
      check(`${request}: metrics on >= 90% of off (fast route)`, `${(route * 100).toFixed(0)}%`, route >= 0.9)
      check(`${request}: metrics on >= 90% of off (effect's dispatch)`, `${(dispatch * 100).toFixed(0)}%`, dispatch >= 0.9)
    }
  }
  const gateway = results["gateway"] as Gateway.Result | undefined
  if (gateway !== undefined) lines.push(...Gateway.report(gateway, config, check))
  const u = results["upsert"] as Array<any> | undefined
  if (u !== undefined) {
    lines.push("")
    lines.push("Upsert: one skill (8 files) added at runtime, median of each call (max); replace with one more skill for comparison")
    for (const row of u) {
      lines.push(
        row.error !== undefined
          ? `  ${row.skills} skills: ${row.error}`
          : `  ${pad(`${row.skills} skills`, 14)} upsert ${num(row.upsertMedianMs, 3)} ms (max ${num(row.upsertMaxMs, 2)})  remove ${num(row.removeMedianMs, 3)} ms (max ${num(row.removeMaxMs, 2)})  replace ${num(row.replaceMs, 1)} ms`
      )
    }
    const [small, large] = u
    if (small?.upsertMedianMs !== undefined && large?.upsertMedianMs !== undefined) {
      check("upsert of one skill into 10,000 skills <= 5 ms", `${num(large.upsertMedianMs, 3)} ms`, large.upsertMedianMs <= 5)
      const ratio = large.upsertMedianMs / small.upsertMedianMs
      check("upsert at 10,000 skills within 2x of 10 skills", x(ratio), ratio <= 2)
    }
  }
  const found = results["search"] as any
  if (found !== undefined) {
    lines.push("")
    lines.push(`Search: ${found.queries} queries (a name, a word, two words with typos, two words), 20 hits a page; the index built once per snapshot`)
    if (found.error !== undefined) lines.push(`  ${found.skills} skills: ${found.error}`)
    else {
      lines.push(`  ${pad(`${found.skills} skills`, 14)} index p50 ${num(found.indexP50Ms, 3)} ms  p99 ${num(found.indexP99Ms, 3)} ms  linear scan p50 ${num(found.scanP50Ms, 1)} ms  p99 ${num(found.scanP99Ms, 1)} ms  index built in ${num(found.indexBuildMs)} ms`)
      check(`search p50 at ${found.skills.toLocaleString("en")} skills <= 5 ms`, `${num(found.indexP50Ms, 3)} ms`, found.indexP50Ms <= 5)
      check(`search p99 at ${found.skills.toLocaleString("en")} skills <= 20 ms`, `${num(found.indexP99Ms, 3)} ms`, found.indexP99Ms <= 20)
      check("search: the index's pages are the linear scan's", `${found.mismatches} of ${found.scanned} differ`, found.mismatches === 0)
    }
  }
  lines.push("")
  lines.push("Targets")
  for (const t of targets) lines.push(`  ${t.met === true ? "MET   " : t.met === false ? "MISSED" : "?     "} ${pad(t.target, 62)} ${t.measured}`)
  lines.push(`elapsed ${num(results["elapsedSeconds"] as number)} s`)
  console.log(lines.join("\n"))
}

main().then(() => cleanup(), (error) => {
  cleanup()
  console.error(error)
  process.exit(1)
})
