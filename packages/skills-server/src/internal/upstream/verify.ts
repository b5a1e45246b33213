/**
 * One upstream skill made into a definition of the gateway's catalogue, only through the client's
 * checks. A skill with a manifest becomes a static skill whose every file was read and verified
 * (size, digest, `SKILL.md` first and its frontmatter against the entry, limits and, with trust,
 * signatures before any read) and then validated once more by `Manifest.make` under its gateway
 * URI, with the digests already known (nothing is hashed twice). A `"dynamic"` skill becomes a
 * dynamic skill whose every read goes to the upstream and through the same checks, on request.
 *
 * @internal
 */
import { Extension, Limits, Manifest, Signing, SkillUri } from "@mcp-skills/core"
import type { CacheHint, Skill as CoreSkill } from "@mcp-skills/core"
import type { SkillsClient } from "@mcp-skills/client"
import type { McpClientError } from "effect/ai/McpClientError"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Skill from "../../Skill.js"
import type { Refused } from "../../UpstreamStatus.js"
import { viewOf } from "../registry.js"
import * as Namespace from "./namespace.js"
import * as ServerLimits from "../../ServerLimits.js"

/** Who verifies: the upstream's name, prefix and per-skill limits. */
export interface Context {
  readonly name: string
  readonly prefix: ReadonlyArray<string>
  readonly limits: Limits.Limits
  /** The connected client to read a dynamic skill's files through, when a read comes. */
  readonly current: Effect.Effect<SkillsClient.Service, Unavailable>
}

/** A verified file, kept by its upstream URI so a later version reuses what did not change. */
export interface HeldFile {
  readonly digest: string
  readonly bytes: Uint8Array
  readonly mimeType: string | undefined
}

/** An upstream skill the gateway verified: the entry, and the definition made of it. */
export interface Held {
  readonly _tag: "Held"
  readonly entry: CoreSkill.Skill
  /** The entry's canonical JSON, to tell a new version from this one at each look. */
  readonly canonical: string
  readonly definition: Skill.Static | Skill.Dynamic
  readonly key: string
  readonly listed: boolean
  /** Its files by upstream URI (empty for a dynamic skill). */
  readonly files: ReadonlyMap<string, HeldFile>
  /** The hint of the upstream answer that gave the entry. */
  readonly hint: CacheHint.CacheHint
}

/** A skill the gateway will not serve, and why (`check`: a client error's tag, `Manifest`, `Namespace`). */
export interface Refusal extends Refused {
  readonly _tag: "Refusal"
}

/** No connection to the upstream right now (a dynamic read while it is down). */
export interface Unavailable {
  readonly _tag: "Unavailable"
  readonly reason: string
}

const refusal = (uri: string, check: string, reason: string): Refusal => ({ _tag: "Refusal", uri, check, reason })

/** An entry's canonical JSON (RFC 8785): two answers with the same entry give the same text. */
export const canonical = (entry: CoreSkill.Skill): string => Signing.canonicalize(entry as never)

const hintOf = (hint: CacheHint.CacheHint): Skill.CacheHint => ({ ttl: Duration.millis(hint.ttlMs), scope: hint.cacheScope })

const provenanceOf = (context: Context, entry: CoreSkill.Skill) =>
  Effect.map(Clock.currentTimeMillis, (now): Skill.Provenance => ({
    source: context.name,
    uri: entry.uri,
    verifiedAt: DateTime.formatIso(DateTime.makeUnsafe(now))
  }))

/**
 * Verifies one entry into what the gateway may serve, or the reason it is refused; a connection
 * that failed is the connection's, not the skill's, and fails the effect.
 */
export const verify = (
  client: SkillsClient.Service,
  context: Context,
  entry: CoreSkill.Skill,
  hint: CacheHint.CacheHint,
  listed: boolean
): Effect.Effect<Held | Refusal, McpClientError> =>
  Effect.gen(function*() {
    const uri = Namespace.gatewayUri(context.prefix, entry.uri)
    if (Result.isFailure(uri)) return refusal(entry.uri, "Namespace", `no URI under the prefix: ${uri.failure.reason}`)
    const checked = yield* Effect.result(client.checkEntry(entry))
    if (Result.isFailure(checked)) return refusal(entry.uri, checked.failure._tag, checked.failure.message)
    const provenance = yield* provenanceOf(context, entry)
    const common = { path: SkillUri.skillPath(uri.success), scheme: "skill", listed, cacheHint: hintOf(hint), provenance }
    if (entry.resources === "dynamic") {
      const definition: Skill.Dynamic = { _tag: "Dynamic", ...common, frontmatter: entry.frontmatter, ...dynamicAccess(context, entry) }
      return { _tag: "Held", entry, canonical: canonical(entry), definition, key: uri.success, listed, files: new Map(), hint }
    }
    return yield* staticSkill(client, context, entry, uri.success, hint, listed, common)
  })

