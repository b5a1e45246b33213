/**
 * A pull checks what is installed against the lock file before it says `unchanged` or replaces a
 * skill: a file edited (same size or not), deleted or added on disk since it was pulled fails the
 * pull naming it, and `overwriteLocal` restores the verified source instead. The lock file itself
 * is input: a record naming a path outside the target, or an oversized file, is refused.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { LockFile, Pull, type PullModel } from "@mcp-skills/client"
import { filesUnder } from "./support/fixture.js"
import { tempDir, withClient } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

const setup = Effect.gen(function*() {
  const s = yield* Effect.acquireRelease(Effect.promise(() => Tamper.start()), (s) => Effect.promise(() => s.close()))
  const root = yield* tempDir("pull-local-")
  return { s, root, into: Path.join(root, "DIR") }
})

const pullWith = (url: string, options: Pull.Options) =>
  withClient(url, (client) => Pull.pull(client, options).pipe(Effect.provide(NodeFileSystem.layer))).pipe(Effect.exit)

const failureOf = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined

const read = (path: string) => Effect.promise(() => Fs.readFile(path, "utf8"))

const snapshot = (into: string) =>
  Effect.promise(async () => {
    const files = await filesUnder(into)
    return Object.fromEntries(await Promise.all(files.map(async (file) => [file, await Fs.readFile(Path.join(into, file), "utf8")])))
  })

describe("Pull checks what is installed before it says unchanged", () => {
  it.live("a file edited in place (same size), one grown, one deleted and one added: refused naming each; overwriteLocal restores", () =>
    Effect.gen(function*() {
      const { s, into } = yield* setup
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      const lock = yield* read(Path.join(into, LockFile.LockFileName))
      const invoice = Path.join(into, "pdf-processing/templates/invoice.md")
      const served = yield* read(invoice)
      yield* Effect.promise(async () => {
        await Fs.writeFile(invoice, served.replace("Total", "TOTAL"))
        await Fs.appendFile(Path.join(into, "pdf-processing/SKILL.md"), "\nMy own note.\n")
        await Fs.rm(Path.join(into, "pdf-processing/assets/logo.png"))
        await Fs.writeFile(Path.join(into, "pdf-processing/templates/mine.md"), "mine\n")
      })
      const edited = yield* snapshot(into)
      const reads = s.reads().length
      const refused = failureOf(yield* pullWith(s.url, { into, all: true }))
      assert.deepInclude(refused, { _tag: "LocalChanges" })
      assert.deepStrictEqual((refused as { skills: unknown }).skills, [{
        uri: Tamper.SkillUri,
        path: "pdf-processing",
        edits: {
          modified: ["pdf-processing/SKILL.md", "pdf-processing/templates/invoice.md"],
          missing: ["pdf-processing/assets/logo.png"],
          added: ["pdf-processing/templates/mine.md"],
          truncated: false
        }
      }])
      assert.match(
        String((refused as Error).message),
        /pdf-processing\/templates\/invoice\.md \(edited\).*pdf-processing\/assets\/logo\.png \(deleted\).*pdf-processing\/templates\/mine\.md \(added\).*--overwrite-local/
      )
      // Nothing changed, and no file was fetched to find out.
      assert.deepStrictEqual(yield* snapshot(into), edited)
      assert.strictEqual(yield* read(Path.join(into, LockFile.LockFileName)), lock)
      assert.strictEqual(s.reads().length, reads)

      const restored = yield* pullWith(s.url, { into, all: true, overwriteLocal: true })
      assert.deepInclude(Exit.isSuccess(restored) ? restored.value.skills[0] : restored, {
        _tag: "Restored",
        uri: Tamper.SkillUri,
        path: "pdf-processing",
        files: 3
      })
      assert.strictEqual(yield* read(invoice), served)
      assert.deepStrictEqual(yield* Effect.promise(() => filesUnder(into)), [
        "mcp-skills.lock.json",
        "pdf-processing/SKILL.md",
        "pdf-processing/assets/logo.png",
        "pdf-processing/templates/invoice.md"
      ])
      assert.strictEqual(yield* read(Path.join(into, LockFile.LockFileName)), lock)
      const again = yield* pullWith(s.url, { into, all: true })
      assert.deepStrictEqual(Exit.isSuccess(again) ? again.value.skills : again, [
        { _tag: "Unchanged", uri: Tamper.SkillUri, path: "pdf-processing" }
      ])
    }).pipe(Effect.scoped))

  it.live("an update over a file edited here is refused even with acceptChanges; overwriteLocal replaces it", () =>
    Effect.gen(function*() {
      const { s, into } = yield* setup
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      const skillMd = Path.join(into, "pdf-processing/SKILL.md")
      yield* Effect.promise(() => Fs.appendFile(skillMd, "\nMy own note.\n"))
      s.tamper.revised = true
      const refused = failureOf(yield* pullWith(s.url, { into, all: true, acceptChanges: true }))
      assert.deepInclude(refused, { _tag: "LocalChanges" })
      assert.include(yield* read(skillMd), "My own note.")
      assert.include(yield* read(Path.join(into, "pdf-processing/templates/invoice.md")), "Total: {{amount}}")
      const updated = yield* pullWith(s.url, { into, all: true, acceptChanges: true, overwriteLocal: true })
      assert.deepInclude(Exit.isSuccess(updated) ? updated.value.skills[0] : updated, {
        _tag: "Updated",
        changed: [Tamper.InvoiceUri],
        local: { modified: ["pdf-processing/SKILL.md"], missing: [], added: [], truncated: false }
      })
      assert.strictEqual(yield* read(skillMd), Tamper.SkillMd)
      assert.strictEqual(yield* read(Path.join(into, "pdf-processing/templates/invoice.md")), "# Invoice template v2\n")
    }).pipe(Effect.scoped))

  it.live("a skill folder deleted whole is every file missing: refused, then put back with overwriteLocal", () =>
    Effect.gen(function*() {
      const { s, into } = yield* setup
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      yield* Effect.promise(() => Fs.rm(Path.join(into, "pdf-processing"), { recursive: true }))
      const refused = failureOf(yield* pullWith(s.url, { into, all: true }))
      assert.deepStrictEqual((refused as { skills: ReadonlyArray<{ edits: unknown }> }).skills[0]!.edits, {
        modified: [],
        missing: ["pdf-processing/SKILL.md", "pdf-processing/assets/logo.png", "pdf-processing/templates/invoice.md"],
        added: [],
        truncated: false
      })
      const restored = yield* pullWith(s.url, { into, all: true, overwriteLocal: true })
      assert.deepInclude(Exit.isSuccess(restored) ? restored.value.skills[0] : restored, { _tag: "Restored" })
      assert.strictEqual(yield* read(Path.join(into, "pdf-processing/SKILL.md")), Tamper.SkillMd)
    }).pipe(Effect.scoped))

  it.live("the check is bounded: a folder holding thousands of files it never wrote stops the walk and says so", () =>
    Effect.gen(function*() {
      const { s, into } = yield* setup
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      // Past the walk's bound (1,000 entries beyond what the lock file records).
      const junk = Path.join(into, "pdf-processing/aaa")
      yield* Effect.promise(async () => {
        await Fs.mkdir(junk)
        for (let i = 0; i < 1_200; i++) await Fs.writeFile(Path.join(junk, `f${String(i).padStart(4, "0")}`), "")
      })
      const refused = failureOf(yield* pullWith(s.url, { into, all: true }))
      const edits = (refused as { skills: ReadonlyArray<{ edits: PullModel.Plan["steps"][number]["local"] }> }).skills[0]!.edits
      assert.isTrue(edits.truncated)
      assert.isBelow(edits.added.length, 1_200)
      assert.include(String((refused as Error).message), "pdf-processing holds more than a pull wrote there")
      const restored = yield* pullWith(s.url, { into, all: true, overwriteLocal: true })
      assert.deepInclude(Exit.isSuccess(restored) ? restored.value.skills[0] : restored, { _tag: "Restored" })
      assert.isFalse(yield* Effect.promise(() => Fs.stat(junk).then(() => true, () => false)))
    }).pipe(Effect.scoped))

  it.live("a FIFO in a pulled skill folder is refused by lstat, never opened", () =>
    Effect.gen(function*() {
      const { s, into } = yield* setup
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      const fifo = Path.join(into, "pdf-processing/templates/invoice.md")
      yield* Effect.promise(() => Fs.rm(fifo))
      execFileSync("mkfifo", [fifo])
      const exit = yield* pullWith(s.url, { into, all: true, overwriteLocal: true })
      assert.deepInclude(failureOf(exit), { _tag: "UnsafePath", path: fifo, found: "FIFO" })
    }).pipe(Effect.scoped))
})

describe("Pull reads the lock file as input", () => {
  it.live("a record whose path leaves the target is refused before anything is read or removed", () =>
    Effect.gen(function*() {
      const { s, root, into } = yield* setup
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      const lockPath = Path.join(into, LockFile.LockFileName)
      const elsewhere = Path.join(root, "elsewhere")
      yield* Effect.promise(async () => {
        await Fs.mkdir(elsewhere)
        await Fs.writeFile(Path.join(elsewhere, "keep.txt"), "keep\n")
        const lock = JSON.parse(await Fs.readFile(lockPath, "utf8"))
        lock.skills[0].path = "../elsewhere"
        await Fs.writeFile(lockPath, JSON.stringify(lock))
      })
      s.tamper.gone = true
      const exit = yield* pullWith(s.url, { into, all: true, prune: true, overwriteLocal: true })
      assert.deepInclude(failureOf(exit), { _tag: "PullError", check: "lock", file: lockPath })
      assert.include(String((failureOf(exit) as Error).message), "a relative path of plain segments")
      assert.strictEqual(yield* read(Path.join(elsewhere, "keep.txt")), "keep\n")
    }).pipe(Effect.scoped))

  it.live(`a lock file over ${LockFile.MaxLockFileBytes} bytes is refused before it is read`, () =>
    Effect.gen(function*() {
      const { s, into } = yield* setup
      const lockPath = Path.join(into, LockFile.LockFileName)
      yield* Effect.promise(async () => {
        await Fs.mkdir(into)
        // Sparse: the size is there, the disk space is not.
        await Fs.writeFile(lockPath, "")
        await Fs.truncate(lockPath, LockFile.MaxLockFileBytes + 1)
      })
      const exit = yield* pullWith(s.url, { into, all: true })
      assert.deepInclude(failureOf(exit), { _tag: "PullError", check: "lock", file: lockPath })
      assert.include(String((failureOf(exit) as Error).message), "more than a lock file a pull writes")
    }).pipe(Effect.scoped))
})
