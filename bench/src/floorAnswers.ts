/**
 * The floor server's answers: for each exact request body the benchmark sends, the full HTTP
 * response body a correct 2026-07-28 server gives, computed once from the in-memory catalogue (entries
 * by `@mcp-skills/core`'s `Manifest.make`). The floor server only looks them up.
 */
import { Manifest, SkillUri } from "@mcp-skills/core"
import * as Result from "effect/Result"
import type { Catalogue, SkillSpec } from "./catalogue.js"
import { PageSize, skillMdUri, sortedSkills, type Request } from "./wire.js"

const cache = { resultType: "complete", ttlMs: 0, cacheScope: "private" }

const manifestOf = (skill: SkillSpec) => {
  const uri = Result.getOrThrow(SkillUri.parseSkillMd(skillMdUri(skill)))
  return Result.getOrThrow(Manifest.make({ uri, files: skill.files }))
}

const mimeType = (path: string) =>
  path.endsWith(".md") ? "text/markdown" : path.endsWith(".json") ? "application/json" : path.endsWith(".py") ? "text/x-python" : path.endsWith(".png") ? "image/png" : "application/octet-stream"

const content = (uri: string, path: string, bytes: Uint8Array, text: boolean) =>
  text ? { uri, mimeType: mimeType(path), text: new TextDecoder().decode(bytes) } : { uri, mimeType: mimeType(path), blob: Buffer.from(bytes).toString("base64") }

const respond = (result: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 1, result })

/** The answer to `request` (one of those built by `wire.ts`) over `catalogue`. */
export const answer = (catalogue: Catalogue, request: Request): string => {
  const params = JSON.parse(request.body).params
  const skills = sortedSkills(catalogue)
  const owner = (uri: string) => skills.find((s) => uri === skillMdUri(s) || uri.startsWith(`skill://${s.path}/`) || uri === `skill://${s.path}`)!
  switch (request.method) {
    case "skills/list":
      return respond({ skills: skills.slice(0, PageSize).map((s) => Manifest.entry(manifestOf(s))), ...(skills.length > PageSize ? { nextCursor: "floor-cursor" } : {}), ...cache })
    case "skills/get":
      return respond({ skill: Manifest.entry(manifestOf(owner(params.uri))), ...cache })
    case "resources/read": {
      const skill = owner(params.uri)
      const file = skill.files.find((f) => `skill://${skill.path}/${f.path}` === params.uri)!
      return respond({ contents: [content(params.uri, file.path, file.bytes, file.text)], ...cache })
    }
    case "resources/directory/read": {
      const skill = owner(params.uri)
      const seen = new Map<string, unknown>()
      for (const f of skill.files) {
        const [first, ...rest] = f.path.split("/")
        const uri = `${params.uri}/${first}`
        if (rest.length > 0) seen.set(uri, { uri, name: first, mimeType: "inode/directory" })
        else seen.set(uri, { uri, name: first, mimeType: mimeType(f.path), size: f.bytes.length })
      }
      return respond({ resources: [...seen.keys()].sort().map((k) => seen.get(k)), ...cache })
    }
    default:
      throw new Error(`no floor answer for ${request.method}`)
  }
}
