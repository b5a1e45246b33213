/**
 * Cluster test (`npm run test:cluster`): Redis, three replicas and HAProxy with
 * `deploy/haproxy.cfg`, all on 127.0.0.1 on free ports, stopped at the end. Only the first
 * replica watches the skills folder, so a change reaches the other two through the Redis bus alone.
 *
 * Covered through the balancer: every replica takes part of the traffic; a paged `skills/list` walk
 * (page size 2) equals a walk against one replica; every answer's bytes are identical from every
 * replica; a `subscriptions/listen` stream gets its acknowledgement at once and `list_changed`
 * within 5 s of a skill added on disk and announced by another replica; a 2025-11-25 session stays
 * on one replica and its stream gets the same; 10,000 mixed requests while a replica is killed and
 * restarted (every answer byte-correct, none lost once HAProxy marks it down; losses before that
 * counted and reported); a contradicting `Mcp-Method` header refused as directly; our `mcp-skills`
 * CLI and the official SDK client list and pull; an upsert made in code on a replica (one in this
 * process, on the same folder and bus) served from every replica through the balancer, no replica
 * reloading its source for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ChangeBus, DirectorySource, Skill, SkillRegistry } from "@mcp-skills/server"
import { Effect, Exit, Layer, Scope } from "effect"
import * as Cluster from "../src/cluster.js"

const repoRoot = fileURLToPath(new URL("../../", import.meta.url))
const examples = path.join(repoRoot, "examples/skills")
const mcpSkills = path.join(repoRoot, "packages/skills-client/dist/src/bin/mcp-skills.js")

const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "cluster-test", version: "0.0.0" }
}

interface Answer {
  readonly status: number
  readonly replica: string | null
  readonly session: string | null
  readonly text: string
}

const nameOf: Record<string, string> = { "resources/read": "uri", "skills/get": "uri", "resources/directory/read": "uri" }

/** One 2026-07-28 request with a fixed id, so equal answers are equal bytes. */
const post = async (url: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
  const name = nameOf[method] === undefined ? undefined : params[nameOf[method]!]
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
      ...headers
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }),
    signal: AbortSignal.timeout(20_000)
  })
  return {
    status: response.status,
    replica: response.headers.get("x-mcp-replica"),
    session: response.headers.get("mcp-session-id"),
    text: await response.text()
  } satisfies Answer
}

const result = (answer: Answer) => {
  expect(answer.status, answer.text).toBe(200)
  return JSON.parse(answer.text).result
}

/** Whether a replica (or the balancer) serves the skill `uri`: a result, not an error. */
const served = async (url: string, uri: string) => {
  const answer = await post(url, "skills/get", { uri })
  return answer.status === 200 && JSON.parse(answer.text).result !== undefined
}

/** Every page of `skills/list` (answers kept as text), following `nextCursor`. */
const walk = async (url: string) => {
  const pages: Array<Answer> = []
  let cursor: string | undefined
  do {
    const answer = await post(url, "skills/list", cursor === undefined ? {} : { cursor })
    pages.push(answer)
    cursor = result(answer).nextCursor
  } while (cursor !== undefined && pages.length < 100)
  return pages
}

/** Every request a client makes of this catalogue: pages, entries, files and directories. */
const requestsOf = async (url: string) => {
  const requests: Array<{ readonly method: string; readonly params: Record<string, unknown> }> = []
  let cursor: string | undefined
  const skills: Array<any> = []
  do {
    requests.push({ method: "skills/list", params: cursor === undefined ? {} : { cursor } })
    const page = result(await post(url, "skills/list", cursor === undefined ? {} : { cursor }))
    skills.push(...page.skills)
    cursor = page.nextCursor
  } while (cursor !== undefined)
  for (const skill of skills) {
    requests.push({ method: "skills/get", params: { uri: skill.uri } })
    requests.push({ method: "resources/directory/read", params: { uri: skill.uri.slice(0, -"/SKILL.md".length) } })
    for (const file of skill.resources) requests.push({ method: "resources/read", params: { uri: file.uri } })
  }
  return requests
}

