/**
 * Property: for arbitrary skill sets and arbitrary visibility decisions, no hidden skill's URI,
 * name, digest or file content appears in any response of the five surfaces, and every visible
 * skill is fully served (listed ones listed, every file readable and matching its digest), on
 * both revisions. And on 2025-11-25 session streams: a session hears of a change only to skills it
 * can see, and of every subscribed file it can see that changed. Family instances are
 * held to the same: an instance the check hides leaks nowhere, whether its family's `list` gives
 * it or not.
 *
 * Nested skills under static, rendered and dynamic parents: a hidden one is carved out of every
 * skill containing it, and the parent's manifest lists exactly what the caller can read.
 *
 * Notifications, on every listener there is: a 2025-11-25 stdio connection, a
 * 2026-07-28 `subscriptions/listen` over stdio and over HTTP. Each listener subscribes to every
 * file while it may see every skill; then its grant narrows and the catalogue changes. It must
 * hear `resources/updated` for exactly the changed files it may see at the time of the change,
 * `list_changed` exactly when a listed skill it may see changed, and no hidden skill's name.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { Skill, SkillRegistry, SkillsServer, Visibility } from "../src/index.js"
import { bytesOf, sha256 } from "./support/catalogue.js"
import { skillMd } from "./support/fixtures.js"
import type { Probe } from "./support/surfaces.js"
import { observe } from "./support/surfaces.js"
import { listenEvents, modernMeta, open, poll, post, sessionEvents } from "./support/session.js"
import {
  clientInfo,
  httpServer,
  legacyHttp,
  modernHttp,
  modernStdio,
  ServerUrl,
  stdioServer,
  StdioPipe,
  withHeaders
} from "./support/wire.js"

const FileName = Schema.Literals(["a.md", "b/c.md", "b/d.txt", "e.bin"])

const SkillSpec = Schema.Struct({
  prefix: Schema.Literals(["", "org", "org/team"]),
  files: Schema.Array(FileName).check(Schema.isMaxLength(4)),
  listed: Schema.Boolean,
  visible: Schema.Boolean,
  dynamic: Schema.Boolean
})

const Catalogue = Schema.Array(SkillSpec).check(Schema.isMinLength(1), Schema.isMaxLength(6))

// A parent skill of each kind with nested skills (rendered ones only where the parent may hold them)
// and, under some, a deeper static skill: each visible or not.
const Nesting = Schema.Struct({
  parent: Schema.Struct({ kind: Schema.Literals(["static", "rendered", "dynamic"]) }),
  children: Schema.Array(Schema.Struct({
    kind: Schema.Literals(["static", "rendered"]),
    visible: Schema.Boolean,
    grandchild: Schema.optional(Schema.Struct({ visible: Schema.Boolean }))
  })).check(Schema.isMaxLength(3))
})

// Instances of the family `members/{member}`: whether its list gives them, and whether the caller may see them.
const Members = Schema.Array(Schema.Struct({ listed: Schema.Boolean, visible: Schema.Boolean })).check(Schema.isMaxLength(4))

// What a listener named `who` (header `x-who`, or `_meta["test/who"]` where there are no headers)
// may see right now: changed by the tests between subscribing and changing the catalogue.
const grants = new Map<string, ReadonlySet<string>>()

const skillsLayer = () => {
  const captured: { registry?: SkillRegistry.SkillRegistry["Service"] } = {}
  const Skills = SkillsServer.layer({
    skills: [],
    pageSize: 2,
    visibility: ({ headers, requestContext }) => {
      const who = headers["x-who"] ?? requestContext.requestMetadata?.["test/who"]
      const visible = typeof who === "string"
        ? grants.get(who) ?? new Set<string>()
        : new Set((headers["x-visible"] ?? "").split(","))
      return Effect.succeed((skill: Visibility.SkillInfo) => visible.has(skill.name))
    }
  })
  const Capture = Layer.effectDiscard(Effect.gen(function*() {
    captured.registry = yield* SkillRegistry.SkillRegistry
  }))
  return { captured, layer: Layer.merge(Skills, Capture.pipe(Layer.provide(Skills))) }
}

const http = skillsLayer()

const content = (name: string, file: string): Uint8Array =>
  file === "e.bin"
    ? new Uint8Array([0xff, 0xfe, ...new TextEncoder().encode(`${name}-binary`)])
    : new TextEncoder().encode(`secret-${name}-${file}\n`)


/** Version `n` of the static skills of a catalogue: every file but SKILL.md differs between versions. */
const staticVersion = (specs: ReadonlyArray<typeof SkillSpec.Type>, n: number) =>
  specs.filter((spec) => !spec.dynamic).map((spec, index) => {
    const name = `n${index}x`
    const path = spec.prefix === "" ? name : `${spec.prefix}/${name}`
    const files: Record<string, string> = { "SKILL.md": skillMd(name) }
    for (const file of new Set(spec.files)) files[file] = `${name}-${file}-v${n}\n`
    return { spec, name, files: Object.keys(files).map((file) => `skill://${path}/${file}`), definition: Skill.make({ path, listed: spec.listed, files }) }
  })

