/**
 * `mcp-skills-server serve --watch` (built `dist`, as users run it) over folders holding what is not
 * a file where a file is expected: a named pipe, a Unix socket, a link to `/dev/zero`, a link out of
 * the root, a file over the skill's size limit, each as a skill's file and as its signatures file,
 * and signatures files over their byte and record bounds. Present at start-up, then added while it
 * runs: start-up finishes, each entry gets its one line, the other skills are served, the server
 * answers throughout and ends on SIGTERM. Then a folder the server may not read (it runs as another
 * user when the test runs as root, since root reads everything), and 400 rewrites in place of one
 * file while clients keep reading it: no empty or torn answer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Digest } from "@mcp-skills/core"
import { Effect, Fiber } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { httpServer, spawnBin, stop, waitFor } from "./support/cli-server.js"
import { type Hostile, hostileSkills } from "./support/hostile.js"
import { poll } from "./support/session.js"
import { tree, write } from "./support/tree.js"
import { modernHttp } from "./support/wire.js"

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const exactly = (line: string) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`, "m")

/** The skills `skills/list` names, by folder. */
const listed = (url: string) =>
  Effect.map(modernHttp(url).call("skills/list"), (result) =>
    result.skills.map((skill: { readonly uri: string }) => skill.uri.replace(/^skill:\/\//, "").replace(/\/SKILL\.md$/, "")))

const served = (entry: { readonly skill: string }) => entry.skill

/** What start-up prints for `made`'s skills, then what a reload under --watch prints. */
const linesOf = (made: Hostile) => ({
  startup: [
    ...made.leftOut.map(({ path, reason }) => `ignored ${path}: ${reason}`),
    ...made.refused.map(({ file, reason, skill }) => `skipped ${skill}: ${file === undefined ? "" : `${file}: `}${reason}`)
  ],
  watched: [
    ...made.leftOut.map(({ path, reason }) => `ignored ${path}: ${reason}`),
    ...made.refused.map(({ file, reason, skill }) => `${skill}${file === undefined ? "" : `/${file}`}: ${reason}; not served`)
  ]
})

describe("mcp-skills-server serve --watch over hostile folders", () => {
  it.live("pipes, sockets, links to a device and out, files too large: at start-up and added while running", () =>
    Effect.gen(function*() {
      const root = tree({ "plain/SKILL.md": skillMd("plain") })
      const atStartup = yield* hostileSkills(root, "a")
      const { running, url } = yield* httpServer(root, ["--watch"])
      for (const line of linesOf(atStartup).startup) yield* Effect.promise(() => waitFor(running, "stderr", exactly(line)))
      expect(yield* listed(url)).toEqual(["plain", ...atStartup.leftOut.map(served)].sort())

      // A client keeps reading while entries are added; each answer comes within 5 seconds.
      let polling = true
      const waits: Array<number> = []
      const client = modernHttp(url)
      const poller = yield* Effect.gen(function*() {
        while (polling) {
          const start = performance.now()
          const read = yield* client.call("resources/read", { uri: "skill://plain/SKILL.md" }).pipe(
            Effect.timeout("5 seconds")
          )
          waits.push(performance.now() - start)
          expect(read.contents[0].text).toBe(skillMd("plain"))
          yield* sleep(20)
        }
      }).pipe(Effect.forkChild)

      // Made aside, then moved in whole, so each skill appears at once with its entry.
      const staging = fs.mkdtempSync(path.join(os.tmpdir(), "skills-staging-"))
      const added = yield* hostileSkills(staging, "w")
      for (const name of fs.readdirSync(staging)) fs.renameSync(path.join(staging, name), path.join(root, name))
      for (const line of linesOf(added).watched) yield* Effect.promise(() => waitFor(running, "stderr", exactly(line)))
      yield* poll("the added skills served", Effect.map(listed(url), (names) =>
        names.length === 1 + atStartup.leftOut.map(served).length + added.leftOut.map(served).length ? names : undefined))
      expect(yield* listed(url)).toEqual(["plain", ...atStartup.leftOut.map(served), ...added.leftOut.map(served)].sort())

      polling = false
      yield* Fiber.join(poller)
      expect(waits.length).toBeGreaterThan(0)
      expect(Math.max(...waits)).toBeLessThan(5_000)
      // Each line said once.
      for (const line of [...linesOf(atStartup).startup, ...linesOf(added).watched]) {
        expect(running.stderr().split("\n").filter((each) => each === line)).toHaveLength(1)
      }
      expect(yield* Effect.promise(() => stop(running))).toBe(0)
    }), { timeout: 90_000 })

  it.live("a folder the server may not read skips its skill with one line, at start-up and added while running", () =>
    Effect.gen(function*() {
      const root = tree({
        "open/SKILL.md": skillMd("open"),
        "locked/SKILL.md": skillMd("locked"),
        "locked/private/notes.md": "notes\n",
        "closed/notes.md": "notes\n"
      })
      // Root reads every folder whatever its mode: the server then runs as nobody.
      const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined
      fs.chmodSync(root, 0o755)
      fs.chmodSync(path.join(root, "locked/private"), 0o000)
      fs.chmodSync(path.join(root, "closed"), 0o000)
      const running = spawnBin("mcp-skills-server", ["serve", root, "--host", "127.0.0.1", "--port", "0", "--watch"], {}, as)
      yield* Effect.addFinalizer(() => Effect.promise(() => stop(running)))
      const [, url] = yield* Effect.promise(() => waitFor(running, "stdout", /^listening (http:\/\/\S+)$/m))
      yield* Effect.promise(() =>
        waitFor(running, "stderr", exactly("skipped locked: cannot list the folder locked/private: permission denied"))
      )
      yield* Effect.promise(() => waitFor(running, "stderr", exactly("ignored closed: cannot list the folder: permission denied")))
      expect(yield* listed(url!)).toEqual(["open"])

      const staging = fs.mkdtempSync(path.join(os.tmpdir(), "skills-staging-"))
      write(staging, "later/SKILL.md", skillMd("later"))
      write(staging, "later/private/notes.md", "notes\n")
      fs.chmodSync(path.join(staging, "later/private"), 0o000)
      fs.renameSync(path.join(staging, "later"), path.join(root, "later"))
      yield* Effect.promise(() =>
        waitFor(running, "stderr", exactly("later/private: cannot list the folder: permission denied; not served"))
      )
      // Readable again: served.
      fs.chmodSync(path.join(root, "later/private"), 0o755)
      yield* poll("later served once readable", Effect.map(listed(url!), (names) => names.includes("later") ? names : undefined))
      expect(running.stderr()).toMatch(exactly("later: valid again, serving the new version"))
      expect(yield* Effect.promise(() => stop(running))).toBe(0)
    }), { timeout: 60_000 })

  it.live("400 rewrites in place while clients read: never an empty or torn answer, every digest one of a written version", () =>
    Effect.gen(function*() {
      const version = (index: number) => `# Guide\n\nversion ${index}\n${"x".repeat(index % 37)}\n`
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/guide.md": version(0) })
      const { running, url } = yield* httpServer(root, ["--watch"])
      const written = new Set(Array.from({ length: 401 }, (_, index) => version(index)))
      const digests = new Set([...written].map((text) => Digest.make(new TextEncoder().encode(text))))

      // Another process rewrites the file in place 400 times, as `>` does: truncate, then write.
      // Most rewrites write at once; every 50th is slow between the two, as a script that
      // truncates and then computes what to write, long enough for a reload to come in between.
      const guide = path.join(root, "alpha/guide.md")
      const writer = spawn(process.execPath, ["-e", `
        const fs = require("node:fs")
        const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
        for (let i = 1; i <= 400; i++) {
          const fd = fs.openSync(${JSON.stringify(guide)}, fs.constants.O_WRONLY | fs.constants.O_TRUNC)
          pause(i % 50 === 0 ? 200 : 1)
          fs.writeSync(fd, \`# Guide\\n\\nversion \${i}\\n\${"x".repeat(i % 37)}\\n\`)
          fs.closeSync(fd)
          pause(2)
        }
      `], { stdio: "inherit" })
      const exited = new Promise<number | null>((resolve) => writer.on("exit", resolve))
      let writing = true
      void exited.then(() => (writing = false))

      const answers: Array<string> = []
      const entries: Array<string> = []
      const reader = Effect.gen(function*() {
        const client = modernHttp(url)
        while (writing) {
          const { skill } = yield* client.call("skills/get", { uri: "skill://alpha/SKILL.md" })
          entries.push(skill.resources.find((resource: { readonly uri: string }) => resource.uri.endsWith("/guide.md")).digest)
          const read = yield* client.call("resources/read", { uri: "skill://alpha/guide.md" })
          answers.push(read.contents[0].text)
        }
      })
      yield* Effect.all([reader, reader, reader, reader], { concurrency: "unbounded" })
      expect(yield* Effect.promise(() => exited)).toBe(0)

      expect(answers.length).toBeGreaterThan(50)
      expect(answers.filter((text) => text === "")).toEqual([])
      expect(answers.filter((text) => !written.has(text))).toEqual([])
      expect(entries.filter((digest) => !digests.has(digest as Digest.Digest))).toEqual([])
      // And the last version is served in the end.
      yield* poll("the last version", Effect.map(modernHttp(url).call("resources/read", { uri: "skill://alpha/guide.md" }), (read) =>
        read.contents[0].text === version(400) ? true : undefined))
      expect(yield* Effect.promise(() => stop(running))).toBe(0)
    }), { timeout: 90_000 })
})
