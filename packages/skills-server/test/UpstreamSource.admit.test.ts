/**
 * Governance: an admit list keyed by upstream, skill URI and digest-set hash. In observe mode every
 * verified skill is served and each version the list does not name is logged and kept in the
 * inventory; in admit mode only named versions are served, so a skill that changes is hidden until
 * its new digest set is admitted (by editing the file, which the gateway follows).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { AdmitList, ServerLimits, Skill, UpstreamSource } from "../src/index.js"
import { eventually, gateway, hearing, ourUpstream, platform } from "./support/gateway.js"
import { fifo, linkToZero } from "./support/hostile.js"

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill\n---\n\n# ${name}\n`

const skill = (name: string, guide: string) => Skill.make({ path: name, files: { "SKILL.md": skillMd(name), "guide.md": guide } })

const served = (registry: { readonly snapshot: Effect.Effect<{ readonly skills: ReadonlyArray<{ readonly uri: string }> }> }) =>
  Effect.map(registry.snapshot, (snapshot) => snapshot.skills.map((entry) => entry.uri).sort())

describe("UpstreamSource admit list", () => {
  it.live("observe: everything verified is served, each version the list does not name is logged and kept in the inventory", () =>
    Effect.gen(function*() {
      const upstream = yield* ourUpstream([skill("alpha", "a\n"), skill("beta", "b\n")])
      const lines: Array<string> = []
      const { registry, upstreams } = yield* gateway([{ prefix: "team", transport: UpstreamSource.http(upstream.url) }], {
        admit: { mode: "observe", list: AdmitList.fixed({ version: 1, skills: [] }) },
        log: (line) => Effect.sync(() => lines.push(line))
      })
      assert.deepStrictEqual(yield* served(registry), ["skill://team/alpha/SKILL.md", "skill://team/beta/SKILL.md"])
      assert.strictEqual(lines.filter((line) => /is not in the admit list; serving it \(observe\)/.test(line)).length, 2)
      const inventory = yield* upstreams.inventory
      assert.deepStrictEqual(inventory.skills.map((entry) => [entry.upstream, entry.uri]).sort(), [
        ["team", "skill://alpha/SKILL.md"],
        ["team", "skill://beta/SKILL.md"]
      ])
      assert.isTrue(inventory.skills.every((entry) => /^sha256:[0-9a-f]{64}$/.test(entry.digestSet)))
      assert.strictEqual((yield* upstreams.status)[0]!.unadmitted, 2)
      // The inventory is an admit list: it parses back as one, entry for entry.
      const text = AdmitList.format(inventory)
      const parsed = AdmitList.parse("inventory", text)
      assert.isTrue(parsed._tag === "Success" && parsed.success.skills.length === 2)
    }).pipe(Effect.provide(platform)))

  it.live("admit: only admitted versions are served; a changed skill is hidden until its new digest set is admitted", () =>
    Effect.gen(function*() {
      const upstream = yield* ourUpstream([skill("alpha", "alpha v1\n"), skill("beta", "beta v1\n")])
      // The inventory an operator would take, with alpha admitted and beta not.
      const observed = yield* gateway([{ prefix: "team", transport: UpstreamSource.http(upstream.url) }])
      const alphaV1 = (yield* observed.upstreams.inventory).skills.filter((entry) => entry.uri === "skill://alpha/SKILL.md")
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gateway-admit-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      const file = Path.join(dir, "admit.json")
      Fs.writeFileSync(file, AdmitList.format({ version: 1, skills: alphaV1 }))
      const lines: Array<string> = []
      const list = yield* AdmitList.watch(file, { log: (line) => Effect.sync(() => lines.push(line)) })
      const { registry, upstreams } = yield* gateway([{ prefix: "team", transport: UpstreamSource.http(upstream.url) }], {
        admit: { mode: "admit", list },
        log: (line) => Effect.sync(() => lines.push(line)),
        recheck: { min: "1 hour", max: "1 hour" }
      })
      assert.deepStrictEqual(yield* served(registry), ["skill://team/alpha/SKILL.md"])
      assert.isTrue(lines.some((line) => /skill:\/\/beta\/SKILL\.md \(sha256:[0-9a-f]+\) is not in the admit list; not serving it until it is admitted/.test(line)))

      // alpha changes upstream: its new version is not admitted, so alpha is hidden.
      yield* hearing(upstreams)
      yield* upstream.registry.upsert([skill("alpha", "alpha v2\n")])
      yield* eventually("alpha hidden", Effect.map(served(registry), (uris) => uris.length === 0 ? true : undefined))

      // The operator admits the new inventory by writing it over the list: served at once.
      Fs.writeFileSync(file, AdmitList.format(yield* upstreams.inventory))
      yield* eventually("everything admitted", Effect.map(served(registry), (uris) =>
        uris.length === 2 ? true : undefined))
      const snapshot = yield* registry.snapshot
      const alpha = snapshot.byUri.get("skill://team/alpha/SKILL.md")!
      assert.strictEqual(alpha._tag === "Static" && new TextDecoder().decode(alpha.manifest.files.bytes(alpha.manifest.files.indexOf("guide.md"))!), "alpha v2\n")

      // An edit that is not an admit list keeps the list followed until then.
      Fs.writeFileSync(file, "{ not json")
      yield* eventually("the refused edit", Effect.sync(() =>
        lines.some((line) => /admit\.json: .*; still following the previous list/.test(line)) ? true : undefined))
      assert.strictEqual((yield* served(registry)).length, 2)
    }).pipe(Effect.provide(platform)))

  it.live("an admit list that is a FIFO, a link to /dev/zero or too large is refused at once, naming it", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "gateway-admit-hostile-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      const refusal = (file: string) =>
        Effect.flip(Effect.scoped(AdmitList.watch(file))).pipe(Effect.map((error) => `${error.message}`))
      fifo(Path.join(dir, "fifo.json"))
      assert.match(yield* refusal(Path.join(dir, "fifo.json")), /fifo\.json.*not a regular file \(FIFO\)/)
      linkToZero(Path.join(dir, "zero.json"))
      assert.match(yield* refusal(Path.join(dir, "zero.json")), /zero\.json.*not a regular file/)
      const big = Path.join(dir, "big.json")
      Fs.writeFileSync(big, "")
      Fs.truncateSync(big, ServerLimits.AdmitListMaxBytes + 1)
      assert.match(yield* refusal(big), /big\.json.*larger than 67108864 bytes/)
      // A list reached through a link (as deployments mount files) is read.
      const real = Path.join(dir, "real.json")
      Fs.writeFileSync(real, AdmitList.format({ version: 1, skills: [] }))
      Fs.symlinkSync(real, Path.join(dir, "linked.json"))
      const list = yield* Effect.scoped(Effect.flatMap(AdmitList.watch(Path.join(dir, "linked.json")), (source) => source.current))
      assert.deepStrictEqual(list.skills, [])
    }).pipe(Effect.timeout("10 seconds")))
})
