import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { ClientLimits, SkillCache, type SkillsClient, type SkillsClientError } from "@mcp-skills/client"
import { withClient, versions } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

const server = (tamper: Tamper.Tamper = {}) =>
  Effect.acquireRelease(Effect.promise(() => Tamper.start(tamper)), (s) => Effect.promise(() => s.close()))

const skillsRequests = (s: Tamper.TamperServer) => s.requests.filter((r) => r.method.startsWith("skills/")).length

describe.each(versions)("SkillsClient over HTTP %s", (protocolVersion) => {
  it.live("lists every page and fetches no file (R31, R127)", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const listing = yield* withClient(s.url, (c) => c.listSkills(), { protocolVersion })
      assert.deepStrictEqual(listing.skills.map((skill) => skill.uri), [Tamper.SkillUri])
      assert.deepStrictEqual(listing.invalid, [])
      assert.deepStrictEqual(
        s.requests.filter((r) => r.method === "skills/list").map((r) => r.params.cursor),
        [undefined, "page-2"]
      )
      assert.deepStrictEqual(s.reads(), [])
      assert.deepStrictEqual(
        listing.cacheHint,
        protocolVersion === "2026-07-28" ? { ttlMs: 300000, cacheScope: "private" } : { ttlMs: 0, cacheScope: "private" }
      )
    }))

  it.live("declares the extension in the client capabilities", () =>
    Effect.gen(function*() {
      const s = yield* server()
      yield* withClient(s.url, (c) => c.listSkills(), { protocolVersion })
      const first = s.requests[0]!
      const capabilities = protocolVersion === "2026-07-28"
        ? (first.params._meta as Record<string, any>)["io.modelcontextprotocol/clientCapabilities"]
        : first.params.capabilities
      assert.deepStrictEqual(capabilities.extensions, { "io.modelcontextprotocol/skills": {} })
      const list = s.requests.find((r) => r.method === "skills/list")!
      if (protocolVersion === "2026-07-28") {
        assert.strictEqual((list.params._meta as Record<string, any>)["io.modelcontextprotocol/protocolVersion"], "2026-07-28")
      } else {
        assert.isUndefined(list.params._meta)
      }
    }))

  it.live("one page at a time returns the next cursor", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const first = yield* withClient(s.url, (c) => c.listSkills({ onePage: true }), { protocolVersion })
      assert.strictEqual(first.skills.length, 0)
      assert.strictEqual(first.nextCursor, "page-2")
      const second = yield* withClient(s.url, (c) => c.listSkills({ cursor: "page-2" }), { protocolVersion })
      assert.strictEqual(second.skills.length, 1)
      assert.isUndefined(second.nextCursor)
    }))

  it.live("loadSkill reads SKILL.md only, verified; files are read on demand", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const [loaded, logo, invoice] = yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          const { skills } = yield* c.listSkills()
          const skill = skills[0]!
          const loaded = yield* c.loadSkill(skill)
          assert.deepStrictEqual(s.reads(), [Tamper.SkillUri])
          const logo = yield* c.readSkillResource(skill, "assets/logo.png")
          const invoice = yield* c.readSkillResource(skill, Tamper.InvoiceUri)
          return [loaded, logo, invoice] as const
        }), { protocolVersion })
      assert.strictEqual(new TextDecoder().decode(loaded.skillMd.bytes), Tamper.SkillMd)
      assert.strictEqual(loaded.frontmatter.name, "pdf-processing")
      assert.isTrue(loaded.body.includes("# PDF processing"))
      assert.deepStrictEqual([...logo.bytes], [...Buffer.from("iVBORw0KGgo=", "base64")])
      assert.isTrue(logo.verified)
      assert.strictEqual(invoice.uri, Tamper.InvoiceUri)
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri, Tamper.LogoUri, Tamper.InvoiceUri])
    }))

  it.live("getSkill fetches an entry missing from the listing (R30)", () =>
    Effect.gen(function*() {
      const s = yield* server({ unlisted: true })
      const { listing, fetched } = yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          const listing = yield* c.listSkills()
          const fetched = yield* c.getSkill(Tamper.SkillUri)
          return { listing, fetched }
        }), { protocolVersion })
      assert.strictEqual(listing.skills.length, 0)
      assert.strictEqual(fetched.skill.uri, Tamper.SkillUri)
    }))
})

