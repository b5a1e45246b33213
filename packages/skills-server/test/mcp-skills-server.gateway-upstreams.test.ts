/**
 * `mcp-skills-server serve --upstream-stdio ...` against upstreams that misbehave, each a small
 * node script the test writes and the gateway spawns: one that writes a 300 MiB line is refused as
 * the line streams, in one line naming it and the bound, the gateway's memory held within the
 * bound; one whose frontmatter is refused is named with the reason in the line the gateway starts
 * with; a silent one holds the start-up no longer than the documented deadline and is said to be
 * not seen yet.
 */
import { ClientLimits } from "@mcp-skills/client"
import { Limits } from "@mcp-skills/core"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as ServerLimits from "../src/ServerLimits.js"
import { node, spawnBin, stop, waitFor } from "./support/cli-server.js"

// A folder for the scripts, removed with the scope.
const scripts = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "gateway-upstreams-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

// `mcp-skills-server serve --upstream-stdio NAME="node SCRIPT"` on a free loopback port, stopped with the scope.
const gateway = (name: string, script: string) =>
  Effect.acquireRelease(
    Effect.sync(() => ({
      started: Date.now(),
      running: spawnBin("mcp-skills-server", ["serve", "--upstream-stdio", `${name}=${node} ${script}`, "--host", "127.0.0.1", "--port", "0"])
    })),
    ({ running }) => Effect.promise(() => stop(running))
  )

const listening = (running: Parameters<typeof waitFor>[0]) => Effect.promise(() => waitFor(running, "stdout", /^listening http/m))

// Bytes of a status line of /proc (`VmRSS:   123 kB`).
const memory = (pid: number, field: "VmRSS" | "VmHWM") => {
  const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  return Number(kib) * 1024
}

const MiB = 1024 * 1024

// Answers its first request with one line of `MIB` MiB, written 1 MiB at a time, once told
// (SIGUSR1): so the gateway's memory is measured before it starts. It ends when its input does.
const longLine = (file: string, pidFile: string, mib: number) =>
  Fs.writeFileSync(file, `
const fs = require("node:fs")
const piece = Buffer.alloc(${MiB}, 0x61)
let id
process.stdin.on("data", (data) => {
  if (id !== undefined) return
  id = /"id":(\\d+|"[^"]*")/.exec(data.toString())?.[1]
  if (id !== undefined) fs.writeFileSync(${JSON.stringify(pidFile)}, String(process.pid))
})
process.stdin.on("end", () => process.exit(0))
process.on("SIGUSR1", () => {
  process.stdout.write(\`{"jsonrpc":"2.0","id":\${id},"result":{"pad":"\`)
  let written = 0
  const more = () => {
    while (written < ${mib}) {
      written++
      if (!process.stdout.write(piece)) return process.stdout.once("drain", more)
    }
    process.stdout.write('"}}\\n')
  }
  more()
})
`)

// A skills server of one skill over stdio (2026-07-28) whose SKILL.md says another description than
// its entry, beside one that verifies.
const refusedFrontmatter = (file: string) =>
  Fs.writeFileSync(file, `
const crypto = require("node:crypto")
const skill = (name, description, md) => ({
  md,
  entry: {
    uri: "skill://" + name + "/SKILL.md",
    frontmatter: { name, description },
    resources: [{ uri: "skill://" + name + "/SKILL.md", digest: "sha256:" + crypto.createHash("sha256").update(md).digest("hex"), size: Buffer.byteLength(md) }]
  }
})
const skills = [
  skill("good", "Verifies", "---\\nname: good\\ndescription: Verifies\\n---\\n# Good\\n"),
  skill("bad", "Listed one way", "---\\nname: bad\\ndescription: Written another\\n---\\n# Bad\\n")
]
const hint = { resultType: "complete", ttlMs: 0, cacheScope: "private" }
const send = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, ...result }) + "\\n")
let buffer = ""
process.stdin.on("data", (data) => {
  buffer += data
  for (let at = buffer.indexOf("\\n"); at !== -1; at = buffer.indexOf("\\n")) {
    const message = JSON.parse(buffer.slice(0, at))
    buffer = buffer.slice(at + 1)
    if (message.id === undefined) continue
    if (message.method === "server/discover") {
      send(message.id, { result: { ...hint, supportedVersions: ["2026-07-28"], capabilities: { extensions: { "io.modelcontextprotocol/skills": {} } } } })
    } else if (message.method === "skills/list") {
      send(message.id, { result: { ...hint, skills: skills.map((skill) => skill.entry) } })
    } else if (message.method === "resources/read") {
      const md = skills.find((skill) => skill.entry.uri === message.params.uri)?.md ?? ""
      send(message.id, { result: { ...hint, contents: [{ uri: message.params.uri, mimeType: "text/markdown", text: md }] } })
    } else {
      send(message.id, { error: { code: -32601, message: "Method not found" } })
    }
  }
})
process.stdin.on("end", () => process.exit(0))
`)

