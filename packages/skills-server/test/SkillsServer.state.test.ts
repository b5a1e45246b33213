/**
 * State belongs to the layer. The shared-rendering cache is effect's `Cache` on
 * `Clock` (expiry and eviction under `TestClock`), and no module of the package keeps mutable state
 * at module level.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { ServerLimits, Skill, SkillRegistry, Snapshot } from "../src/index.js"
import type { RequestInfo } from "../src/internal/effect/port.js"
import * as Faults from "../src/internal/faults.js"
import * as Kind from "../src/internal/kind.js"

const counted = () => {
  const renders: Array<string> = []
  const skill = Skill.rendered({
    path: "tenant",
    shareKey: (request) => String(request.headers["x-tenant"]),
    shareFor: "1 minute",
    render: (request) =>
      Effect.sync(() => {
        const tenant = String(request.headers["x-tenant"])
        renders.push(tenant)
        return { "SKILL.md": `---\nname: tenant\ndescription: For ${tenant}\n---\n` }
      })
  })
  return { renders, skill }
}

const requestFor = (tenant: string) =>
  ({
    modern: true,
    protocolVersion: "2026-07-28",
    requestContext: {},
    headers: { "x-tenant": tenant },
    sessionId: undefined,
    server: {},
    serverInfo: {}
  }) as unknown as RequestInfo

// Rendering never reloads: any use of the registry fails the test.
const noRegistry = new Proxy({}, {
  get: () => {
    throw new Error("rendering used the registry")
  }
}) as SkillRegistry.SkillRegistry["Service"]

// One request: a fresh Call on the snapshot, as the handlers make one.
const renderFor = (snapshot: Snapshot.Snapshot, renderings: Kind.RenderCache, tenant: string) =>
  Effect.map(
    Effect.flatMap(Faults.make, (faults) => Kind.render({
      snapshot,
      registry: noRegistry,
      rescan: () => Effect.die("rendering reloaded the registry"),
      visibleIn: () => {
        throw new Error("rendering used another snapshot")
      },
      visible: { skill: () => true, instance: () => true, any: () => true, file: () => true, checked: false },
      request: requestFor(tenant),
      method: "skills/get",
      renderings,
      faults,
      renders: new Map(),
      services: Effect.succeed(Context.empty()),
      admits: () => true
    }, snapshot.skills[0] as Snapshot.RenderedSkill)),
    (rendering) => String(rendering.manifest.frontmatter.description)
  )

describe("rendering cache", () => {
  it.effect("shares a rendering under its shareKey until shareFor passes on the Clock", () =>
    Effect.gen(function*() {
      const { renders, skill } = counted()
      const snapshot = yield* SkillRegistry.build([skill])
      const cache = yield* Kind.makeRenderCache
      expect(yield* renderFor(snapshot, cache, "acme")).toBe("For acme")
      yield* renderFor(snapshot, cache, "acme")
      yield* renderFor(snapshot, cache, "globex")
      expect(renders).toEqual(["acme", "globex"])
      yield* TestClock.adjust("59 seconds")
      yield* renderFor(snapshot, cache, "acme")
      expect(renders).toEqual(["acme", "globex"])
      yield* TestClock.adjust("2 seconds")
      yield* renderFor(snapshot, cache, "acme")
      expect(renders).toEqual(["acme", "globex", "acme"])
    }))

  it.effect("holds at most RenderCacheCapacity renderings and evicts the oldest first", () =>
    Effect.gen(function*() {
      const { renders, skill } = counted()
      const snapshot = yield* SkillRegistry.build([skill])
      const cache = yield* Kind.makeRenderCache
      for (let i = 0; i <= ServerLimits.RenderCacheCapacity; i++) yield* renderFor(snapshot, cache, `t${i}`)
      expect(renders.length).toBe(ServerLimits.RenderCacheCapacity + 1)
      // t1 is still kept; t0 was the oldest and went when the cache overflowed.
      yield* renderFor(snapshot, cache, "t1")
      expect(renders.length).toBe(ServerLimits.RenderCacheCapacity + 1)
      yield* renderFor(snapshot, cache, "t0")
      expect(renders.length).toBe(ServerLimits.RenderCacheCapacity + 2)
      expect(renders.at(-1)).toBe("t0")
    }))

  it.effect("a failed rendering is not kept", () =>
    Effect.gen(function*() {
      let attempts = 0
      const flaky = Skill.rendered({
        path: "tenant",
        shareKey: () => "all",
        shareFor: "1 hour",
        render: () =>
          Effect.suspend(() =>
            ++attempts === 1 ? Effect.fail("boom") : Effect.succeed({ "SKILL.md": "---\nname: tenant\ndescription: ok\n---\n" })
          )
      })
      const snapshot = yield* SkillRegistry.build([flaky])
      const cache = yield* Kind.makeRenderCache
      const first = yield* Effect.exit(renderFor(snapshot, cache, "x"))
      assert.isTrue(first._tag === "Failure")
      expect(yield* renderFor(snapshot, cache, "x")).toBe("ok")
      expect(attempts).toBe(2)
    }))
})

// A module-level `let`/`var`, or a module-level binding initialised with a mutable collection
// (unless typed read-only), is state shared by every server in the process.
const moduleLevelState = (source: string): ReadonlyArray<string> =>
  source.split("\n").filter((line) =>
    /^(export\s+)?(let|var)\s/.test(line) ||
    (/^(export\s+)?const\s/.test(line) && /=\s*new\s+(Weak)?(Map|Set)\b/.test(line) && !/:\s*Readonly(Map|Set)</.test(line))
  )

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

describe("no module-level mutable state", () => {
  it("the check catches what it is meant to catch", () => {
    expect(moduleLevelState("let count = 0\nconst cache = new WeakMap<object, number>()\nexport const seen = new Set()\n"))
      .toHaveLength(3)
    expect(moduleLevelState("const table: ReadonlyMap<string, string> = new Map([])\n  let local = 1\n")).toEqual([])
  })

  it("packages/skills-server/src has none", () => {
    const root = join(import.meta.dirname, "..", "src")
    const found = sources(root).flatMap((file) =>
      moduleLevelState(readFileSync(file, "utf8")).map((line) => `${file.slice(root.length + 1)}: ${line.trim()}`)
    )
    expect(found).toEqual([])
  })
})