describe("protocol negotiation", () => {
  it.live("auto uses 2026-07-28 when the server supports it", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const version = yield* withClient(s.url, (c) => Effect.succeed(c.protocolVersion))
      assert.strictEqual(version, "2026-07-28")
      assert.deepStrictEqual(s.requests.map((r) => r.method), ["server/discover"])
    }))

  it.live("auto falls back to 2025-11-25 when the 2026-07-28 handshake is refused", () =>
    Effect.gen(function*() {
      const s = yield* server({ legacyOnly: true })
      const listing = yield* withClient(s.url, (c) =>
        Effect.map(c.listSkills(), (listing) => ({ ...listing, version: c.protocolVersion })))
      assert.strictEqual(listing.version, "2025-11-25")
      assert.strictEqual(listing.skills.length, 1)
      assert.deepStrictEqual(s.requests.slice(0, 3).map((r) => r.method), ["server/discover", "initialize", "notifications/initialized"])
    }))

  it.live("an explicit 2026-07-28 does not fall back", () =>
    Effect.gen(function*() {
      const s = yield* server({ legacyOnly: true })
      const error = yield* Effect.flip(withClient(s.url, (c) => c.listSkills(), { protocolVersion: "2026-07-28" }))
      assert.strictEqual(error._tag, "McpClientError")
      assert.deepStrictEqual(s.requests.map((r) => r.method), ["server/discover"])
    }))
})

