/**
 * The one way in to a served folder (`internal/directory/guard`): what stands where a file is
 * expected (a pipe, a socket, a link to a device or out of the root, a file too large) is left out
 * or refused, as a skill's file and as its signatures file alike, without ever blocking or reading
 * past a bound; a file swapped between its stamp and its read is never read as the file stamped;
 * what cannot be listed or stat'ed skips its skill; an empty read in the middle of a rewrite is
 * never published; and no other module of the server touches the disk.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { syncBuiltinESMExports } from "node:module"
import * as fs from "node:fs"
import nodeFs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { DirectoryModel, DirectorySource } from "../src/index.js"
import { SignaturesMaxBytes, SignaturesMaxRecords } from "../src/ServerLimits.js"
import * as Guard from "../src/internal/directory/guard.js"
import { fifo, hostileSkills, linkOut, linkToZero, records, signaturesText } from "./support/hostile.js"
import { tree, write } from "./support/tree.js"

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`
const Signatures = DirectorySource.SignaturesFileName

const open = (root: string) => DirectorySource.make([{ path: root }], { log: () => Effect.void })

// Files older than the racy window, so that a scan trusts their stamps alone.
const age = (root: string, ...relative: Array<string>) => {
  const past = new Date(Date.now() - 3_600_000)
  for (const file of relative) fs.utimesSync(path.join(root, file), past, past)
}

describe("the guarded reader", () => {
  it.effect("a pipe, a socket, a link to /dev/zero, a link out and an oversized file: as skill files and as signatures files", () =>
    Effect.gen(function*() {
      const root = tree({
        "s-dup/SKILL.md": skillMd("s-dup"),
        [`s-dup/${Signatures}`]: signaturesText(records(2, true)),
        // At the bounds exactly: served.
        "signed/SKILL.md": skillMd("signed"),
        [`signed/${Signatures}`]: signaturesText(records(SignaturesMaxRecords), SignaturesMaxBytes)
      })
      const made = yield* hostileSkills(root, "x")
      const loaded = yield* DirectorySource.load(root)
      expect(loaded.skills.map((skill) => skill.directory)).toEqual([...made.leftOut.map((entry) => entry.skill), "signed"].sort())
      for (const skill of loaded.skills) expect(Array.from(skill.manifest.files, (file) => file.path)).toEqual(["SKILL.md"])
      expect(loaded.skills.find((skill) => skill.directory === "signed")!.signatures).toHaveLength(SignaturesMaxRecords)
      expect(loaded.ignored).toEqual(made.leftOut.map(({ path, reason }) => ({ path, reason })).sort((a, b) => a.path < b.path ? -1 : 1))
      // Skipped in folder order.
      expect(loaded.skipped.map(DirectoryModel.describeProblem)).toEqual([
        `s-dup/${Signatures}: not a signatures file: two records for key sha256:${"0".repeat(64)} (one per key); at ["signatures"]`,
        ...made.refused.map(({ file, reason, skill }) => `${skill}${file === undefined ? "" : `/${file}`}: ${reason}`)
      ].sort())
    }))

  it("a file swapped after its stamp is never read as the file stamped, and never past its size", () => {
    const root = fs.realpathSync(tree({ "a/file.md": "0123456789", "a/other.md": "x" }))
    const stampOf = (relative: string) => {
      const entry = Guard.classify(root, relative)
      if (entry._tag !== "File") throw new Error(`${relative} is ${entry._tag}`)
      return entry.stamp
    }
    const into = (stamp: Guard.Stamp) => new Uint8Array(stamp.size)
    const file = path.join(root, "a/file.md")

    const stamp = stampOf("a/file.md")
    expect(Guard.read(root, "a/file.md", stamp, into(stamp))).toMatchObject({ _tag: "Read", location: file })

    // Grown after its stamp: not read (a file is never read past the size its stamp allowed).
    fs.appendFileSync(file, "more")
    expect(Guard.read(root, "a/file.md", stamp, into(stamp))).toEqual({ _tag: "Changed" })

    // A pipe in its place: opened without blocking, and not read.
    fs.rmSync(file)
    fifo(file)
    expect(Guard.read(root, "a/file.md", stamp, into(stamp))).toEqual({ _tag: "Changed" })

    // A link out of the root, or to a device, in its place: not followed.
    fs.rmSync(file)
    linkOut(file, "0123456789")
    expect(Guard.read(root, "a/file.md", stamp, into(stamp))).toEqual({
      _tag: "Refused",
      reason: "symbolic link to a path outside the root or hidden"
    })
    fs.rmSync(file)
    linkToZero(file)
    expect(Guard.read(root, "a/file.md", stamp, into(stamp))).toEqual({
      _tag: "Refused",
      reason: "symbolic link to a path outside the root or hidden"
    })

    // Its folder moved out of the root and a link left in its place: the very file stamped, with
    // its identity and stamp, but no longer under the root (Linux names a descriptor's file).
    const other = stampOf("a/other.md")
    const away = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "skills-away-")), "a")
    fs.renameSync(path.join(root, "a"), away)
    fs.symlinkSync(away, path.join(root, "a"))
    const moved = Guard.read(root, "a/other.md", other, into(other))
    if (process.platform === "linux") expect(moved).toEqual({ _tag: "Changed" })
    // And the walk does not go there.
    expect(Guard.classify(root, "a")).toEqual({ _tag: "Ignored", reason: "symbolic link to a path outside the root or hidden" })
  })

  it.effect("a file served on demand is read again the same way: a pipe, a link or a larger file in its place is a change", () =>
    Effect.gen(function*() {
      const root = fs.realpathSync(tree({ "big.bin": "0123456789" }))
      const at = path.join(root, "big.bin")
      expect(yield* Effect.promise(() => Guard.readAt(at, 10))).toEqual(new Uint8Array(Buffer.from("0123456789")))
      fs.appendFileSync(at, "!")
      expect(yield* Effect.promise(() => Guard.readAt(at, 10))).toEqual({ changed: "its size is no longer 10 bytes" })
      fs.rmSync(at)
      fifo(at)
      expect(yield* Effect.promise(() => Guard.readAt(at, 10))).toEqual({ changed: "it is no longer a regular file (FIFO)" })
      fs.rmSync(at)
      linkToZero(at)
      expect(yield* Effect.promise(() => Guard.readAt(at, 10))).toEqual({ changed: "it is now a symbolic link" })
    }))
})

// Paths longer than the system allows (PATH_MAX, 4,096 bytes on Linux) cannot be listed or
// stat'ed, by root too: a folder or a file that cannot be read, whoever the test runs as.
const tooDeep = (root: string, below: string, last: { readonly folder: string } | { readonly file: string }) => {
  const segments = Array.from({ length: 16 }, (_, index) => `${String(index).padStart(2, "0")}${"d".repeat(240)}`)
  const parent = path.join(root, below, ...segments)
  fs.mkdirSync(parent, { recursive: true })
  const name = "folder" in last ? last.folder : last.file
  // Made from inside the parent, where the path is short enough.
  const made = spawnSync("sh", ["-c", "folder" in last ? `mkdir "${name}"` : `printf x > "${name}"`], { cwd: parent })
  expect(made.status).toBe(0)
  return [below, ...segments, name].join("/")
}

describe("what cannot be read", () => {
  it.effect("a folder or a file that cannot be listed or stat'ed skips its skill with one problem naming it, the others load", () =>
    Effect.gen(function*() {
      const root = tree({
        "deep/SKILL.md": skillMd("deep"),
        "long/SKILL.md": skillMd("long"),
        "fine/SKILL.md": skillMd("fine")
      })
      const folder = tooDeep(root, "deep", { folder: "x".repeat(200) })
      const file = tooDeep(root, "long", { file: `${"y".repeat(200)}.md` })
      const elsewhere = tooDeep(root, "not-a-skill", { folder: "z".repeat(200) })
      const loaded = yield* DirectorySource.load(root)
      expect(loaded.skills.map((skill) => skill.directory)).toEqual(["fine"])
      expect(loaded.skipped.map((skipped) => skipped.error._tag)).toEqual(["UnreadableFolder", "UnreadableFile"])
      expect(loaded.skipped.map(DirectoryModel.describeProblem)).toEqual([
        `${folder}: cannot list the folder: path too long`,
        `${file}: path too long`
      ])
      expect(loaded.ignored).toEqual([{ path: elsewhere, reason: "cannot list the folder: path too long" }])
      // In strict mode, it fails the load as any invalid skill does; the root itself failing is
      // another matter.
      expect((yield* Effect.flip(DirectorySource.load(root, { strict: true })))._tag).toBe("InvalidSkills")
    }))

  it.effect("under watch too: the periodic check sees a folder become unreadable, and once only", () =>
    Effect.gen(function*() {
      const root = tree({ "deep/SKILL.md": skillMd("deep"), "deep/a.md": "a" })
      age(root, "deep/SKILL.md", "deep/a.md")
      const source = yield* open(root)
      expect((yield* source.scan).definitions).toHaveLength(1)
      const folder = tooDeep(root, "deep", { folder: "x".repeat(200) })
      expect((yield* source.check).missed).toEqual([path.join(root, folder)])
      const scan = yield* source.scan
      expect(scan.newProblems).toEqual([`${folder}: cannot list the folder: path too long; still serving the last good version`])
      expect(yield* source.check).toEqual({ missed: [], racy: [] })
    }))
})

describe("no torn reads", () => {
  it.effect("a file that reads empty just after a write, where it had bytes, keeps its skill's last good version until it is believed", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/guide.md": "the guide\n" })
      age(root, "alpha/SKILL.md", "alpha/guide.md")
      const source = yield* open(root)
      const guide = (scan: DirectoryModel.Scan) =>
        new TextDecoder().decode(Array.from(scan.roots[0]!.loaded.skills[0]!.manifest.files).find((file) => file.path === "guide.md")!.bytes)
      expect(guide(yield* source.scan)).toBe("the guide\n")

      // Truncated, as `>` and editors do before writing: the empty moment is not published.
      fs.truncateSync(path.join(root, "alpha/guide.md"), 0)
      const during = yield* source.scan
      expect(guide(during)).toBe("the guide\n")
      expect(during.newProblems).toEqual([
        "alpha/guide.md: read empty while being rewritten (3 attempts); still serving the last good version"
      ])
      // The periodic check reads it again.
      expect((yield* source.check).racy).toEqual([path.join(root, "alpha/guide.md")])

      // Still empty a while after: it is empty indeed, and served so.
      age(root, "alpha/guide.md")
      const after = yield* source.scan
      expect(guide(after)).toBe("")
      expect(after.fixed).toEqual(["alpha"])
    }))
})

describe("signatures files are stamped records", () => {
  it.effect("the periodic check sees a re-sign, an unchanged scan decodes nothing, and a new file is relayed", () =>
    Effect.gen(function*() {
      const root = tree({ "alpha/SKILL.md": skillMd("alpha"), [`alpha/${Signatures}`]: signaturesText(records(1)) })
      age(root, "alpha/SKILL.md", `alpha/${Signatures}`)
      const source = yield* open(root)
      const first = (yield* source.scan).roots[0]!.loaded.skills[0]!
      expect(first.signatures).toHaveLength(1)
      // Nothing changed: the very same skill, nothing read.
      const reads = (yield* source.stats).readFiles
      expect((yield* source.scan).roots[0]!.loaded.skills[0]).toBe(first)
      expect((yield* source.stats).readFiles).toBe(reads)

      write(root, `alpha/${Signatures}`, signaturesText(records(2)))
      expect((yield* source.check).missed).toEqual([path.join(root, `alpha/${Signatures}`)])
      const resigned = (yield* source.scan).roots[0]!.loaded.skills[0]!
      expect(resigned.signatures).toHaveLength(2)
      expect(resigned.manifest).toBe(first.manifest)

      fs.rmSync(path.join(root, `alpha/${Signatures}`))
      expect((yield* source.scan).roots[0]!.loaded.skills[0]!.signatures).toBeUndefined()
    }))
})

describe("one stat per file", () => {
  // Counts the calls the guard makes through `node:fs` while `effect` runs (the module's exports,
  // patched and synced to the ESM bindings the guard imports).
  const counted = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const calls = { lstat: 0, fstat: 0, open: 0 }
        const original = { lstatSync: fs.lstatSync, fstatSync: fs.fstatSync, openSync: fs.openSync }
        const mutable = nodeFs as { lstatSync: typeof fs.lstatSync; fstatSync: typeof fs.fstatSync; openSync: typeof fs.openSync }
        mutable.lstatSync = ((...args: Parameters<typeof fs.lstatSync>) => {
          calls.lstat++
          return original.lstatSync(...args)
        }) as typeof fs.lstatSync
        mutable.fstatSync = ((...args: Parameters<typeof fs.fstatSync>) => {
          calls.fstat++
          return original.fstatSync(...args)
        }) as typeof fs.fstatSync
        mutable.openSync = ((...args: Parameters<typeof fs.openSync>) => {
          calls.open++
          return original.openSync(...args)
        }) as typeof fs.openSync
        syncBuiltinESMExports()
        return { calls, original, mutable }
      }),
      ({ calls }) => Effect.map(effect, (value) => ({ value, calls })),
      ({ mutable, original }) =>
        Effect.sync(() => {
          Object.assign(mutable, original)
          syncBuiltinESMExports()
        })
    )

  it.effect("a first scan stats each file by the descriptor it reads it through, and once more after the skill is read", () =>
    Effect.gen(function*() {
      const root = tree({
        "alpha/SKILL.md": skillMd("alpha"),
        "alpha/references/guide.md": "the guide\n",
        "alpha/scripts/run.py": "print(1)\n",
        "beta/SKILL.md": skillMd("beta"),
        "beta/notes.md": "notes\n"
      })
      const { value: loaded, calls } = yield* counted(DirectorySource.load(root))
      expect(loaded.skills.map((skill) => skill.directory)).toEqual(["alpha", "beta"])
      // 5 files, 5 folders (the root included): an open and an fstat per file, an lstat per file
      // after its skill is read and one per folder after its listing; none per file while walking.
      expect(calls).toEqual({ open: 5, fstat: 5, lstat: 5 + 5 })
    }))

  it.effect("a skill of more files than a first read holds open at once: the rest are stamped by path, all served", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = { "many/SKILL.md": skillMd("many") }
      for (let i = 0; i < 299; i++) files[`many/f${String(i).padStart(3, "0")}.md`] = `file ${i}\n`
      const root = tree(files)
      const { value: loaded, calls } = yield* counted(DirectorySource.load(root, { limits: { maxResources: 1000, maxTotalBytes: 1_000_000 } }))
      expect(loaded.skills[0]!.manifest.files.length).toBe(300)
      // 256 opened and stat'ed by descriptor first, 44 stamped by path then read as stamped files;
      // an lstat per file after the read and one per folder (2).
      expect(calls).toEqual({ open: 300, fstat: 300, lstat: 44 + 300 + 2 })
    }))

  it.effect("every file a first scan found is stamped after it, read or not: the periodic check then finds nothing", () =>
    Effect.gen(function*() {
      const root = tree({
        "alpha/SKILL.md": skillMd("alpha"),
        "alpha/guide.md": "the guide\n",
        // Outside every skill.
        "notes.md": "notes\n",
        "drafts/idea.md": "an idea\n",
        // Refused from its sizes (and its count) before anything is read.
        "big/SKILL.md": skillMd("big"),
        "big/a.bin": new Uint8Array(600),
        "big/b.bin": new Uint8Array(600)
      })
      age(root, "alpha/SKILL.md", "alpha/guide.md", "notes.md", "drafts/idea.md", "big/SKILL.md", "big/a.bin", "big/b.bin")
      const source = yield* DirectorySource.make([{ path: root, limits: { maxResources: 2, maxTotalBytes: 1000 } }], {
        log: () => Effect.void
      })
      const scan = yield* source.scan
      expect(scan.roots[0]!.loaded.skills.map((skill) => skill.directory)).toEqual(["alpha"])
      expect(scan.roots[0]!.loaded.skipped.map((problem) => problem.directory)).toEqual(["big"])
      expect((yield* source.stats).readFiles).toBe(2)
      expect(yield* source.check).toEqual({ missed: [], racy: [] })
      // And a file of the refused skill that changes is seen.
      write(root, "big/a.bin", new Uint8Array(10))
      expect((yield* source.check).missed).toEqual([path.join(root, "big/a.bin")])
    }))

  it.effect("a file found by its listing but too large is refused from its descriptor's size, unread", () =>
    Effect.gen(function*() {
      const root = tree({ "huge/SKILL.md": skillMd("huge"), "huge/blob.bin": new Uint8Array(5000) })
      const source = yield* DirectorySource.make([{ path: root, limits: { maxResources: 10, maxTotalBytes: 4096 } }], {
        log: () => Effect.void
      })
      const scan = yield* source.scan
      expect(scan.roots[0]!.loaded.skills).toEqual([])
      expect(DirectoryModel.describeProblem(scan.roots[0]!.loaded.skipped[0]!)).toMatch(/bytes exceed the limit of 4096/)
      expect((yield* source.stats).readFiles).toBe(0)
    }))
})

describe("the one way in", () => {
  it("no module of the server but the guard (and the watcher's folder watches) touches the file system", () => {
    const src = fileURLToPath(new URL("../src/", import.meta.url))
    const touching = fs.readdirSync(src, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.startsWith(`bin${path.sep}`))
      .filter((file) => /from "node:fs(\/promises)?"/.test(fs.readFileSync(path.join(src, file), "utf8")))
      .sort()
    expect(touching).toEqual([path.join("internal", "directory", "guard.ts"), path.join("internal", "directory", "watch.ts")])
  })
})
