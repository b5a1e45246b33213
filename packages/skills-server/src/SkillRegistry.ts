/**
 * The catalogue a server publishes, validated and hashed once into an immutable snapshot.
 *
 * `build` turns skill definitions into a `Snapshot`: every static skill goes through
 * `Manifest.make` from `@mcp-skills/core` (frontmatter, name = last path segment, paths, limits,
 * one SHA-256 per file), nested skills' files are added to their enclosing skill (R10), and every
 * file's MIME type is decided once; its wire form (text or base64 blob) is derived from the bytes
 * on its first read and kept with the snapshot. Requests only read the
 * snapshot: skills by URI, files by URI and directories by URI are hash-map lookups, and the listing
 * is sorted by URI for keyset pagination.
 *
 * The `SkillRegistry` service holds the current snapshot in a `SubscriptionRef`. `replace` builds a
 * new snapshot beside the current one and swaps it atomically; a request reads one snapshot from
 * start to end, so requests in flight finish on the catalogue they started with. A rebuild hashes
 * only what changed: a skill whose files are the same bytes as in the previous snapshot (or that
 * arrives with its `manifest`, as from a directory source) keeps its previous manifest. `stats`
 * counts what was hashed.
 *
 * `replace` and `reload` return the `Changes` between the two snapshots: skills added, removed and
 * changed (with their files added, removed and changed), whether anything a listing shows changed,
 * and every file URI whose content changed or disappeared.
 *
 * @since 0.1.0
 */
import { Digest, Extension, Limits, Manifest, SkillFrontmatter, SkillUri } from "@mcp-skills/core"
import type { Protocol, Skill as CoreSkill } from "@mcp-skills/core"
import * as Context from "effect/Context"
import { Base64 } from "effect/encoding"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Incremental from "./internal/incremental.js"
import { ancestors, changeOf, digests, enclosing, innermost, isPrivate, listingFrom, normalizeHint, StoredFile } from "./internal/registry.js"
import * as Signed from "./internal/signed.js"
import * as MimeType from "./MimeType.js"
import * as Revision from "./Revision.js"
import * as PathTemplate from "./PathTemplate.js"
import * as Skill from "./Skill.js"
import type * as SkillFamily from "./SkillFamily.js"

/**
 * Why the registry refused a set of definitions: every problem of every skill, not only the first.
 *
 * @since 0.1.0
 */
export class RegistrationError extends Schema.TaggedError<RegistrationError>()("RegistrationError", {
  problems: Schema.Array(Schema.Struct({ skill: Schema.String, reason: Schema.String }))
}) {
  override get message(): string {
    return `cannot register skills: ${this.problems.map((p) => `${p.skill}: ${p.reason}`).join("; ")}`
  }
}

/**
 * The catalogue source could not produce definitions on `reload`.
 *
 * @since 0.1.0
 */
