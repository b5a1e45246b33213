/**
 * What a command costs before it does anything, and what start-up costs per file: spawn-to-exit
 * times of bare `node -e 0`, of both executables' `--help` and of the plain read-and-hash script
 * (`servers/readHash.ts`), the figures the start-up targets are ratios of, measured in the same
 * run as `serve`'s own start-up.
 */
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import * as Children from "./child.js"

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** Spawn-to-exit of `node ARGS`, in ms; fails when the command does. */
const timed = (args: ReadonlyArray<string>) => {
  const start = performance.now()
  const result = spawnSync(process.execPath, args, { encoding: "utf8", timeout: 900_000 })
  const ms = performance.now() - start
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${result.stderr.slice(-300)}`)
  return { ms, stdout: result.stdout }
}

/** The commands whose start is measured: as a user runs them (the executables' `bin` files). */
export const commands = {
  "node -e 0": ["-e", "0"],
  "mcp-skills-server --help": [Path.join(Children.repoRoot, "packages/skills-server/bin/mcp-skills-server.js"), "--help"],
  "mcp-skills --help": [Path.join(Children.repoRoot, "packages/skills-client/bin/mcp-skills.js"), "--help"]
} as const

/**
 * The median spawn-to-exit of each command over `runs` runs, interleaved (every run runs every
 * command), after one untimed run of each (it fills Node's compile cache, as any earlier use has).
 */
export const commandStarts = (runs: number): Record<keyof typeof commands, number> => {
  const names = Object.keys(commands) as Array<keyof typeof commands>
  for (const name of names) timed(commands[name])
  const times = new Map(names.map((name) => [name, [] as Array<number>]))
  for (let run = 0; run < runs; run++) for (const name of names) times.get(name)!.push(timed(commands[name]).ms)
  return Object.fromEntries(names.map((name) => [name, median(times.get(name)!)])) as Record<keyof typeof commands, number>
}

/**
 * Reading and hashing every file of `dir` in a plain script, best of three: its time in the
 * process (`ms`) and spawn to exit (`wallMs`).
 */
export const readHash = (dir: string): { readonly files: number; readonly bytes: number; readonly ms: number; readonly wallMs: number } => {
  const runs = [0, 1, 2].map(() => {
    const { ms, stdout } = timed([Path.join(Children.repoRoot, "bench/dist/servers/readHash.js"), dir])
    return { ...JSON.parse(stdout.trim().split("\n").at(-1)!), wallMs: ms }
  })
  return { ...runs[0], ms: Math.min(...runs.map((run) => run.ms)), wallMs: Math.min(...runs.map((run) => run.wallMs)) }
}