describe("mcp-skills-server serve --upstream-stdio, against upstreams that misbehave", () => {
  it.live("a 300 MiB line is refused as it streams, in one line naming the upstream and the bound, memory held within the bound", () =>
    Effect.gen(function*() {
      const dir = yield* scripts
      const script = Path.join(dir, "long-line.cjs")
      const pidFile = Path.join(dir, "upstream.pid")
      longLine(script, pidFile, 300)
      const { running } = yield* gateway("big", script)
      const pid = running.child.pid!
      const upstream = yield* Effect.promise(async () => {
        while (!Fs.existsSync(pidFile) || Fs.readFileSync(pidFile, "utf8") === "") await new Promise((resolve) => setTimeout(resolve, 50))
        return Number(Fs.readFileSync(pidFile, "utf8"))
      })
      const before = memory(pid, "VmRSS")
      process.kill(upstream, "SIGUSR1")
      const bound = ClientLimits.maxMessageBytes(Limits.defaults)
      // What it holds of the line (the bound), a copy as effect decodes it, and room for the collector.
      const most = before + 2 * bound + 32 * MiB
      const said = /^upstream big is \S+: .*$/m
      // Until the gateway says what became of the upstream, or its memory passes the mark.
      const peak = yield* Effect.promise(async () => {
        while (!said.test(running.stderr()) && memory(pid, "VmHWM") <= most) await new Promise((resolve) => setTimeout(resolve, 100))
        return memory(pid, "VmHWM")
      })
      assert.isAtMost(peak, most, `RSS ${before / MiB | 0} MiB before the line, at most ${peak / MiB | 0} MiB while it streamed`)
      assert.match(
        running.stderr(),
        new RegExp(`^upstream big is refused: big wrote a line of more than ${bound} bytes, the most one message may have; .*$`, "m")
      )
      yield* listening(running)
      const lines = `${running.stdout()}${running.stderr()}`.split("\n").filter((text) => text.includes("wrote a line"))
      assert.strictEqual(lines.filter((text) => text.startsWith("upstream big is refused")).length, 1, lines.join("\n"))
    }), { timeout: 30_000 })

  it.live("an upstream whose frontmatter is refused is named with the reason in the line the gateway starts with", () =>
    Effect.gen(function*() {
      const dir = yield* scripts
      const script = Path.join(dir, "frontmatter.cjs")
      refusedFrontmatter(script)
      const { running } = yield* gateway("team", script)
      yield* listening(running)
      assert.match(
        running.stdout(),
        /^following upstream team: 1 verified skill, 1 refused \(skill:\/\/bad\/SKILL\.md: .*frontmatter differs from the entry in description\)$/m
      )
    }), { timeout: 30_000 })

  it.live("a silent upstream holds the start-up no longer than the documented deadline and is said to be not seen yet", () =>
    Effect.gen(function*() {
      const dir = yield* scripts
      const script = Path.join(dir, "silent.cjs")
      const spawned = Path.join(dir, "spawned")
      Fs.writeFileSync(script, `require("node:fs").writeFileSync(${JSON.stringify(spawned)}, String(Date.now()))\nprocess.stdin.resume()\n`)
      const { running } = yield* gateway("quiet", script)
      yield* listening(running)
      const listened = Date.now()
      // docs/gateway.md: 10 s.
      const deadline = Duration.toMillis(ServerLimits.UpstreamStartup)
      assert.strictEqual(deadline, 10_000)
      // Counted from the upstream's spawn, as the deadline is: the gateway's own start is not in it.
      assert.isBelow(listened - Number(Fs.readFileSync(spawned, "utf8")), deadline + 3_000)
      assert.match(running.stdout(), /^following upstream quiet: 0 verified skills \(not seen yet: no answer within 10s; it joins when it answers\)$/m)
    }), { timeout: 30_000 })
})
