/**
 * Building a snapshot from skill definitions: every static skill goes through `Manifest.make`
 * (frontmatter, name = last path segment, paths, limits, one SHA-256 per file), nested skills'
 * files are added to their enclosing skill (R10), and every file's MIME type is decided once. A
 * rebuild hashes only what changed: a skill whose files are the same bytes as in the previous
 * snapshot (or that arrives with its `manifest`) keeps its previous manifest.
 *
 * @internal
 */
import { Extension, Limits, Manifest, SkillFrontmatter, SkillUri } from "@mcp-skills/core"
import type { Protocol, Skill as CoreSkill } from "@mcp-skills/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as MimeType from "../MimeType.js"
import * as PathTemplate from "../PathTemplate.js"
import * as Revision from "../Revision.js"
import * as Skill from "../Skill.js"
import { familyKey } from "../Snapshot.js"
import type {
  DynamicSkill,
  FamilyEntry,
  FileEntry,
  Hint,
  RenderedSkill,
  SkillEntry,
  Snapshot
} from "../Snapshot.js"
import * as Directories from "./directories.js"
import { ancestors, enclosing, innermost, isPrivate, listingFrom, normalizeHint, StoredFile, viewOf, withOwners } from "./registry.js"
import * as Signed from "./signed.js"
import * as WireForms from "./wireForms.js"

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const sameBytes = (a: Uint8Array, b: Uint8Array) => asBuffer(a).equals(asBuffer(b))

// Sorted by UTF-16 code unit, the order keyset cursors compare with.
const byUri = Order.mapInput(Order.String, (item: { readonly uri: string }) => item.uri)

// An Error, a tagged error, or any object with a string `message`: what it says.
export const describeError = (error: unknown): string =>
  typeof error === "string"
    ? error
    : typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : JSON.stringify(error)

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

/** Every problem of every skill of a catalogue that cannot be built (`SkillRegistry.RegistrationError`). */
export interface Problems {
  readonly _tag: "Problems"
  readonly problems: ReadonlyArray<{ readonly skill: string; readonly reason: string }>
}

/** What a build is told (`SkillRegistry.Options`). */
export interface Settings {
  readonly limits?: Partial<Limits.Limits> | undefined
  readonly reserved?: (() => Iterable<string>) | undefined
  readonly requireSigned?: boolean | undefined
  /** The registry's wire forms, shared by its snapshots (a build alone makes its own). */
  readonly wireForms?: WireForms.WireForms | undefined
}

const refused = (problems: Problems["problems"]): Problems => ({ _tag: "Problems", problems })

// Where a re-served skill came from goes in its entry's `_meta`, beside its signatures (R139).
const withProvenance = (entry: CoreSkill.Skill, provenance: Skill.Provenance | undefined): CoreSkill.Skill =>
  provenance === undefined ? entry : { ...entry, _meta: { ...entry._meta, [Skill.ProvenanceMetaKey]: { ...provenance } } }

const staticEntry = (skill: CoreSkill.Skill, definition: Skill.Static) =>
  withProvenance(Signed.entryOf(skill, definition.signatures), definition.provenance)