export class ReloadError extends Schema.TaggedError<ReloadError>()("ReloadError", {
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot reload skills: ${this.reason}`
  }
}

/**
 * Registry options.
 *
 * @since 0.1.0
 */
export interface Options {
  /**
   * Per-skill limits (R15, R16). The defaults are the spec's 512 files and 16 MiB; raising them is
   * an explicit decision because hosts are not obliged to load larger skills.
   */
  readonly limits?: Partial<Limits.Limits> | undefined
  /**
   * URIs other resources of the same server already have (effect's `McpServer.resource`): a
   * catalogue whose skills would serve one is refused, as a read could answer only one of the two.
   */
  readonly reserved?: (() => Iterable<string>) | undefined
  /**
   * Serve only skills with a signature that verifies against the files served (any key: which
   * keys to trust is each client's decision). Others, and skills that cannot be signed (dynamic,
   * rendered, families), are left out with one log line each. Default `false`: every skill is
   * served, and one whose signature no longer verifies is logged.
   */
  readonly requireSigned?: boolean | undefined
}

/**
 * A file's content on the wire: text only when the bytes round-trip UTF-8 exactly, so a client
 * hashing the UTF-8 of `text` gets the published digest; otherwise a base64 blob.
 *
 * @since 0.1.0
 */
export type WireContent = { readonly text: string } | { readonly blob: string }

/**
 * What every file of the snapshot has.
 *
 * @since 0.1.0
 */
export interface FileBase {
  readonly uri: string
  readonly name: string
  readonly mimeType: string
  readonly size: number
  readonly digest: Digest.Digest
  /** Indices (into `Snapshot.skills`) of every skill whose manifest lists this file. */
  readonly owners: ReadonlyArray<number>
}

/**
 * A file held in memory, ready for `resources/read`: its wire content is derived from the bytes
 * once, on its first read.
 *
 * @since 0.1.0
 */
export interface InMemoryFile extends FileBase {
  readonly _tag: "InMemory"
  readonly content: WireContent
}

/**
 * A file served on demand (`Skill.DiskFile`): its bytes are not in the snapshot; a read takes them
 * from `location` and sends them only if their size and digest are this entry's.
 *
 * @since 0.1.0
 */
export interface OnDiskFile extends FileBase {
  readonly _tag: "OnDisk"
  readonly location: string
}

/**
 * A file of the snapshot, by where its bytes are.
 *
 * @since 0.1.0
 */
export type FileEntry = InMemoryFile | OnDiskFile

/**
 * One child of a directory, as `resources/directory/read` returns it.
 *
 * @since 0.1.0
 */
export interface DirectoryChild {
  readonly resource: Protocol.ResourceEntry
  readonly uri: string
  readonly owners: ReadonlyArray<number>
}

/**
 * A directory of the snapshot (a skill root or any directory below one) and its direct children,
 * sorted by URI.
 *
 * @since 0.1.0
 */
export interface DirectoryEntry {
  readonly uri: string
  readonly children: ReadonlyArray<DirectoryChild>
  readonly owners: ReadonlyArray<number>
}

/**
 * What every kind of published skill has: identity, listing and the `SKILL.md` resource.
 *
 * @since 0.1.0
 */
export interface SkillBase {
  readonly index: number
  readonly uri: SkillUri.SkillMdUri
  readonly root: string
  readonly path: ReadonlyArray<string>
  readonly name: string
  readonly frontmatter: Readonly<Record<string, unknown>>
  readonly listed: boolean
  /** The `SKILL.md` as a `Resource` for `resources/list` (R25); a rendered skill refines it per request. */
  readonly resource: Protocol.ResourceEntry
  /** The skill's own cache hint, if it set one. */
  readonly cacheHint: Hint | undefined
}

/**
 * A skill whose files are known: validated and hashed once, served from the snapshot.
 *
 * @since 0.1.0
 */
export interface StaticSkill extends SkillBase {
  readonly _tag: "Static"
  /** The wire entry of `skills/list` and `skills/get`, with the skill's signatures in `_meta`. */
  readonly entry: CoreSkill.Skill
  /** Every file's path, URI, digest and size (bytes are in `inputs`, or on disk). */
  readonly manifest: Skill.ManifestView
  /** The files held in memory the manifest was built from, so a rebuild can tell unchanged skills. */
  readonly inputs: ReadonlyArray<Skill.File>
}

/**
 * A skill whose files are produced per request (`"resources": "dynamic"`).
 *
 * @since 0.1.0
 */
export interface DynamicSkill extends SkillBase {
  readonly _tag: "Dynamic"
  readonly entry: CoreSkill.Skill
  readonly definition: Skill.Dynamic
}

/**
 * A skill rendered per request; its entry and files exist only for one rendering.
 *
 * @since 0.1.0
 */
export interface RenderedSkill extends SkillBase {
  readonly _tag: "Rendered"
  readonly definition: Skill.Rendered
}

/**
 * One published skill, by kind. Each kind answers the skills surfaces through its own
 * implementation of one port (see `internal/kind.ts`).
 *
 * @since 0.1.0
 */
export type SkillEntry = StaticSkill | DynamicSkill | RenderedSkill

/**
 * A family of the snapshot: its validated template and definition. Its instances are not in the
 * snapshot; a request resolves a URI against the template (`PathTemplate.match`) or asks `list`.
 *
 * @since 0.1.0
 */
export interface FamilyEntry {
  readonly template: PathTemplate.PathTemplate
  readonly definition: SkillFamily.Family<any>
  /** The family's own hint, scope `private` unless it says `public`. */
  readonly cacheHint: Hint | undefined
  readonly timeout: Duration.Duration
  readonly listed: boolean
}

/**
 * One instance of a family, made for one request from its parameters. It is not in
 * `Snapshot.skills`, so it has no index: its visibility is decided by itself.
 *
 * @since 0.1.0
 */
export interface InstanceSkill extends Omit<SkillBase, "index"> {
  readonly _tag: "Instance"
  readonly family: FamilyEntry
  readonly params: PathTemplate.Params
}

/**
 * Any skill a request can be answered about: one of the snapshot, or a family instance.
 *
 * @since 0.1.0
 */
export type ServedSkill = SkillEntry | InstanceSkill

/**
 * A normalized cache hint, as sent on the wire.
 *
 * @since 0.1.0
 */
export interface Hint {
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
}

/**
 * An immutable catalogue.
 *
 * @since 0.1.0
 */
export interface Snapshot {
  /** The content-derived catalogue revision (the same on every replica serving the same files). */
  readonly revision: Revision.Revision
  /**
   * Every skill; `SkillEntry.index` is the position here. A full build sorts them by URI; an
   * `upsert` appends new skills and a `remove` moves the last skill into the freed index.
   */
  readonly skills: ReadonlyArray<SkillEntry>
  /** Listed skills only, sorted by URI (the `skills/list` order). */
  readonly listed: ReadonlyArray<SkillEntry>
  readonly byUri: ReadonlyMap<string, SkillEntry>
  readonly files: ReadonlyMap<string, FileEntry>
  readonly directories: ReadonlyMap<string, DirectoryEntry>
  /** Dynamic and rendered skills by root URI: their files are produced per request. */
  readonly dynamicRoots: ReadonlyMap<string, DynamicSkill | RenderedSkill>
  /**
   * Families, sorted by template (code units): the order their instances follow the listed
   * skills in `skills/list`. No two can name or nest in each other's skills, nor in a skill's.
   */
  readonly families: ReadonlyArray<FamilyEntry>
  /** URI schemes of the catalogue (always `skill`): such URIs are answered by the registry. */
  readonly schemes: ReadonlySet<string>
  /** What building this snapshot hashed (files and bytes); unchanged skills cost nothing. */
  readonly hashed: { readonly files: number; readonly bytes: number }
  /** The per-skill limits rendered skills are checked against. */
  readonly limits: Limits.Limits
  /**
   * How the listing's own hints bear on its scope: some listed skill is private by itself
   * (its own hint, or rendered), and some listed skill takes the server's hint. The counts of
   * such listed skills let an update of a few skills keep these without a scan.
   */
  readonly listing: {
    readonly anyPrivate: boolean
    readonly anyDefault: boolean
    readonly privateSkills: number
    readonly defaultSkills: number
  }
  /**
   * How many skills lie strictly below each URI prefix of a skill root (`skill://acme` of
   * `skill://acme/billing/refunds`): what tells, without a scan, whether a skill encloses another.
   */
  readonly nested: ReadonlyMap<string, number>
  /**
   * The skills strictly inside each rendered or dynamic skill (by its root URI; SKILL.md URIs): a
   * rendered parent's manifest takes in their files per request, a dynamic parent's directories
   * their entries (R10).
   */
  readonly enclosed: ReadonlyMap<string, ReadonlyArray<string>>
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const encoder = new TextEncoder()

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const sameBytes = (a: Uint8Array, b: Uint8Array) => asBuffer(a).equals(asBuffer(b))

/**
 * How bytes go on the wire: `text` when they round-trip UTF-8 exactly, otherwise a base64 `blob`.
 *
 * @since 0.1.0
 */
export const wireContent = (bytes: Uint8Array): WireContent => {
  try {
    const text = utf8.decode(bytes)
    if (sameBytes(encoder.encode(text), bytes)) return { text }
  } catch {
    // not UTF-8: served as a blob
  }
  return { blob: Base64.encode(bytes) }
}

// Sorted by UTF-16 code unit, the order keyset cursors compare with.
const byUri = Order.mapInput(Order.String, (item: { readonly uri: string }) => item.uri)

const mimeTypeOf = (path: string) => path === Extension.SkillFileName ? Extension.MarkdownMimeType : MimeType.fromPath(path)

const lastSegment = (uri: string) => decodeURIComponent(uri.slice(uri.lastIndexOf("/") + 1))

const describeError = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error)

