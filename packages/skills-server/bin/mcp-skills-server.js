#!/usr/bin/env node
// The `mcp-skills-server` executable. A file that exists before the build, so `npm install` links it
// (a bin entry pointing into dist/ is skipped when dist/ does not exist yet); it loads the built code:
// the executable as one module (`npm run build` bundles it), else the modules `tsc` built.
import { enableCompileCache } from "node:module"
import { setFlagsFromString } from "node:v8"

// A server lives long after its start-up, and a start-up that keeps many short-lived objects alive
// for a while (a gateway verifying its upstreams' files as they arrive) taught V8 to allocate the
// objects of those sites (effect's own, which every request uses) straight in the old generation:
// a gateway then ran a full collection every ~150 ms and spent 4x the CPU of a direct server per
// `skills/list`. Without pretenuring, each request's objects die young, as they are; a 10,000-skill
// start-up takes the same time either way (bench/README.md).
setFlagsFromString("--no-allocation-site-pretenuring")

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
