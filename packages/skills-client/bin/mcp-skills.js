#!/usr/bin/env node
// The `mcp-skills` executable. A file that exists before the build, so `npm install` links it
// (a bin entry pointing into dist/ is skipped when dist/ does not exist yet); it loads the built code:
// the executable as one module (`npm run build` bundles it), else the modules `tsc` built.
import * as Module from "node:module"

// A Node older than `engines` fails inside the built code with an error that names no version:
// say which Node is needed instead, in one line.
const needed = Module.createRequire(import.meta.url)("../package.json").engines.node.replace(/^>=/, "")
const [have, want] = [process.versions.node, needed].map((version) => version.split(".").map(Number))
if ((have[0] - want[0] || have[1] - want[1] || have[2] - want[2]) < 0) {
  console.error(`mcp-skills: needs Node ${needed} or later, but runs on Node ${process.versions.node}; install a newer Node`)
  process.exit(1)
}

// V8's compiled code of the executable, kept on disk (the OS temp folder) and reused by the next run:
// compiling is most of what a short command does before its first line. Node 22.1 and later.
Module.enableCompileCache?.()

const missing = (error, file) => error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes(file)

import("../dist/src/bin/mcp-skills.bundle.js")
  .catch((error) => {
    if (missing(error, "mcp-skills.bundle.js")) return import("../dist/src/bin/mcp-skills.js")
    throw error
  })
  .catch((error) => {
    if (missing(error, "dist/src/bin")) {
      console.error("mcp-skills: not built yet; run `npm run build` in the repository first")
      process.exit(1)
    }
    throw error
  })
