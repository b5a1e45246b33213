/**
 * `pull --all` reports the skills a server no longer serves, and `--prune` removes them, folder
 * and lock record together: a commit that fails midway (an injected fault) or a process killed
 * midway (SIGKILL after each rename of the commit) leaves the lock file and the folders agreeing,
 * as before the pull or as after it, once the next pull has looked.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { createHash } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { LockFile, Pull } from "@mcp-skills/client"
import * as MemoryFs from "./support/MemoryFileSystem.js"
import { runCli, runProgram, serveHttp, tempDir, withClient } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

const withTamper = Effect.acquireRelease(Effect.promise(() => Tamper.start()), (s) => Effect.promise(() => s.close()))

const pullWith = (url: string, options: Pull.Options) =>
  withClient(url, (client) => Pull.pull(client, options).pipe(Effect.provide(NodeFileSystem.layer))).pipe(Effect.exit)

const failureOf = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined

const lockOf = (into: string) => Effect.promise(async () => JSON.parse(await Fs.readFile(Path.join(into, LockFile.LockFileName), "utf8")))

const exists = (path: string) => Effect.promise(() => Fs.lstat(path).then(() => true, () => false))

/**
 * The lock file and the target agree: every record's files are there with their digests, every
 * folder below the target belongs to a record, and no staging folder is left.
 */
const consistent = (into: string) =>
  Effect.gen(function*() {
    const lock = yield* lockOf(into)
    const records: ReadonlyArray<{ path: string; files: ReadonlyArray<{ path: string; digest: string }> }> = lock.skills
    for (const record of records) {
      for (const file of record.files) {
        const bytes = yield* Effect.promise(() => Fs.readFile(Path.join(into, record.path, file.path)))
        assert.strictEqual(`sha256:${createHash("sha256").update(bytes).digest("hex")}`, file.digest, `${record.path}/${file.path}`)
      }
    }
    const entries = (yield* Effect.promise(() => Fs.readdir(into))).filter((name) => name !== LockFile.LockFileName)
    assert.deepStrictEqual(entries.sort(), [...new Set(records.map((record) => record.path.split("/")[0]!))].sort())
    return records.map((record) => record.path)
  })