describe("typed errors against a tampering server", () => {
  const fails = <A, E>(
    tamper: Tamper.Tamper,
    f: (c: Parameters<Parameters<typeof withClient>[1]>[0]) => Effect.Effect<A, E>,
    options: Parameters<typeof withClient>[2] = {}
  ) =>
    Effect.gen(function*() {
      const s = yield* server(tamper)
      const error = yield* Effect.flip(withClient(s.url, f, options))
      return { error: error as any, s }
    })

  const firstSkill = (c: Parameters<Parameters<typeof withClient>[1]>[0]) =>
    Effect.map(c.listSkills(), (l) => l.skills[0]!)

  it.live("ExtensionNotSupported: no skills/* request is sent (R86)", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails({ noExtension: true }, (c) => c.listSkills())
      assert.strictEqual(error._tag, "ExtensionNotSupported")
      assert.strictEqual(error.server, s.url)
      assert.strictEqual(skillsRequests(s), 0)
      const get = yield* fails({ noExtension: true }, (c) => c.getSkill(Tamper.SkillUri))
      assert.strictEqual(get.error._tag, "ExtensionNotSupported")
    }))

  it.live("DirectoryReadNotSupported: refused locally (R49); allowed when declared", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails({}, (c) => c.readResourceDirectory("skill://pdf-processing"))
      assert.strictEqual(error._tag, "DirectoryReadNotSupported")
      assert.strictEqual(error.uri, "skill://pdf-processing")
      assert.isFalse(s.requests.some((r) => r.method === "resources/directory/read"))
      const ok = yield* server({ directoryRead: true })
      const children = yield* withClient(ok.url, (c) => c.readResourceDirectory("skill://pdf-processing"))
      assert.deepStrictEqual(children.map((child) => [child.name, child.mimeType]), [
        ["SKILL.md", "text/markdown"],
        ["templates", "inode/directory"],
        ["assets", "inode/directory"]
      ])
    }))

  it.live("SkillNotFound: -32602 from skills/get (R41)", () =>
    Effect.gen(function*() {
      const { error } = yield* fails({}, (c) => c.getSkill("skill://nope/SKILL.md"))
      assert.strictEqual(error._tag, "SkillNotFound")
      assert.strictEqual(error.uri, "skill://nope/SKILL.md")
      assert.include(error.detail, "no skill is served")
    }))

  it.live("InvalidSkillEntry: reported and skipped, or failing the call (R6)", () =>
    Effect.gen(function*() {
      const s = yield* server({ invalidEntry: true })
      const listing = yield* withClient(s.url, (c) => c.listSkills())
      assert.deepStrictEqual(listing.skills.map((skill) => skill.uri), [Tamper.SkillUri])
      assert.strictEqual(listing.invalid.length, 1)
      assert.strictEqual(listing.invalid[0]!._tag, "InvalidSkillEntry")
      assert.strictEqual(listing.invalid[0]!.uri, "skill://broken/SKILL.md")
      assert.isAbove(listing.invalid[0]!.problems.length, 0)
      const { error } = yield* fails({ invalidEntry: true }, (c) => c.listSkills({ invalid: "fail" }))
      assert.strictEqual(error._tag, "InvalidSkillEntry")
      assert.strictEqual(error.uri, "skill://broken/SKILL.md")
    }))

  it.live("InvalidSkillEntry: a uri listed twice is refused in every copy (R31)", () =>
    Effect.gen(function*() {
      const s = yield* server({ duplicate: true })
      const listing = yield* withClient(s.url, (c) => c.listSkills())
      assert.deepStrictEqual(listing.skills, [])
      assert.deepStrictEqual(listing.invalid.map((e) => e.uri), [Tamper.SkillUri, Tamper.SkillUri])
      assert.include(listing.invalid[0]!.problems[0]!, "listed more than once")
    }))

  it.live("LimitExceeded: refused from the entry before any read (R15, R17)", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails({ oversize: true }, (c) => Effect.flatMap(firstSkill(c), c.loadSkill))
      assert.strictEqual(error._tag, "LimitExceeded")
      assert.deepInclude(error, { uri: Tamper.SkillUri, limit: "resources", actual: 523, max: 512 })
      assert.deepStrictEqual(s.reads(), [])
    }))

  it.live("UnlistedResource: refused before any request (R125)", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails(
        { unlistedFile: true },
        (c) => Effect.flatMap(firstSkill(c), (skill) => c.readSkillResource(skill, "secret.md"))
      )
      assert.strictEqual(error._tag, "UnlistedResource")
      assert.deepInclude(error, { skill: Tamper.SkillUri, uri: "skill://pdf-processing/secret.md" })
      assert.deepStrictEqual(s.reads(), [])
      const escape = yield* fails(
        {},
        (c) => Effect.flatMap(firstSkill(c), (skill) => c.readSkillResource(skill, "../other/SKILL.md"))
      )
      // Reported as leaving the skill, not as unlisted.
      assert.strictEqual(escape.error._tag, "ReferenceOutsideSkill")
      assert.strictEqual(escape.error.message, `../other/SKILL.md leaves the skill ${Tamper.SkillUri}`)
      assert.deepStrictEqual(escape.s.reads(), [])
    }))

  it.live("WrongResourceReturned: the answer lacks the requested uri; skills/get names another skill", () =>
    Effect.gen(function*() {
      const { error } = yield* fails(
        { wrongUri: Tamper.InvoiceUri },
        (c) => Effect.flatMap(firstSkill(c), (skill) => c.readSkillResource(skill, "templates/invoice.md"))
      )
      assert.strictEqual(error._tag, "WrongResourceReturned")
      assert.strictEqual(error.uri, Tamper.InvoiceUri)
      assert.deepStrictEqual(error.returned, [Tamper.SkillUri])
      const get = yield* fails({ wrongUri: "get" }, (c) => c.getSkill(Tamper.SkillUri))
      assert.strictEqual(get.error._tag, "WrongResourceReturned")
      assert.deepStrictEqual(get.error.returned, ["skill://other/SKILL.md"])
    }))

  it.live("UnexpectedContents: an answer carrying an item the manifest does not list", () =>
    Effect.gen(function*() {
      for (const protocolVersion of versions) {
        const { error } = yield* fails(
          { appendItem: Tamper.InvoiceUri },
          (c) => Effect.flatMap(firstSkill(c), (skill) => c.readSkillResource(skill, "templates/invoice.md")),
          { protocolVersion }
        )
        assert.deepInclude(error, {
          _tag: "UnexpectedContents",
          uri: Tamper.InvoiceUri,
          extra: ["skill://pdf-processing/references/EXTRA.md"]
        })
      }
    }))

  it.live("SizeMismatch: extra bytes (R121)", () =>
    Effect.gen(function*() {
      const { error } = yield* fails({ extraBytes: Tamper.SkillUri }, (c) => Effect.flatMap(firstSkill(c), c.loadSkill))
      assert.strictEqual(error._tag, "SizeMismatch")
      assert.deepInclude(error, { skill: Tamper.SkillUri, uri: Tamper.SkillUri, expected: 149, actual: 151 })
    }))

  it.live("DigestMismatch: one flipped byte, same length (R120)", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails({ flipByte: Tamper.SkillUri }, (c) => Effect.flatMap(firstSkill(c), c.loadSkill))
      assert.strictEqual(error._tag, "DigestMismatch")
      assert.strictEqual(error.uri, Tamper.SkillUri)
      assert.strictEqual(error.expected, "sha256:244a4672f7630fee6197bfcea1247d40e718645b4cbc9139bf2d20c9a3fac363")
      assert.match(error.actual, /^sha256:[0-9a-f]{64}$/)
      assert.notStrictEqual(error.actual, error.expected)
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri])
    }))

  it.live("FrontmatterMismatch: changed description with recomputed digest (R126)", () =>
    Effect.gen(function*() {
      const { error } = yield* fails({ changedFrontmatter: true }, (c) => Effect.flatMap(firstSkill(c), c.loadSkill))
      assert.strictEqual(error._tag, "FrontmatterMismatch")
      assert.strictEqual(error.uri, Tamper.SkillUri)
      assert.deepStrictEqual(error.fields, ["description"])
    }))

  it.live("InvalidResourceContents: a blob that is not base64", () =>
    Effect.gen(function*() {
      const { error } = yield* fails(
        { badBase64: true },
        (c) => Effect.flatMap(firstSkill(c), (skill) => c.readSkillResource(skill, "assets/logo.png"))
      )
      assert.strictEqual(error._tag, "InvalidResourceContents")
      assert.strictEqual(error.uri, Tamper.LogoUri)
    }))

  it.live("DynamicSkillRefused unless allowed (R12); allowed reads are flagged unverified", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails({ dynamic: true }, (c) => Effect.flatMap(firstSkill(c), c.loadSkill))
      assert.strictEqual(error._tag, "DynamicSkillRefused")
      assert.strictEqual(error.uri, Tamper.SkillUri)
      assert.deepStrictEqual(s.reads(), [])
      const ok = yield* server({ dynamic: true })
      const loaded = yield* withClient(ok.url, (c) => Effect.flatMap(firstSkill(c), c.loadSkill), { allowDynamic: true })
      assert.isFalse(loaded.skillMd.verified)
      assert.strictEqual(loaded.frontmatter.description, "Extract, fill, and assemble PDF documents")
    }))

  it.live("LimitExceeded: a \"dynamic\" skill is budgeted against the bytes fetched (R18)", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails(
        { dynamic: true },
        (c) => Effect.flatMap(firstSkill(c), c.loadSkill),
        { allowDynamic: true, limits: { maxResources: 512, maxTotalBytes: 100 } }
      )
      assert.strictEqual(error._tag, "LimitExceeded")
      assert.deepInclude(error, { uri: Tamper.SkillUri, limit: "bytes", actual: 149, max: 100 })
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri])
    }))

  it.live("RepeatedCursor", () =>
    Effect.gen(function*() {
      const { error } = yield* fails({ repeatedCursor: true }, (c) => c.listSkills())
      assert.strictEqual(error._tag, "RepeatedCursor")
      assert.deepInclude(error, { cursor: "again", page: 2 })
    }))

  it.live("RunawayListing: endless empty pages stop after MaxEmptyPages", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails({ runawayPages: true }, (c) => c.listSkills())
      assert.strictEqual(error._tag, "RunawayListing")
      assert.deepInclude(error, { bound: "emptyPages", limit: ClientLimits.MaxEmptyPages, pages: ClientLimits.MaxEmptyPages })
      assert.strictEqual(s.requests.filter((r) => r.method === "skills/list").length, ClientLimits.MaxEmptyPages)
    }))

  it.live("RunawayListing: endless pages of entries stop past maxEntries, whatever the page count", () =>
    Effect.gen(function*() {
      const { error, s } = yield* fails({ runawayPages: true, runawayEntries: 3 }, (c) => c.listSkills(), { maxEntries: 20 })
      assert.strictEqual(error._tag, "RunawayListing")
      assert.deepInclude(error, { bound: "maxEntries", limit: 20, entries: 21, pages: 7 })
      assert.strictEqual(s.requests.filter((r) => r.method === "skills/list").length, 7)
    }))

  it.live("RunawayListing: pages past maxListingBytes", () =>
    Effect.gen(function*() {
      const { error } = yield* fails({ runawayPages: true, runawayEntries: 3 }, (c) => c.listSkills(), { maxListingBytes: 4096 })
      assert.strictEqual(error._tag, "RunawayListing")
      assert.deepInclude(error, { bound: "maxListingBytes", limit: 4096 })
      assert.isAbove(error.bytes, 4096)
    }))

  it.live("a server that stops answering gives a timeout, not a hang", () =>
    Effect.gen(function*() {
      const { error } = yield* fails({ hang: ["skills/list"] }, (c) => c.listSkills(), { timeout: "300 millis" })
      assert.strictEqual(error._tag, "McpClientError")
      assert.strictEqual(error.reason._tag, "TimeoutError")
      assert.strictEqual(error.reason.operation, "skills/list")
    }))
})

