#!/usr/bin/env node
// The `mcp-skills-server` executable. A file that exists before the build, so `npm install` links it
// (a bin entry pointing into dist/ is skipped when dist/ does not exist yet); it loads the built code:
// the executable as one module (`npm run build` bundles it), else the modules `tsc` built.
import { enableCompileCache } from "node:module"
import { setFlagsFromString } from "node:v8"

// `serve` keeps V8's young generation at its first size (1 MiB a semi-space) for the life of the
// process, unless the operator sized it on node's command line or in NODE_OPTIONS. V8 doubles it,
// up to 32 MiB, whenever objects outlive the collections of its size: loading this program's
// modules does (16 MiB), and loading a catalogue does (every skill kept survives). Requests then
// leave almost nothing alive, so the grown space stayed committed for nothing: 21 MiB of RSS at
// 1,000 skills, 29 MiB at 10,000, about 50 MiB under load, for the same throughput (docs/performance.md).
// V8 reads the growth factor each time it would grow the space, so setting it once running holds.
// Only `serve`: Node checks its own modules' embedded compiled code against V8's flags and compiles
// them again once one is changed (about 25 ms), which a short command would pay for nothing. Set
// before the compile cache, which is kept apart for each set of V8 flags.
const sizing = /^--(?:max|min)[-_]semi[-_]space[-_]size(?:=|$)|^--semi[-_]space[-_]growth[-_]factor(?:=|$)/
const serving = process.argv.slice(2).find((arg) => !arg.startsWith("-")) === "serve"
if (serving && ![...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((option) => sizing.test(option))) {
  setFlagsFromString("--semi-space-growth-factor=1")
}

// V8's compiled code of the executable, kept on disk (the OS temp folder) and reused by the next run:
// compiling is most of what a short command does before its first line. Node 22.1 and later.
enableCompileCache?.()

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
