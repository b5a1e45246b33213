/**
 * Issue 9, item 1: a watcher that cannot lose an edit. A folder is served the way
 * `mcp-skills-server serve --watch` serves it (in process, over loopback HTTP) and changed the ways
 * the world changes files: writes in place, appends, replacements by rename (three in a row on one
 * path), `git checkout` of another commit, a whole skill folder replaced by rename, edits 50 ms
 * apart. After each, once the disk is quiet, every file is served with exactly its bytes on disk.
 * The periodic stamp check is off for those tests, so the file events alone must carry every edit;
 * a last test edits a file where no event reaches the watcher and the check finds it, saying so.
 */
import { NodeServices } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type * as DirectorySource from "../src/DirectorySource.js"
import * as Serve from "../src/bin/serve.js"
import { tree, write } from "./support/tree.js"
import { modernHttp } from "./support/wire.js"

const skillMd = (name: string, note = "") => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n${note}`

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Every regular file below `root` outside hidden folders, relative and `/`-separated. */
const filesOnDisk = (root: string): Array<string> =>
  (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as Array<fs.Dirent>)
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .filter((relative) => !relative.split("/").some((segment) => segment.startsWith(".")))
    .sort()

/**
 * `root` served with `--watch`; `served()` reads every file on disk over the wire and lists those
 * whose served bytes differ, and `lines` holds what the watcher logged.
 */
const serve = (root: string, sweep: DirectorySource.WatchOptions["sweep"] = false) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const log = (line: string) => Effect.sync(() => void lines.push(line))
    const source = yield* Serve.openReported([{ path: root }], { log: () => Effect.void })
    const listening = yield* Deferred.make<string>()
    yield* Layer.build(Serve.http(source, {
      host: "127.0.0.1",
      port: 0,
      path: "/mcp",
      protocols: [],
      allowedOrigins: [],
      watch: { log, warn: log, sweep },
      onListening: (url) => Deferred.succeed(listening, url).pipe(Effect.asVoid)
    }))
    const client = modernHttp(yield* Deferred.await(listening))
    const read = (relative: string) =>
      Effect.map(client.send("resources/read", { uri: `skill://${relative}` }), (response): Uint8Array | undefined => {
        const content = response.body?.result?.contents?.[0]
        if (content === undefined) return undefined
        return content.text !== undefined ? new TextEncoder().encode(content.text) : Buffer.from(content.blob, "base64")
      })
    const stale = Effect.gen(function*() {
      const out: Array<string> = []
      for (const relative of filesOnDisk(root)) {
        const served = yield* read(relative)
        const disk = fs.readFileSync(path.join(root, relative))
        if (served === undefined || !Buffer.from(served).equals(disk)) out.push(relative)
      }
      return out
    })
    /** Waits (bounded, generously) until every file on disk is served with its bytes. */
    const settled = (what: string) =>
      Effect.gen(function*() {
        let last: Array<string> = []
        for (let attempt = 0; attempt < 200; attempt++) {
          last = yield* stale
          if (last.length === 0) return
          yield* sleep(100)
        }
        throw new Error(`${what}: still serving old bytes of ${last.join(", ")}`)
      })
    return { client, read, settled, lines }
  })