describe("verified cache", () => {
  it.live("a second read is served from the cache, keyed by server, uri and digest", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const cache = SkillCache.layerMemory()
      yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          const skill = (yield* c.listSkills()).skills[0]!
          yield* c.loadSkill(skill)
          yield* c.loadSkill(skill)
        }), { cache })
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri])
    }))

  it.live("a cache hit keeps the mimeType of the file", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const [first, second] = yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          const skill = (yield* c.listSkills()).skills[0]!
          return [yield* c.readSkillResource(skill, "assets/logo.png"), yield* c.readSkillResource(skill, "assets/logo.png")] as const
        }))
      assert.deepStrictEqual(s.reads(), [Tamper.LogoUri])
      assert.strictEqual(first.mimeType, "image/png")
      assert.strictEqual(second.mimeType, "image/png")
    }))

  it.live("a tampered file on disk is re-hashed, dropped and fetched again (R130)", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "skills-cache-")))
      yield* Effect.addFinalizer(() => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true })))
      const s = yield* server()
      const cache = SkillCache.layerDisk(dir)
      const load = withClient(s.url, (c) => Effect.flatMap(firstSkillOf(c), c.loadSkill), { cache })
      yield* load
      const files = yield* Effect.promise(() => Fs.readdir(dir, { recursive: true, withFileTypes: true }))
      const cached = files.filter((f) => f.isFile() && /^[0-9a-f]{64}$/.test(f.name))
      assert.strictEqual(cached.length, 1)
      const origin = files.find((f) => f.name === "origin.json")!
      const label = JSON.parse(yield* Effect.promise(() => Fs.readFile(Path.join(origin.parentPath, origin.name), "utf8")))
      assert.deepStrictEqual(label, { server: s.url })
      const hit = yield* load
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri])
      assert.strictEqual(hit.skillMd.mimeType, "text/markdown")
      const file = Path.join(cached[0]!.parentPath, cached[0]!.name)
      yield* Effect.promise(() => Fs.writeFile(file, "tampered"))
      const loaded = yield* load
      assert.strictEqual(new TextDecoder().decode(loaded.skillMd.bytes), Tamper.SkillMd)
      assert.deepStrictEqual(s.reads(), [Tamper.SkillUri, Tamper.SkillUri])
    }))
})

