/**
 * Where skills are published, as the `npx skills` installer (the `skills` package, 1.7.4) looks for
 * them: a `SKILL.md` at the folder itself, `skills/` and its hidden `.curated`, `.experimental` and
 * `.system` folders, the agents' project skill folders, and the folders the plugin manifests name.
 * The walk reads the whole visible tree besides, so these rules decide only which hidden folders it
 * enters, which containers a skill's URI leaves out, and where `check` says a skill was found.
 */
import { SkillUri } from "@mcp-skills/core"
import * as NodePath from "node:path"
import { classify, read } from "./guard.js"
import type { Ignored } from "../../DirectoryModel.js"
import * as ServerLimits from "../../ServerLimits.js"

/** The agents' project skill folders, in the installer's order (`AGENT_PROJECT_SKILL_DIRS`). */
export const agentFolders: ReadonlyArray<string> = [
  ".agents/skills",
  ".claude/skills",
  ".cline/skills",
  ".codebuddy/skills",
  ".codex/skills",
  ".commandcode/skills",
  ".continue/skills",
  ".factory/skills",
  ".github/skills",
  ".goose/skills",
  ".grok/skills",
  ".iflow/skills",
  ".junie/skills",
  ".kilo/skills",
  ".kilocode/skills",
  ".kimchi/skills",
  ".kiro/skills",
  ".minimax/skills",
  ".mux/skills",
  ".neovate/skills",
  ".opencode/skills",
  ".openhands/skills",
  ".pi/skills",
  ".posit/assistant/skills",
  ".qoder/skills",
  ".roo/skills",
  ".trae/skills",
  ".windsurf/skills",
  ".zcode/skills",
  ".zencoder/skills"
]

/**
 * The folders the installer searches for skills, relative to the folder given, the longest first
 * (so a skill in `skills/.curated/` is in that container, not in `skills/`). `.curated`,
 * `.experimental` and `.system` count at the top too, so that `serve REPO/skills` serves what
 * `serve REPO` does, under the same URIs (the installer finds them there by its deep search).
 */
export const containers: ReadonlyArray<string> = [
  "skills/.curated",
  "skills/.experimental",
  "skills/.system",
  ".curated",
  ".experimental",
  ".system",
  ...agentFolders,
  "skills"
].sort((a, b) => b.length - a.length)

// Every container and every folder on the way to one.
const onTheWay: ReadonlySet<string> = new Set(containers.flatMap((container) =>
  container.split("/").map((_, i, segments) => segments.slice(0, i + 1).join("/"))
))

const hasHiddenSegment = (relative: string) => relative.split("/").some(SkillUri.isHidden)

/**
 * Folders listed only on the way to a hidden container (`.claude`, `.posit/assistant`): nothing else
 * in them is read, so `.claude/settings.json` is never served.
 */
const passages: ReadonlySet<string> = new Set([...onTheWay].filter((path) => !containers.includes(path) && hasHiddenSegment(path)))

/** Whether the walk lists the folder at `relative` only to reach a container below it. */
export const isPassage = (relative: string) => passages.has(relative)

/** Whether `relative` is a container or a folder on the way to one (what a hidden name may be). */
export const leadsToContainer = (relative: string) => onTheWay.has(relative)

/** The folders never walked nor searched, whatever their place: the installer's and ours. */
export const isNeverWalked = (name: string) => name === ".git" || name === "node_modules"

/** The container holding the folder at `relative`, if any. */
export const containerOf = (relative: string): string | undefined =>
  containers.find((container) => relative.startsWith(`${container}/`))

/**
 * The segments of a skill's URI path for its folder's segments: without the container holding it,
 * so `serve REPO` and `serve REPO/skills` name a skill alike. A container's own `SKILL.md` keeps its
 * path, as nothing would be left of it.
 */
export const withoutContainer = (relative: string, segments: ReadonlyArray<string>): ReadonlyArray<string> => {
  const container = containerOf(relative)
  return container === undefined ? segments : segments.slice(container.split("/").length)
}

/** The folder of the plugin manifests, at the top of the folder given. */
export const pluginFolder = ".claude-plugin"

/** The plugin manifests the installer reads, relative to the folder given. */
export const manifestFiles = [`${pluginFolder}/marketplace.json`, `${pluginFolder}/plugin.json`] as const

