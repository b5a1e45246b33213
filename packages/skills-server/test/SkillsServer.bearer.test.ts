/**
 * Against our real server: `SkillsServer.layer` on effect's
 * `McpServer.layerHttp`, behind an `HttpRouter` middleware that answers 401 unless the request carries
 * `Authorization: Bearer <token>`. The built `mcp-skills` CLI (`packages/skills-client/dist`) lists and
 * pulls with `--header` and with `MCP_SKILLS_TOKEN` on both protocol revisions; without a token, or with
 * a wrong one, it exits 1 with one line naming 401 and writes nothing.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { McpServer } from "effect/ai"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Skill, SkillsServer } from "../src/index.js"
import { sha256 } from "./support/catalogue.js"
import { invoiceMd, logoPng, pdfProcessing, pdfSkillMd, skillMd } from "./support/fixtures.js"
import { repoRoot } from "./support/cli-server.js"
import { tempDir } from "./support/tree.js"
import { adapters, serveApp, ServerUrl } from "./support/wire.js"

const token = "t0ken-for-the-cli"
const cli = Path.join(repoRoot, "packages/skills-client/dist/src/bin/mcp-skills.js")

// Every request to the MCP route (POST, GET, DELETE) goes through this; nothing reaches the server without it.
const BearerOnly = HttpRouter.middleware()((effect) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.headers["authorization"] !== `Bearer ${token}`) {
      return HttpServerResponse.jsonUnsafe(
        { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Unauthorized" } },
        { status: 401, headers: { "www-authenticate": "Bearer" } }
      )
    }
    return yield* effect
  })
)

const runbookMd = skillMd("runbook", "On-call runbook")
const catalogue = [
  pdfProcessing,
  Skill.make({ path: "acme/ops/runbook", files: { "SKILL.md": runbookMd, "steps/restart.md": "# Restart\n\n1. drain\n2. restart\n" } })
]

/** What a pull of the whole catalogue must leave in DIR, by path, and the skills the lock file must list. */
const expected: Record<string, string | Uint8Array> = {
  "pdf-processing/SKILL.md": pdfSkillMd,
  "pdf-processing/templates/invoice.md": invoiceMd,
  "pdf-processing/assets/logo.png": logoPng,
  "acme/ops/runbook/SKILL.md": runbookMd,
  "acme/ops/runbook/steps/restart.md": "# Restart\n\n1. drain\n2. restart\n"
}
const skillUris = ["skill://acme/ops/runbook/SKILL.md", "skill://pdf-processing/SKILL.md"]

const Guarded = McpServer.layerHttp({
  name: "guarded",
  version: "1.0.0",
  path: "/mcp",
  protocols: adapters(),
  registrations: SkillsServer.layer({ skills: catalogue })
}).pipe(Layer.provide(BearerOnly.layer))

interface Run {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the built CLI as a child process; the server answers from this process, so never synchronously. */
const runCli = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) =>
  Effect.promise(() =>
    new Promise<Run>((resolve) => {
      const options = { encoding: "utf8" as const, timeout: 60_000, env: { ...process.env, MCP_SKILLS_TOKEN: "", ...env } }
      execFile(process.execPath, [cli, ...args], options, (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }))
    })
  )

// The DIR a pull writes: not there yet, inside a fresh temp folder.
const target = tempDir("mcp-skills-bearer-").pipe(Effect.map((dir) => Path.join(dir, "skills")))

const listing = (dir: string) =>
  Effect.promise(async () => (await Fs.readdir(dir, { recursive: true }).catch(() => [] as Array<string>)).sort())

/** DIR holds exactly the catalogue's files, byte for byte, and a lock file whose digests and sizes match them. */
const assertPulled = (dir: string, url: string) =>
  Effect.gen(function*() {
    for (const [path, content] of Object.entries(expected)) {
      const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content
      assert.deepStrictEqual(new Uint8Array(yield* Effect.promise(() => Fs.readFile(Path.join(dir, path)))), bytes, path)
    }
    const lock = JSON.parse(yield* Effect.promise(() => Fs.readFile(Path.join(dir, "mcp-skills.lock.json"), "utf8")))
    assert.strictEqual(lock.version, 1)
    assert.deepStrictEqual(lock.skills.map((skill: { uri: string }) => skill.uri).sort(), skillUris)
    const files = lock.skills.flatMap((skill: { origin: string; path: string; files: Array<any> }) => {
      assert.strictEqual(skill.origin, url)
      return skill.files.map((file) => ({ ...file, folder: skill.path }))
    })
    assert.strictEqual(files.length, Object.keys(expected).length)
    for (const file of files) {
      const content = expected[Path.posix.join(file.folder, file.path)]
      assert.isDefined(content, `${file.folder}/${file.path} is in the catalogue`)
      const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content!
      assert.deepStrictEqual([file.digest, file.size], [sha256(bytes), bytes.length], file.uri)
    }
  })

