#!/usr/bin/env node
// The `mcp-skills-server` executable. A file that exists before the build, so `npm install` links it
// (a bin entry pointing into dist/ is skipped when dist/ does not exist yet); it loads the built code:
// the executable as one module (`npm run build` bundles it), else the modules `tsc` built.
import * as Module from "node:module"
import { setFlagsFromString } from "node:v8"

// A Node older than `engines` fails inside the built code with an error that names no version:
// say which Node is needed instead, in one line.
const needed = Module.createRequire(import.meta.url)("../package.json").engines.node.replace(/^>=/, "")
const [have, want] = [process.versions.node, needed].map((version) => version.split(".").map(Number))
if ((have[0] - want[0] || have[1] - want[1] || have[2] - want[2]) < 0) {
  console.error(`mcp-skills-server: needs Node ${needed} or later, but runs on Node ${process.versions.node}; install a newer Node`)
  process.exit(1)
}

const serving = process.argv.slice(2).find((arg) => !arg.startsWith("-")) === "serve"

// `serve` over HTTP runs with one glibc malloc arena (MALLOC_ARENA_MAX=1), unless the operator tunes
// the allocator (any MALLOC_ variable, GLIBC_TUNABLES, or another malloc preloaded). glibc gives
// each thread that allocates an arena of its own, raises its mmap threshold to the largest block
// freed so far (up to 32 MiB), and keeps up to twice that free at the top of each arena. Node's
// compile cache frees a block three times the executable's size (5.8 MiB) while loading it, so the
// arenas of V8's compiler threads kept about 10 MiB they had freed once the loading code was
// optimized, at 1,000 skills as at 10,000 (docs/performance.md). With one arena what they free is
// what the main thread allocates next. Fixing the threshold instead (MALLOC_MMAP_THRESHOLD_) took
// the same off but halved the rate of 1 MiB reads: every large answer faulted its pages in again.
// glibc reads these variables when the process starts, so the process starts again in place
// (execve: the same process id, arguments and descriptors), once: about the time `node -e 0`
// takes. Not over stdio, whose server a host starts for each session and waits on.
const tuned = Object.entries(process.env).some(([name, value]) =>
  value !== "" && (name.startsWith("MALLOC_") || name === "GLIBC_TUNABLES" || name === "LD_PRELOAD")
)
const overStdio = process.argv.some((arg) => arg === "--stdio" || arg.startsWith("--stdio="))
if (serving && !overStdio && !tuned && process.platform === "linux" && typeof process.execve === "function") {
  // glibc's version, from Node's report of the process (left as the operator set it).
  const excludeNetwork = process.report.excludeNetwork
  process.report.excludeNetwork = true
  const glibc = process.report.getReport().header.glibcVersionRuntime !== undefined
  process.report.excludeNetwork = excludeNetwork
  if (glibc) {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      ...process.env,
      MALLOC_ARENA_MAX: "1"
    })
  }
}

// `serve` keeps V8's young generation at its first size (1 MiB a semi-space) for the life of the
// process, unless the operator sized it on node's command line or in NODE_OPTIONS. V8 doubles it,
// up to 32 MiB, whenever objects outlive the collections of its size: loading this program's
// modules does (16 MiB), and loading a catalogue does (every skill kept survives). The full
// collection once the catalogue is loaded gives the grown space back before `listening`, so what
// the bound still saves is the peak while loading (197 against 228 MiB at 10,000 skills), which a
// container's memory limit meets first; it costs about 7% of that start (docs/performance.md).
// V8 reads the growth factor each time it would grow the space, so setting it once running holds.
// Only `serve`: Node checks its own modules' embedded compiled code against V8's flags and compiles
// them again once one is changed (about 25 ms), which a short command would pay for nothing. Set
// before the compile cache, which is kept apart for each set of V8 flags.
const sizing = /^--(?:max|min)[-_]semi[-_]space[-_]size(?:=|$)|^--semi[-_]space[-_]growth[-_]factor(?:=|$)/
if (serving && ![...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((option) => sizing.test(option))) {
  setFlagsFromString("--semi-space-growth-factor=1")
}

// V8's compiled code of the executable, kept on disk (the OS temp folder) and reused by the next run:
// compiling is most of what a short command does before its first line. Node 22.1 and later.
Module.enableCompileCache?.()

const missing = (error, file) => error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes(file)

import("../dist/src/bin/mcp-skills-server.bundle.js")
  .catch((error) => {
    if (missing(error, "mcp-skills-server.bundle.js")) return import("../dist/src/bin/mcp-skills-server.js")
    throw error
  })
  .catch((error) => {
    if (missing(error, "dist/src/bin")) {
      console.error("mcp-skills-server: not built yet; run `npm run build` in the repository first")
      process.exit(1)
    }
    throw error
  })