/** What the plugin manifests of a folder name: skill folders inside it, and paths refused. */
export interface Manifests {
  /** Folders relative to the root, `/`-separated, each with the manifest naming it. */
  readonly folders: ReadonlyMap<string, string>
  readonly refused: ReadonlyArray<Ignored>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Reads the plugin manifests under `realRoot` as the installer does: `plugins[].skills` of
 * `marketplace.json` under `metadata.pluginRoot` and each plugin's `source`, `skills` of
 * `plugin.json`; every path `./`-relative, and each plugin's `skills/` folder too. A path that is not
 * `./`-relative or that leaves the folder is refused with its reason, as the installer skips it.
 */
export const readManifests = (realRoot: string): Manifests => {
  const folders = new Map<string, string>()
  const refused: Array<Ignored> = []
  for (const file of manifestFiles) {
    const entry = classify(realRoot, file)
    if (entry._tag === "Gone") continue
    if (entry._tag !== "File") {
      refused.push({ path: file, reason: entry._tag === "Directory" ? "a folder, not a manifest" : entry.reason })
      continue
    }
    if (entry.stamp.size > ServerLimits.Discovery.manifestBytes) {
      refused.push({ path: file, reason: `${entry.stamp.size} bytes, more than the ${ServerLimits.Discovery.manifestBytes} read` })
      continue
    }
    const got = read(realRoot, file, entry.stamp, new Uint8Array(entry.stamp.size))
    if (got._tag !== "Read") {
      refused.push({ path: file, reason: got._tag === "Refused" ? got.reason : "changed while it was read" })
      continue
    }
    let manifest: unknown
    try {
      manifest = JSON.parse(new TextDecoder().decode(got.bytes))
    } catch (error) {
      refused.push({ path: file, reason: `not JSON: ${error instanceof Error ? error.message : String(error)}` })
      continue
    }
    if (!isRecord(manifest)) continue
    const refuse = (path: string, why: string) => refused.push({ path: file, reason: `skill path ${JSON.stringify(path)} ${why}: not served` })
    // A path inside the root, `/`-separated, or the reason it is not one.
    const inside = (base: string, path: unknown): string | undefined => {
      if (typeof path !== "string") return undefined
      if (!path.startsWith("./")) return void refuse(path, "is not relative to the folder (\"./...\")")
      const joined = NodePath.posix.normalize(NodePath.posix.join(base, path))
      if (joined === ".." || joined.startsWith("../") || NodePath.posix.isAbsolute(joined)) return void refuse(path, "leaves the folder")
      return joined === "." ? "" : joined.replace(/\/$/, "")
    }
    const plugin = (base: string | undefined, skills: unknown) => {
      if (base === undefined) return
      folders.set(base === "" ? "skills" : `${base}/skills`, file)
      if (!Array.isArray(skills)) return
      for (const path of skills) {
        const folder = inside(base, path)
        if (folder !== undefined) folders.set(folder, file)
      }
    }
    if (file === manifestFiles[1]) {
      plugin("", manifest.skills)
      continue
    }
    const metadata = isRecord(manifest.metadata) ? manifest.metadata : {}
    const pluginRoot = metadata.pluginRoot === undefined ? "" : inside("", metadata.pluginRoot)
    if (pluginRoot === undefined || !Array.isArray(manifest.plugins)) continue
    for (const entry of manifest.plugins) {
      if (!isRecord(entry)) continue
      const source = entry.source
      if (source !== undefined && typeof source !== "string") continue
      plugin(source === undefined ? pluginRoot : inside(pluginRoot, source), entry.skills)
    }
  }
  // One line per manifest, as the walk leaves out one entry once.
  const byFile = new Map<string, Array<string>>()
  for (const left of refused) byFile.set(left.path, [...(byFile.get(left.path) ?? []), left.reason])
  return { folders, refused: [...byFile].map(([path, reasons]) => ({ path, reason: reasons.join("; ") })) }
}

/**
 * Where discovery found a skill: the folder given itself, one of the installer's containers, a
 * folder a plugin manifest names, or elsewhere in the tree.
 */
export type Found =
  | { readonly _tag: "Root" }
  | { readonly _tag: "Container"; readonly container: string }
  | { readonly _tag: "Manifest"; readonly manifest: string }
  | { readonly _tag: "Tree" }

/** Where the skill at `directory` (`.` for the root) was found. */
export const foundIn = (directory: string, manifests: Manifests): Found => {
  if (directory === ".") return { _tag: "Root" }
  const named = manifests.folders.get(directory)
  if (named !== undefined) return { _tag: "Manifest", manifest: named }
  const container = containerOf(directory)
  if (container !== undefined) return { _tag: "Container", container }
  // A child of a plugin's `skills/` folder, or of the folder a listed path is in, as the installer
  // searches them.
  const parent = manifests.folders.get(NodePath.posix.dirname(directory))
  return parent === undefined ? { _tag: "Tree" } : { _tag: "Manifest", manifest: parent }
}