/** An open SSE response: the events so far, read in the background. */
const openStream = async (url: string, init: RequestInit) => {
  const abort = new AbortController()
  const response = await fetch(url, { ...init, signal: abort.signal })
  const events: Array<any> = []
  let comments = 0
  const reading = (async () => {
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true })
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (block.startsWith(":")) comments++
          const data = block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join("")
          if (data.length > 0) events.push(JSON.parse(data))
        }
      }
    } catch {
      // aborted
    }
  })()
  return {
    response,
    events,
    comments: () => comments,
    close: async () => {
      abort.abort()
      await reading
    }
  }
}

/** Waits (polling) for `check`, failing after `ms`. */
const within = async (ms: number, what: string, check: () => boolean | Promise<boolean>) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill, added while serving.\n---\n\n# ${name}\n`

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("exit", (code) => resolve({ code, output }))
  })

describe("cluster: HAProxy + Redis + 3 replicas", () => {
  let cluster: Cluster.Cluster
  let directory: string
  const temp: Array<string> = []
  const report: Array<string> = []

  beforeAll(async () => {
    const found = Cluster.findPackages()
    if ("missing" in found) {
      throw new Error(`npm run test:cluster needs ${found.missing.join(" and ")}: apt-get install -y ${Cluster.requiredPackages.join(" ")}`)
    }
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-skills-cluster-skills-"))
    temp.push(directory)
    fs.cpSync(examples, directory, { recursive: true })
    cluster = await Cluster.start({ directory, replicas: 3, port: 0, watch: (i) => i === 0, serveArgs: ["--page-size", "2"] })
  })

  afterAll(async () => {
    await cluster?.stop()
    for (const dir of temp) fs.rmSync(dir, { recursive: true, force: true })
    if (report.length > 0) console.log(report.join("\n"))
  })

  it("every replica answers part of the traffic; walks and every answer's bytes are the same from every replica", async () => {
    const served = new Map<string, number>()
    for (let i = 0; i < 30; i++) {
      const answer = await post(cluster.url, "server/discover")
      expect(answer.status).toBe(200)
      served.set(answer.replica!, (served.get(answer.replica!) ?? 0) + 1)
    }
    expect([...served.keys()].sort()).toEqual(cluster.replicaNames)

    const through = await walk(cluster.url)
    const direct = await walk(cluster.replicaUrls[0]!)
    expect(through.length).toBeGreaterThan(2)
    expect(through.map((page) => page.text)).toEqual(direct.map((page) => page.text))
    // The walk through the balancer hopped replicas: cursors of one were honoured by the others.
    expect(new Set(through.map((page) => page.replica)).size).toBeGreaterThan(1)

    const requests = await requestsOf(cluster.replicaUrls[0]!)
    expect(requests.filter((request) => request.method === "resources/read")).toHaveLength(23)
    for (const request of requests) {
      const answers = await Promise.all(cluster.replicaUrls.map((url) => post(url, request.method, request.params)))
      for (const answer of answers) expect(answer.text, `${request.method} ${JSON.stringify(request.params)}`).toBe(answers[0]!.text)
      expect(answers[0]!.status).toBe(200)
    }
  })

  it("a listen stream through the balancer is acknowledged at once and hears a skill added on another replica", async () => {
    // A stream on a replica that does not watch the folder: it can only hear of the change on the bus.
    let stream: Awaited<ReturnType<typeof openStream>> | undefined
    for (let i = 0; i < 6 && stream === undefined; i++) {
      const opened = await openStream(cluster.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "subscriptions/listen"
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "subscriptions/listen",
          params: { notifications: { resourcesListChanged: true }, _meta: meta }
        })
      })
      if (opened.response.headers.get("x-mcp-replica") !== cluster.replicaNames[0]) stream = opened
      else await opened.close()
    }
    expect(stream).toBeDefined()
    const listener = stream!
    expect(listener.response.status).toBe(200)
    expect(listener.response.headers.get("x-accel-buffering")).toBe("no")
    // No proxy buffering: the acknowledgement arrives while the stream stays open.
    await within(5_000, "acknowledgement", () =>
      listener.events.some((event) => event.method === "notifications/subscriptions/acknowledged"))
    const index = cluster.replicaNames.indexOf(listener.response.headers.get("x-mcp-replica")!)

    fs.mkdirSync(path.join(directory, "added-one"))
    fs.writeFileSync(path.join(directory, "added-one/SKILL.md"), skillMd("added-one"))
    await within(5_000, "list_changed on the listen stream", () =>
      listener.events.some((event) => event.method === "notifications/resources/list_changed"))
    await listener.close()
    expect(cluster.replicaOutput(index)).toMatch(/heard revision [0-9a-f]{24}, this replica serves [0-9a-f]{24}: reloading the skills/)
    // Every replica now serves the new skill.
    for (const url of cluster.replicaUrls) {
      await within(5_000, `added-one on ${url}`, async () =>
        served(url, "skill://added-one/SKILL.md"))
    }
  })

  it("a 2025-11-25 session stays on one replica, and its stream hears a skill added on another", async () => {
    const legacy = (session: string | undefined, body: unknown) =>
      fetch(cluster.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(session === undefined ? {} : { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" })
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000)
      })
    let session: string | undefined
    let home: string | null = null
    for (let i = 0; i < 6 && (session === undefined || home === cluster.replicaNames[0]); i++) {
      const init = await legacy(undefined, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "cluster-test", version: "0" } }
      })
      await init.text()
      expect(init.status).toBe(200)
      session = init.headers.get("mcp-session-id") ?? undefined
      home = init.headers.get("x-mcp-replica")
    }
    expect(session).toBeDefined()
    expect(home).not.toBe(cluster.replicaNames[0])
    await (await legacy(session, { jsonrpc: "2.0", method: "notifications/initialized" })).text()
    for (let i = 0; i < 12; i++) {
      const answer = await legacy(session, { jsonrpc: "2.0", id: 10 + i, method: "skills/list" })
      const text = await answer.text()
      expect(answer.status, text).toBe(200)
      expect(answer.headers.get("x-mcp-replica")).toBe(home)
    }
    const stream = await openStream(cluster.url, {
      method: "GET",
      headers: { accept: "text/event-stream", "mcp-session-id": session!, "mcp-protocol-version": "2025-11-25" }
    })
    expect(stream.response.status).toBe(200)
    expect(stream.response.headers.get("x-mcp-replica")).toBe(home)
    expect(stream.response.headers.get("x-accel-buffering")).toBe("no")
    await within(5_000, "the stream's opening comment", () => stream.comments() > 0)
    fs.mkdirSync(path.join(directory, "added-two"))
    fs.writeFileSync(path.join(directory, "added-two/SKILL.md"), skillMd("added-two"))
    await within(5_000, "list_changed on the session stream", () =>
      stream.events.some((event) => event.method === "notifications/resources/list_changed"))
    await stream.close()
  })

  it("10,000 mixed requests while a replica is killed and restarted: every answer byte-correct, none lost once it is marked down", async () => {
    const requests = await requestsOf(cluster.replicaUrls[0]!)
    const expected = await Promise.all(requests.map((request) => post(cluster.replicaUrls[0]!, request.method, request.params)))
    for (const answer of expected) expect(answer.status).toBe(200)
    const total = 10_000
    const concurrency = 8
    const victim = 1
    let next = 0
    let markedDownAt: number | undefined
    let restartedAt: number | undefined
    const failures: Array<{ index: number; reason: string }> = []
    const wrong: Array<string> = []
    const served = new Map<string, number>()
    const phases = (async () => {
      await within(120_000, "1,500 requests sent", () => next >= 1_500)
      await cluster.kill(victim)
      await within(30_000, "HAProxy marks the killed replica down", async () => {
        const status = (await cluster.status())[victim]!
        if (status.startsWith("DOWN")) markedDownAt = next
        return markedDownAt !== undefined
      })
      // 2,000 more requests, or what is left of the 10,000 on a fast machine.
      await within(120_000, "2,000 more requests", () => next >= Math.min(markedDownAt! + 2_000, total - 1_000))
      await cluster.restart(victim)
      await within(30_000, "HAProxy brings the replica back", async () => (await cluster.status())[victim] === "UP")
      restartedAt = next
    })()
    const worker = async () => {
      while (next < total) {
        const index = next++
        const request = requests[index % requests.length]!
        try {
          const answer = await post(cluster.url, request.method, request.params)
          if (answer.status !== 200) {
            failures.push({ index, reason: `HTTP ${answer.status}` })
            continue
          }
          served.set(answer.replica!, (served.get(answer.replica!) ?? 0) + 1)
          if (answer.text !== expected[index % requests.length]!.text) wrong.push(`${request.method} ${JSON.stringify(request.params)}`)
        } catch (error) {
          failures.push({ index, reason: error instanceof Error ? error.message : String(error) })
        }
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    await phases
    expect(next).toBeGreaterThanOrEqual(total)
    expect(wrong).toEqual([])
    const afterDown = failures.filter((failure) => failure.index >= markedDownAt!)
    expect(afterDown).toEqual([])
    report.push(
      `cluster: ${total} requests, ${failures.length} lost between the kill and HAProxy marking the replica down` +
        ` (marked down after request ${markedDownAt}, back after request ${restartedAt}); answered by ` +
        [...served].sort().map(([replica, count]) => `${replica} ${count}`).join(", ")
    )
    // The restarted replica took traffic again.
    expect(restartedAt).toBeDefined()
    expect(served.get(cluster.replicaNames[victim]!) ?? 0).toBeGreaterThan(0)
  })

  it("a Mcp-Method header that contradicts the body is refused through the balancer as it is directly", async () => {
    const contradicting = (url: string) => post(url, "skills/list", {}, { "mcp-method": "skills/get" })
    const direct = await contradicting(cluster.replicaUrls[0]!)
    const through = await contradicting(cluster.url)
    expect(direct.status).toBe(400)
    expect([through.status, through.text]).toEqual([direct.status, direct.text])
  })

  it("our mcp-skills CLI and the official SDK client list and pull through the balancer", async () => {
    for (const protocol of ["2026-07-28", "2025-11-25"]) {
      const into = fs.mkdtempSync(path.join(os.tmpdir(), "mcp-skills-cluster-pull-"))
      temp.push(into)
      const listed = await run([mcpSkills, "list", cluster.url, "--protocol", protocol])
      expect(listed.code, listed.output).toBe(0)
      expect(listed.output).toContain("skill://added-two/SKILL.md")
      const pulled = await run([mcpSkills, "pull", cluster.url, "--all", "--into", into, "--protocol", protocol])
      expect(pulled.code, pulled.output).toBe(0)
      expect(fs.readFileSync(path.join(into, "pdf-processing/SKILL.md"))).toEqual(
        fs.readFileSync(path.join(examples, "pdf-processing/SKILL.md"))
      )
    }
    for (const mode of ["legacy", { pin: "2026-07-28" }] as const) {
      const client = new Client({ name: "cluster-test", version: "0.0.0" }, { versionNegotiation: { mode } })
      await client.connect(new StreamableHTTPClientTransport(new URL(cluster.url)))
      try {
        const skills = new SkillsClient(client)
        const listing = await skills.list()
        expect(listing.invalid).toEqual([])
        expect(listing.skills.map((skill) => skill.uri)).toContain("skill://added-one/SKILL.md")
        let files = 0
        for (const skill of listing.skills) {
          if (skill.resources === "dynamic") throw new Error(`${skill.uri} is unexpectedly dynamic`)
          for (const resource of skill.resources) {
            const file = await skills.read(skill, resource.uri)
            expect(file.verified, resource.uri).toBe(true)
            files++
          }
        }
        expect(files).toBe(25)
      } finally {
        await client.close()
      }
    }
  })

  it("Redis down: every replica keeps serving; when it is back, they converge on the change made meanwhile", async () => {
    await cluster.killBus()
    for (const [i] of cluster.replicaUrls.entries()) {
      await within(15_000, `replica${i + 1} reports the bus down`, () => /change bus unavailable/.test(cluster.replicaOutput(i)))
    }
    fs.mkdirSync(path.join(directory, "added-three"))
    fs.writeFileSync(path.join(directory, "added-three/SKILL.md"), skillMd("added-three"))
    await within(10_000, "the watching replica serves added-three", async () =>
      served(cluster.replicaUrls[0]!, "skill://added-three/SKILL.md"))
    await within(10_000, "its announcement failed", () => /could not announce revision/.test(cluster.replicaOutput(0)))
    for (let i = 0; i < 30; i++) expect((await post(cluster.url, "skills/list")).status).toBe(200)
    // The others cannot hear of it while the bus is down.
    expect(await served(cluster.replicaUrls[1]!, "skill://added-three/SKILL.md")).toBe(false)
    await cluster.restartBus()
    for (const url of cluster.replicaUrls) {
      await within(20_000, `added-three on ${url} once the bus is back`, async () =>
        served(url, "skill://added-three/SKILL.md"))
    }
    for (const [i] of cluster.replicaUrls.entries()) expect(cluster.replicaOutput(i)).toMatch(/change bus is back/)
  })

  it("an upsert in code on one replica is served through the balancer from every replica, with no source reload", async () => {
    // A replica in this process, on the same folder and the same bus, where code upserts a skill.
    const scope = Effect.runSync(Scope.make())
    const registry = await Effect.runPromise(Effect.gen(function*() {
      const source = yield* DirectorySource.make([{ path: directory }])
      const made = yield* SkillRegistry.make(source.definitions).pipe(Effect.provideService(Scope.Scope, scope))
      yield* Layer.buildWithScope(
        ChangeBus.layerReplica({ log: () => Effect.void }).pipe(
          Layer.provide(ChangeBus.layerRedis({ url: cluster.redisUrl })),
          Layer.provide(Layer.succeed(SkillRegistry.SkillRegistry)(made))
        ),
        scope
      )
      return made
    }))
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      const offsets = cluster.replicaUrls.map((_, i) => cluster.replicaOutput(i).length)
      const uri = "skill://made-in-code/SKILL.md"
      await Effect.runPromise(registry.upsert([
        Skill.make({ path: "made-in-code", files: { "SKILL.md": skillMd("made-in-code"), "notes.md": "upserted, not on disk\n" } })
      ]))
      for (const url of cluster.replicaUrls) await within(5_000, `${uri} on ${url}`, () => served(url, uri))
      const answered = new Set<string>()
      for (let i = 0; i < 30; i++) {
        const answer = await post(cluster.url, "resources/read", { uri: "skill://made-in-code/notes.md" })
        expect(result(answer).contents[0].text).toBe("upserted, not on disk\n")
        answered.add(answer.replica!)
      }
      expect([...answered].sort()).toEqual(cluster.replicaNames)
      for (const [i, offset] of offsets.entries()) {
        const said = cluster.replicaOutput(i).slice(offset)
        expect(said).toMatch(/edited by another replica/)
        expect(said).not.toMatch(/reloading the skills/)
      }
      // A remove travels the same way, and leaves every replica on the folder's catalogue again.
      await Effect.runPromise(registry.remove([uri]))
      for (const url of cluster.replicaUrls) await within(5_000, `${uri} gone from ${url}`, async () => !(await served(url, uri)))
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