/** Replaces `relative` the way editors and `sed -i` do: a new file renamed over the old one. */
const replace = (root: string, relative: string, content: string) => {
  const target = path.join(root, relative)
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.tmp${Math.random().toString(36).slice(2)}`)
  fs.writeFileSync(temporary, content)
  fs.renameSync(temporary, target)
}

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, any>) =>
  it.live(name, () => body().pipe(Effect.scoped, Effect.provide(NodeServices.layer)) as Effect.Effect<A, E>, {
    timeout: 120_000
  })

describe("serve --watch never loses an edit", () => {
  live("writes in place", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/guide.md": "v0\n" })
      const { settled } = yield* serve(root)
      for (let i = 1; i <= 5; i++) {
        fs.writeFileSync(path.join(root, "alpha/guide.md"), `version ${i}\n${"x".repeat(i)}\n`)
        yield* settled(`write ${i}`)
      }
      // Same size, new bytes: only the modification time and the bytes tell.
      fs.writeFileSync(path.join(root, "alpha/guide.md"), `version 9\nxxxxx\n`)
      yield* settled("same-size write")
    }))

  live("appends", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/log.md": "start\n" })
      const { settled } = yield* serve(root)
      for (let i = 1; i <= 5; i++) {
        fs.appendFileSync(path.join(root, "alpha/log.md"), `line ${i}\n`)
        yield* settled(`append ${i}`)
      }
      fs.appendFileSync(path.join(root, "alpha/SKILL.md"), "\nMore.\n")
      yield* settled("append to SKILL.md")
    }))

  live("replacements by rename, three in a row on the same path, then more after a pause", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/guide.md": "v0\n" })
      const { settled } = yield* serve(root)
      for (let i = 1; i <= 3; i++) {
        replace(root, "alpha/guide.md", `replaced ${i}\n`)
        yield* settled(`replacement ${i}`)
      }
      replace(root, "alpha/SKILL.md", skillMd("alpha", "Replaced once.\n"))
      replace(root, "alpha/SKILL.md", skillMd("alpha", "Replaced twice.\n"))
      replace(root, "alpha/guide.md", "replaced 4\n")
      yield* settled("two quick replacements")
      yield* sleep(1_500)
      replace(root, "alpha/guide.md", "replaced 5\n")
      yield* settled("replacement after a pause")
    }))

  live("git checkout of another commit in a watched work tree", () =>
    Effect.gen(function*() {
      const root = tree({
        "alpha/SKILL.md": skillMd("alpha"),
        "alpha/references/guide.md": "guide v1\n",
        "beta/SKILL.md": skillMd("beta")
      })
      const git = (...args: Array<string>) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", ...args], {
          cwd: root,
          stdio: "pipe"
        })
      git("init", "-q", "-b", "main")
      git("add", "-A")
      git("commit", "-q", "-m", "one")
      write(root, "alpha/references/guide.md", "guide v2, longer\n")
      write(root, "alpha/references/new.md", "new in two\n")
      fs.rmSync(path.join(root, "beta"), { recursive: true })
      write(root, "gamma/SKILL.md", skillMd("gamma"))
      git("add", "-A")
      git("commit", "-q", "-m", "two")
      git("checkout", "-q", "HEAD~1")
      const { settled, read } = yield* serve(root)
      expect(yield* read("gamma/SKILL.md")).toBeUndefined()
      for (const [i, target] of ["main", "HEAD~1", "main"].entries()) {
        git("checkout", "-q", target)
        yield* settled(`checkout ${i + 1} (${target})`)
      }
      expect(yield* read("beta/SKILL.md")).toBeUndefined()
    }))

  live("a whole skill folder replaced by rename", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/references/guide.md": "old guide\n" })
      const { settled, read } = yield* serve(root)
      for (let i = 1; i <= 3; i++) {
        const staging = path.join(root, `.staging-${i}`)
        write(staging, "alpha/SKILL.md", skillMd("alpha", `Release ${i}.\n`))
        write(staging, "alpha/references/guide.md", `guide of release ${i}\n`)
        write(staging, `alpha/references/only-${i}.md`, `only in release ${i}\n`)
        fs.renameSync(path.join(root, "alpha"), path.join(root, `.old-${i}`))
        fs.renameSync(path.join(staging, "alpha"), path.join(root, "alpha"))
        fs.rmSync(path.join(root, `.old-${i}`), { recursive: true })
        yield* settled(`release ${i}`)
        if (i > 1) expect(yield* read(`alpha/references/only-${i - 1}.md`)).toBeUndefined()
      }
      // The replaced folder is watched too: an edit inside it is served.
      write(root, "alpha/references/guide.md", "edited after the swaps\n")
      yield* settled("edit inside the swapped-in folder")
    }))

  live("edits 50 ms apart", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/a.md": "a0\n", "beta/SKILL.md": skillMd("beta") })
      const { settled } = yield* serve(root)
      for (let i = 1; i <= 30; i++) {
        if (i % 3 === 0) replace(root, "alpha/a.md", `a${i} replaced\n`)
        else if (i % 3 === 1) fs.writeFileSync(path.join(root, "alpha/a.md"), `a${i}\n`)
        else write(root, `beta/notes-${i % 4}.md`, `note ${i}\n`)
        yield* sleep(50)
      }
      yield* settled("after 30 edits 50 ms apart")
    }))

  live("a change no event reports is found by the periodic check, which says so", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/guide.md": "linked v1\n" })
      // A hard link outside the watched tree: writing through it changes the served file's inode,
      // but no watched folder sees the write.
      const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "skills-outside-")), "guide.md")
      fs.linkSync(path.join(root, "alpha/guide.md"), outside)
      const { settled, lines } = yield* serve(root, "300 millis")
      fs.appendFileSync(outside, "appended where nobody watches\n")
      yield* settled("write through the outside link")
      expect(lines.filter((line) => line.includes("no file event reported"))).toEqual([
        `the periodic check found 1 change(s) no file event reported (${fs.realpathSync(root)}/alpha/guide.md); reloading`
      ])
    }))
})
