/**
 * `skills-lock.json` shared with the real `npx skills` CLI (npm `skills` 1.7.4, a devDependency),
 * run offline on local folders with a fake HOME: our computedHash is the one it records; a
 * `pull --host` into a project is listed by it with our source and a matching hash, and survives
 * its `add` and `update`; a skill it installed is shown by `mcp-skills status`; a pruned skill
 * leaves the lock file.
 */
import { execFile, spawn } from "node:child_process"
import { createRequire } from "node:module"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeServices } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import { describe, expect, it, type TestContext } from "vitest"
import { SkillsLock } from "../src/index.js"
import type { Run } from "./support/helpers.js"
import { serveHttp } from "./support/helpers.js"

const skillsCli = Path.join(Path.dirname(createRequire(import.meta.url).resolve("skills/package.json")), "bin/cli.mjs")
const ourCli = Path.resolve(import.meta.dirname, "../dist/src/bin/mcp-skills.js")

const run = (program: string, args: ReadonlyArray<string>, cwd: string, home: string): Promise<Run> =>
  new Promise((resolve) => {
    const env = { ...process.env, HOME: home, DISABLE_TELEMETRY: "1", DO_NOT_TRACK: "1", MCP_SKILLS_TOKEN: "", CI: "1" }
    execFile(process.execPath, [program, ...args], { cwd, env, encoding: "utf8", timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    })
  })

const hashOf = (dir: string) => Effect.runPromise(SkillsLock.computedHash(dir).pipe(Effect.provide(NodeServices.layer)))

// A project, a home and a folder of sources, removed after the test.
const world = async (context: TestContext) => {
  const root = await Fs.realpath(await Fs.mkdtemp(Path.join(Os.tmpdir(), "mcp-skills-lock-")))
  context.onTestFinished(() => Fs.rm(root, { recursive: true, force: true }))
  const dirs = { project: Path.join(root, "project"), home: Path.join(root, "home"), sources: Path.join(root, "sources") }
  for (const dir of Object.values(dirs)) await Fs.mkdir(dir, { recursive: true })
  return dirs
}

const write = async (dir: string, files: Record<string, string | Uint8Array>) => {
  for (const [path, content] of Object.entries(files)) {
    await Fs.mkdir(Path.dirname(Path.join(dir, path)), { recursive: true })
    await Fs.writeFile(Path.join(dir, path), content)
  }
}

const lockOf = async (project: string) => JSON.parse(await Fs.readFile(Path.join(project, "skills-lock.json"), "utf8"))

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill\n---\n\n# ${name}\n`

