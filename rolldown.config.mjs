// Each executable as one module (`dist/src/bin/*.bundle.js`, next to the modules it is made of):
// Node resolves, reads and links some 640 modules one by one before `mcp-skills-server --help`
// prints a line, which is most of a short command's time. The packages themselves stay modules
// (a library's users bring their own effect); an executable is a program and carries its own.
// `@redis/client` stays outside: only `--redis` loads it, from the user's installation.
// ASCII, without documentation comments: V8 keeps a module's source for the life of the process,
// two bytes a character once one character is outside Latin-1 (the server's source held 6.5 MiB of
// its RSS; now 1.8), and the bundled packages' JSDoc was 40% of it. Licence comments stay.
//
// `node:http` comes from Node's own module object (`process.getBuiltinModule`), not from its ES
// module namespace: Node builds that namespace by reading every export, and reading `WebSocket`,
// `CloseEvent` or `MessageEvent` loads and compiles Node's fetch implementation (undici), about
// 20 ms of every start of either executable, `--help` included, that no command here uses. The
// module below exports the rest under the same names, read once when the bundle starts; a bundled
// import of one of the three fails the build.
const webExports = new Set(["WebSocket", "CloseEvent", "MessageEvent"])
const nodeHttp = {
  name: "node-http-without-fetch",
  resolveId: (id) => (id === "node:http" ? "\0node-http" : null),
  load: (id) => {
    if (id !== "\0node-http") return null
    const names = Object.keys(process.getBuiltinModule("node:http")).filter((name) => !webExports.has(name))
    return `const http = process.getBuiltinModule("node:http")\nexport default http\nexport const { ${names.join(", ")} } = http\n`
  }
}

// A missing export is an error, not a warning: an import of a name the module above leaves out,
// by name or through the namespace.
const onLog = (level, log, handler) =>
  log.code === "MISSING_EXPORT" || log.code === "IMPORT_IS_UNDEFINED" ? handler("error", log) : handler(level, log)

const executable = (input, file) => ({
  input,
  platform: "node",
  external: [/^node:(?!http$)/, "@redis/client"],
  plugins: [nodeHttp],
  onLog,
  logLevel: "warn",
  output: {
    file,
    format: "esm",
    codeSplitting: false,
    sourcemap: false,
    charset: "ascii",
    comments: { legal: true, annotation: false, jsdoc: false }
  }
})

export default [
  executable("packages/skills-server/dist/src/bin/mcp-skills-server.js", "packages/skills-server/dist/src/bin/mcp-skills-server.bundle.js"),
  executable("packages/skills-client/dist/src/bin/mcp-skills.js", "packages/skills-client/dist/src/bin/mcp-skills.bundle.js")
]