interface Pending {
  readonly definition: Exclude<Skill.Definition, Skill.Family>
  readonly uri: SkillUri.SkillMdUri
  readonly root: string
  readonly files: Array<Skill.File>
  readonly onDisk: Array<Skill.DiskFile>
  readonly cacheHint: Hint | undefined
}

// A definition that passed validation, with what its kind needs to be served.
type Resolved = Pending & (
  | { readonly _tag: "Static"; readonly manifest: Skill.ManifestView; readonly entry: CoreSkill.Skill }
  | { readonly _tag: "Dynamic"; readonly definition: Skill.Dynamic; readonly frontmatter: SkillFrontmatter.SkillFrontmatter }
  | { readonly _tag: "Rendered"; readonly definition: Skill.Rendered; readonly frontmatter: Readonly<Record<string, unknown>> }
)

// The same files as a previous build: same paths, same bytes (identical arrays compare in O(1)).
const sameInputs = (previous: ReadonlyArray<Skill.File>, next: ReadonlyArray<Skill.File>) => {
  if (previous.length !== next.length) return false
  const byPath = new Map(previous.map((file) => [file.path, file.bytes]))
  return next.every((file) => {
    const bytes = byPath.get(file.path)
    return bytes !== undefined && (bytes === file.bytes || sameBytes(bytes, file.bytes))
  })
}

/**
 * Validates and hashes definitions into a snapshot, or fails listing every problem found.
 *
 * @since 0.1.0
 */
