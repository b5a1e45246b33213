/**
 * A watcher that cannot lose an edit. A folder is served the way
 * `mcp-skills-server serve --watch` serves it (in process, over loopback HTTP) and changed the ways
 * the world changes files: writes in place, appends, replacements by rename (three in a row on one
 * path), `git checkout` of another commit, a whole skill folder replaced by rename, edits 50 ms
 * apart. After each, once the disk is quiet, every file is served with exactly its bytes on disk.
 * The periodic stamp check is off for those tests, so the file events alone must carry every edit;
 * a last test edits a file where no event reaches the watcher and the check finds it, saying so.
 */
import { describe, expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { tree, write } from "./support/tree.js"
import { live, serve, sleep } from "./support/watched.js"

const skillMd = (name: string, note = "") => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n${note}`

/** Replaces `relative` the way editors and `sed -i` do: a new file renamed over the old one. */
const replace = (root: string, relative: string, content: string) => {
  const target = path.join(root, relative)
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.tmp${Math.random().toString(36).slice(2)}`)
  fs.writeFileSync(temporary, content)
  fs.renameSync(temporary, target)
}

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