// Unlisted, always visible, always changed: its update closes each change's notifications (its URI
// sorts after every other, and a change's updates are told in URI order), and it causes no
// list_changed of its own.
const marker = (version: number) =>
  Skill.make({ path: "zmarker", listed: false, files: { "SKILL.md": skillMd("zmarker"), "v.md": `v${version}\n` } })
const MarkerFile = "skill://zmarker/v.md"
const Updated = "notifications/resources/updated"
const ListChanged = "notifications/resources/list_changed"
const Acknowledged = "notifications/subscriptions/acknowledged"

/** What one listener has been sent so far, and how to make the transport hand over what it received. */
interface Heard {
  readonly told: () => ReadonlyArray<any>
  readonly pump: Effect.Effect<void>
}

/** Opens a listener named `who` (see `grants`) subscribed to `uris`, for as long as the scope is open. */
type Listen<R> = (who: string, uris: ReadonlyArray<string>) => Effect.Effect<Heard, never, Scope.Scope | R>

let listeners = 0

const notificationsTold = <R>(
  registry: () => SkillRegistry.SkillRegistry["Service"],
  listen: Listen<R>
) =>
([specs]: readonly [ReadonlyArray<typeof SkillSpec.Type>]) =>
  Effect.gen(function*() {
    const version = (n: number) => staticVersion(specs, n)
    const before = version(1)
    yield* registry().replace([marker(1), ...before.map((skill) => skill.definition)])
    const who = `listener-${listeners++}`
    // Subscribed while it may see everything; by the time of the change it sees only its share.
    grants.set(who, new Set(["zmarker", ...before.map((skill) => skill.name)]))
    const heard = yield* listen(who, [MarkerFile, ...before.flatMap((skill) => skill.files)])
    const now = new Set(["zmarker", ...before.filter((skill) => skill.spec.visible).map((skill) => skill.name)])
    grants.set(who, now)
    yield* registry().replace([marker(2), ...version(2).map((skill) => skill.definition)])
    yield* poll("the marker's update", Effect.gen(function*() {
      yield* heard.pump
      return heard.told().some((message) => message.method === Updated && message.params.uri === MarkerFile) ? true : undefined
    }))
    const told = heard.told()
    const text = JSON.stringify(told)
    for (const skill of before) {
      const seen = now.has(skill.name)
      for (const uri of skill.files) {
        // Every file but SKILL.md changed.
        const changed = !uri.endsWith("/SKILL.md")
        const updated = told.some((message) => message.method === Updated && message.params.uri === uri)
        assert.strictEqual(updated, seen && changed, `${uri} (visible at the change: ${seen}): ${text}`)
      }
      if (!seen) assert.notInclude(text, skill.name)
    }
    // A listed skill with a supporting file changed its entry; hidden ones must not tell.
    const listChanged = before.some((skill) => now.has(skill.name) && skill.spec.listed && skill.files.length > 1)
    assert.strictEqual(told.some((message) => message.method === ListChanged), listChanged, text)
    grants.delete(who)
  }).pipe(Effect.scoped)