export const build = Effect.fnUntraced(function*(
  definitions: Iterable<Skill.Definition>,
  options?: Options,
  previous?: Snapshot
) {
  const limits: Limits.Limits = { ...Limits.defaults, ...options?.limits }
  const hashed = { files: 0, bytes: 0 }
  const problems: Array<{ skill: string; reason: string }> = []
  const pending: Array<Pending> = []
  const families: Array<FamilyEntry> = []
  const seen = new Set<string>()
  for (const definition of definitions) {
    if (definition._tag === "Family") {
      const family = validateFamily(definition)
      if (Result.isFailure(family)) problems.push(family.failure)
      else families.push(family.success)
      continue
    }
    const label = `${definition.scheme}://${definition.path.join("/")}`
    const uri = SkillUri.skillMd(definition.scheme, definition.path)
    if (Result.isFailure(uri)) {
      problems.push({ skill: label, reason: uri.failure.reason })
      continue
    }
    if (seen.has(uri.success)) {
      problems.push({ skill: uri.success, reason: "registered twice (duplicate skill URI)" })
      continue
    }
    seen.add(uri.success)
    const hint = definition.cacheHint === undefined ? undefined : normalizeHint(definition.cacheHint)
    if (hint !== undefined && Result.isFailure(hint)) {
      problems.push({ skill: uri.success, reason: hint.failure })
      continue
    }
    pending.push({
      definition,
      uri: uri.success,
      root: SkillUri.root(uri.success),
      files: definition._tag === "Static" ? [...definition.files] : [],
      onDisk: definition._tag === "Static" ? [...definition.onDisk ?? []] : [],
      cacheHint: hint?.success
    })
  }

  // R10: an enclosing skill's manifest lists its nested skills' files too. Each skill looks up its
  // ancestors by root URI (depth lookups, not a pairwise scan of the catalogue).
  const byRoot = new Map(pending.map((skill) => [skill.root, skill]))
  for (const inner of pending) {
    for (const ancestor of ancestors(inner.root)) {
      const outer = byRoot.get(ancestor)
      if (outer === undefined) continue
      const refused = nestingRefusal(outer, inner)
      if (refused !== undefined) {
        problems.push({ skill: inner.uri, reason: refused })
        continue
      }
      // A rendered parent takes its nested skills' files per request (`internal/kind.ts`); a
      // dynamic one has no manifest to complete.
      if (outer.definition._tag !== "Static") continue
      const prefix = SkillUri.relativePath(outer.uri, inner.root + "/" + Extension.SkillFileName)!.split("/").slice(0, -1)
        .join("/")
      const existing = new Map(outer.files.map((file) => [file.path, file.bytes]))
      for (const file of inner.files) {
        const path = `${prefix}/${file.path}`
        const present = existing.get(path)
        if (present === undefined) {
          outer.files.push({ path, bytes: file.bytes })
          existing.set(path, file.bytes)
        } else if (!sameBytes(present, file.bytes)) {
          problems.push({ skill: outer.uri, reason: `${path} differs from the same file of nested skill ${inner.uri}` })
        }
      }
      const onDisk = new Map(outer.onDisk.map((file) => [file.path, file.digest]))
      for (const file of inner.onDisk) {
        const path = `${prefix}/${file.path}`
        const present = onDisk.get(path)
        if (present === undefined) {
          outer.onDisk.push({ ...file, path })
          onDisk.set(path, file.digest)
        } else if (present !== file.digest) {
          problems.push({ skill: outer.uri, reason: `${path} differs from the same file of nested skill ${inner.uri}` })
        }
      }
    }
  }

  // A file a parent holds inside a nested skill's folder is that skill's file: the nested skill
  // must hold it too, with the same bytes (checked above), or its own manifest is incomplete (R7).
  for (const inner of pending) {
    if (inner.definition._tag !== "Static") continue
    for (const ancestor of ancestors(inner.root)) {
      const outer = byRoot.get(ancestor)
      if (outer?.definition._tag !== "Static") continue
      const prefix = inner.root.slice(outer.root.length + 1) + "/"
      const held = new Set([...inner.files, ...inner.onDisk].map((file) => prefix + file.path))
      for (const file of [...outer.files, ...outer.onDisk]) {
        if (file.path.startsWith(prefix) && !held.has(file.path)) {
          problems.push({ skill: outer.uri, reason: `${file.path} lies inside the nested skill ${inner.uri}, which does not hold it (R7, R10)` })
        }
      }
    }
  }

  problems.push(
    ...familyConflicts(families, pending.map((skill) => ({ uri: skill.uri, scheme: skill.definition.scheme, path: skill.definition.path })))
  )

  const resolved: Array<Resolved> = []
  for (const skill of pending) {
    const definition = skill.definition
    if (definition._tag === "Static") {
      const before = previous?.byUri.get(skill.uri)
      const reused = definition.manifest !== undefined && skill.files.length === definition.files.length &&
          skill.onDisk.length === (definition.onDisk?.length ?? 0)
        ? definition.manifest
        : before?._tag === "Static" && sameInputs(before.inputs, skill.files)
        ? before.manifest
        : undefined
      if (reused !== undefined) {
        resolved.push({ ...skill, _tag: "Static", manifest: reused, entry: Signed.entryOf(reused.skill, definition.signatures) })
        continue
      }
      // Only the definition's own manifest can vouch for files whose bytes the registry never sees.
      if (skill.onDisk.length > 0) {
        problems.push({
          skill: skill.uri,
          reason: "files on disk (onDisk) need the manifest that lists them, with no file added by a nested skill"
        })
        continue
      }
      hashed.files += skill.files.length
      for (const file of skill.files) hashed.bytes += file.bytes.byteLength
      const manifest = Manifest.make({ uri: skill.uri, files: skill.files, limits })
      if (Result.isFailure(manifest)) {
        for (const problem of manifest.failure.problems) {
          problems.push({ skill: skill.uri, reason: Manifest.describe(problem) })
        }
      } else {
        resolved.push({
          ...skill,
          _tag: "Static",
          manifest: manifest.success,
          entry: Signed.entryOf(manifest.success.skill, definition.signatures)
        })
      }
      continue
    }
    if (definition._tag === "Rendered") {
      resolved.push({
        ...skill,
        _tag: "Rendered",
        definition,
        frontmatter: definition.frontmatter ?? { name: SkillUri.skillName(skill.uri) }
      })
      continue
    }
    const frontmatter = definition.frontmatter !== undefined
      ? Result.mapError(
        SkillFrontmatter.decode(definition.frontmatter as SkillFrontmatter.JsonObject),
        (error) => error.reason
      )
      : yield* definition.read(Extension.SkillFileName).pipe(
        Effect.map((content) =>
          content === undefined
            ? Result.fail(`read("${Extension.SkillFileName}") gave no content`)
            : Result.mapBoth(SkillFrontmatter.parseSkillMd(Skill.toBytes(content)), {
              onFailure: (error) => error.reason,
              onSuccess: (document) => document.frontmatter
            })
        ),
        Effect.catchCause((cause) => Effect.succeed(Result.fail(`reading ${Extension.SkillFileName} failed: ${describeError(cause)}`)))
      )
    if (Result.isFailure(frontmatter)) {
      problems.push({ skill: skill.uri, reason: `${Extension.SkillFileName}: ${frontmatter.failure}` })
      continue
    }
    const name = SkillUri.skillName(skill.uri)
    if (frontmatter.success.name !== name) {
      problems.push({
        skill: skill.uri,
        reason: `frontmatter name "${frontmatter.success.name}" differs from the skill's directory name "${name}" (R4)`
      })
      continue
    }
    resolved.push({ ...skill, _tag: "Dynamic", definition, frontmatter: frontmatter.success })
  }
  if (problems.length > 0) {
    return yield* new RegistrationError({ problems: problems.sort(Order.mapInput(Order.String, (problem) => problem.skill)) })
  }
  const requireSigned = options?.requireSigned === true
  const served: Array<Resolved> = []
  for (const skill of resolved) {
    const before = previous?.byUri.get(skill.uri)
    const candidate: Signed.Candidate = skill._tag === "Static"
      ? {
        _tag: "Static",
        uri: skill.uri,
        entry: skill.entry,
        judged: before?._tag === "Static" && before.manifest === skill.manifest && Signed.relayed(before.entry) === Signed.relayed(skill.entry)
      }
      : { _tag: "Unsignable", uri: skill.uri, kind: skill._tag.toLowerCase() }
    if (yield* Signed.admit(candidate, requireSigned)) served.push(skill)
  }
  const servedFamilies: Array<FamilyEntry> = []
  for (const family of families) {
    if (yield* Signed.admit({ _tag: "Unsignable", uri: familyKey(family), kind: "family's" }, requireSigned)) servedFamilies.push(family)
  }
  const snapshot = assemble(served.sort(byUri), servedFamilies.sort(Order.mapInput(Order.String, familyKey)), hashed, limits)
  const clashes = options?.reserved === undefined ? [] : collisions(snapshot, options.reserved())
  if (clashes.length > 0) return yield* new RegistrationError({ problems: clashes })
  return snapshot
})

/**
 * Which of `uris` (other resources of the server) the skills of `snapshot` would serve: a file of
 * a static skill, any URI inside a rendered or dynamic skill, or a family instance's.
 *
 * @since 0.1.0
 */
export const collisions = (
  snapshot: Snapshot,
  uris: Iterable<string>
): Array<{ readonly skill: string; readonly reason: string }> => {
  const problems: Array<{ skill: string; reason: string }> = []
  const reason = (uri: string) => `serves ${uri}, which is also a resource of its own on the server (McpServer.resource)`
  for (const uri of uris) {
    const file = snapshot.files.get(uri)
    const skill = file !== undefined
      ? snapshot.skills[innermost(snapshot.skills, file.owners)]
      : SkillUri.isCanonical(uri)
      ? enclosing(snapshot, uri)
      : undefined
    if (skill !== undefined && (skill._tag !== "Static" || file !== undefined)) {
      problems.push({ skill: skill.uri, reason: reason(uri) })
      continue
    }
    const family = snapshot.families.find((family) => PathTemplate.match(family.template, uri)._tag !== "Outside")
    if (family !== undefined) problems.push({ skill: familyKey(family), reason: reason(uri) })
  }
  return problems
}

