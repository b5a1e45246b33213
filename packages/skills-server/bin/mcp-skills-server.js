#!/usr/bin/env node
// The `mcp-skills-server` executable. A file that exists before the build, so `npm install` links it
// (a bin entry pointing into dist/ is skipped when dist/ does not exist yet); it loads the built code:
// the executable as one module (`npm run build` bundles it), else the modules `tsc` built.
import { enableCompileCache } from "node:module"

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