describe.concurrent("skills-lock.json with npx skills", () => {
  it("our computedHash is the one npx skills records, over names it sorts otherwise than code units", async (context) => {
    const { home, project, sources } = await world(context)
    // `B.md` before `a.md` in code units, after it in localeCompare; `_x` and `-y` likewise.
    await write(Path.join(sources, "mixed"), {
      "SKILL.md": skillMd("mixed"),
      "B.md": "upper\n",
      "a.md": "lower\n",
      "_x/one.txt": "1",
      "-y/two.txt": "2",
      "deep/er/üml.md": "ü\n",
      "assets/blob.bin": new Uint8Array([0, 255, 1, 254])
    })
    const added = await run(skillsCli, ["add", Path.join(sources, "mixed"), "--yes", "--agent", "codex"], project, home)
    expect(added.status, added.stdout + added.stderr).toBe(0)
    const recorded = (await lockOf(project)).skills.mixed
    expect(recorded.sourceType).toBe("local")
    expect(await hashOf(Path.join(project, ".agents/skills/mixed"))).toBe(recorded.computedHash)
    // The hash is of the files alone: the copy's and the source's agree.
    expect(await hashOf(Path.join(sources, "mixed"))).toBe(recorded.computedHash)
  })

  it("a pull --host into a project is listed by npx skills, hash matching, and survives its add and update; prune removes it", async (context) => {
    const { home, project, sources } = await world(context)
    const served = Path.join(sources, "served")
    await write(Path.join(served, "notes"), { "SKILL.md": skillMd("notes"), "references/guide.md": "# Guide\n" })
    await write(Path.join(served, "drafts"), { "SKILL.md": skillMd("drafts") })
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* serveHttp(served, ["--watch"])
      const pulled = yield* Effect.promise(() => run(ourCli, ["pull", server.url, "--all", "--host", "codex"], project, home))
      expect(pulled.status, pulled.stderr).toBe(0)
      const lock = yield* Effect.promise(() => lockOf(project))
      expect(Object.keys(lock.skills)).toEqual(["drafts", "notes"])
      expect(lock.skills.notes).toEqual({
        source: server.url,
        sourceType: "mcp",
        computedHash: yield* Effect.promise(() => hashOf(Path.join(project, ".agents/skills/notes")))
      })
      // The same files installed by npx skills from a folder get the same hash.
      const added = yield* Effect.promise(() =>
        run(skillsCli, ["add", Path.join(served, "notes"), "--yes", "--agent", "claude-code"], Path.join(sources), home)
      )
      expect(added.status, added.stdout + added.stderr).toBe(0)
      expect((yield* Effect.promise(() => lockOf(sources))).skills.notes.computedHash).toBe(lock.skills.notes.computedHash)

      const listed = yield* Effect.promise(() => run(skillsCli, ["list", "--json"], project, home))
      expect(listed.status, listed.stderr).toBe(0)
      const notes = JSON.parse(listed.stdout).find((skill: any) => skill.name === "notes")
      expect(notes).toMatchObject({ path: Path.join(project, ".agents/skills/notes"), source: server.url, sourceType: "mcp" })

      // Its add of another skill and its update keep our entries and our folders.
      yield* Effect.promise(() => write(Path.join(sources, "theirs"), { "SKILL.md": skillMd("theirs") }))
      const theirs = yield* Effect.promise(() => run(skillsCli, ["add", Path.join(sources, "theirs"), "--yes", "--agent", "codex"], project, home))
      expect(theirs.status, theirs.stdout + theirs.stderr).toBe(0)
      const updated = yield* Effect.promise(() => run(skillsCli, ["update", "--project", "--yes"], project, home))
      expect(updated.status, updated.stdout + updated.stderr).toBe(0)
      const after = yield* Effect.promise(() => lockOf(project))
      expect(after.skills.notes).toEqual(lock.skills.notes)
      expect(after.skills.theirs.sourceType).toBe("local")
      expect(yield* Effect.promise(() => Fs.readFile(Path.join(project, ".agents/skills/notes/references/guide.md"), "utf8"))).toBe("# Guide\n")

      // `drafts` leaves the server (watched): a pruning pull removes its folder and its entry, not theirs.
      yield* Effect.promise(() => Fs.rm(Path.join(served, "drafts"), { recursive: true }))
      for (let tries = 0; tries < 100; tries++) {
        const listing = yield* Effect.promise(() => run(ourCli, ["list", server.url], project, home))
        if (!listing.stdout.includes("drafts")) break
        yield* Effect.sleep("100 millis")
      }
      const pruned = yield* Effect.promise(() => run(ourCli, ["pull", server.url, "--all", "--prune", "--host", "codex"], project, home))
      expect(pruned.status, pruned.stderr).toBe(0)
      expect(Object.keys((yield* Effect.promise(() => lockOf(project))).skills)).toEqual(["notes", "theirs"])
    })))
  }, 120_000)

  it("mcp-skills status shows the skills npx skills installed in the project, and whether they were edited", async (context) => {
    const { home, project, sources } = await world(context)
    await write(Path.join(sources, "theirs"), { "SKILL.md": skillMd("theirs"), "notes.md": "one\n" })
    const added = await run(skillsCli, ["add", Path.join(sources, "theirs"), "--yes", "--agent", "codex"], project, home)
    expect(added.status, added.stdout + added.stderr).toBe(0)
    const status = await run(ourCli, ["status", "--host", "codex", "--scope", "project", "--offline"], project, home)
    expect(status.status, status.stderr).toBe(0)
    expect(status.stdout).toContain(`${Path.join(project, ".agents/skills")} (codex, goose, agents, project): 1 skill`)
    expect(status.stdout).toContain("  theirs\tinstalled by npx skills\tfrom ../sources/theirs (local)\tas installed")
    await Fs.writeFile(Path.join(project, ".agents/skills/theirs/notes.md"), "two\n")
    const edited = await run(ourCli, ["status", "--host", "codex", "--offline"], project, home)
    expect(edited.stdout).toContain("  theirs\tinstalled by npx skills\tfrom ../sources/theirs (local)\tedited here (its computedHash differs)")
  })

  it("sync --host keeps the project's skills-lock.json in step: an added skill recorded, a removed one dropped", async (context) => {
    const { home, project, sources } = await world(context)
    await write(Path.join(sources, "one"), { "SKILL.md": skillMd("one") })
    // Until `check` holds of the lock file, or the time is up.
    const until = async (check: (skills: Record<string, any>) => boolean) => {
      for (let tries = 0; tries < 300; tries++) {
        const skills = await lockOf(project).then((lock) => lock.skills, () => ({}))
        if (check(skills)) return skills
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error(`skills-lock.json never got there: ${await Fs.readFile(Path.join(project, "skills-lock.json"), "utf8").catch(() => "absent")}`)
    }
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = yield* serveHttp(sources, ["--watch"])
      const sync = spawn(process.execPath, [ourCli, "sync", server.url, "--all", "--prune", "--host", "codex"], {
        cwd: project,
        env: { ...process.env, HOME: home, MCP_SKILLS_TOKEN: "" },
        stdio: "ignore"
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => sync.kill("SIGTERM")))
      yield* Effect.promise(() => until((skills) => skills.one?.sourceType === "mcp"))
      yield* Effect.promise(() => write(Path.join(sources, "two"), { "SKILL.md": skillMd("two") }))
      const both = yield* Effect.promise(() => until((skills) => skills.two !== undefined))
      expect(both.two.computedHash).toBe(yield* Effect.promise(() => hashOf(Path.join(project, ".agents/skills/two"))))
      yield* Effect.promise(() => Fs.rm(Path.join(sources, "one"), { recursive: true }))
      expect(Object.keys(yield* Effect.promise(() => until((skills) => skills.one === undefined)))).toEqual(["two"])
    })))
  }, 120_000)

  it("a lock file that is not one is left as it is", async (context) => {
    const { project } = await world(context)
    await Fs.writeFile(Path.join(project, "skills-lock.json"), "{ not json")
    const updated = await Effect.runPromiseExit(SkillsLock.update(project, (skills) => ({ ...skills, x: {} })).pipe(Effect.provide(NodeServices.layer)))
    expect(updated._tag).toBe("Failure")
    expect(await Fs.readFile(Path.join(project, "skills-lock.json"), "utf8")).toBe("{ not json")
  })
})