// Why `inner` cannot sit inside `outer`, if it cannot: a static parent's manifest lists every file
// with its digest, known at registration; a rendered parent's, every file with the digest of the
// bytes rendered for the caller, so only skills whose bytes are known (static, held in memory) or
// rendered can sit in it (R7, R10). A dynamic parent has no manifest: anything may.
const nestingRefusal = (outer: Pending, inner: Pending): string | undefined => {
  const kind = inner.definition._tag.toLowerCase()
  switch (outer.definition._tag) {
    case "Static":
      return inner.definition._tag === "Static"
        ? undefined
        : `a ${kind} skill cannot be nested in the static skill ${outer.uri}, whose manifest must list every file (R7, R10)`
    case "Rendered":
      return inner.definition._tag === "Dynamic"
        ? `a dynamic skill cannot be nested in the rendered skill ${outer.uri}, whose manifest must list every file with its digest (R7, R10)`
        : inner.onDisk.length > 0
        ? `files served on demand cannot be nested in the rendered skill ${outer.uri}, whose manifest is made of bytes in memory (R10)`
        : undefined
    case "Dynamic":
      return undefined
  }
}

/**
 * The key a family is known and sorted by: `<scheme>://<template>`.
 *
 * @since 0.1.0
 */
export const familyKey = (family: FamilyEntry): string => `${family.template.scheme}://${family.template.template}`

const validateFamily = (definition: Skill.Family): Result.Result<FamilyEntry, { skill: string; reason: string }> => {
  const label = `${definition.scheme}://${definition.path}`
  const template = PathTemplate.parse(definition.path, definition.scheme)
  if (Result.isFailure(template)) return Result.fail({ skill: label, reason: template.failure.reason })
  const hint = definition.cacheHint === undefined ? undefined : normalizeHint(definition.cacheHint)
  if (hint !== undefined && Result.isFailure(hint)) return Result.fail({ skill: label, reason: hint.failure })
  const timeout = Duration.fromInput(definition.timeout)
  if (Option.isNone(timeout) || !Duration.isFinite(timeout.value) || Duration.toMillis(timeout.value) <= 0) {
    return Result.fail({ skill: label, reason: `timeout must be a positive, finite duration, got ${String(definition.timeout)}` })
  }
  return Result.succeed({
    template: template.success,
    definition,
    cacheHint: hint?.success,
    timeout: timeout.value,
    listed: definition.list !== undefined
  })
}

// A URI must resolve to one skill without enumerating, and no static manifest can list rendered
// files: a family may not name, enclose or sit inside another family's or a skill's skills.
const familyConflicts = (
  families: ReadonlyArray<FamilyEntry>,
  skills: ReadonlyArray<{ readonly uri: string; readonly scheme: string; readonly path: ReadonlyArray<string> }>
) => {
  const problems: Array<{ skill: string; reason: string }> = []
  const describe = { same: "can name the same skill as", encloses: "can enclose", inside: "can sit inside" } as const
  for (const [i, family] of families.entries()) {
    for (const other of families.slice(i + 1)) {
      const relation = PathTemplate.relation(family.template, other.template)
      if (relation !== undefined) {
        problems.push({ skill: familyKey(family), reason: `${describe[relation]} the family ${familyKey(other)}` })
      }
    }
    for (const skill of skills) {
      const relation = PathTemplate.relation(family.template, skill)
      if (relation !== undefined) problems.push({ skill: familyKey(family), reason: `${describe[relation]} the skill ${skill.uri}` })
    }
  }
  return problems
}

const skillResource = (
  uri: SkillUri.SkillMdUri,
  frontmatter: Readonly<Record<string, unknown>>,
  size: number | undefined
): Protocol.ResourceEntry => {
  const description = frontmatter.description
  return {
    uri,
    name: String(frontmatter.name),
    ...(typeof description === "string" ? { description } : {}),
    mimeType: Extension.MarkdownMimeType,
    ...(size === undefined ? {} : { size })
  }
}

const toEntry = (skill: Resolved, index: number): SkillEntry => {
  const frontmatter = skill._tag === "Static" ? skill.manifest.frontmatter : skill.frontmatter
  const base: SkillBase = {
    index,
    uri: skill.uri,
    root: skill.root,
    path: skill.definition.path,
    name: String(frontmatter.name),
    frontmatter,
    listed: skill.definition.listed,
    resource: skillResource(
      skill.uri,
      frontmatter,
      skill._tag === "Static" ? skill.manifest.files[0]?.size : undefined
    ),
    cacheHint: skill.cacheHint
  }
  switch (skill._tag) {
    case "Static":
      return { ...base, _tag: "Static", entry: skill.entry, manifest: skill.manifest, inputs: skill.files }
    case "Dynamic":
      return {
        ...base,
        _tag: "Dynamic",
        entry: { uri: skill.uri, frontmatter: skill.frontmatter, resources: "dynamic" },
        definition: skill.definition
      }
    case "Rendered":
      return { ...base, _tag: "Rendered", definition: skill.definition }
  }
}

const listingOf = (listed: ReadonlyArray<SkillEntry>, families: ReadonlyArray<FamilyEntry>) =>
  listingFrom(
    listed.filter(isPrivate).length,
    listed.filter((skill) => skill.cacheHint === undefined).length,
    families
  )

