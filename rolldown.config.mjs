// Each executable as one module (`dist/src/bin/*.bundle.js`, next to the modules it is made of):
// Node resolves, reads and links some 640 modules one by one before `mcp-skills-server --help`
// prints a line, which is most of a short command's time. The packages themselves stay modules
// (a library's users bring their own effect); an executable is a program and carries its own.
// `@redis/client` stays outside: only `--redis` loads it, from the user's installation.
// ASCII, without documentation comments: V8 keeps a module's source for the life of the process,
// two bytes a character once one character is outside Latin-1 (the server's source held 6.5 MiB of
// its RSS; now 1.8), and the bundled packages' JSDoc was 40% of it. Licence comments stay.
const executable = (input, file) => ({
  input,
  platform: "node",
  external: [/^node:/, "@redis/client"],
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