describe("pull all reports gone skills; prune removes them", () => {
  it.live("gone is reported and kept; pruned is removed, folder and lock record; an unlisted skill still served is neither", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const into = Path.join(yield* tempDir("pull-gone-"), "DIR")
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      s.tamper.unlisted = true
      const unlisted = yield* pullWith(s.url, { into, all: true })
      assert.deepStrictEqual(Exit.isSuccess(unlisted) ? unlisted.value.skills : unlisted, [])
      s.tamper.unlisted = false
      s.tamper.gone = true
      const gone = yield* pullWith(s.url, { into, all: true })
      assert.deepStrictEqual(Exit.isSuccess(gone) ? gone.value.skills : gone, [
        { _tag: "Gone", uri: Tamper.SkillUri, path: "pdf-processing" }
      ])
      assert.deepStrictEqual(yield* consistent(into), ["pdf-processing"])
      const usage = failureOf(yield* pullWith(s.url, { into, uris: [Tamper.SkillUri], prune: true }))
      assert.deepInclude(usage, { _tag: "PullError", check: "usage" })
      const pruned = yield* pullWith(s.url, { into, all: true, prune: true })
      assert.deepStrictEqual(Exit.isSuccess(pruned) ? pruned.value.skills : pruned, [
        { _tag: "Pruned", uri: Tamper.SkillUri, path: "pdf-processing" }
      ])
      assert.deepStrictEqual(yield* consistent(into), [])
      assert.deepStrictEqual(yield* Effect.promise(() => Fs.readdir(into)), [LockFile.LockFileName])
    }).pipe(Effect.scoped))

  it.live("pruning a skill with files edited here is refused naming them; overwriteLocal prunes it", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const into = Path.join(yield* tempDir("pull-prune-edited-"), "DIR")
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      yield* Effect.promise(() => Fs.writeFile(Path.join(into, "pdf-processing/templates/mine.md"), "mine\n"))
      // Deleted files are no loss to a prune.
      yield* Effect.promise(() => Fs.rm(Path.join(into, "pdf-processing/assets/logo.png")))
      s.tamper.gone = true
      const refused = failureOf(yield* pullWith(s.url, { into, all: true, prune: true }))
      assert.deepInclude(refused, { _tag: "LocalChanges" })
      assert.deepStrictEqual((refused as { skills: ReadonlyArray<{ edits: unknown }> }).skills[0]!.edits, {
        modified: [],
        missing: [],
        added: ["pdf-processing/templates/mine.md"],
        truncated: false
      })
      assert.isTrue(yield* exists(Path.join(into, "pdf-processing/templates/mine.md")))
      const pruned = yield* pullWith(s.url, { into, all: true, prune: true, overwriteLocal: true })
      assert.deepInclude(Exit.isSuccess(pruned) ? pruned.value.skills[0] : pruned, { _tag: "Pruned" })
      assert.isFalse(yield* exists(Path.join(into, "pdf-processing")))
    }).pipe(Effect.scoped))

  it.live("a prune whose commit fails midway (an injected fault) is undone: the lock file and the folder as they were", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const memory = MemoryFs.make()
      const pullInto = (options: Omit<Pull.Options, "into">) =>
        withClient(s.url, (client) => Pull.pull(client, { into: "/home/DIR", ...options }).pipe(Effect.provide(MemoryFs.layer(memory))))
          .pipe(Effect.exit)
      const target = () => new Map([...memory.nodes].filter(([path]) => path.startsWith("/home/DIR")))
      assert.isTrue(Exit.isSuccess(yield* pullInto({ all: true })))
      const before = target()
      s.tamper.gone = true
      // The folder's move out, then the lock file's rename after it.
      for (const fault of [(to: string) => to.includes("/.replaced/"), (to: string) => to.endsWith(LockFile.LockFileName)]) {
        memory.failRename = fault
        assert.deepInclude(failureOf(yield* pullInto({ all: true, prune: true })), { _tag: "PullError", check: "write" })
        assert.deepStrictEqual(target(), before)
      }
      memory.failRename = undefined
      const pruned = yield* pullInto({ all: true, prune: true })
      assert.deepInclude(Exit.isSuccess(pruned) ? pruned.value.skills[0] : pruned, { _tag: "Pruned" })
      assert.deepStrictEqual(MemoryFs.files(memory, "/home/DIR"), [LockFile.LockFileName])
    }).pipe(Effect.scoped))
})

describe("a pull killed midway through its commit", () => {
  const crashPull = Path.resolve(import.meta.dirname, "fixtures/crash-pull.mjs")

  // A fresh install, the server changed as `change` says, then a pull killed right after its
  // `renames`th rename; the next pull's recovery, then the check that lock file and folders agree.
  const crashAfter = (change: (tamper: Tamper.Tamper) => void, options: Pull.Options | Omit<Pull.Options, "into">, renames: number) =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const into = Path.join(yield* tempDir("pull-crash-"), "DIR")
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      change(s.tamper)
      const run = yield* Effect.promise(() => runProgram(crashPull, [s.url, into, String(renames), JSON.stringify(options)]))
      assert.notStrictEqual(run.status, 0, run.stdout + run.stderr)
      assert.isTrue((yield* Effect.promise(() => Fs.readdir(into))).some((name) => name.startsWith(".mcp-skills-staging-")))
      yield* Pull.recover(into).pipe(Effect.provide(NodeFileSystem.layer))
      return { s, into, paths: yield* consistent(into) }
    })

  it.live("a prune: before the lock file's rename it is undone, after it finished", () =>
    Effect.gen(function*() {
      // 1: the journal, 2: the skill's folder out, 3: the lock file.
      for (const renames of [1, 2, 3]) {
        const { paths } = yield* crashAfter((tamper) => (tamper.gone = true), { all: true, prune: true }, renames).pipe(Effect.scoped)
        assert.deepStrictEqual(paths, renames < 3 ? ["pdf-processing"] : [], `killed after rename ${renames}`)
      }
    }))

  it.live("an update: the old version or the new one, never a mix; the next pull carries on", () =>
    Effect.gen(function*() {
      // 1: the journal, 2: the old folder out, 3: the new one in, 4: the lock file.
      for (const renames of [1, 2, 3, 4]) {
        yield* Effect.gen(function*() {
          const { into } = yield* crashAfter((tamper) => (tamper.revised = true), { all: true, acceptChanges: true }, renames)
          const invoice = yield* Effect.promise(() => Fs.readFile(Path.join(into, "pdf-processing/templates/invoice.md"), "utf8"))
          const expected = renames < 4 ? "# Invoice template\n\nTotal: {{amount}}\n" : "# Invoice template v2\n"
          assert.strictEqual(invoice, expected, `killed after rename ${renames}`)
        }).pipe(Effect.scoped)
      }
      const s = yield* withTamper
      const into = Path.join(yield* tempDir("pull-crash-again-"), "DIR")
      assert.isTrue(Exit.isSuccess(yield* pullWith(s.url, { into, all: true })))
      s.tamper.revised = true
      const run = yield* Effect.promise(() =>
        runProgram(crashPull, [s.url, into, "3", JSON.stringify({ all: true, acceptChanges: true })])
      )
      assert.notStrictEqual(run.status, 0)
      // No separate recovery: the pull itself finds the journal first.
      const updated = yield* pullWith(s.url, { into, all: true, acceptChanges: true })
      assert.deepInclude(Exit.isSuccess(updated) ? updated.value.skills[0] : updated, { _tag: "Updated", changed: [Tamper.InvoiceUri] })
      yield* consistent(into)
    }).pipe(Effect.scoped))
})