const assemble = (
  sorted: ReadonlyArray<Resolved>,
  families: ReadonlyArray<FamilyEntry>,
  hashed: Snapshot["hashed"],
  limits: Limits.Limits
): Snapshot => {
  const nested = new Map<string, number>()
  for (const skill of sorted) {
    for (const prefix of ancestors(skill.root)) nested.set(prefix, (nested.get(prefix) ?? 0) + 1)
  }
  const skills: Array<SkillEntry> = []
  const files = new Map<string, FileEntry>()
  // The owners array of each file, grown as nested skills list it too.
  const ownersOf = new Map<string, Array<number>>()
  const directories = new Map<string, { uri: string; owners: Set<number>; children: Map<string, DirectoryChild> }>()
  const dynamicRoots = new Map<string, DynamicSkill | RenderedSkill>()
  const directory = (uri: string) => {
    const known = directories.get(uri)
    if (known !== undefined) return known
    const entry = { uri, owners: new Set<number>(), children: new Map<string, DirectoryChild>() }
    directories.set(uri, entry)
    return entry
  }
  for (const [index, skill] of sorted.entries()) {
    const entry = toEntry(skill, index)
    skills.push(entry)
    if (entry._tag !== "Static") {
      dynamicRoots.set(skill.root, entry)
      continue
    }
    const held = new Map(skill.files.map((file) => [file.path, file.bytes]))
    const onDisk = new Map(skill.onDisk.map((file) => [file.path, file.location]))
    for (const file of entry.manifest.files) {
      const existing = ownersOf.get(file.uri)
      const mimeType = mimeTypeOf(file.path)
      if (existing !== undefined) {
        existing.push(index)
      } else {
        const owners = [index]
        ownersOf.set(file.uri, owners)
        const name = file.path.slice(file.path.lastIndexOf("/") + 1)
        const location = onDisk.get(file.path)
        files.set(
          file.uri,
          location === undefined
            ? new StoredFile(file.uri, name, mimeType, file.size, file.digest, owners, held.get(file.path)!)
            : { _tag: "OnDisk", uri: file.uri, name, mimeType, size: file.size, digest: file.digest, owners, location }
        )
      }
    }
  }
  // Every directory from each skill root down to each file, each linked to its child. A directory
  // is owned by the skills that hold a file below it (each file's innermost owner), so a hidden
  // nested skill takes its folder out of its parent's listing.
  for (const skill of skills) {
    if (skill._tag !== "Static") continue
    for (const file of skill.manifest.files) {
      const holder = innermost(skills, ownersOf.get(file.uri)!)
      const mimeType = mimeTypeOf(file.path)
      let child: string = file.uri
      let parent = child.slice(0, child.lastIndexOf("/"))
      let isFile = true
      while (parent.length >= skill.root.length) {
        const dir = directory(parent)
        dir.owners.add(holder)
        if (!dir.children.has(child)) {
          const name = lastSegment(child)
          dir.children.set(child, {
            uri: child,
            owners: isFile ? [holder] : [],
            resource: isFile
              ? { uri: child, name, mimeType, size: file.size }
              : { uri: child, name, mimeType: Extension.DirectoryMimeType }
          })
        }
        if (parent === skill.root) break
        child = parent
        parent = child.slice(0, child.lastIndexOf("/"))
        isFile = false
      }
    }
  }
  const frozenDirectories = new Map<string, DirectoryEntry>()
  for (const dir of directories.values()) {
    const children = [...dir.children.values()].sort(byUri).map((child) =>
      child.owners.length > 0 ? child : { ...child, owners: [...(directories.get(child.uri)?.owners ?? [])] }
    )
    frozenDirectories.set(dir.uri, { uri: dir.uri, children, owners: [...dir.owners] })
  }
  const enclosed = new Map<string, Array<string>>()
  for (const skill of skills) {
    for (const prefix of ancestors(skill.root)) {
      if (!dynamicRoots.has(prefix)) continue
      const inside = enclosed.get(prefix)
      if (inside === undefined) enclosed.set(prefix, [skill.uri])
      else inside.push(skill.uri)
    }
  }
  const listed = skills.filter((skill) => skill.listed)
  return {
    revision: Revision.of(skills, families),
    skills,
    listed,
    byUri: new Map(skills.map((skill) => [skill.uri, skill])),
    files,
    directories: frozenDirectories,
    dynamicRoots,
    families,
    schemes: new Set([
      "skill",
      ...skills.map((skill) => skill.uri.slice(0, skill.uri.indexOf("://"))),
      ...families.map((family) => family.template.scheme)
    ]),
    hashed,
    limits,
    listing: listingOf(listed, families),
    nested,
    enclosed
  }
}

/**
 * One skill present before and after a change, and which of its files changed (file URIs).
 *
 * @since 0.1.0
 */
export interface SkillChange {
  readonly uri: string
  readonly filesAdded: ReadonlyArray<string>
  readonly filesRemoved: ReadonlyArray<string>
  readonly filesChanged: ReadonlyArray<string>
}

/**
 * What changed between two snapshots.
 *
 * @since 0.1.0
 */
export interface Changes {
  /** Skill URIs (`.../SKILL.md`) new in the catalogue. */
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  /** Skills whose entry changed: frontmatter, files, digests, listing or cache hint. */
  readonly changed: ReadonlyArray<SkillChange>
  /** Whether any listed entry changed (`skills/list` or `resources/list` would answer differently). */
  readonly listChanged: boolean
  /** Every file URI whose content changed or that disappeared (for `notifications/resources/updated`). */
  readonly updated: ReadonlyArray<string>
}

/**
 * The changes from `before` to `after`.
 *
 * @since 0.1.0
 */
export const diff = (before: Snapshot, after: Snapshot): Changes => {
  const added: Array<string> = []
  const removed: Array<string> = []
  const changed: Array<SkillChange> = []
  const updated = new Set<string>()
  let listChanged = false
  // A rendered parent's manifest holds its nested skills' files (R10): a change of one is a
  // change of the listed parent's entry too.
  const inListedParent = (snapshot: Snapshot, root: string) =>
    snapshot.enclosed.size > 0 && ancestors(root).some((prefix) => {
      const parent = snapshot.dynamicRoots.get(prefix)
      return parent?._tag === "Rendered" && parent.listed
    })
  for (const skill of after.skills) {
    const old = before.byUri.get(skill.uri)
    if (old === undefined) {
      added.push(skill.uri)
      listChanged ||= skill.listed || inListedParent(after, skill.root)
      continue
    }
    const change = changeOf(old, skill)
    if (change === undefined) continue
    changed.push(change)
    for (const uri of [...change.filesRemoved, ...change.filesChanged]) updated.add(uri)
    listChanged ||= old.listed || skill.listed || inListedParent(after, skill.root)
  }
  // A family's instances are rendered per caller: any change to a listed family changes listings.
  const familiesBefore = new Map(before.families.map((family) => [familyKey(family), family]))
  for (const family of after.families) {
    const old = familiesBefore.get(familyKey(family))
    familiesBefore.delete(familyKey(family))
    if (old?.definition !== family.definition) listChanged ||= family.listed || old?.listed === true
  }
  for (const old of familiesBefore.values()) listChanged ||= old.listed
  for (const skill of before.skills) {
    if (after.byUri.has(skill.uri)) continue
    removed.push(skill.uri)
    listChanged ||= skill.listed || inListedParent(before, skill.root)
    for (const uri of digests(skill).keys()) if (!after.files.has(uri)) updated.add(uri)
  }
  return { added, removed, changed, listChanged, updated: [...updated].sort(Order.String) }
}