const unauthorized =
  "mcp-skills: auth check failed: the server answered 401 Unauthorized: send credentials with --header 'Authorization: Bearer ...' or MCP_SKILLS_TOKEN"

describe("mcp-skills against our server behind a bearer-token HttpRouter middleware", () => {
  // Real clock: the CLI runs for seconds in another process while the server keeps its own time.
  layer(serveApp(Guarded), { excludeTestServices: true })((it) => {
    it.effect("the middleware itself: 401 without the token, the server's answer with it", () =>
      Effect.gen(function*() {
        const url = yield* ServerUrl
        const ask = (headers: Record<string, string>) =>
          Effect.promise(() =>
            fetch(url, {
              method: "POST",
              headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
              body: JSON.stringify({
                jsonrpc: "2.0",
                id: 1,
                method: "initialize",
                params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }
              })
            }).then((response) => response.status)
          )
        assert.strictEqual(yield* ask({}), 401)
        assert.strictEqual(yield* ask({ authorization: "Bearer wrong" }), 401)
        assert.strictEqual(yield* ask({ authorization: `Bearer ${token}` }), 200)
      }))

    for (const protocol of ["2026-07-28", "2025-11-25"] as const) {
      const credentials = [
        { how: "--header", args: ["--header", `Authorization: Bearer ${token}`], env: {} },
        { how: "MCP_SKILLS_TOKEN", args: [], env: { MCP_SKILLS_TOKEN: token } }
      ]
      for (const { args, env, how } of credentials) {
        it.effect(`${protocol}, ${how}: list names every skill, pull writes them and the lock file`, () =>
          Effect.gen(function*() {
            const url = yield* ServerUrl
            const dir = yield* target
            const common = [...args, "--protocol", protocol]
            const list = yield* runCli(["list", url, "--json", ...common], env)
            assert.deepStrictEqual([list.status, list.stderr], [0, ""])
            assert.deepStrictEqual(JSON.parse(list.stdout).skills.map((skill: { uri: string }) => skill.uri).sort(), skillUris)
            const pull = yield* runCli(["pull", url, "--all", "--into", dir, ...common], env)
            assert.deepStrictEqual([pull.status, pull.stderr], [0, ""])
            assert.deepStrictEqual(pull.stdout.trim().split("\n").map((line) => line.split(" ").slice(0, 2).join(" ")).sort(), [
              "added skill://acme/ops/runbook/SKILL.md",
              "added skill://pdf-processing/SKILL.md"
            ])
            yield* assertPulled(dir, url)
            // Pulled again with nothing changed: both unchanged, DIR as it was.
            const again = yield* runCli(["pull", url, "--all", "--into", dir, ...common], env)
            assert.strictEqual(again.status, 0, again.stderr)
            assert.match(again.stdout, /^unchanged skill:\/\/acme\/ops\/runbook\/SKILL\.md.*\nunchanged skill:\/\/pdf-processing\/SKILL\.md/)
            yield* assertPulled(dir, url)
          }), { timeout: 120_000 })
      }

      const refused = [
        { how: "no token", args: [], env: {} },
        { how: "a wrong --header", args: ["--header", "Authorization: Bearer not-the-token"], env: {} },
        { how: "a wrong MCP_SKILLS_TOKEN", args: [], env: { MCP_SKILLS_TOKEN: "not-the-token" } }
      ]
      for (const { args, env, how } of refused) {
        it.effect(`${protocol}, ${how}: list and pull exit 1 with one line naming 401, nothing written`, () =>
          Effect.gen(function*() {
            const url = yield* ServerUrl
            const dir = yield* target
            const common = [...args, "--protocol", protocol]
            for (const command of [["list", url], ["pull", url, "--all", "--into", dir]]) {
              const run = yield* runCli([...command, ...common], env)
              assert.strictEqual(run.status, 1, `${command[0]}: ${run.stdout}${run.stderr}`)
              assert.strictEqual(run.stdout, "")
              assert.deepStrictEqual(run.stderr.trim().split("\n"), [unauthorized])
            }
            assert.deepStrictEqual(yield* listing(dir), [])
          }), { timeout: 120_000 })
      }
    }
  })
})
