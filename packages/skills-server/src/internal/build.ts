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
import * as PathTemplate from "../PathTemplate.js"
import * as Revision from "../Revision.js"
import * as Skill from "../Skill.js"
import { familyKey } from "../Snapshot.js"
import type { DynamicSkill, FamilyEntry, Hint, RenderedSkill, SkillEntry, Snapshot } from "../Snapshot.js"
import * as Directories from "./directories.js"
import * as Entries from "./entries.js"
import * as Files from "./files.js"
import { ancestors, enclosing, isPrivate, listingFrom, normalizeHint, viewOf } from "./registry.js"
import * as Signed from "./signed.js"
import * as WireForms from "./wireForms.js"

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const sameBytes = (a: Uint8Array, b: Uint8Array) => asBuffer(a).equals(asBuffer(b))

const noFiles: ReadonlyArray<never> = []

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
  /**
   * A static skill's manifest as its definition gave it, while it stands for the skill's files:
   * until a nested skill adds files to it (R10), which makes it `files`.
   */
  manifest: Skill.ManifestView | undefined
  /** A static skill's files held in memory, when they are not (or no longer) its manifest's. */
  files: Array<Manifest.FileInput> | undefined
  readonly onDisk: Array<Skill.DiskFile>
  readonly cacheHint: Hint | undefined
}

// A definition that passed validation, with what its kind needs to be served.
type Resolved = Pending & (
  | {
    readonly _tag: "Static"
    readonly manifest: Skill.ManifestView
    readonly signatures: Skill.Static["signatures"]
    readonly provenance: Skill.Static["provenance"]
  }
  | { readonly _tag: "Dynamic"; readonly definition: Skill.Dynamic; readonly frontmatter: SkillFrontmatter.SkillFrontmatter }
  | { readonly _tag: "Rendered"; readonly definition: Skill.Rendered; readonly frontmatter: Readonly<Record<string, unknown>> }
)

// The files a static skill holds in memory, with their digests when known; from its manifest, made now.
const heldOf = (skill: Pending): ReadonlyArray<Manifest.FileInput> => {
  if (skill.files !== undefined) return skill.files
  const files = skill.manifest!.files
  const out: Array<Manifest.FileInput> = []
  for (let index = 0; index < files.length; index++) {
    const bytes = files.bytes(index)
    if (bytes !== undefined) out.push({ path: files.path(index), bytes, digest: files.digest(index) })
  }
  return out
}

// Every path of a static skill: held in memory and on disk.
const pathsOf = (skill: Pending): ReadonlyArray<string> => {
  if (skill.files === undefined) {
    const files = skill.manifest!.files
    return Array.from({ length: files.length }, (_, index) => files.path(index))
  }
  return [...skill.files.map((file) => file.path), ...skill.onDisk.map((file) => file.path)]
}

// The skill's files as a list that can grow: its manifest no longer stands for them.
const filesOf = (skill: Pending): Array<Manifest.FileInput> => {
  if (skill.files === undefined) {
    skill.files = [...heldOf(skill)]
    skill.manifest = undefined
  }
  return skill.files
}