/**
 * Cumulative counters of a registry.
 *
 * @since 0.1.0
 */
export interface Stats {
  /** Snapshots built (the first one included). */
  readonly builds: number
  /** Files hashed by every build so far; a skill whose files did not change is not hashed again. */
  readonly hashedFiles: number
  readonly hashedBytes: number
  /**
   * Skill definitions validated by every build so far: a full build goes through the whole
   * catalogue (reusing unchanged manifests), `upsert` and `update` only through what changed.
   */
  readonly builtSkills: number
}

/**
 * Who made an edit of the catalogue in code: this process (`upsert`, `remove`), or another replica
 * whose edit came over the change bus (`ChangeBus.layerReplica`), which must not send it back.
 *
 * @since 0.1.0
 */
export type Origin = "local" | "replica"

/**
 * One swap of the snapshot and what caused it: a change of the catalogue's source (`replace`,
 * `reload`, `update`), or an edit in code (`upsert`, `remove`) with what it put in and took out.
 *
 * @since 0.1.0
 */
export type Commit =
  | { readonly _tag: "Source"; readonly before: Snapshot; readonly after: Snapshot }
  | {
    readonly _tag: "Edit"
    readonly before: Snapshot
    readonly after: Snapshot
    readonly upsert: ReadonlyArray<Skill.Definition>
    readonly remove: ReadonlyArray<string>
    readonly origin: Origin
  }

/**
 * The service holding the current snapshot.
 *
 * @since 0.1.0
 */
export class SkillRegistry extends Context.Service<SkillRegistry, {
  /** The current snapshot; read it once per request. */
  readonly snapshot: Effect.Effect<Snapshot>
  /**
   * Validates `definitions` into a new snapshot and swaps it in, returning what changed; on
   * failure the old one stays. Concurrent calls are serialized.
   */
  readonly replace: (definitions: Iterable<Skill.Definition>) => Effect.Effect<Changes, RegistrationError>
  /**
   * Adds skills (or families), each replacing the one with the same URI, validating and hashing
   * only these, and swaps the snapshot atomically; on failure nothing changes. A skill that
   * encloses or sits inside no other costs the same in any catalogue size; a nested skill or a
   * family makes this a full rebuild. Upserted skills survive `replace` and `reload` (they take
   * precedence over a source skill with the same URI) until `remove`d.
   */
  readonly upsert: (definitions: Iterable<Skill.Definition>, origin?: Origin) => Effect.Effect<Changes, RegistrationError>
  /**
   * Takes skills out by `SKILL.md` URI (a family by `<scheme>://<template>`), in the same time as
   * `upsert`; unknown URIs are ignored. A removed skill of the source comes back with the next
   * `reload`. It fails only when it must rebuild (a nested skill, a family) and a dynamic skill's
   * `SKILL.md` can no longer be read; then nothing changes.
   */
  readonly remove: (uris: Iterable<string>, origin?: Origin) => Effect.Effect<Changes, RegistrationError>
  /**
   * A change of the catalogue's source, in one swap: `upsert` puts skills in (each replacing the
   * one with the same URI) and `remove` takes skills out by URI, at the cost of `upsert` and
   * `remove`. Unlike `upsert`, these definitions stay the source's: the next `replace` or `reload`
   * replaces them, and a skill added by `upsert` keeps precedence over them. What a watched
   * directory hands over instead of its whole catalogue.
   */
  readonly update: (change: {
    readonly upsert: Iterable<Skill.Definition>
    readonly remove: Iterable<string>
  }) => Effect.Effect<Changes, RegistrationError>
  /**
   * Asks the source the registry was made from for its definitions again and replaces the
   * catalogue with them: for sources without file events (a database, an object store), or to
   * force a directory rescan. A registry made from plain definitions reloads the same ones.
   */
  readonly reload: Effect.Effect<Changes, RegistrationError | ReloadError>
  readonly stats: Effect.Effect<Stats>
  /**
   * Every swap of the snapshot from now on (until the scope closes), with its cause: what the
   * change bus tells other replicas.
   */
  readonly commits: Effect.Effect<Stream.Stream<Commit>, never, Scope.Scope>
  /** The underlying reference, for observers of catalogue changes. */
  readonly ref: SubscriptionRef.SubscriptionRef<Snapshot>
}>()("@mcp-skills/server/SkillRegistry") {}

/**
 * Where a registry's definitions come from: fixed definitions, or an Effect run at start-up and on
 * every `reload` (its failures become `ReloadError` on reload).
 *
 * @since 0.1.0
 */
export type Source = Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, unknown>

/**
 * The key of a definition in a catalogue: its `SKILL.md` URI, or `<scheme>://<template>` for a
 * family (an invalid path keys by its spelling; the build reports it).
 *
 * @since 0.1.0
 */
export const keyOf = (definition: Skill.Definition): string =>
  definition._tag === "Family"
    ? `${definition.scheme.toLowerCase()}://${definition.path}`
    : Result.getOrElse(SkillUri.skillMd(definition.scheme, definition.path), () => `${definition.scheme}://${definition.path.join("/")}`)

const keyed = (into: HashMap.HashMap<string, Skill.Definition>, definitions: Iterable<Skill.Definition>) =>
  HashMap.mutate(into, (map) => {
    for (const definition of definitions) HashMap.set(map, keyOf(definition), definition)
  })

const noChanges: Changes = { added: [], removed: [], changed: [], listChanged: false, updated: [] }

const describeFailure = (error: unknown) =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : describeError(error)

/**
 * Builds a registry from definitions (validating and hashing everything once). With an Effect as
 * source, the Effect's failure at start-up is this Effect's failure.
 *
 * @since 0.1.0
 */
