// `mcp-skills --stdio CMD` says what happened to the server: a command that cannot start is named
// with its errno, a server that stops gives its exit code, then the end of its stderr; one line
// first, exit status 1.
import * as Effect from "effect/Effect"
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { makeFixture } from "./support/fixture.js"
import { runCli, serverCli } from "./support/helpers.js"

const dying = Path.join(import.meta.dirname, "fixtures/dying-stdio-server.mjs")

const lines = (stderr: string) => stderr.trimEnd().split("\n")

describe.concurrent("mcp-skills --stdio: the server's own failure", () => {
  it("a missing command is named, with ENOENT", async () => {
    const run = await runCli(["list", "--stdio", "mcp-skills-no-such-command --flag"])
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toHaveLength(1)
    expect(run.stderr).toMatch(/^mcp-skills: .*cannot start the server command mcp-skills-no-such-command: not found \(ENOENT\)\n$/)
  })

  it("`false`: its exit code, not write EPIPE", async () => {
    const run = await runCli(["list", "--stdio", "false"])
    expect(run.status).toBe(1)
    expect(run.stderr).not.toContain("EPIPE")
    expect(run.stderr).toMatch(/^mcp-skills: .*the server false exited with code 1 and wrote nothing to stderr\n$/)
  })

  it("a server that writes to stderr and exits 3: the code on one line, then its last stderr lines", async () => {
    const run = await runCli(["get", "--stdio", "sh -c 'echo starting >&2; echo \"Error: port in use\" >&2; exit 3'", "skill://a/SKILL.md"])
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^mcp-skills: .*the server sh -c .* exited with code 3; its stderr ends with:$/),
      "  starting",
      "  Error: port in use"
    ])
  })

  it("a server that exits right after the first request", async () => {
    const run = await runCli(["list", "--stdio", `${process.execPath} ${dying} '*' 4`])
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^mcp-skills: .*exited with code 4; its stderr ends with:$/),
      expect.stringMatching(/^  fatal: giving up on (server\/discover|initialize)$/)
    ])
  })

  it.skipIf(!existsSync(serverCli))("a server that exits on the first request after the handshake", async () => {
    const run = await Effect.runPromise(Effect.scoped(Effect.flatMap(makeFixture, (dir) =>
      Effect.promise(() => runCli(["list", "--stdio", `${process.execPath} ${dying} skills/list 5 ${serverCli} ${dir}`])))))
    expect(run.status).toBe(1)
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^mcp-skills: .*exited with code 5; its stderr ends with:$/),
      "  fatal: giving up on skills/list"
    ])
  })
})