// The same files as a previous build's manifest, every one held: same paths, same bytes.
const sameInputs = (previous: Skill.ManifestView, next: ReadonlyArray<Manifest.FileInput>) => {
  if (previous.files.length !== next.length) return false
  return next.every((file) => {
    const index = previous.files.indexOf(file.path)
    return index !== -1 && previous.files.sameBytes(index, file.bytes)
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
    // A manifest made for another skill path (a definition moved with the manifest it had) is
    // not this skill's: its entry would name the other skill.
    const manifest = definition._tag === "Static" && definition.manifest?.uri === uri.success ? definition.manifest : undefined
    pending.push({
      definition,
      // The manifest's strings when it has them: one URI and one root a skill, however many hold them.
      uri: manifest?.uri ?? uri.success,
      root: manifest?.files.root ?? SkillUri.root(uri.success),
      manifest,
      files: definition._tag === "Static" && manifest === undefined ? [...definition.files] : undefined,
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
      // The bytes the outer skill holds at a path: a row of its manifest, or an entry of its list.
      let held: Map<string, Uint8Array> | undefined
      const heldAt = (path: string) => {
        if (outer.manifest !== undefined) {
          const row = outer.manifest.files.indexOf(path)
          return row === -1 ? undefined : outer.manifest.files.bytes(row)
        }
        held ??= new Map(outer.files!.map((file) => [file.path, file.bytes]))
        return held.get(path)
      }
      for (const file of heldOf(inner)) {
        const path = `${prefix}/${file.path}`
        const present = heldAt(path)
        if (present === undefined) {
          filesOf(outer).push({ path, bytes: file.bytes, ...(file.digest === undefined ? {} : { digest: file.digest }) })
          held?.set(path, file.bytes)
        } else if (!sameBytes(present, file.bytes)) {
          problems.push({ skill: outer.uri, reason: `${path} differs from the same file of nested skill ${inner.uri}` })
        }
      }
      const onDisk = new Map(outer.onDisk.map((file) => [file.path, file.digest]))
      for (const file of inner.onDisk) {
        const path = `${prefix}/${file.path}`
        const present = onDisk.get(path)
        if (present === undefined) {
          filesOf(outer)
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
      const held = new Set(pathsOf(inner).map((path) => prefix + path))
      for (const path of pathsOf(outer)) {
        if (path.startsWith(prefix) && !held.has(path)) {
          problems.push({ skill: outer.uri, reason: `${path} lies inside the nested skill ${inner.uri}, which does not hold it (R7, R10)` })
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
      const { signatures, provenance } = definition
      const reused = skill.manifest ??
        (before?._tag === "Static" && skill.onDisk.length === 0 && sameInputs(before.manifest, skill.files!) ? before.manifest : undefined)
      if (reused !== undefined) {
        resolved.push({ ...skill, _tag: "Static", manifest: reused, signatures, provenance })
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
      const files = skill.files!
      for (const file of files) {
        if (file.digest !== undefined) continue
        hashed.files++
        hashed.bytes += file.bytes.byteLength
      }
      const manifest = Manifest.make({ uri: skill.uri, files, limits })
      if (Result.isFailure(manifest)) {
        for (const problem of manifest.failure.problems) {
          problems.push({ skill: skill.uri, reason: Manifest.describe(problem) })
        }
      } else {
        resolved.push({ ...skill, _tag: "Static", manifest: viewOf(manifest.success), signatures, provenance })
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
        signatures: skill.signatures,
        entry: () => Entries.entryOf(skill),
        judged: before?._tag === "Static" && before.manifest === skill.manifest &&
          Signed.relayed(before.signatures) === Signed.relayed(skill.signatures)
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
  const reason = (uri: string) =>
    `serves ${uri}, which is also a resource of its own on the server (McpServer.resource, or a file of an McpServer.skill)`
  for (const uri of uris) {
    const file = snapshot.files.get(uri)
    const skill = file !== undefined
      ? enclosing(snapshot, uri)
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
const toEntry = (skill: Resolved, index: number, enclosedBy: ReadonlyArray<number>): SkillEntry => {
  const uri = skill.uri
  const root = skill.root
  const path = skill.definition.path
  const listed = skill.definition.listed
  const cacheHint = skill.cacheHint
  switch (skill._tag) {
    case "Static": {
      const { manifest, signatures, provenance } = skill
      const frontmatter = manifest.frontmatter
      const name = String(frontmatter.name)
      const resource = skillResource(uri, frontmatter, manifest.files.length === 0 ? undefined : manifest.files.size(0))
      const onDisk = skill.onDisk.length === 0 ? noFiles : skill.onDisk
      return { _tag: "Static", index, uri, root, path, name, frontmatter, listed, resource, cacheHint, manifest, onDisk, signatures, provenance, enclosedBy }
    }
    case "Dynamic": {
      const { definition, frontmatter } = skill
      const name = String(frontmatter.name)
      const resource = skillResource(uri, frontmatter, undefined)
      const entry = Entries.withProvenance({ uri, frontmatter, resources: "dynamic" } as CoreSkill.Skill, definition.provenance)
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
  // The static skills around each static skill list its files too (R10): kept with it, so a file
  // found through its innermost skill knows every skill that lists it.
  const staticRoots = new Map<string, number>()
  for (const [index, skill] of sorted.entries()) if (skill._tag === "Static" && nested.has(skill.root)) staticRoots.set(skill.root, index)
  const skills: Array<SkillEntry> = []
  const dynamicRoots = new Map<string, DynamicSkill | RenderedSkill>()
  for (const [index, skill] of sorted.entries()) {
    let enclosedBy: ReadonlyArray<number> = noFiles
    if (skill._tag === "Static" && staticRoots.size > 0) {
      const around = ancestors(skill.root).map((prefix) => staticRoots.get(prefix)).filter((found) => found !== undefined)
      if (around.length > 0) enclosedBy = around.sort(Order.Number)
    }
    const entry = toEntry(skill, index, enclosedBy)
    skills.push(entry)
    if (entry._tag !== "Static") dynamicRoots.set(skill.root, entry)
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
    files: Files.make(() => snapshot, wireForms),
    entries: Entries.make(),
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