const firstSkillOf = (c: Parameters<Parameters<typeof withClient>[1]>[0]) =>
  Effect.map(c.listSkills(), (l) => l.skills[0]!)

describe("stale entries heal once", () => {
  const gets = (s: Tamper.TamperServer) => s.requests.filter((r) => r.method === "skills/get").length

  it.live("a file edited between getSkill and readSkillResource is read with its new bytes after one re-get", () =>
    Effect.gen(function*() {
      const s = yield* server({ ttlMs: 0 })
      const file = yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          const { skill } = yield* c.getSkill(Tamper.SkillUri)
          s.tamper.revised = true
          return yield* c.readSkillResource(skill, Tamper.InvoiceUri)
        }))
      assert.strictEqual(new TextDecoder().decode(file.bytes), "# Invoice template v2\n")
      assert.strictEqual(gets(s), 2)
      assert.deepStrictEqual(s.reads(), [Tamper.InvoiceUri, Tamper.InvoiceUri])
    }))

  it.live("loadSkill of a stale entry answers the entry it fetched again with the new SKILL.md", () =>
    Effect.gen(function*() {
      const s = yield* server({ ttlMs: 0 })
      const loaded = yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          const { skill } = yield* c.getSkill(Tamper.SkillUri)
          s.tamper.revisedSkillMd = true
          return [skill, yield* c.loadSkill(skill)] as const
        }))
      const [stale, fresh] = loaded
      assert.isTrue(fresh.body.endsWith("\nRevised.\n"))
      assert.notStrictEqual(fresh.skill, stale)
      assert.strictEqual(fresh.skillMd.digest, Tamper.digestOf(fresh.skillMd.bytes))
      assert.deepStrictEqual(fresh.skill.resources !== "dynamic" && fresh.skill.resources[0]!.digest, fresh.skillMd.digest)
    }))

  it.live("a server that keeps answering wrong bytes fails after one re-get, counted in the error", () =>
    Effect.gen(function*() {
      const s = yield* server({ ttlMs: 0, flipByte: Tamper.InvoiceUri })
      const error = yield* Effect.flip(withClient(s.url, (c) =>
        Effect.flatMap(c.getSkill(Tamper.SkillUri), ({ skill }) => c.readSkillResource(skill, Tamper.InvoiceUri))))
      assert.strictEqual(error._tag, "DigestMismatch")
      assert.deepInclude(error, { uri: Tamper.InvoiceUri, entryRefetches: 1 })
      assert.include(error.message, "also after fetching the entry again")
      assert.strictEqual(gets(s), 2)
    }))

  it.live("an entry still fresh by its ttlMs is not fetched again", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const error = yield* Effect.flip(withClient(s.url, (c) =>
        Effect.gen(function*() {
          const { skill } = yield* c.getSkill(Tamper.SkillUri)
          s.tamper.revised = true
          return yield* c.readSkillResource(skill, Tamper.InvoiceUri)
        })))
      assert.strictEqual(error._tag, "SizeMismatch")
      assert.isUndefined((error as { entryRefetches?: number }).entryRefetches)
      assert.strictEqual(gets(s), 1)
    }))
})