export const make = <E = never>(
  source: Iterable<Skill.Definition> | Effect.Effect<Iterable<Skill.Definition>, E>,
  options?: Options
): Effect.Effect<SkillRegistry["Service"], RegistrationError | E> =>
  Effect.gen(function*() {
    const load = Effect.isEffect(source) ? source as Effect.Effect<Iterable<Skill.Definition>, E> : undefined
    const first = load === undefined ? source as Iterable<Skill.Definition> : yield* load
    const initial = yield* build(first, options)
    const ref = yield* SubscriptionRef.make(initial)
    const lock = yield* Semaphore.make(1)
    const commits = yield* PubSub.unbounded<Commit>()
    let stats: Stats = {
      builds: 1,
      hashedFiles: initial.hashed.files,
      hashedBytes: initial.hashed.bytes,
      builtSkills: initial.skills.length
    }
    // The definitions of the current catalogue, and those added by `upsert` (which outlive a
    // `replace` or `reload`), by key; persistent, so an upsert copies neither.
    let current = keyed(HashMap.empty(), first)
    let runtime = HashMap.empty<string, Skill.Definition>()
    // What caused the swap being made (set by the operation holding the lock).
    let cause: Omit<Extract<Commit, { _tag: "Edit" }>, "before" | "after"> | undefined
    const commit = (after: Snapshot, changes: Changes, definitions: HashMap.HashMap<string, Skill.Definition>, built: number) =>
      Effect.gen(function*() {
        const before = yield* SubscriptionRef.get(ref)
        stats = {
          builds: stats.builds + 1,
          hashedFiles: stats.hashedFiles + after.hashed.files,
          hashedBytes: stats.hashedBytes + after.hashed.bytes,
          builtSkills: stats.builtSkills + built
        }
        current = definitions
        yield* SubscriptionRef.set(ref, after)
        const made: Commit = cause === undefined ? { _tag: "Source", before, after } : { ...cause, before, after }
        yield* PubSub.publish(commits, made)
        return changes
      })
    const rebuild = (before: Snapshot, definitions: HashMap.HashMap<string, Skill.Definition>, list?: Iterable<Skill.Definition>) =>
      Effect.flatMap(
        build(list ?? HashMap.values(definitions), options, before),
        (after) => commit(after, diff(before, after), definitions, after.skills.length)
      )
    const replace = (next: Iterable<Skill.Definition>) =>
      Semaphore.withPermits(lock, 1)(Effect.gen(function*() {
        const before = yield* SubscriptionRef.get(ref)
        // Upserted skills take precedence; duplicates among `next` are still reported by the build.
        const list = [...[...next].filter((definition) => !HashMap.has(runtime, keyOf(definition))), ...HashMap.values(runtime)]
        return yield* rebuild(before, keyed(HashMap.empty(), list), list)
      }))
    // Puts `batch` in and takes `keys` out, validating only these; a family or a nested skill
    // makes it a full rebuild.
    const change = (before: Snapshot, batch: ReadonlyArray<Skill.Definition>, keys: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const twice = batch.map(keyOf).filter((key, i, all) => all.indexOf(key) !== i)
        if (twice.length > 0) {
          return yield* new RegistrationError({
            problems: [...new Set(twice)].map((skill) => ({ skill, reason: "registered twice (duplicate skill URI)" }))
          })
        }
        const definitions = HashMap.removeMany(keyed(current, batch), keys)
        if (
          batch.some((definition) => definition._tag === "Family") ||
          keys.some((key) => before.families.some((family) => familyKey(family) === key))
        ) return yield* rebuild(before, definitions)
        // Only the new definitions are validated and hashed (unchanged files are reused).
        const added = batch.length === 0 ? undefined : yield* build(batch, options, before)
        const conflicts = added === undefined ? [] : familyConflicts(
          before.families,
          added.skills.map((skill) => ({ uri: skill.uri, scheme: skill.uri.slice(0, skill.uri.indexOf("://")), path: skill.path }))
        )
        if (conflicts.length > 0) return yield* new RegistrationError({ problems: conflicts })
        // A definition the build left out (signatures required) takes its previous version out too,
        // as a full build would.
        const refused = added === undefined ? [] : batch.map(keyOf).filter((key) => !added.byUri.has(key))
        const applied = Incremental.apply(before, added, [...keys, ...refused])
        return applied === undefined
          ? yield* rebuild(before, definitions)
          : yield* commit(applied.snapshot, applied.changes, definitions, batch.length)
      })
    const edit = (batch: ReadonlyArray<Skill.Definition>, keys: ReadonlyArray<string>, origin: Origin) =>
      Semaphore.withPermits(lock, 1)(Effect.gen(function*() {
        cause = { _tag: "Edit", upsert: batch, remove: keys, origin }
        const changes = yield* change(yield* SubscriptionRef.get(ref), batch, keys)
        runtime = HashMap.removeMany(keyed(runtime, batch), keys)
        return changes
      }).pipe(Effect.ensuring(Effect.sync(() => {
        cause = undefined
      }))))
    const upsert = (next: Iterable<Skill.Definition>, origin: Origin = "local") => edit([...next], [], origin)
    const remove = (uris: Iterable<string>, origin: Origin = "local") => edit([], [...uris], origin)
    const update = (next: { readonly upsert: Iterable<Skill.Definition>; readonly remove: Iterable<string> }) =>
      Semaphore.withPermits(lock, 1)(Effect.gen(function*() {
        // A skill added by `upsert` takes precedence over the source's version of it.
        const batch = [...next.upsert].filter((definition) => !HashMap.has(runtime, keyOf(definition)))
        const keys = [...next.remove].filter((key) => !HashMap.has(runtime, key))
        if (batch.length + keys.length === 0) return noChanges
        return yield* change(yield* SubscriptionRef.get(ref), batch, keys)
      }))
    return SkillRegistry.of({
      snapshot: SubscriptionRef.get(ref),
      replace,
      upsert,
      remove,
      update,
      reload: load === undefined
        ? replace(first)
        : Effect.flatMap(Effect.mapError(load, (error) => new ReloadError({ reason: describeFailure(error) })), replace),
      stats: Effect.sync(() => stats),
      commits: Effect.map(PubSub.subscribe(commits), Stream.fromSubscription),
      ref
    })
  })