const staticSkill = Effect.fnUntraced(function*(
  client: SkillsClient.Service,
  context: Context,
  entry: CoreSkill.Skill,
  uri: SkillUri.SkillMdUri,
  hint: CacheHint.CacheHint,
  listed: boolean,
  common: Omit<Skill.Static, "_tag" | "files">
) {
  const resources = entry.resources as ReadonlyArray<CoreSkill.SkillResource>
  const loaded = yield* Effect.result(client.loadSkill(entry))
  if (Result.isFailure(loaded)) return yield* failed(entry.uri, loaded.failure)
  // A read that had to fetch the entry again verified against a newer one: this version is
  // refused, and the next check verifies the newer one whole.
  if (loaded.success.skill !== entry) return refusal(entry.uri, "Changed", "its entry changed while it was verified")
  const others = resources.filter((resource) => resource.uri !== entry.uri)
  const read = yield* Effect.result(Effect.forEach(others, (resource) => client.readSkillResource(entry, resource.uri), {
    concurrency: ServerLimits.UpstreamFileConcurrency
  }))
  if (Result.isFailure(read)) return yield* failed(entry.uri, read.failure)
  const files = new Map<string, HeldFile>()
  for (const file of [loaded.success.skillMd, ...read.success]) {
    if (file.digest !== resources.find((resource) => resource.uri === file.uri)?.digest) {
      return refusal(entry.uri, "Changed", "its entry changed while it was verified")
    }
    files.set(file.uri, { digest: file.digest!, bytes: file.bytes, mimeType: file.mimeType })
  }
  const inputs: Array<Manifest.FileInput> = []
  for (const resource of resources) {
    const held = files.get(resource.uri)!
    inputs.push({ path: SkillUri.relativePath(entry.uri, resource.uri)!, bytes: held.bytes, digest: resource.digest })
  }
  const manifest = Manifest.make({ uri, files: inputs, limits: context.limits })
  if (Result.isFailure(manifest)) {
    return refusal(entry.uri, "Manifest", manifest.failure.problems.map(Manifest.describe).join("; "))
  }
  const { signatures } = Signing.signaturesOf(entry)
  const definition: Skill.Static = {
    _tag: "Static",
    ...common,
    files: inputs.map(({ path, bytes }) => ({ path, bytes })),
    manifest: viewOf(manifest.success),
    ...(signatures.length === 0 ? {} : { signatures })
  }
  return { _tag: "Held", entry, canonical: canonical(entry), definition, key: uri, listed, files, hint } satisfies Held
})

// A check that failed, or a read that timed out, is the skill's (it is tried again at the next
// look); a connection that failed is the connection's, and ends it.
const failed = (uri: string, error: { readonly _tag: string; readonly message: string }): Effect.Effect<Refusal, McpClientError> => {
  if (error._tag !== "McpClientError") return Effect.succeed(refusal(uri, error._tag, error.message))
  const transport = error as McpClientError
  return transport.reason._tag === "TimeoutError"
    ? Effect.succeed(refusal(uri, "Timeout", transport.message))
    : Effect.fail(transport)
}

/**
 * A dynamic skill's access: each read asks the upstream through the connection of the moment,
 * checked as any read (frontmatter of `SKILL.md`, inside the skill, one answer for the URI), on a
 * copy of the entry so that no budget of bytes outlives the read it was counted for.
 */
const dynamicAccess = (context: Context, entry: CoreSkill.Skill) => ({
  read: (path: string) =>
    Effect.flatMap(context.current, (client) =>
      client.readSkillResource({ ...entry }, path).pipe(
        Effect.map((file) => file.bytes as Uint8Array | undefined),
        Effect.catchTag("ResourceNotFound", () => Effect.succeed(undefined))
      )),
  list: Effect.flatMap(context.current, (client) =>
    client.capability?.directoryRead === true ? walk(client, entry, context.limits) : Effect.succeed([Extension.SkillFileName]))
})

// Every file path under a dynamic skill's root, by directory reads, bounded by the file limit.
const walk = (client: SkillsClient.Service, entry: CoreSkill.Skill, limits: Limits.Limits) =>
  Effect.gen(function*() {
    const root = SkillUri.root(entry.uri)
    const paths: Array<string> = []
    const pending = [root]
    while (pending.length > 0) {
      const children = yield* client.readResourceDirectory(pending.pop()!)
      for (const child of children) {
        if (child.mimeType === "inode/directory") pending.push(child.uri)
        else {
          const path = SkillUri.relativePath(entry.uri, child.uri)
          if (path !== undefined) paths.push(path)
        }
        if (paths.length + pending.length > limits.maxResources) {
          return yield* Effect.fail(new Error(`${entry.uri} holds more than ${limits.maxResources} files`))
        }
      }
    }
    return paths.sort()
  })