describe("headers per request", () => {
  it.live("an Effect of headers runs before every request, so a token can refresh", () =>
    Effect.gen(function*() {
      const s = yield* server({ bearer: "t1" })
      let calls = 0
      const headers = Effect.sync(() => {
        calls++
        return { authorization: "Bearer t1" }
      })
      const listing = yield* withClient(s.url, (c) => c.listSkills(), { headers })
      assert.strictEqual(listing.skills.length, 1)
      // The handshake and both skills/list pages at least.
      assert.isAtLeast(calls, 3)
      const refused = yield* Effect.flip(withClient(s.url, (c) => c.listSkills(), { headers: Effect.succeed({}) }))
      assert.strictEqual(refused._tag, "McpClientError")
      assert.deepInclude((refused as { reason: unknown }).reason, { _tag: "HttpError", status: 401 })
    }))
})

describe("the lean read transport", () => {
  it.live("lists, loads and reads with every check; tampering is still caught; a hang still times out", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const options = { readTransport: "lean", protocolVersion: "2026-07-28" } as const
      const logo = yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          const skill = (yield* c.listSkills()).skills[0]!
          yield* c.loadSkill(skill)
          return yield* c.readSkillResource(skill, "assets/logo.png")
        }), options)
      assert.deepStrictEqual([...logo.bytes], [...Buffer.from("iVBORw0KGgo=", "base64")])
      s.tamper.appendItem = Tamper.InvoiceUri
      const extra = yield* Effect.flip(withClient(s.url, (c) =>
        Effect.flatMap(c.listSkills(), (l) => c.readSkillResource(l.skills[0]!, Tamper.InvoiceUri)), options))
      assert.deepInclude(extra, { _tag: "UnexpectedContents", extra: ["skill://pdf-processing/references/EXTRA.md"] })
      s.tamper.hang = ["resources/read"]
      const hung = yield* Effect.flip(withClient(s.url, (c) =>
        Effect.flatMap(c.listSkills(), (l) => c.loadSkill(l.skills[0]!)), { ...options, timeout: "500 millis" }))
      assert.deepInclude((hung as { reason: unknown }).reason, { _tag: "TimeoutError" })
    }))
})

