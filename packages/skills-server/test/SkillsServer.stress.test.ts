/**
 * Stress: 10,000 mixed requests (2026-07-28, stateless HTTP) at 256 in flight against a server on
 * 127.0.0.1, run in this process through `SkillsServer.layer` so the heap measured is the server's.
 * Every answer must be right: listings page through the whole catalogue, every entry equals the
 * manifest, every byte read hashes to the published digest, unknown URIs get -32602. The heap after
 * the third of four rounds must stay within 20% of the heap after the first (no growth per request).
 * No timing assertions.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import { createHash } from "node:crypto"
import * as Http from "node:http"
import { Skill, SkillsServer } from "../src/index.js"
import { settledHeap } from "./support/heap.js"
import { httpServer, modernRequest, ServerUrl } from "./support/wire.js"

const Skills = 120
const Requests = 10_000
const Rounds = 4
const Concurrency = 256

// A deterministic catalogue: Markdown, JSON and binary files; one skill carries a 256 KiB blob.
const random = (() => {
  const generator = Effect.runSync(Effect.gen(function*() {
    return yield* Random.Random
  }).pipe(Random.withSeed(0x2640)))
  return () => generator.nextDoubleUnsafe()
})()
const binary = (size: number) => {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i++) bytes[i] = Math.floor(random() * 256)
  bytes[0] = 0xff // never valid UTF-8: served as a blob
  return bytes
}
const words = ["alpha", "beta", "gamma", "delta", "ünïcödé", "日本語", "emoji 🎉", "tab\t", "quote \"x\""]
const text = (size: number) => {
  let out = ""
  while (out.length < size) out += words[Math.floor(random() * words.length)] + " "
  return out
}

interface Expected {
  readonly path: string
  readonly files: Record<string, Uint8Array>
}

const expected: Array<Expected> = []
for (let i = 0; i < Skills; i++) {
  const name = `skill-${i.toString().padStart(3, "0")}`
  const path = `group-${i % 7}/${name}`
  const files: Record<string, Uint8Array> = {
    "SKILL.md": new TextEncoder().encode(`---\nname: ${name}\ndescription: Stress skill ${i}\n---\n\n# ${name}\n\n${text(400)}\n`),
    "references/guide.md": new TextEncoder().encode(text(200 + Math.floor(random() * 3000))),
    "references/deep/notes.txt": new TextEncoder().encode(text(100)),
    "assets/logo.bin": binary(64 + Math.floor(random() * 4096)),
    "data/rows.json": new TextEncoder().encode(JSON.stringify({ i, rows: [random(), random()] }))
  }
  if (i === 7) files["assets/big.bin"] = binary(256 * 1024)
  expected.push({ path, files })
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`
const uriOf = (skill: Expected, file: string) => `skill://${skill.path}/${file}`
const digests = new Map<string, { digest: string; size: number }>()
for (const skill of expected) {
  for (const [file, bytes] of Object.entries(skill.files)) digests.set(uriOf(skill, file), { digest: sha256(bytes), size: bytes.length })
}
const listedUris = expected.map((s) => uriOf(s, "SKILL.md")).sort()

const Registrations = SkillsServer.layer({
  skills: expected.map((s) => Skill.make({ path: s.path, files: s.files })),
  pageSize: 25
})

// Over one keep-alive agent, so the 256 requests in flight reuse their sockets.
const post = (agent: Http.Agent, url: URL, method: string, params: Record<string, unknown>) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const { body, headers } = modernRequest(method, params)
    const req = Http.request(url, {
      method: "POST",
      agent,
      headers: { ...headers, "content-length": Buffer.byteLength(body) }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) })
        } catch (error) {
          reject(error)
        }
      })
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

const bytesOf = (content: { text?: string; blob?: string }) =>
  typeof content.text === "string" ? Buffer.from(content.text, "utf8") : Buffer.from(content.blob ?? "", "base64")

const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

/** One mixed request and its check; returns the problem, or undefined when the answer is right. */
const one = async (agent: Http.Agent, url: URL, n: number): Promise<string | undefined> => {
  const skill = pick(expected)
  const kind = n % 10
  if (kind <= 3) {
    const file = pick(Object.keys(skill.files))
    const uri = uriOf(skill, file)
    const { status, body } = await post(agent, url, "resources/read", { uri })
    const content = body?.result?.contents?.[0]
    if (status !== 200 || content === undefined) return `read ${uri}: ${status} ${JSON.stringify(body?.error)}`
    if (content.uri !== uri || sha256(bytesOf(content)) !== digests.get(uri)!.digest) return `read ${uri}: wrong bytes`
    return undefined
  }
  if (kind <= 5) {
    const uri = uriOf(skill, "SKILL.md")
    const { status, body } = await post(agent, url, "skills/get", { uri })
    const entry = body?.result?.skill
    if (status !== 200 || entry?.uri !== uri) return `get ${uri}: ${status} ${JSON.stringify(body?.error)}`
    if (entry.resources.length !== Object.keys(skill.files).length) return `get ${uri}: ${entry.resources.length} resources`
    for (const r of entry.resources) {
      const want = digests.get(r.uri)
      if (want === undefined || want.digest !== r.digest || want.size !== r.size) return `get ${uri}: entry differs at ${r.uri}`
    }
    return undefined
  }
  if (kind === 6) {
    // One request in twenty walks the whole listing page by page (every listed skill exactly once,
    // in order); the others fetch the first page.
    const whole = n % 20 === 6
    const seen: Array<string> = []
    let cursor: string | undefined
    for (let page = 0; page < (whole ? 20 : 1); page++) {
      const { status, body } = await post(agent, url, "skills/list", cursor === undefined ? {} : { cursor })
      if (status !== 200 || !Array.isArray(body?.result?.skills)) return `list: ${status} ${JSON.stringify(body?.error)}`
      for (const s of body.result.skills) seen.push(s.uri)
      cursor = body.result.nextCursor
      if (cursor === undefined) break
    }
    const want = whole ? listedUris : listedUris.slice(0, 25)
    return JSON.stringify(seen) === JSON.stringify(want) ? undefined : `list: ${seen.length} skills, not the catalogue`
  }
  if (kind <= 8) {
    const folder = pick(["", "/references", "/references/deep", "/assets", "/data"])
    const uri = `skill://${skill.path}${folder}`
    const { status, body } = await post(agent, url, "resources/directory/read", { uri })
    const children = body?.result?.resources
    if (status !== 200 || !Array.isArray(children)) return `directory ${uri}: ${status} ${JSON.stringify(body?.error)}`
    for (const child of children) {
      if (!String(child.uri).startsWith(`${uri}/`)) return `directory ${uri}: child ${child.uri} outside`
      if (child.mimeType !== "inode/directory" && digests.get(child.uri)?.size !== child.size) return `directory ${uri}: ${child.uri} size`
    }
    return children.length > 0 ? undefined : `directory ${uri}: empty`
  }
  // Client mistakes: the answer is -32602 naming the URI, never an internal error.
  const uri = pick([uriOf(skill, "missing.md"), `skill://nope/${n}/SKILL.md`, uriOf(skill, "references")])
  const method = pick(["resources/read", "skills/get"])
  const { body } = await post(agent, url, method, { uri })
  return body?.error?.code === -32602 ? undefined : `${method} ${uri}: expected -32602, got ${JSON.stringify(body?.error ?? "a result")}`
}