describe("mcp-skills pull --all --prune over a folder served by mcp-skills-server --watch", () => {
  const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill\n---\n# ${name}\n`

  it.live("a dropped skill is reported, then pruned; a skill nested in its folder and served on its own stays", () =>
    Effect.gen(function*() {
      const served = yield* tempDir("prune-served-")
      const files: Record<string, string> = {
        "refunds/SKILL.md": skillMd("refunds"),
        "refunds/references/policy.md": "Refunds within 30 days.\n",
        "refunds/escalation/SKILL.md": skillMd("escalation"),
        "csv/SKILL.md": skillMd("csv")
      }
      yield* Effect.promise(async () => {
        for (const [path, text] of Object.entries(files)) {
          await Fs.mkdir(Path.dirname(Path.join(served, path)), { recursive: true })
          await Fs.writeFile(Path.join(served, path), text)
        }
      })
      const { url } = yield* serveHttp(served, ["--watch"])
      const into = Path.join(yield* tempDir("prune-into-"), "DIR")
      const cli = (...args: ReadonlyArray<string>) => Effect.promise(() => runCli(["pull", url, ...args, "--into", into]))
      assert.strictEqual((yield* cli("--all")).status, 0)
      yield* Effect.promise(async () => {
        await Fs.rm(Path.join(served, "refunds/SKILL.md"))
        await Fs.rm(Path.join(served, "refunds/references"), { recursive: true })
      })
      for (let tries = 0; ; tries++) {
        const listed = yield* withClient(url, (client) => client.listSkills())
        if (!listed.skills.some((skill) => skill.uri === "skill://refunds/SKILL.md")) break
        assert.isBelow(tries, 100)
        yield* Effect.sleep("100 millis")
      }
      const reported = yield* cli("--all")
      assert.strictEqual(reported.stderr, "")
      assert.strictEqual(
        reported.stdout,
        "unchanged skill://csv/SKILL.md\nunchanged skill://refunds/escalation/SKILL.md\n" +
          "gone skill://refunds/SKILL.md: no longer served; refunds kept (--prune removes it)\n"
      )
      assert.isTrue(yield* exists(Path.join(into, "refunds/references/policy.md")))
      const usage = yield* cli("skill://csv/SKILL.md", "--prune")
      assert.strictEqual(usage.status, 1)
      assert.include(usage.stderr, "--prune needs --all")
      const pruned = yield* cli("--all", "--prune")
      assert.strictEqual(pruned.stderr, "")
      assert.include(pruned.stdout, "pruned skill://refunds/SKILL.md: no longer served; its files under refunds removed\n")
      assert.deepStrictEqual(yield* consistent(into), ["csv", "refunds/escalation"])
      assert.deepStrictEqual(
        (yield* Effect.promise(() => Fs.readdir(Path.join(into, "refunds"), { recursive: true }))).sort(),
        ["escalation", "escalation/SKILL.md"]
      )
    }).pipe(Effect.scoped))
})
