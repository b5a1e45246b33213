/**
 * The exact HTTP requests the benchmark sends (protocol 2026-07-28: stateless, every POST carries
 * `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` for `resources/read`, and the per-request `_meta`
 * envelope), and the checks that a response is correct: HTTP 200, a JSON-RPC result, and content
 * equal to the catalogue (digests of every byte read).
 */
import { ServerLimits } from "@mcp-skills/server"
import type { Catalogue, SkillSpec } from "./catalogue.js"
import { sha256 } from "./catalogue.js"

export const ProtocolVersion = "2026-07-28"
// Our server's default page size; the SDK's server is started with the same.
export const PageSize = ServerLimits.PageSize

export const clientInfo = { name: "mcp-skills-bench", version: "0.1.0" }

const meta = {
  "io.modelcontextprotocol/protocolVersion": ProtocolVersion,
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": {}
}

export interface Request {
  readonly label: string
  readonly method: string
  readonly headers: Record<string, string>
  readonly body: string
  /** Throws with a reason when `result` is not the right answer. */
  readonly check: (result: any) => void
}

export const scheme = "skill"
export const skillMdUri = (skill: SkillSpec) => `${scheme}://${skill.path}/SKILL.md`
export const fileUri = (skill: SkillSpec, path: string) => `${scheme}://${skill.path}/${path}`

export const request = (label: string, method: string, params: Record<string, unknown>, check: Request["check"]): Request => ({
  label,
  method,
  headers: {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": ProtocolVersion,
    "mcp-method": method,
    ...(method === "resources/read" ? { "mcp-name": String(params["uri"]) } : {})
  },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }),
  check
})

const fail = (message: string): never => {
  throw new Error(message)
}

const bytesOf = (content: { text?: string; blob?: string }): Uint8Array =>
  typeof content.text === "string"
    ? new TextEncoder().encode(content.text)
    : typeof content.blob === "string"
    ? new Uint8Array(Buffer.from(content.blob, "base64"))
    : fail("content has neither text nor blob")

/** Every skill in URI order (the order both servers list them in). */
export const sortedSkills = (catalogue: Catalogue) =>
  [...catalogue.skills].sort((a, b) => (skillMdUri(a) < skillMdUri(b) ? -1 : skillMdUri(a) > skillMdUri(b) ? 1 : 0))

export const listFirstPage = (catalogue: Catalogue, pageSize = PageSize): Request => {
  const skills = sortedSkills(catalogue)
  const expected = skills.slice(0, pageSize).map(skillMdUri)
  return request("skills/list", "skills/list", {}, (result) => {
    const got = (result?.skills ?? fail("no skills array")).map((s: any) => s.uri)
    if (JSON.stringify(got) !== JSON.stringify(expected)) fail(`first page ${JSON.stringify(got.slice(0, 3))}... differs`)
    if ((skills.length > pageSize) !== (typeof result.nextCursor === "string")) fail("nextCursor wrong")
    for (const entry of result.skills) if (!Array.isArray(entry.resources) || entry.resources.length === 0) fail("entry without resources")
  })
}

const checkEntry = (skill: SkillSpec, entry: any) => {
  if (entry?.uri !== skillMdUri(skill)) fail(`entry uri ${entry?.uri}`)
  const want = new Map(skill.files.map((f) => [fileUri(skill, f.path), { digest: sha256(f.bytes), size: f.bytes.length }]))
  if (!Array.isArray(entry.resources) || entry.resources.length !== want.size) fail("resources count differs")
  for (const r of entry.resources) {
    const w = want.get(r.uri) ?? fail(`unexpected resource ${r.uri}`)
    if (r.digest !== w.digest || r.size !== w.size) fail(`digest/size of ${r.uri} differs`)
  }
}

export const getSkill = (skill: SkillSpec): Request =>
  request("skills/get", "skills/get", { uri: skillMdUri(skill) }, (result) => checkEntry(skill, result?.skill))

export const readFile = (label: string, skill: SkillSpec, path: string): Request => {
  const file = skill.files.find((f) => f.path === path) ?? fail(`no ${path} in ${skill.path}`)
  const uri = fileUri(skill, path)
  const digest = sha256(file.bytes)
  return request(label, "resources/read", { uri }, (result) => {
    const content = result?.contents?.[0] ?? fail("no contents")
    if (content.uri !== uri) fail(`contents uri ${content.uri}`)
    if (sha256(bytesOf(content)) !== digest) fail(`digest of ${uri} differs`)
  })
}

/** The direct children of a folder of a skill, as `name` or `name/`. */
const children = (skill: SkillSpec, folder: string) => {
  const out = new Set<string>()
  const prefix = folder === "" ? "" : `${folder}/`
  for (const f of skill.files) {
    if (!f.path.startsWith(prefix)) continue
    const rest = f.path.slice(prefix.length).split("/")
    out.add(rest.length === 1 ? rest[0]! : `${rest[0]}/`)
  }
  return out
}

export const readDirectory = (skill: SkillSpec): Request => {
  const uri = `${scheme}://${skill.path}`
  const expected = children(skill, "")
  return request("resources/directory/read", "resources/directory/read", { uri }, (result) => {
    const list = result?.resources ?? fail("no resources array")
    if (list.length !== expected.size) fail(`directory has ${list.length} children, expected ${expected.size}`)
    for (const r of list) {
      const name = String(r.uri).slice(uri.length + 1)
      const key = r.mimeType === "inode/directory" ? `${name.replace(/\/$/, "")}/` : name
      if (!expected.has(key)) fail(`unexpected child ${r.uri}`)
    }
  })
}

/** Parses a JSON or SSE body and returns the JSON-RPC response in it. */
export const parseBody = (contentType: string, text: string): any => {
  if (contentType.includes("text/event-stream")) {
    const data = text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).filter((l) => l.length > 0)
    return data.map((l) => JSON.parse(l)).find((m) => "result" in m || "error" in m)
  }
  return JSON.parse(text)
}

export interface Probe {
  readonly status: number
  readonly body: string
  readonly contentType: string
}

export const send = async (url: string, req: Request): Promise<Probe> => {
  const response = await fetch(url, { method: "POST", headers: req.headers, body: req.body })
  return { status: response.status, body: await response.text(), contentType: response.headers.get("content-type") ?? "" }
}

/** Sends `req` and checks the answer; throws naming the server and request when it is wrong. */
export const verify = async (server: string, url: string, req: Request): Promise<Probe> => {
  const probe = await send(url, req)
  if (probe.status !== 200) throw new Error(`${server} ${req.label}: HTTP ${probe.status} ${probe.body.slice(0, 300)}`)
  const message = parseBody(probe.contentType, probe.body)
  if (message?.result === undefined) throw new Error(`${server} ${req.label}: ${JSON.stringify(message).slice(0, 300)}`)
  try {
    req.check(message.result)
  } catch (error) {
    throw new Error(`${server} ${req.label}: ${(error as Error).message}`)
  }
  return probe
}