describe("a file the server says is not there", () => {
  const gets = (s: Tamper.TamperServer) => s.requests.filter((r) => r.method === "skills/get").length
  const transports = ["HttpClient", "lean"] as const
  const notThere = (error: SkillsClientError.ResourceNotFound) => Effect.succeed(error)

  for (const protocolVersion of versions) {
    for (const readTransport of transports) {
      const options = { protocolVersion, readTransport } as const
      // 2025-11-25 results carry no ttlMs: such an entry is never fresh, and the re-get runs.
      const staleByDefault = protocolVersion === "2025-11-25"

      it.live(`hidden from this caller: ResourceNotFound with both uris (${protocolVersion}, ${readTransport})`, () =>
        Effect.gen(function*() {
          const s = yield* server({ hidden: Tamper.InvoiceUri })
          const error = yield* withClient(s.url, (c) =>
            Effect.gen(function*() {
              const { skill } = yield* c.getSkill(Tamper.SkillUri)
              yield* c.loadSkill(skill)
              return yield* c.readSkillResource(skill, "templates/invoice.md").pipe(
                Effect.as(undefined),
                Effect.catchTag("ResourceNotFound", notThere)
              )
            }), options)
          assert.deepInclude(error, { _tag: "ResourceNotFound", skill: Tamper.SkillUri, uri: Tamper.InvoiceUri })
          assert.include(error!.detail, "Resource not found")
          assert.include(error!.message, `${Tamper.InvoiceUri} of ${Tamper.SkillUri}`)
          // The stale-entry retry ran first where the entry may be stale, and found the file still listed.
          assert.strictEqual(error!.entryRefetches, staleByDefault ? 1 : undefined)
          assert.strictEqual(gets(s), staleByDefault ? 2 : 1)
        }))

      it.live(`removed after getSkill: the entry is fetched again, then ResourceNotFound (${protocolVersion}, ${readTransport})`, () =>
        Effect.gen(function*() {
          const s = yield* server({ ttlMs: 0 })
          const error = yield* withClient(s.url, (c) =>
            Effect.gen(function*() {
              const { skill } = yield* c.getSkill(Tamper.SkillUri)
              s.tamper.removed = Tamper.InvoiceUri
              return yield* c.readSkillResource(skill, Tamper.InvoiceUri).pipe(
                Effect.as(undefined),
                Effect.catchTag("ResourceNotFound", notThere)
              )
            }), options)
          assert.deepInclude(error, { _tag: "ResourceNotFound", skill: Tamper.SkillUri, uri: Tamper.InvoiceUri, entryRefetches: 1 })
          assert.include(error!.detail, "no longer lists it")
          assert.strictEqual(gets(s), 2)
          assert.deepStrictEqual(s.reads(), [Tamper.InvoiceUri])
        }))
    }

    it.live(`an unknown cursor is CursorRejected; a missing directory DirectoryNotFound (${protocolVersion})`, () =>
      Effect.gen(function*() {
        const s = yield* server({ directoryRead: true })
        const [cursor, directory] = yield* withClient(s.url, (c) =>
          Effect.all([
            c.listSkills({ cursor: "bogus" }).pipe(Effect.flip),
            c.readResourceDirectory("skill://pdf-processing/nope").pipe(Effect.flip)
          ]), { protocolVersion })
        assert.deepInclude(cursor, { _tag: "CursorRejected", method: "skills/list", cursor: "bogus" })
        assert.include(cursor.message, "Unknown or expired cursor")
        assert.deepInclude(directory, { _tag: "DirectoryNotFound", uri: "skill://pdf-processing/nope" })
      }))
  }
})

