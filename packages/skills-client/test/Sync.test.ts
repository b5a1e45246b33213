/**
 * `Sync` over real HTTP: against `mcp-skills-server --watch` on both revisions it hears an add,
 * an edit (a rename, as editors save) and a remove, each installed whole within a bounded time,
 * and goes on across a server restart; against a server that lies, a tampered change is refused
 * and the installed version stays (with `all`, that skill alone), a change over a file edited
 * here is refused and the edit stays; an interrupt in the middle of a change leaves the old skill or the new one, never a mix.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Follow, PullModel, SkillCache, type SkillsClient, Sync } from "@mcp-skills/client"
import { serverCli, tempDir } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

const Within = Duration.seconds(30)

const services = Layer.mergeAll(FetchHttpClient.layer, NodeServices.layer, NodeFileSystem.layer)

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

const skillMd = (name: string, body: string) => `---\nname: ${name}\ndescription: The ${name} skill\n---\n\n${body}\n`

const write = (dir: string, name: string, body: string) =>
  Effect.promise(async () => {
    await Fs.mkdir(Path.join(dir, name), { recursive: true })
    // As an editor saves: a new file renamed over the old one.
    const temp = Path.join(dir, name, ".SKILL.md.swp")
    await Fs.writeFile(temp, skillMd(name, body))
    await Fs.rename(temp, Path.join(dir, name, "SKILL.md"))
  })

/** `mcp-skills-server serve DIR --watch` on `port` (0: a free one); `stop` waits for its exit. */
const serve = (dir: string, port = 0) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly port: number; readonly stop: Effect.Effect<void> }>((resume) => {
      const child = spawn(process.execPath, [serverCli, "serve", dir, "--watch", "--host", "127.0.0.1", "--port", String(port)], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
      const stop = Effect.promise(() => {
        child.kill("SIGTERM")
        return exited
      })
      let out = ""
      child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8")
        const match = /listening (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/.exec(out)
        if (match !== null) resume(Effect.succeed({ url: match[1]!, port: Number(match[2]), stop }))
      })
      child.on("exit", (code) => resume(Effect.die(new Error(`mcp-skills-server exited (${code}): ${out}`))))
    }),
    ({ stop }) => stop
  )

/** A sync running in the scope, its events in a queue. */
const syncing = (settings: Omit<Sync.Settings, "onEvent">) =>
  Effect.gen(function*() {
    const events = yield* Queue.unbounded<Sync.Event>()
    const fiber = yield* Sync.run({ ...settings, onEvent: (event) => Queue.offer(events, event).pipe(Effect.asVoid) }).pipe(
      // Each sync its own cache, so a file another sync verified is read again.
      Effect.provide(Layer.merge(services, SkillCache.layerMemory())),
      Effect.forkScoped
    )
    const seen: Array<string> = []
    // The next event `matches` picks, within a bounded time; the others seen on the way are kept for the message.
    const until = <A>(what: string, matches: (event: Sync.Event) => A | undefined) =>
      Effect.gen(function*() {
        for (;;) {
          const event = yield* Queue.take(events)
          seen.push(Sync.describe(event))
          const found = matches(event)
          if (found !== undefined) return found
        }
      }).pipe(
        Effect.timeoutOrElse({ duration: Within, orElse: () => Effect.die(new Error(`no ${what} within ${Duration.format(Within)}; saw:\n${seen.join("\n")}`)) })
      )
    const changed = (tag: "Added" | "Updated" | "Pruned" | "Restored", uri: string) =>
      until(`${tag} ${uri}`, (event) => event._tag === "Changed" && event.outcome._tag === tag && event.outcome.uri === uri ? event : undefined)
    return { fiber, until, changed }
  })

