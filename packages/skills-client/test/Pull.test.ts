/**
 * `Pull.pull` never writes outside its target, refuses read answers carrying
 * content nobody listed (item 1) and reports what changed (item 4), against `mcp-skills-server`
 * serving a folder with a nested skill path (`acme/billing`) and a top-level one (`solo`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { LockFile, Pull, PullError } from "@mcp-skills/client"
import { filesUnder } from "./support/fixture.js"
import * as MemoryFs from "./support/MemoryFileSystem.js"
import { serveHttp, tempDir, withClient } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

const source: ReadonlyArray<readonly [string, string]> = [
  ["acme/billing/SKILL.md", "---\nname: billing\ndescription: Bill customers\n---\n\nSee `refs/a.md`.\n"],
  ["acme/billing/refs/a.md", "refunds within 30 days\n"],
  ["solo/SKILL.md", "---\nname: solo\ndescription: One skill alone\n---\n\nBody.\n"]
]

// A served folder, an empty target DIR and an `elsewhere` folder outside it with one file.
const setup = Effect.gen(function*() {
  const served = yield* tempDir("pull-source-")
  for (const [path, text] of source) {
    yield* Effect.promise(async () => {
      await Fs.mkdir(Path.dirname(Path.join(served, path)), { recursive: true })
      await Fs.writeFile(Path.join(served, path), text)
    })
  }
  const { url } = yield* serveHttp(served)
  const root = yield* tempDir("pull-target-")
  const into = Path.join(root, "DIR")
  const elsewhere = Path.join(root, "elsewhere")
  yield* Effect.promise(async () => {
    await Fs.mkdir(into)
    await Fs.mkdir(elsewhere)
    await Fs.writeFile(Path.join(elsewhere, "keep.txt"), "keep\n")
  })
  return { url, into, elsewhere }
})

const pullAll = (url: string, into: string) =>
  withClient(url, (client) => Pull.pull(client, { into, all: true }).pipe(Effect.provide(NodeFileSystem.layer))).pipe(Effect.exit)

const refusedAt = (exit: Exit.Exit<unknown, unknown>, path: string, found: string) => {
  assert.isTrue(Exit.isFailure(exit))
  const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
  assert.deepInclude(error, { _tag: "UnsafePath", path, found })
}

const listing = (dir: string) => Effect.promise(async () => (await Fs.readdir(dir, { recursive: true })).sort())

describe("Pull never writes outside its target", () => {
  it.live("a symlinked parent folder inside DIR is refused; its target stays untouched", () =>
    Effect.gen(function*() {
      const { url, into, elsewhere } = yield* setup
      yield* Effect.promise(() => Fs.symlink(elsewhere, Path.join(into, "acme")))
      refusedAt(yield* pullAll(url, into), Path.join(into, "acme"), "SymbolicLink")
      assert.deepStrictEqual(yield* listing(elsewhere), ["keep.txt"])
      assert.deepStrictEqual(yield* Effect.promise(() => Fs.readdir(into)), ["acme"])
    }).pipe(Effect.scoped))

  it.live("a symlinked skill folder, existing or dangling, is refused before any skill moves", () =>
    Effect.gen(function*() {
      const { url, into, elsewhere } = yield* setup
      yield* Effect.promise(() => Fs.symlink(elsewhere, Path.join(into, "solo")))
      refusedAt(yield* pullAll(url, into), Path.join(into, "solo"), "SymbolicLink")
      yield* Effect.promise(() => Fs.rm(Path.join(into, "solo")))
      yield* Effect.promise(() => Fs.symlink(Path.join(elsewhere, "missing"), Path.join(into, "solo")))
      refusedAt(yield* pullAll(url, into), Path.join(into, "solo"), "SymbolicLink")
      // acme/billing verified fine, but nothing of it was moved in: all or nothing.
      assert.deepStrictEqual(yield* Effect.promise(() => Fs.readdir(into)), ["solo"])
      assert.deepStrictEqual(yield* listing(elsewhere), ["keep.txt"])
    }).pipe(Effect.scoped))

  it.live("a symlinked file inside a pulled skill folder is refused; the lock file stays as it was", () =>
    Effect.gen(function*() {
      const { url, into, elsewhere } = yield* setup
      const first = yield* pullAll(url, into)
      assert.isTrue(Exit.isSuccess(first))
      const lockPath = Path.join(into, LockFile.LockFileName)
      const lock = yield* Effect.promise(() => Fs.readFile(lockPath, "utf8"))
      const file = Path.join(into, "acme/billing/refs/a.md")
      yield* Effect.promise(async () => {
        await Fs.rm(file)
        await Fs.symlink(Path.join(elsewhere, "keep.txt"), file)
      })
      refusedAt(yield* pullAll(url, into), file, "SymbolicLink")
      assert.strictEqual(yield* Effect.promise(() => Fs.readFile(lockPath, "utf8")), lock)
      assert.strictEqual(yield* Effect.promise(() => Fs.readFile(Path.join(elsewhere, "keep.txt"), "utf8")), "keep\n")
      assert.deepStrictEqual(yield* listing(elsewhere), ["keep.txt"])
    }).pipe(Effect.scoped))

  it.live("a lock file that is a FIFO is refused without opening it", () =>
    Effect.gen(function*() {
      const { url, into } = yield* setup
      const lockPath = Path.join(into, LockFile.LockFileName)
      execFileSync("mkfifo", [lockPath])
      refusedAt(yield* pullAll(url, into), lockPath, "FIFO")
      assert.deepStrictEqual(yield* listing(into), [LockFile.LockFileName])
    }).pipe(Effect.scoped))

  it.live("a re-pull with nothing changed reports every skill unchanged and writes no file", () =>
    Effect.gen(function*() {
      const { url, into } = yield* setup
      const first = yield* pullAll(url, into)
      assert.deepStrictEqual(Exit.isSuccess(first) ? first.value.skills.map((s) => s._tag) : [], ["Added", "Added"])
      const before = yield* Effect.promise(() => filesUnder(into))
      const again = yield* pullAll(url, into)
      assert.deepStrictEqual(Exit.isSuccess(again) ? again.value.skills : [], [
        { _tag: "Unchanged", uri: "skill://acme/billing/SKILL.md", path: "acme/billing" },
        { _tag: "Unchanged", uri: "skill://solo/SKILL.md", path: "solo" }
      ])
      assert.deepStrictEqual(yield* Effect.promise(() => filesUnder(into)), before)
    }).pipe(Effect.scoped))
})

describe("Pull refuses content nobody listed", () => {
  it.live("an answer with an unlisted extra item fails the read: with all, the skill is refused naming it; nothing written, lock unchanged", () =>
    Effect.gen(function*() {
      const s = yield* Effect.acquireRelease(Effect.promise(() => Tamper.start()), (s) => Effect.promise(() => s.close()))
      const into = Path.join(yield* tempDir("pull-extra-"), "DIR")
      const first = yield* pullAll(s.url, into)
      assert.isTrue(Exit.isSuccess(first))
      const lockPath = Path.join(into, LockFile.LockFileName)
      const lock = yield* Effect.promise(() => Fs.readFile(lockPath, "utf8"))
      const before = yield* Effect.promise(() => filesUnder(into))
      s.tamper.appendItem = Tamper.InvoiceUri
      s.tamper.revised = true
      const exit = yield* withClient(
        s.url,
        (client) => Pull.pull(client, { into, all: true, acceptChanges: true }).pipe(Effect.provide(NodeFileSystem.layer))
      ).pipe(Effect.exit)
      assert.isTrue(Exit.isSuccess(exit))
      const summary = Exit.isSuccess(exit) ? exit.value : undefined
      assert.deepStrictEqual(summary?.skills, [])
      assert.deepStrictEqual(summary?.refused.map((refused) => refused.uri), [Tamper.SkillUri])
      const error = summary?.refused[0]?.error
      assert.deepInclude(error, { _tag: "PullError", check: "unlisted", file: Tamper.InvoiceUri })
      assert.include(String(error?.message), "skill://pdf-processing/references/EXTRA.md")
      assert.strictEqual(yield* Effect.promise(() => Fs.readFile(lockPath, "utf8")), lock)
      assert.deepStrictEqual(yield* Effect.promise(() => filesUnder(into)), before)
    }).pipe(Effect.scoped))
})

describe("Pull on a memory file system", () => {
  const withTamper = Effect.acquireRelease(Effect.promise(() => Tamper.start()), (s) => Effect.promise(() => s.close()))
  const pullInto = (url: string, memory: MemoryFs.Memory, acceptChanges = false) =>
    withClient(url, (client) =>
      Pull.pull(client, { into: "/home/DIR", all: true, acceptChanges }).pipe(Effect.provide(MemoryFs.layer(memory)))).pipe(
        Effect.exit
      )
  const text = (memory: MemoryFs.Memory, path: string) => {
    const node = memory.nodes.get(path)
    return node?.type === "File" ? new TextDecoder().decode(node.bytes) : undefined
  }

  it.live("select, plan, stage, commit: files and lock file, then unchanged", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const memory = MemoryFs.make()
      const first = yield* pullInto(s.url, memory)
      assert.deepStrictEqual(Exit.isSuccess(first) ? first.value.skills.map((o) => o._tag) : first, ["Added"])
      assert.deepStrictEqual(MemoryFs.files(memory, "/home/DIR"), [
        LockFile.LockFileName,
        "pdf-processing/SKILL.md",
        "pdf-processing/assets/logo.png",
        "pdf-processing/templates/invoice.md"
      ])
      assert.strictEqual(text(memory, "/home/DIR/pdf-processing/SKILL.md"), Tamper.SkillMd)
      const lock = JSON.parse(text(memory, `/home/DIR/${LockFile.LockFileName}`)!)
      assert.deepStrictEqual(lock.skills.map((skill: { uri: string; origin: string }) => [skill.uri, skill.origin]), [[Tamper.SkillUri, s.url]])
      const again = yield* pullInto(s.url, memory)
      assert.deepStrictEqual(Exit.isSuccess(again) ? again.value.skills.map((o) => o._tag) : again, ["Unchanged"])
    }).pipe(Effect.scoped))

  it.live("a commit that fails at the lock file undoes its renames: DIR and the lock file as they were", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const memory = MemoryFs.make()
      assert.isTrue(Exit.isSuccess(yield* pullInto(s.url, memory)))
      const before = new Map([...memory.nodes].filter(([p]) => p.startsWith("/home/DIR")))
      s.tamper.revised = true
      memory.failRename = (to) => to.endsWith(LockFile.LockFileName)
      const failed = yield* pullInto(s.url, memory, true)
      assert.isTrue(Exit.isFailure(failed))
      assert.deepStrictEqual(new Map([...memory.nodes].filter(([p]) => p.startsWith("/home/DIR"))), before)
      assert.strictEqual(text(memory, "/home/DIR/pdf-processing/templates/invoice.md"), "# Invoice template\n\nTotal: {{amount}}\n")
      memory.failRename = undefined
      const accepted = yield* pullInto(s.url, memory, true)
      assert.deepInclude(Exit.isSuccess(accepted) ? accepted.value.skills[0] : accepted, {
        _tag: "Updated",
        added: [],
        removed: [],
        changed: [Tamper.InvoiceUri]
      })
      assert.strictEqual(text(memory, "/home/DIR/pdf-processing/templates/invoice.md"), "# Invoice template v2\n")
    }).pipe(Effect.scoped))

  it.live("a first pull that fails while committing leaves no target folder behind", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const memory = MemoryFs.make()
      memory.failRename = (to) => to.endsWith(LockFile.LockFileName)
      assert.isTrue(Exit.isFailure(yield* pullInto(s.url, memory)))
      assert.deepStrictEqual([...memory.nodes.keys()].filter((p) => p.startsWith("/home/DIR")), [])
    }).pipe(Effect.scoped))
})

describe("Pull refuses names that hurt, before anything is written", () => {
  const deep = `${"a/".repeat(200)}x.md`
  const cases: ReadonlyArray<{ readonly name: string; readonly plant: ReadonlyArray<string>; readonly problem: Record<string, unknown> }> = [
    { name: "a planted .git/config", plant: [".git/config"], problem: { _tag: "Hidden", segment: ".git" } },
    { name: "a .hg folder deeper down", plant: ["templates/.hg/hgrc"], problem: { _tag: "Hidden", segment: ".hg" } },
    { name: "a 200-level path", plant: [deep], problem: { _tag: "TooDeep", depth: 202, max: PullError.MaxDepth } },
    {
      name: "two names differing only in case",
      plant: ["templates/Invoice.md"],
      problem: { _tag: "Collides", name: "pdf-processing/templates/Invoice.md", other: Tamper.InvoiceUri }
    },
    {
      name: "NFC and NFD spellings of one name",
      plant: ["notes/caf\u00e9.md", "notes/cafe\u0301.md"],
      problem: { _tag: "Collides", name: "pdf-processing/notes/cafe\u0301.md", otherName: "pdf-processing/notes/caf\u00e9.md" }
    },
    {
      name: "a file where another file needs a folder",
      plant: ["templates/invoice.md/inner.md"],
      problem: { _tag: "Collides", name: "pdf-processing/templates/invoice.md", otherName: "pdf-processing/templates/invoice.md" }
    }
  ]

  for (const { name, plant, problem } of cases) {
    it.live(`${name}: UnsafeName, no file written, the lock file unchanged`, () =>
      Effect.gen(function*() {
        const s = yield* Effect.acquireRelease(Effect.promise(() => Tamper.start()), (s) => Effect.promise(() => s.close()))
        const root = yield* tempDir("pull-names-")
        const into = Path.join(root, "DIR")
        assert.isTrue(Exit.isSuccess(yield* pullAll(s.url, into)))
        const lockPath = Path.join(into, LockFile.LockFileName)
        const lock = yield* Effect.promise(() => Fs.readFile(lockPath, "utf8"))
        const before = yield* listing(into)
        s.tamper.plant = plant
        const reads = s.reads().length
        const refused = yield* withClient(s.url, (client) =>
          Pull.pull(client, { into, all: true, acceptChanges: true }).pipe(
            Effect.as(undefined),
            Effect.catchTag("UnsafeName", Effect.succeed),
            Effect.provide(NodeFileSystem.layer)
          ))
        assert.deepInclude(refused, { _tag: "UnsafeName", skill: Tamper.SkillUri })
        assert.deepInclude(refused!.problem, problem)
        assert.strictEqual(yield* Effect.promise(() => Fs.readFile(lockPath, "utf8")), lock)
        assert.deepStrictEqual(yield* listing(into), before)
        // A first pull into a fresh folder leaves no folder behind.
        const fresh = Path.join(root, "FRESH")
        assert.isTrue(Exit.isFailure(yield* pullAll(s.url, fresh)))
        assert.isFalse(yield* Effect.promise(() => Fs.stat(fresh).then(() => true, () => false)))
        // Decided from the entries: no file was even read.
        assert.strictEqual(s.reads().length, reads)
      }).pipe(Effect.scoped))
  }

  it.live("a folder differing only in case from one the lock file keeps for another server is refused", () =>
    Effect.gen(function*() {
      const { url, into } = yield* setup
      assert.isTrue(Exit.isSuccess(yield* pullAll(url, into)))
      const lockPath = Path.join(into, LockFile.LockFileName)
      const lock = yield* Effect.promise(() => Fs.readFile(lockPath, "utf8"))
      const served = yield* tempDir("pull-upper-")
      yield* Effect.promise(async () => {
        await Fs.mkdir(Path.join(served, "billing"))
        await Fs.writeFile(Path.join(served, "billing/SKILL.md"), "---\nname: billing\ndescription: Bill in capitals\n---\n")
      })
      const other = yield* serveHttp(served, ["--prefix", "ACME"])
      const exit = yield* pullAll(other.url, into)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
      assert.deepInclude(error, { _tag: "UnsafeName", uri: "skill://ACME/billing/SKILL.md" })
      assert.deepInclude((error as PullError.UnsafeName).problem, {
        _tag: "Collides",
        name: "ACME",
        otherName: "acme",
        other: "skill://acme/billing/SKILL.md"
      })
      assert.strictEqual(yield* Effect.promise(() => Fs.readFile(lockPath, "utf8")), lock)
      assert.deepStrictEqual(yield* Effect.promise(() => Fs.readdir(into)), ["acme", LockFile.LockFileName, "solo"].sort())
    }).pipe(Effect.scoped))
})