describe("a warm cache checks as a cold one", () => {
  it.live("an entry whose size contradicts its digest fails with SizeMismatch from the cache too", () =>
    Effect.gen(function*() {
      const s = yield* server()
      const load = Effect.fnUntraced(function*(c: SkillsClient.Service) {
        const { skill } = yield* c.getSkill(Tamper.SkillUri)
        return yield* Effect.flip(c.loadSkill(skill))
      })
      const [warm, readsBefore] = yield* withClient(s.url, (c) =>
        Effect.gen(function*() {
          yield* c.loadSkill((yield* c.getSkill(Tamper.SkillUri)).skill)
          s.tamper.wrongSize = Tamper.SkillUri
          const before = s.reads().length
          return [yield* load(c), before] as const
        }))
      // Answered from the cache: no read went out.
      assert.strictEqual(s.reads().length, readsBefore)
      const cold = yield* withClient(s.url, load)
      assert.strictEqual(s.reads().length, readsBefore + 1)
      for (const error of [warm, cold]) {
        assert.deepInclude(error, { _tag: "SizeMismatch", skill: Tamper.SkillUri, uri: Tamper.SkillUri, expected: 150, actual: 149 })
      }
    }))
})

describe("a refused connection names its cause", () => {
  const closedPort = Effect.promise(() =>
    new Promise<number>((resolve) => {
      const probe = Http.createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo
        probe.close(() => resolve(port))
      })
    })
  )

  for (const protocolVersion of ["auto", ...versions] as const) {
    it.live(`at connect (${protocolVersion})`, () =>
      Effect.gen(function*() {
        const port = yield* closedPort
        const error = yield* Effect.flip(withClient(`http://127.0.0.1:${port}/mcp`, (c) => c.listSkills(), { protocolVersion }))
        assert.strictEqual(error._tag, "McpClientError")
        assert.deepInclude((error as { reason: unknown }).reason, { _tag: "TransportError" })
        assert.include(error.message, `connect ECONNREFUSED 127.0.0.1:${port}`)
      }))
  }

  for (const readTransport of ["HttpClient", "lean"] as const) {
    it.live(`on a request after connecting (${readTransport})`, () =>
      Effect.gen(function*() {
        const s = yield* server()
        const port = new URL(s.url).port
        const error = yield* Effect.flip(withClient(s.url, (c) =>
          Effect.gen(function*() {
            yield* Effect.promise(() => s.close())
            return yield* c.listSkills()
          }), { protocolVersion: "2026-07-28", readTransport }))
        assert.include(error.message, `connect ECONNREFUSED 127.0.0.1:${port}`)
      }))
  }
})
