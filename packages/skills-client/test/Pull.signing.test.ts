/**
 * Signed skills end to end: an author signs a folder offline (`mcp-skills-server keygen`, `sign`),
 * `mcp-skills-server serve` relays the signatures, a loopback proxy between server and client
 * re-hosts the catalogue under another prefix (or strips the signatures), and `mcp-skills pull
 * --trust` installs only what verifies against a trusted key, naming each skill it leaves out. One test at a time:
 * each runs several programs, which together would crowd two cores.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it, type TestContext } from "vitest"
import { Digest, Signing } from "@mcp-skills/core"
import { SkillsClient } from "@mcp-skills/client"
import { runCli, runProgram, serveHttp, serverCli, withClient } from "./support/helpers.js"
import * as Tamper from "./support/TamperServer.js"

const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`

// A small catalogue with a nested skill (its files are in the outer skill's manifest too, R10).
const catalogue: Record<string, string> = {
  "refunds/SKILL.md": skillMd("refunds", "Decide refund requests"),
  "refunds/references/policy.md": "# Policy\n\nRefunds within 30 days.\n",
  "refunds/escalation/SKILL.md": skillMd("escalation", "Escalate a refund"),
  "csv/SKILL.md": skillMd("csv", "Clean CSV files"),
  "csv/scripts/clean.py": "print('clean')\n"
}

const temp = async (context: TestContext) => {
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "mcp-skills-signing-"))
  context.onTestFinished(() => Fs.rm(dir, { recursive: true, force: true }))
  return dir
}

const server = (args: ReadonlyArray<string>) => runProgram(serverCli, args)

/** A folder with the catalogue and two key pairs, `a` and `b`; signed by `a` unless told otherwise. */
const authored = async (context: TestContext, options: { readonly sign?: boolean } = {}) => {
  const dir = await temp(context)
  const skills = Path.join(dir, "skills")
  for (const [path, text] of Object.entries(catalogue)) {
    await Fs.mkdir(Path.dirname(Path.join(skills, path)), { recursive: true })
    await Fs.writeFile(Path.join(skills, path), text)
  }
  const keys: Record<"a" | "b", { readonly privateKey: string; readonly publicKey: string; readonly keyId: string }> = {} as never
  for (const name of ["a", "b"] as const) {
    const made = await server(["keygen", "--out", Path.join(dir, name)])
    expect(made.status).toBe(0)
    const publicKey = Path.join(dir, `${name}.public.pem`)
    const keyId = Result.getOrThrow(Signing.publicKey(await Fs.readFile(publicKey, "utf8"))).keyId
    expect(made.stdout).toContain(keyId)
    keys[name] = { privateKey: Path.join(dir, `${name}.private.pem`), publicKey, keyId }
  }
  if (options.sign !== false) {
    const signed = await server(["sign", skills, "--key", keys.a.privateKey])
    expect(signed.stderr).toBe("")
    expect(signed.stdout).toContain(`3 skills signed by ${keys.a.keyId}`)
  }
  return { dir, skills, keys, into: Path.join(dir, "installed") }
}

// serveHttp ties the server to a scope; a test here holds it open until it finishes.
const served = (context: TestContext, dir: string, args: ReadonlyArray<string> = []) =>
  new Promise<{ readonly url: string; readonly output: () => string }>((resolve, reject) => {
    const done = new Promise<void>((release) => context.onTestFinished(() => release()))
    Effect.runPromise(Effect.scoped(Effect.flatMap(serveHttp(dir, args), (s) =>
      Effect.promise(() => {
        resolve(s)
        return done
      })))).catch(reject)
  })

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

// Every `uri` (and the `skills/get`/`resources/read` params) of a message, rewritten.
const mapUris = (value: Json, f: (uri: string) => string): Json => {
  if (Array.isArray(value)) return value.map((item) => mapUris(item, f))
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, key === "uri" && typeof item === "string" ? f(item) : mapUris(item as Json, f)])
  )
}

/**
 * A relaying proxy on loopback: forwards every request to `upstream`, re-hosting its skills under
 * `skill://mirror/` (URIs rewritten both ways), and with `strip` drops every signature from the
 * entries it relays.
 */