const listenParams = (uris: ReadonlyArray<string>) => ({
  notifications: { resourcesListChanged: true, resourceSubscriptions: uris }
})


/** 2026-07-28 `subscriptions/listen` over HTTP, carrying the listener's name in a header. */
const httpListen: Listen<ServerUrl> = (who, uris) =>
  Effect.map(
    Effect.flatMap(ServerUrl, (url) => listenEvents(url, { "x-who": who }, listenParams(uris).notifications)),
    // The acknowledgement (left out) echoes the URIs the listener itself asked for: it tells nothing.
    (told) => ({ told, pump: Effect.void })
  )

/** 2026-07-28 `subscriptions/listen` over stdio, carrying the listener's name in `_meta`. */
const stdioListen: Listen<StdioPipe> = (who, uris) =>
  Effect.gen(function*() {
    const pipe = yield* StdioPipe
    const id = `listen-${who}`
    yield* pipe.notify({ id, method: "subscriptions/listen", params: { ...listenParams(uris), _meta: { ...modernMeta, "test/who": who } } })
    yield* Effect.addFinalizer(() =>
      pipe.notify({ method: "notifications/cancelled", params: { requestId: id, _meta: modernMeta } }))
    const told = () => pipe.notifications.filter((message) => message.params?._meta?.["io.modelcontextprotocol/subscriptionId"] === id)
    const pump = Effect.asVoid(modernStdio(pipe).send("server/discover"))
    yield* poll("the acknowledgement", Effect.map(pump, () => told().some((message) => message.method === Acknowledged) ? true : undefined))
    // The acknowledgement echoes the URIs the listener itself asked for: it tells nothing.
    return { told: () => told().filter((message) => message.method !== Acknowledged), pump }
  })

/** A 2025-11-25 stdio connection, initialized again for each listener (`_meta` names it). */
const stdioConnection: Listen<StdioPipe> = (who, uris) =>
  Effect.gen(function*() {
    const pipe = yield* StdioPipe
    yield* pipe.request({
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo, _meta: { "test/who": who } }
    })
    yield* pipe.notify({ method: "notifications/initialized" })
    for (const uri of uris) {
      const answer = yield* pipe.request({ method: "resources/subscribe", params: { uri } })
      assert.isDefined(answer.body.result, `subscribe ${uri}: ${JSON.stringify(answer.body)}`)
    }
    const start = pipe.notifications.length
    return { told: () => pipe.notifications.slice(start), pump: Effect.asVoid(pipe.request({ method: "ping" })) }
  })