describe("stress", () => {
  layer(httpServer(Registrations))((it) => {
    it.effect(`${Requests} mixed requests at ${Concurrency} in flight: zero errors, every byte right, flat heap`, () =>
      Effect.gen(function*() {
        const url = new URL(yield* ServerUrl)
        const report = yield* Effect.promise(async () => {
          const agent = new Http.Agent({ keepAlive: true, maxSockets: Concurrency })
          const problems: Array<string> = []
          const heaps: Array<number> = []
          let sent = 0
          try {
            for (let round = 0; round < Rounds; round++) {
              const quota = Requests / Rounds
              let next = 0
              await Promise.all(Array.from({ length: Concurrency }, async () => {
                while (next < quota) {
                  const n = sent + next++
                  try {
                    const problem = await one(agent, url, n)
                    if (problem !== undefined) problems.push(problem)
                  } catch (error) {
                    problems.push(`request ${n}: ${String(error)}`)
                  }
                }
              }))
              sent += quota
              heaps.push(await settledHeap())
            }
          } finally {
            agent.destroy()
          }
          return { problems, heaps, sent }
        })
        if (process.env["STRESS_VERBOSE"] !== undefined) console.log(report.heaps, report.problems.length)
        assert.strictEqual(report.sent, Requests)
        assert.deepStrictEqual(report.problems.slice(0, 10), [])
        const [first, , third] = report.heaps
        assert.isAtMost(third!, first! * 1.2, `heap after round 3 (${third}) vs round 1 (${first}): ${report.heaps.join(", ")}`)
      }), 120_000)
  })
})