const proxy = async (context: TestContext, upstream: string, options: { readonly strip?: boolean } = {}) => {
  const outward = (uri: string) => uri.replace(/^skill:\/\//, "skill://mirror/")
  const inward = (uri: string) => uri.replace(/^skill:\/\/mirror\//, "skill://")
  const http = Http.createServer(async (request, response) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString("utf8")
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && !["host", "content-length", "connection"].includes(name)) headers[name] = value
    }
    if (headers["mcp-name"] !== undefined) headers["mcp-name"] = inward(headers["mcp-name"])
    const forwarded = body.length === 0 ? undefined : JSON.stringify(mapUris(JSON.parse(body) as Json, inward))
    const answer = await fetch(upstream, { method: request.method!, headers, ...(forwarded === undefined ? {} : { body: forwarded }) })
    const text = await answer.text()
    const type = answer.headers.get("content-type") ?? ""
    let out = text
    if (type.includes("application/json") && text.length > 0) {
      const message = mapUris(JSON.parse(text) as Json, outward) as any
      if (options.strip === true) {
        const strip = (entry: any) => {
          if (entry?._meta !== undefined) delete entry._meta[Signing.MetaKey]
        }
        for (const entry of message?.result?.skills ?? []) strip(entry)
        strip(message?.result?.skill)
      }
      out = JSON.stringify(message)
    }
    const outHeaders: Record<string, string> = {}
    answer.headers.forEach((value, name) => {
      if (!["content-length", "transfer-encoding", "connection", "keep-alive"].includes(name)) outHeaders[name] = value
    })
    response.writeHead(answer.status, outHeaders)
    response.end(out)
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  context.onTestFinished(() => new Promise<void>((resolve) => http.close(() => resolve())))
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`
}

// Five runs of the CLI and a server: over a minute on a loaded machine.
const CliHeavy = 180_000

/** Waits until the server at `url` (under --watch) serves `file` with the digest of `text`. */
const servedAs = async (url: string, file: string, text: string) => {
  const expected = Digest.make(new TextEncoder().encode(text))
  const digestOf = () =>
    Effect.runPromise(withClient(url, (client) =>
      Effect.map(client.listSkills(), ({ skills }) =>
        skills.flatMap((skill) => skill.resources === "dynamic" ? [] : skill.resources).find((r) => r.uri === file)?.digest
      )))
  // Bounded in time, not tries: on a loaded machine one listing takes seconds.
  const deadline = Date.now() + 60_000
  while ((await digestOf()) !== expected) {
    expect(Date.now()).toBeLessThan(deadline)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const installed = async (dir: string) => (await Fs.readdir(dir, { recursive: true }).catch(() => [] as Array<string>)).sort()

const lock = async (into: string) => JSON.parse(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8"))

describe("signed skills over the wire", () => {
  it("a signed catalogue re-hosted by a relaying proxy verifies: pull --trust installs it and the lock records the signer", async (context) => {
    const { skills, keys, into } = await authored(context)
    const { url } = await served(context, skills)
    const mirror = await proxy(context, url)
    const list = await runCli(["list", mirror, "--trust", keys.a.publicKey])
    expect(list.status).toBe(0)
    const lines = list.stdout.trim().split("\n")
    expect(lines.map((line) => line.split("\t")[0])).toEqual([
      "skill://mirror/csv/SKILL.md",
      "skill://mirror/refunds/SKILL.md",
      "skill://mirror/refunds/escalation/SKILL.md"
    ])
    for (const line of lines) expect(line).toContain(`signed by ${keys.a.keyId} (verified)`)
    const pull = await runCli(["pull", mirror, "--all", "--into", into, "--trust", keys.b.publicKey, "--trust", keys.a.publicKey])
    expect(pull.stderr).toBe("")
    expect(pull.status).toBe(0)
    expect(await Fs.readFile(Path.join(into, "mirror/refunds/references/policy.md"), "utf8")).toBe(catalogue["refunds/references/policy.md"])
    const recorded = await lock(into)
    expect(recorded.skills.map((skill: { uri: string; signer: string }) => [skill.uri, skill.signer])).toEqual([
      ["skill://mirror/csv/SKILL.md", keys.a.keyId],
      ["skill://mirror/refunds/SKILL.md", keys.a.keyId],
      ["skill://mirror/refunds/escalation/SKILL.md", keys.a.keyId]
    ])
    // Nothing of the signing is served: the signatures file is hidden and in no manifest.
    const json = JSON.parse((await runCli(["list", url, "--json"])).stdout)
    for (const skill of json.skills) {
      expect(skill._meta[Signing.MetaKey]).toHaveLength(1)
      expect(JSON.stringify(skill.resources)).not.toContain("signatures")
    }
    expect(await installed(into)).not.toContain("refunds/.mcp-skills-signatures.json")
  })

  it("a proxy that strips the signatures: every skill refused, each named, nothing written", async (context) => {
    const { skills, keys, into } = await authored(context)
    const { url } = await served(context, skills)
    const stripping = await proxy(context, url, { strip: true })
    const pull = await runCli(["pull", stripping, "--all", "--into", into, "--trust", keys.a.publicKey])
    expect(pull.status).toBe(1)
    expect(pull.stderr).toBe(
      ["csv", "refunds", "refunds/escalation"].map((path) =>
        `mcp-skills: signature check failed: skill://mirror/${path}/SKILL.md carries no signature, and a signature by a trusted key is required (the server, or something between, may have dropped it)\n`
      ).join("")
    )
    expect(await installed(into)).toEqual([])
    // Without --trust everything behaves as before.
    expect((await runCli(["pull", stripping, "--all", "--into", into])).status).toBe(0)
  })

  it("a file edited behind the signature: the server warns, that skill (and the one inside it) is refused, the rest installed; --require-signed leaves it out", async (context) => {
    const { skills, keys, into } = await authored(context)
    await Fs.appendFile(Path.join(skills, "refunds/references/policy.md"), "Except on Fridays.\n")
    const { url, output } = await served(context, skills)
    expect(output()).toContain(
      `serving skill://refunds/SKILL.md although its files no longer match its signature by ${keys.a.keyId}`
    )
    const pull = await runCli(["pull", url, "--all", "--into", into, "--trust", keys.a.publicKey])
    expect(pull.status).toBe(1)
    expect(pull.stderr).toBe(
      `mcp-skills: signature check failed: skill://refunds/SKILL.md: the signature by ${keys.a.keyId} does not verify: the signature does not match the skill's name, frontmatter and files\n` +
        "mcp-skills: entry check failed: skill://refunds/escalation/SKILL.md lies inside skill://refunds/SKILL.md, which was refused\n"
    )
    expect(pull.stdout).toBe("added skill://csv/SKILL.md -> csv (2 files, 68 bytes)\n")
    expect(await installed(into)).toEqual(["csv", "csv/SKILL.md", "csv/scripts", "csv/scripts/clean.py", "mcp-skills.lock.json"])
    const strict = await served(context, skills, ["--require-signed"])
    expect(strict.output()).toContain("not serving skill://refunds/SKILL.md: its files no longer match its signature")
    const list = await runCli(["list", strict.url, "--trust", keys.a.publicKey])
    expect(list.stdout.trim().split("\n").map((line) => line.split("\t")[0])).toEqual([
      "skill://csv/SKILL.md",
      "skill://refunds/escalation/SKILL.md"
    ])
  })

  it("signed by a key nobody trusts: refused, nothing written; list says by whom", async (context) => {
    const { skills, keys, into } = await authored(context)
    const { url } = await served(context, skills)
    const pull = await runCli(["pull", url, "skill://csv/SKILL.md", "--into", into, "--trust", keys.b.publicKey])
    expect(pull.status).toBe(1)
    expect(pull.stderr).toBe(`mcp-skills: signature check failed: skill://csv/SKILL.md is signed by ${keys.a.keyId}, which is not a trusted key\n`)
    expect(await installed(into)).toEqual([])
    const list = await runCli(["list", url, "--trust", keys.b.publicKey, "--json"])
    expect(JSON.parse(list.stdout).skills[0].signature).toEqual({ status: "untrusted", signers: [keys.a.keyId] })
  })

  it("an unsigned catalogue under --trust: refused; --trust-unsigned URI lets that one skill in", async (context) => {
    const { skills, keys, into } = await authored(context, { sign: false })
    const { url } = await served(context, skills)
    const list = await runCli(["list", url, "--trust", keys.a.publicKey])
    expect(list.stdout).toContain("skill://csv/SKILL.md\tcsv\t(2 files, 68 bytes)\tunsigned\tClean CSV files")
    const pull = await runCli(["pull", url, "--all", "--into", into, "--trust", keys.a.publicKey])
    expect(pull.status).toBe(1)
    expect(pull.stderr).toContain("signature check failed: skill://csv/SKILL.md carries no signature")
    expect(await installed(into)).toEqual([])
    const allowed = await runCli([
      "pull", url, "skill://csv/SKILL.md", "--into", into, "--trust", keys.a.publicKey, "--trust-unsigned", "skill://csv/SKILL.md"
    ])
    expect(allowed.status).toBe(0)
    expect((await lock(into)).skills[0].signer).toBeUndefined()
    const listed = await runCli(["list", url, "--trust", keys.a.publicKey, "--trust-unsigned", "skill://csv/SKILL.md"])
    expect(listed.stdout).toContain("skill://csv/SKILL.md\tcsv\t(2 files, 68 bytes)\tnot verified (allowed by --trust-unsigned)\tClean CSV files")
  })

  it("a later pull signed by another key is refused unless --accept-signer; re-signing is picked up by --watch", async (context) => {
    const { skills, keys, into } = await authored(context)
    const { url } = await served(context, skills, ["--watch"])
    const trustBoth = ["--trust", keys.a.publicKey, "--trust", keys.b.publicKey]
    expect((await runCli(["pull", url, "skill://csv/SKILL.md", "--into", into, ...trustBoth])).status).toBe(0)
    expect((await lock(into)).skills[0].signer).toBe(keys.a.keyId)
    // The author rotates keys: the skill is now signed by b alone.
    await Fs.rm(Path.join(skills, "csv/.mcp-skills-signatures.json"))
    expect((await server(["sign", skills, "--key", keys.b.privateKey])).status).toBe(0)
    for (let tries = 0; ; tries++) {
      const json = JSON.parse((await runCli(["list", url, "--json", "--trust", keys.b.publicKey])).stdout)
      if (json.skills.find((skill: { uri: string }) => skill.uri === "skill://csv/SKILL.md").signature.status === "verified") break
      expect(tries).toBeLessThan(50)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const refused = await runCli(["pull", url, "skill://csv/SKILL.md", "--into", into, ...trustBoth])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toBe(
      `mcp-skills: signer check failed: skill://csv/SKILL.md was signed by ${keys.a.keyId} when last pulled and is now signed by ${keys.b.keyId}; pass --accept-signer to accept it\n`
    )
    expect((await lock(into)).skills[0].signer).toBe(keys.a.keyId)
    const accepted = await runCli(["pull", url, "skill://csv/SKILL.md", "--into", into, ...trustBoth, "--accept-signer"])
    expect(accepted.stderr).toBe("")
    expect(accepted.stdout).toBe("unchanged skill://csv/SKILL.md\n")
    expect((await lock(into)).skills[0].signer).toBe(keys.b.keyId)
  })

  it("a skill pinned to a signer is never updated without --trust, and never recorded with a signer for bytes nobody checked", async (context) => {
    const { skills, keys, into } = await authored(context)
    const { url } = await served(context, skills, ["--watch"])
    const csv = ["skill://csv/SKILL.md", "--into", into]
    expect((await runCli(["pull", url, ...csv, "--trust", keys.a.publicKey])).status).toBe(0)
    const signed = await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")
    expect(JSON.parse(signed).skills[0].signer).toBe(keys.a.keyId)
    // The author's file changes behind the signature (or a server serves other bytes).
    const edited = catalogue["csv/scripts/clean.py"] + "print('and more')\n"
    await Fs.writeFile(Path.join(skills, "csv/scripts/clean.py"), edited)
    await servedAs(url, "skill://csv/scripts/clean.py", edited)
    const refused = await runCli(["pull", url, ...csv, "--accept-changes"])
    expect(refused.status).toBe(1)
    expect(refused.stderr).toBe(
      `mcp-skills: signer check failed: skill://csv/SKILL.md was signed by ${keys.a.keyId} when last pulled and has changed since; pull it with --trust and that signer's public key to verify the update\n`
    )
    expect(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")).toBe(signed)
    expect(await Fs.readFile(Path.join(into, "csv/scripts/clean.py"), "utf8")).toBe(catalogue["csv/scripts/clean.py"])
    // Back to the signed bytes: unchanged needs no --trust, and the signer stays.
    await Fs.writeFile(Path.join(skills, "csv/scripts/clean.py"), catalogue["csv/scripts/clean.py"]!)
    await servedAs(url, "skill://csv/scripts/clean.py", catalogue["csv/scripts/clean.py"]!)
    const unchanged = await runCli(["pull", url, ...csv])
    expect(unchanged.stdout).toBe("unchanged skill://csv/SKILL.md\n")
    expect(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")).toBe(signed)
  }, CliHeavy)

  it("pull --trust over a pulled file edited on disk: refused naming it, --overwrite-local restores it, the signer stays", async (context) => {
    const { skills, keys, into } = await authored(context)
    const { url } = await served(context, skills)
    const csv = ["skill://csv/SKILL.md", "--into", into]
    expect((await runCli(["pull", url, ...csv, "--trust", keys.a.publicKey])).status).toBe(0)
    const signed = await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")
    const clean = Path.join(into, "csv/scripts/clean.py")
    await Fs.writeFile(clean, "print('mine')\n")
    const refused = await runCli(["pull", url, ...csv, "--trust", keys.a.publicKey])
    expect(refused.status).toBe(1)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toBe(
      "mcp-skills: local check failed: files changed here since they were pulled would be overwritten: csv/scripts/clean.py (edited); pass --overwrite-local to replace them with the verified source\n"
    )
    expect(await Fs.readFile(clean, "utf8")).toBe("print('mine')\n")
    const restored = await runCli(["pull", url, ...csv, "--trust", keys.a.publicKey, "--overwrite-local"])
    expect(restored.stderr).toBe("")
    expect(restored.stdout).toBe("restored skill://csv/SKILL.md -> csv (2 files, 68 bytes)\n  ! csv/scripts/clean.py (edited here, replaced)\n")
    expect(await Fs.readFile(clean, "utf8")).toBe(catalogue["csv/scripts/clean.py"])
    expect(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")).toBe(signed)
    // Without --trust a restore puts back the very bytes the signer signed: allowed, signer kept.
    await Fs.rm(clean)
    const plain = await runCli(["pull", url, ...csv, "--overwrite-local"])
    expect(plain.stdout).toBe("restored skill://csv/SKILL.md -> csv (2 files, 68 bytes)\n  ! csv/scripts/clean.py (deleted here, restored)\n")
    expect(await Fs.readFile(Path.join(into, "mcp-skills.lock.json"), "utf8")).toBe(signed)
  }, CliHeavy)

  it("keygen never replaces a key; sign refuses a key that is not an ed25519 private key", async (context) => {
    const { dir, skills, keys } = await authored(context, { sign: false })
    const again = await server(["keygen", "--out", Path.join(dir, "a")])
    expect(again.status).toBe(1)
    expect(again.stderr).toContain("exists; keygen never replaces a key")
    const wrong = await server(["sign", skills, "--key", keys.a.publicKey])
    expect(wrong.status).toBe(1)
    expect(wrong.stderr).toMatch(/not an ed25519 private key/)
    // A named pipe (nobody writes to it) and a link to an endless device: refused at once, unread.
    const fifo = Path.join(dir, "fifo.pem")
    execFileSync("mkfifo", [fifo])
    const zero = Path.join(dir, "zero.pem")
    await Fs.symlink("/dev/zero", zero)
    for (const key of [fifo, zero]) {
      const refused = await server(["sign", skills, "--key", key])
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain(`cannot read ${key}: not a regular file`)
    }
    expect(await Fs.readdir(Path.join(skills, "csv"))).not.toContain(".mcp-skills-signatures.json")
  })
})

describe.concurrent("SkillsClient trust", () => {
  const key = Effect.runSync(Signing.generateKeyPair)
  const required = { keys: [key.publicKey], mode: "required" } as const

  it("a \"dynamic\" skill cannot be signed: refused under required trust unless its URI is allowed unsigned", async (context) => {
    const s = await Tamper.start({ dynamic: true })
    context.onTestFinished(s.close)
    const attempt = (trust: SkillsClient.Options["trust"]) =>
      Effect.runPromise(withClient(s.url, (client) =>
        Effect.gen(function*() {
          const { skills } = yield* client.listSkills()
          return yield* Effect.result(client.loadSkill(skills[0]!))
        }), { allowDynamic: true, trust }))
    const refused = await attempt(required)
    expect(Result.isFailure(refused) && refused.failure).toMatchObject({ _tag: "UnsignedSkill", uri: Tamper.SkillUri, dynamic: true })
    expect(s.reads()).toEqual([])
    const allowed = await attempt({ ...required, unsigned: [Tamper.SkillUri] })
    expect(Result.isSuccess(allowed)).toBe(true)
    // Optional trust reads unsigned skills, unverified.
    expect(Result.isSuccess(await attempt({ ...required, mode: "optional" }))).toBe(true)
  })

  it("a trust key that is not an ed25519 public key is a configuration error", async (context) => {
    const s = await Tamper.start()
    context.onTestFinished(s.close)
    const result = await Effect.runPromise(Effect.result(withClient(s.url, () => Effect.void, { trust: { keys: ["nope"], mode: "required" } })))
    expect(Result.isFailure(result) && result.failure.message).toMatch(/trust: not an ed25519 public key/)
  })
})