describe("visibility property", () => {
  layer(httpServer(http.layer))((it) => {
    it.effect.prop(
      "hidden skills leak nowhere; visible skills are fully served",
      [Catalogue, Members],
      ([specs, memberSpecs]) =>
        Effect.gen(function*() {
          const members = memberSpecs.map((spec, index) => {
            const name = `m${index}x`
            const root = `skill://members/${name}`
            const probe: Probe = {
              uri: `${root}/SKILL.md`,
              files: [`${root}/SKILL.md`, `${root}/b/c.md`],
              directories: [root, `${root}/b`]
            }
            const files = { "SKILL.md": skillMd(name), "b/c.md": `secret-${name}-member\n` }
            const secrets = [name, `secret-${name}-member`, ...Object.values(files).map((text) => sha256(new TextEncoder().encode(text)))]
            return { spec, name, probe, files, secrets }
          })
          const family = Skill.family({
            path: "members/{member}",
            list: () => Effect.succeed(members.filter((member) => member.spec.listed).map((member) => ({ member: member.name }))),
            render: ({ member }) => Effect.succeed(members.find((candidate) => candidate.name === member)?.files ?? {})
          })
          const skills = specs.map((spec, index) => {
            const name = `n${index}x`
            const path = spec.prefix === "" ? name : `${spec.prefix}/${name}`
            const files = [...new Set(spec.files)]
            const fileMap: Record<string, Uint8Array> = {}
            for (const file of files) fileMap[file] = content(name, file)
            const uri = `skill://${path}/SKILL.md`
            const root = `skill://${path}`
            const probe: Probe = {
              uri,
              files: [uri, ...files.map((file) => `${root}/${file}`)],
              directories: [root, ...(files.some((file) => file.startsWith("b/")) ? [`${root}/b`] : [])]
            }
            const all: Record<string, Uint8Array> = { "SKILL.md": new TextEncoder().encode(skillMd(name)), ...fileMap }
            const definition = spec.dynamic
              ? Skill.dynamic({
                path,
                listed: spec.listed,
                read: (file) => Effect.succeed(all[file]),
                list: Effect.succeed(Object.keys(all))
              })
              : Skill.make({ path, listed: spec.listed, files: all })
            const secrets = [
              name,
              ...Object.values(fileMap).map(sha256),
              sha256(new TextEncoder().encode(skillMd(name))),
              ...files.filter((file) => file !== "e.bin").map((file) => `secret-${name}-${file}`)
            ]
            return { spec, name, probe, definition, secrets }
          })
          yield* http.captured.registry!.replace([...skills.map((skill) => skill.definition), family])
          const header = {
            "x-visible": [...skills, ...members].filter((skill) => skill.spec.visible).map((skill) => skill.name).join(",")
          }
          const url = yield* ServerUrl
          const clients = [withHeaders(modernHttp(url), header), withHeaders(yield* legacyHttp(url), header)]
          for (const client of clients) {
            const seen = yield* observe(client, [...skills, ...members].map((skill) => skill.probe))
            for (const member of members) {
              const answered = seen.answered.get(member.probe.uri)!
              const shown = member.spec.visible
              assert.strictEqual(seen.listed.has(member.probe.uri), shown && member.spec.listed)
              assert.strictEqual(seen.resourcesList.has(member.probe.uri), shown && member.spec.listed)
              assert.deepStrictEqual([answered.get, ...answered.reads, ...answered.directories], [shown, shown, shown, shown, shown])
              if (!shown) {
                for (const text of seen.texts) {
                  for (const secret of member.secrets) assert.notInclude(text, secret, `${client.revision} leaked ${secret}`)
                }
              } else {
                for (const resource of (yield* client.call("skills/get", { uri: member.probe.uri })).skill.resources) {
                  const read = (yield* client.call("resources/read", { uri: resource.uri })).contents[0]
                  assert.strictEqual(sha256(bytesOf(read)), resource.digest)
                }
              }
            }
            for (const skill of skills) {
              const answered = seen.answered.get(skill.probe.uri)!
              const shown = skill.spec.visible
              assert.strictEqual(seen.listed.has(skill.probe.uri), shown && skill.spec.listed)
              assert.strictEqual(seen.resourcesList.has(skill.probe.uri), shown && skill.spec.listed)
              assert.strictEqual(answered.get, shown)
              assert.deepStrictEqual(answered.reads, skill.probe.files.map(() => shown))
              assert.deepStrictEqual(answered.directories, skill.probe.directories.map(() => shown))
              if (!shown) {
                for (const text of seen.texts) {
                  for (const secret of skill.secrets) assert.notInclude(text, secret, `${client.revision} leaked ${secret}`)
                }
              } else {
                const entry = (yield* client.call("skills/get", { uri: skill.probe.uri })).skill
                if (skill.spec.dynamic) {
                  assert.strictEqual(entry.resources, "dynamic")
                  continue
                }
                for (const resource of entry.resources) {
                  const read = (yield* client.call("resources/read", { uri: resource.uri })).contents[0]
                  assert.strictEqual(sha256(bytesOf(read)), resource.digest)
                }
              }
            }
          }
        }),
      { timeout: 120_000, arbitrary: { runs: 40 } } as any
    )

    it.effect.prop(
      "a hidden nested skill is carved out of its static, rendered or dynamic parent; the parent's manifest lists exactly what the caller can read",
      [Nesting],
      ([nesting]) =>
        Effect.gen(function*() {
          const { children, parent } = nesting
          const root = "skill://nest/top"
          const parentFiles = { "SKILL.md": skillMd("top"), "own.md": "secret-top-own\n" }
          const definitions: Array<Skill.Definition> = [
            parent.kind === "static"
              ? Skill.make({ path: "nest/top", files: parentFiles })
              : parent.kind === "rendered"
              ? Skill.rendered({ path: "nest/top", render: () => Effect.succeed(parentFiles) })
              : Skill.dynamic({
                path: "nest/top",
                read: (file) => Effect.succeed(parentFiles[file as keyof typeof parentFiles]),
                list: Effect.succeed(Object.keys(parentFiles))
              })
          ]
          // Each child at nest/top/k<i>, with an optional static grandchild at nest/top/k<i>/g<i>.
          const skills: Array<{ name: string; visible: boolean; files: Record<string, string>; root: string }> = []
          for (const [index, child] of children.entries()) {
            const name = `k${index}x`
            const files = { "SKILL.md": skillMd(name), "b/c.md": `secret-${name}-file\n` }
            const path = `nest/top/${name}`
            definitions.push(
              parent.kind === "static" || child.kind === "static"
                ? Skill.make({ path, files })
                : Skill.rendered({ path, render: () => Effect.succeed(files) })
            )
            skills.push({ name, visible: child.visible, files, root: `skill://${path}` })
            if (child.grandchild !== undefined) {
              const inner = `g${index}x`
              const innerFiles = { "SKILL.md": skillMd(inner), "d.md": `secret-${inner}-file\n` }
              definitions.push(Skill.make({ path: `${path}/${inner}`, files: innerFiles }))
              skills.push({ name: inner, visible: child.grandchild.visible, files: innerFiles, root: `skill://${path}/${inner}` })
            }
          }
          yield* http.captured.registry!.replace(definitions)
          const shown = skills.filter((skill) => skill.visible)
          const header = { "x-visible": ["top", ...shown.map((skill) => skill.name)].join(",") }
          const url = yield* ServerUrl
          for (const client of [withHeaders(modernHttp(url), header), withHeaders(yield* legacyHttp(url), header)]) {
            const probes: Array<Probe> = skills.map((skill) => ({
              uri: `${skill.root}/SKILL.md`,
              files: Object.keys(skill.files).map((file) => `${skill.root}/${file}`),
              directories: [`${skill.root}/b`]
            }))
            const seen = yield* observe(client, [
              { uri: `${root}/SKILL.md`, files: [`${root}/own.md`], directories: [root] },
              ...probes
            ])
            for (const [index, skill] of skills.entries()) {
              const answered = seen.answered.get(probes[index]!.uri)!
              assert.deepStrictEqual(answered.reads, probes[index]!.files.map(() => skill.visible), `${skill.name}: ${client.revision}`)
              if (skill.visible) continue
              for (const text of seen.texts) {
                assert.notInclude(text, `secret-${skill.name}-file`, `${client.revision} leaked ${skill.name}`)
                for (const content of Object.values(skill.files)) {
                  assert.notInclude(text, sha256(new TextEncoder().encode(content)), `${client.revision} leaked a digest of ${skill.name}`)
                }
              }
            }
            if (parent.kind === "dynamic") continue
            // The parent's manifest: its own files and every visible nested skill's, all readable.
            const entry = (yield* client.call("skills/get", { uri: `${root}/SKILL.md` })).skill
            const listed = (entry.resources as ReadonlyArray<{ uri: string; digest: string }>)
            const expected = [
              `${root}/SKILL.md`,
              `${root}/own.md`,
              ...shown.flatMap((skill) => Object.keys(skill.files).map((file) => `${skill.root}/${file}`))
            ]
            assert.deepStrictEqual(listed.map((item) => item.uri).sort(), expected.sort(), client.revision)
            for (const item of listed) {
              const read = (yield* client.call("resources/read", { uri: item.uri })).contents[0]
              assert.strictEqual(sha256(bytesOf(read)), item.digest, item.uri)
            }
          }
        }),
      { timeout: 120_000, arbitrary: { runs: 30 } } as any
    )

    // Always visible, always changed: its update closes each change's batch of notifications.
    const sentinel = (version: number) => Skill.make({ path: "sentinel", files: { "SKILL.md": skillMd("sentinel"), "v.md": `v${version}\n` } })

    it.effect.prop(
      "session streams carry nothing about hidden skills",
      [Catalogue],
      ([specs]) =>
        Effect.gen(function*() {
          const version = (n: number) => staticVersion(specs, n)
          const before = version(1)
          yield* http.captured.registry!.replace([sentinel(1), ...before.map((skill) => skill.definition)])
          const visible = new Set(["sentinel", ...before.filter((skill) => skill.spec.visible).map((skill) => skill.name)])
          const url = yield* ServerUrl
          const session = yield* Effect.promise(() => open(url, { "x-visible": [...visible].join(",") }))
          for (const skill of before) {
            for (const uri of skill.files) {
              const answer = yield* Effect.promise(() => session.subscribe(uri))
              assert.strictEqual(answer.body.result !== undefined, skill.spec.visible, `subscribe ${uri}`)
            }
          }
          yield* Effect.promise(() => session.subscribe("skill://sentinel/v.md"))
          // The session's later request sees less (every other skill it could see is hidden now):
          // what the stream tells follows the session's latest request, not its subscriptions.
          const later = new Set(["sentinel", ...before.filter((skill, index) => skill.spec.visible && index % 2 === 1).map((skill) => skill.name)])
          const listed = yield* Effect.promise(() =>
            post(url, { ...session.headers, "x-visible": [...later].join(",") }, { jsonrpc: "2.0", id: 3, method: "skills/list", params: {} })
          )
          assert.isDefined(listed.body.result)
          const events = yield* sessionEvents(url, session.id)
          yield* http.captured.registry!.replace([sentinel(2), ...version(2).map((skill) => skill.definition)])
          yield* poll("the sentinel's update", Effect.sync(() =>
            events.some((event) => event.params?.uri === "skill://sentinel/v.md") ? true : undefined))
          const told = JSON.stringify(events)
          for (const skill of before) {
            for (const uri of skill.files) {
              // Every file but SKILL.md changed; a session hears of exactly those it can see now.
              const changed = !uri.endsWith("/SKILL.md")
              const seen = later.has(skill.name)
              assert.strictEqual(told.includes(`"${uri}"`), seen && changed, `${uri} (visible later: ${seen})`)
            }
          }
          yield* Effect.promise(() => session.close())
        }).pipe(Effect.scoped),
      { timeout: 120_000, arbitrary: { runs: 15 } } as any
    )

    it.effect.prop(
      "subscriptions/listen over HTTP is told nothing about skills hidden at the time of the change",
      [Catalogue],
      notificationsTold(() => http.captured.registry!, httpListen),
      { timeout: 120_000, arbitrary: { runs: 15 } } as any
    )
  })

  const stdio = [
    { revision: "2025-11-25", listener: "a stdio connection", skills: skillsLayer(), listen: stdioConnection },
    { revision: "2026-07-28", listener: "subscriptions/listen over stdio", skills: skillsLayer(), listen: stdioListen }
  ]
  for (const { listen, listener, revision, skills } of stdio) {
    layer(stdioServer(skills.layer))(`stdio ${revision}`, (it) => {
      it.effect.prop(
        `${listener} is told nothing about skills hidden at the time of the change`,
        [Catalogue],
        notificationsTold(() => skills.captured.registry!, listen),
        { timeout: 120_000, arbitrary: { runs: 15 } } as any
      )
    })
  }
})