const lockOf = (into: string) => Effect.promise(async () => JSON.parse(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")))

const read = (path: string) => Effect.promise(() => Fs.readFile(path, "utf8"))

const listed = (path: string) => Effect.promise(() => Fs.readdir(path).then((names) => names.sort(), () => []))

const revisions: ReadonlyArray<SkillsClient.ProtocolChoice> = ["2026-07-28", "2025-11-25"]

describe("Sync with mcp-skills-server --watch", () => {
  for (const protocolVersion of revisions) {
    it.live(`${protocolVersion}: an add, an edit and a remove, each heard and installed whole`, () =>
      Effect.gen(function*() {
        const source = yield* tempDir("sync-source-")
        const into = Path.join(yield* tempDir("sync-into-"), ".claude/skills")
        yield* write(source, "alpha", "First.")
        const server = yield* serve(source)
        // Re-checks by ttl are far away (the server's ttlMs and the 10-minute bound): only notifications are heard.
        const sync = yield* syncing({
          transport: Follow.http(server.url),
          client: { protocolVersion },
          pull: { into, all: true, prune: true, layout: PullModel.flat() }
        })
        yield* sync.changed("Added", "skill://alpha/SKILL.md")
        yield* sync.until("notifications open", (event) => event._tag === "Notifications" && event.state === "open" ? event : undefined)
        yield* write(source, "beta", "Second.")
        yield* sync.changed("Added", "skill://beta/SKILL.md")
        assert.strictEqual(yield* read(Path.join(into, "beta/SKILL.md")), skillMd("beta", "Second."))
        yield* write(source, "alpha", "First, edited.")
        yield* sync.changed("Updated", "skill://alpha/SKILL.md")
        assert.strictEqual(yield* read(Path.join(into, "alpha/SKILL.md")), skillMd("alpha", "First, edited."))
        yield* Effect.promise(() => Fs.rm(Path.join(source, "beta"), { recursive: true }))
        yield* sync.changed("Pruned", "skill://beta/SKILL.md")
        assert.deepStrictEqual(yield* listed(into), ["alpha", "mcp-skills.lock.json"])
        const lock = yield* lockOf(into)
        assert.deepStrictEqual(lock.skills.map((skill: { origin: string; uri: string }) => [skill.origin, skill.uri]), [
          [server.url, "skill://alpha/SKILL.md"]
        ])
      }).pipe(Effect.scoped), 120_000)
  }

  it.live("across a server restart: reconnects with backoff and installs what changed while it was down", () =>
    Effect.gen(function*() {
      const source = yield* tempDir("sync-restart-")
      const into = Path.join(yield* tempDir("sync-into-"), "skills")
      yield* write(source, "alpha", "Before.")
      const first = yield* serve(source)
      const sync = yield* syncing({
        transport: Follow.http(first.url),
        pull: { into, all: true, layout: PullModel.flat() },
        backoff: { base: "100 millis", cap: "1 second" }
      })
      yield* sync.changed("Added", "skill://alpha/SKILL.md")
      yield* first.stop
      yield* sync.until("Disconnected", (event) => event._tag === "Disconnected" ? event : undefined)
      yield* write(source, "alpha", "Changed while the server was down.")
      yield* serve(source, first.port)
      yield* sync.until("Connected", (event) => event._tag === "Connected" ? event : undefined)
      yield* sync.changed("Updated", "skill://alpha/SKILL.md")
      assert.strictEqual(yield* read(Path.join(into, "alpha/SKILL.md")), skillMd("alpha", "Changed while the server was down."))
    }).pipe(Effect.scoped), 120_000)
})

const withTamper = Effect.acquireRelease(Effect.promise(() => Tamper.start({ ttlMs: 100 })), (s) => Effect.promise(() => s.close()))

const invoice = (into: string) => read(Path.join(into, "pdf-processing/templates/invoice.md"))

// The server sends no notifications: only its ttlMs (100 ms) makes the sync look again.
const quick = { min: "100 millis", max: "1 second" } as const

describe("Sync against a server that lies", () => {
  it.live("a tampered change is refused, the installed version stays; the honest one then installs", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const into = yield* tempDir("sync-tamper-")
      const sync = yield* syncing({ transport: Follow.http(s.url), pull: { into, all: true }, recheck: quick })
      yield* sync.changed("Added", Tamper.SkillUri)
      const before = yield* invoice(into)
      const lockBefore = yield* lockOf(into)
      s.tamper.revised = true
      s.tamper.wrongSize = Tamper.InvoiceUri
      const refused = yield* sync.until("Refused", (event) => event._tag === "Refused" ? event : undefined)
      assert.strictEqual(refused.error.check, "size")
      assert.strictEqual(yield* invoice(into), before)
      assert.deepStrictEqual(yield* lockOf(into), lockBefore)
      assert.deepStrictEqual(yield* listed(into), ["mcp-skills.lock.json", "pdf-processing"])
      delete s.tamper.wrongSize
      yield* sync.changed("Updated", Tamper.SkillUri)
      assert.strictEqual(yield* invoice(into), "# Invoice template v2\n")
    }).pipe(Effect.scoped), 120_000)

  it.live("with all, a tampered skill is refused alone: the others are installed, then it too once it is honest", () =>
    Effect.gen(function*() {
      const s = yield* Effect.acquireRelease(
        Effect.promise(() => Tamper.start({ ttlMs: 100, others: ["alpha"], flipByte: Tamper.InvoiceUri })),
        (s) => Effect.promise(() => s.close())
      )
      const into = yield* tempDir("sync-one-bad-")
      const sync = yield* syncing({ transport: Follow.http(s.url), pull: { into, all: true }, recheck: quick })
      yield* sync.changed("Added", "skill://alpha/SKILL.md")
      const refused = yield* sync.until("Refused", (event) => event._tag === "Refused" ? event : undefined)
      assert.strictEqual(refused.error.check, "digest")
      assert.include(refused.error.message, Tamper.InvoiceUri)
      assert.deepStrictEqual(yield* listed(into), ["alpha", "mcp-skills.lock.json"])
      delete s.tamper.flipByte
      yield* sync.changed("Added", Tamper.SkillUri)
      assert.deepStrictEqual(yield* listed(into), ["alpha", "mcp-skills.lock.json", "pdf-processing"])
    }).pipe(Effect.scoped), 120_000)

  it.live("a change over a file edited here is refused naming it; the edit stays", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const into = yield* tempDir("sync-local-")
      const sync = yield* syncing({ transport: Follow.http(s.url), pull: { into, all: true }, recheck: quick })
      yield* sync.changed("Added", Tamper.SkillUri)
      yield* Effect.promise(() => Fs.writeFile(Path.join(into, "pdf-processing/templates/invoice.md"), "mine\n"))
      s.tamper.revised = true
      const refused = yield* sync.until("Refused", (event) => event._tag === "Refused" ? event : undefined)
      assert.strictEqual(refused.error.check, "local")
      assert.include(refused.error.message, "templates/invoice.md")
      assert.strictEqual(yield* invoice(into), "mine\n")
    }).pipe(Effect.scoped), 120_000)

  it.live("an interrupt in the middle of a change leaves the old skill or the new one, never a mix", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const old = Tamper.exampleFiles()
      for (const delay of [0, 1, 5, 20]) {
        s.tamper.revised = false
        const into = yield* tempDir("sync-interrupt-")
        const sync = yield* syncing({ transport: Follow.http(s.url), pull: { into, all: true }, recheck: quick })
        yield* sync.changed("Added", Tamper.SkillUri)
        const readsBefore = s.reads().length
        s.tamper.revised = true
        // The change is under way once its first file is read; the interrupt lands after `delay` ms.
        yield* Effect.gen(function*() {
          while (s.reads().length === readsBefore) yield* Effect.sleep("2 millis")
        }).pipe(Effect.timeout(Within))
        yield* Effect.sleep(Duration.millis(delay))
        yield* Fiber.interrupt(sync.fiber)
        const text = yield* invoice(into)
        assert.oneOf(text, [new TextDecoder().decode(old[1]!.bytes), "# Invoice template v2\n"], `after ${delay} ms`)
        const lock = yield* lockOf(into)
        for (const file of lock.skills[0].files as ReadonlyArray<{ path: string; digest: string }>) {
          const bytes = yield* Effect.promise(() => Fs.readFile(Path.join(into, "pdf-processing", file.path)))
          assert.strictEqual(sha256(bytes), file.digest, `${file.path} after ${delay} ms`)
        }
        // No staging folder is left behind.
        assert.deepStrictEqual(yield* listed(into), ["mcp-skills.lock.json", "pdf-processing"], `after ${delay} ms`)
      }
    }).pipe(Effect.scoped), 120_000)

  it.live("as a layer: it installs while its scope lives; a bad prefix fails building it, before connecting", () =>
    Effect.gen(function*() {
      const s = yield* withTamper
      const into = yield* tempDir("sync-layer-")
      const bad = yield* Layer.build(
        Sync.layer({ transport: Follow.http(s.url), pull: { into, all: true, layout: PullModel.flat("Not A Name") } })
      ).pipe(Effect.provide(services), Effect.flip)
      assert.deepInclude(bad, { _tag: "PullError", check: "usage" })
      assert.strictEqual(s.requests.length, 0)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(Sync.layer({ transport: Follow.http(s.url), pull: { into, all: true, layout: PullModel.flat("team") } })).pipe(
          Effect.provide(Layer.merge(services, SkillCache.layerMemory()))
        )
        yield* Effect.promise(async () => {
          const deadline = Date.now() + Duration.toMillis(Within)
          while (!(await Fs.access(Path.join(into, "team-pdf-processing/SKILL.md")).then(() => true, () => false))) {
            if (Date.now() > deadline) throw new Error("the layer installed nothing")
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        })
      }))
    }).pipe(Effect.scoped), 120_000)
})
