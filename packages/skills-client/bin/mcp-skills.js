#!/usr/bin/env node
// The `mcp-skills` executable. A file that exists before the build, so `npm install` links it
// (a bin entry pointing into dist/ is skipped when dist/ does not exist yet); it loads the built code.
import("../dist/src/bin/mcp-skills.js").catch((error) => {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist/src/bin")) {
    console.error("mcp-skills: not built yet; run `npm run build` in the repository first")
    process.exit(1)
  }
  throw error
})