/** Validates and hashes definitions into a snapshot, or fails listing every problem found. */
export const build = Effect.fnUntraced(function*(
  definitions: Iterable<Skill.Definition>,
  options?: Settings,
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
      // A manifest made for another skill path (a definition moved with the manifest it had) is
      // not this skill's: its entry would name the other skill.
      const reused = definition.manifest?.uri === skill.uri && skill.files.length === definition.files.length &&
          skill.onDisk.length === (definition.onDisk?.length ?? 0)
        ? definition.manifest
        : before?._tag === "Static" && sameInputs(before.inputs, skill.files)
        ? before.manifest
        : undefined
      if (reused !== undefined) {
        resolved.push({ ...skill, _tag: "Static", manifest: reused, entry: staticEntry(reused.skill, definition) })
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
          manifest: viewOf(manifest.success),
          entry: staticEntry(manifest.success.skill, definition)
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
        SkillFrontmatter.decode(definition.frontmatter as Schema.JsonObject),
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
    return yield* Effect.fail(refused(problems.sort(Order.mapInput(Order.String, (problem) => problem.skill))))
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
  const snapshot = assemble(
    served.sort(byUri),
    servedFamilies.sort(Order.mapInput(Order.String, familyKey)),
    hashed,
    limits,
    options?.wireForms ?? WireForms.make()
  )
  const clashes = options?.reserved === undefined ? [] : collisions(snapshot, options.reserved())
  if (clashes.length > 0) return yield* Effect.fail(refused(clashes))
  return snapshot
})

/**
 * Which of `uris` (other resources of the server) the skills of `snapshot` would serve: a file of
 * a static skill, any URI inside a rendered or dynamic skill, or a family instance's.
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
export const familyConflicts = (
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

// Each kind written out as one object literal, not spread from a common base: the spread made
// every skill of a catalogue an object with a map of its own (a hidden class and its
// descriptors, about 200 bytes per skill, and slower to build and to read).
const toEntry = (skill: Resolved, index: number): SkillEntry => {
  const uri = skill.uri
  const root = skill.root
  const path = skill.definition.path
  const listed = skill.definition.listed
  const cacheHint = skill.cacheHint
  switch (skill._tag) {
    case "Static": {
      const frontmatter = skill.manifest.frontmatter
      const name = String(frontmatter.name)
      const resource = skillResource(uri, frontmatter, skill.manifest.files[0]?.size)
      const { entry, manifest, files: inputs } = skill
      return { _tag: "Static", index, uri, root, path, name, frontmatter, listed, resource, cacheHint, entry, manifest, inputs }
    }
    case "Dynamic": {
      const { definition, frontmatter } = skill
      const name = String(frontmatter.name)
      const resource = skillResource(uri, frontmatter, undefined)
      const entry = withProvenance({ uri, frontmatter, resources: "dynamic" } as CoreSkill.Skill, definition.provenance)
      return { _tag: "Dynamic", index, uri, root, path, name, frontmatter, listed, resource, cacheHint, entry, definition }
    }
    case "Rendered": {
      const { definition, frontmatter } = skill
      const name = String(frontmatter.name)
      const resource = skillResource(uri, frontmatter, undefined)
      return { _tag: "Rendered", index, uri, root, path, name, frontmatter, listed, resource, cacheHint, definition }
    }
  }
}

const listingOf = (listed: ReadonlyArray<SkillEntry>, families: ReadonlyArray<FamilyEntry>) =>
  listingFrom(
    listed.filter(isPrivate).length,
    listed.filter((skill) => skill.cacheHint === undefined).length,
    families
  )

// The bytes of each path of `files`, looked up at the same position first: a directory source
// hands the manifest's own files over, in the manifest's order, so no map is made per skill.
const bytesByPath = (files: ReadonlyArray<Skill.File>) => {
  let byPath: Map<string, Uint8Array> | undefined
  return (position: number, path: string): Uint8Array | undefined => {
    const same = files[position]
    if (same?.path === path) return same.bytes
    byPath ??= new Map(files.map((file) => [file.path, file.bytes]))
    return byPath.get(path)
  }
}

const assemble = (
  sorted: ReadonlyArray<Resolved>,
  families: ReadonlyArray<FamilyEntry>,
  hashed: Snapshot["hashed"],
  limits: Limits.Limits,
  wireForms: WireForms.WireForms
): Snapshot => {
  const nested = new Map<string, number>()
  for (const skill of sorted) {
    for (const prefix of ancestors(skill.root)) nested.set(prefix, (nested.get(prefix) ?? 0) + 1)
  }
  const skills: Array<SkillEntry> = []
  const files = new Map<string, FileEntry>()
  const dynamicRoots = new Map<string, DynamicSkill | RenderedSkill>()
  for (const [index, skill] of sorted.entries()) {
    const entry = toEntry(skill, index)
    skills.push(entry)
    if (entry._tag !== "Static") {
      dynamicRoots.set(skill.root, entry)
      continue
    }
    // One owners array for every file this skill alone lists (nearly all of them): a file a
    // nested skill lists too gets its own, copied when its second owner comes.
    const own = [index]
    const held = bytesByPath(skill.files)
    const onDisk = skill.onDisk.length === 0 ? undefined : new Map(skill.onDisk.map((file) => [file.path, file.location]))
    for (const [i, file] of entry.manifest.files.entries()) {
      const existing = files.get(file.uri)
      if (existing !== undefined) {
        files.set(file.uri, withOwners(existing, [...existing.owners, index]))
        continue
      }
      const mimeType = MimeType.fromPath(file.path)
      const location = onDisk?.get(file.path)
      files.set(
        file.uri,
        location === undefined
          ? new StoredFile(file.uri, mimeType, file.size, file.digest, own, held(i, file.path)!, wireForms)
          : {
            _tag: "OnDisk",
            uri: file.uri,
            name: file.path.slice(file.path.lastIndexOf("/") + 1),
            mimeType,
            size: file.size,
            digest: file.digest,
            owners: own,
            location
          }
      )
    }
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
  const snapshot: Snapshot = {
    revision: Revision.of(skills, families),
    skills,
    listed,
    byUri: new Map(skills.map((skill) => [skill.uri, skill])),
    files,
    directories: Directories.make(() => snapshot),
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
  return snapshot
}
