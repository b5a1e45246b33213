/**
 * The port every kind of skill implements (static, dynamic, rendered, family instance), and its
 * implementations. The surfaces (`surface/`) never look at a skill's kind: they decide
 * visibility, find the skill a URI belongs to, and ask its kind (`kindOf`) for one surface of one
 * request (`Call`). A new kind adds a variant to `SkillEntry` and one entry to `kinds`; the
 * compiler then refuses the build until every surface is answered.
 *
 * Contract of every method: it is called only for a skill the request may see, with a URI inside
 * that skill (for `read` and `directory`); `undefined` means "no such skill/file/directory here"
 * (a family's `render` saying `NoSuchInstance` or `NotAllowed` too), which the surfaces answer
 * exactly like an absent or hidden one; a failure of the author's code becomes -32603 with one
 * line in the log (`Faults.guard`, at most so often per skill), never a client error.
 *
 * @internal
 */
import { Extension, Manifest, Signing, SkillUri } from "@mcp-skills/core"
import type { Digest, Protocol, Skill as CoreSkill } from "@mcp-skills/core"
import * as Cache from "effect/Cache"
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Exit from "effect/Exit"
import * as Hash from "effect/Hash"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Result from "effect/Result"
import * as MimeType from "../MimeType.js"
import type * as PathTemplate from "../PathTemplate.js"
import * as Skill from "../Skill.js"
import * as SkillFamily from "../SkillFamily.js"
import { familyKey, wireContent } from "../Snapshot.js"
import * as Faults from "./faults.js"
import type { RequestInfo, WireError } from "./effect/port.js"
import * as OnDemand from "./onDemand.js"
import type { FileAnswer } from "./onDemand.js"
import * as Registry from "./registry.js"
import { requestOf } from "./visibility.js"
import type { Method, Visible } from "./visibility.js"
import type * as Snapshot from "../Snapshot.js"
import type { SkillInfo } from "../Visibility.js"
import * as ServerLimits from "../ServerLimits.js"

/** One rendering of a rendered skill for one request (or for callers sharing its `shareKey`). */
export interface Rendering {
  readonly manifest: Manifest.Manifest
  readonly entry: CoreSkill.Skill
}

/** Renderings shared between requests under a skill's `shareKey` (one cache per layer). */
export type RenderCache = Cache.Cache<RenderKey, Rendering, WireError>

/** One request being answered: the snapshot it reads from start to end and what it may see. */
export interface Call extends OnDemand.Reader {
  readonly snapshot: Snapshot.Snapshot
  readonly visible: Visible
  readonly request: RequestInfo
  readonly method: Method
  readonly renderings: RenderCache
  /** Where failures of the authors' code are logged. */
  readonly faults: Faults.Faults
  /**
   * Renderings made for this request, by skill index (rendered skills) or instance URI (family
   * instances): each is rendered once per request.
   */
  readonly renders: Map<number | string, Rendering | undefined>
  /**
   * The request's services (what effect's and `HttpRouter`'s middleware provide, as the visibility
   * check sees them), for a family's `list` and `render`; captured once per request, on first use.
   */
  readonly services: Effect.Effect<Context.Context<never>, WireError>
  /**
   * The request's one decision on a skill the snapshot does not hold (one registered through
   * effect's own `McpServer.skill`), as its check sees a skill.
   */
  readonly admits: (skill: SkillInfo) => boolean
}

/** One child of a directory, with the URI it sorts and pages by. */
export interface Child {
  readonly uri: string
  readonly resource: Protocol.ResourceEntry
}

/**
 * The port: the five surfaces of one skill of one kind, for one request.
 */
export interface Kind<S extends Snapshot.ServedSkill> {
  /** The entry of `skills/list` and `skills/get`. */
  readonly entry: (call: Call, skill: S) => Effect.Effect<CoreSkill.Skill | undefined, WireError>
  /** The skill's `SKILL.md` as `resources/list` lists it (R25). */
  readonly resource: (call: Call, skill: S) => Effect.Effect<Protocol.ResourceEntry | undefined, WireError>
  /** `resources/read` of `uri`, a URI under the skill's root; `undefined` when there is no such file. */
  readonly read: (call: Call, skill: S, uri: string) => Effect.Effect<FileAnswer | undefined, WireError>
  /**
   * The direct children of the directory `uri` (the root or below), sorted by URI, only those the
   * request may see; `undefined` when it is not a directory of this skill.
   */
  readonly directory: (call: Call, skill: S, uri: string) => Effect.Effect<ReadonlyArray<Child> | undefined, WireError>
  /** Answers differ per caller: `cacheScope` is `private` unless the skill's own hint says otherwise. */
  readonly perCaller: boolean
}

const { internalError } = Faults

const byUri = Order.mapInput(Order.String, (child: Child) => child.uri)

// The children of `directory` given every relative file path of a skill known per request.
const childrenOf = (
  skill: Snapshot.ServedSkill,
  directory: string,
  paths: Iterable<string>,
  sizes: ReadonlyMap<string, number>
): ReadonlyArray<Child> | undefined => {
  const relative = directory === skill.root ? "" : SkillUri.relativePath(skill.uri, directory)
  if (relative === undefined) return undefined
  const prefix = relative === "" ? "" : relative + "/"
  const children = new Map<string, Child>()
  let exists = relative === ""
  for (const path of paths) {
    if (!path.startsWith(prefix)) continue
    exists = true
    const rest = path.slice(prefix.length)
    const slash = rest.indexOf("/")
    const name = slash === -1 ? rest : rest.slice(0, slash)
    const uri = SkillUri.file(skill.uri, prefix + name)
    if (name.length === 0 || Result.isFailure(uri) || children.has(uri.success)) continue
    const size = slash === -1 ? sizes.get(path) : undefined
    children.set(uri.success, {
      uri: uri.success,
      resource: {
        uri: uri.success,
        name,
        mimeType: slash !== -1 ? Extension.DirectoryMimeType : MimeType.fromPath(name),
        ...(size === undefined ? {} : { size })
      }
    })
  }
  return exists ? [...children.values()].sort(byUri) : undefined
}

const relativePathOf = (skill: Snapshot.SkillEntry, uri: string) => SkillUri.relativePath(skill.uri, uri)

/**
 * A static skill's entry for this caller: without the files of nested skills the caller may not
 * see (the entry built once otherwise). Such an entry is not what its authors signed, so it
 * relays no signature.
 */
export const carvedEntry = (
  snapshot: Snapshot.Snapshot,
  visible: Visible,
  skill: Snapshot.StaticSkill
): CoreSkill.Skill => {
  const entry = snapshot.entries.get(skill)
  if (!visible.checked || (snapshot.nested.get(skill.root) ?? 0) === 0) return entry
  const resources = entry.resources as ReadonlyArray<CoreSkill.SkillResource>
  const shown = resources.filter((resource) => visible.file(snapshot.files.get(resource.uri)?.owners ?? []))
  return shown.length === resources.length ? entry : Signing.withSignatures({ ...entry, resources: shown }, [])
}

/** The children of a static directory this caller may see. */
export const staticChildren = (visible: Visible, directory: Snapshot.DirectoryEntry): ReadonlyArray<Child> =>
  visible.checked ? directory.children.filter((child) => visible.any(child.owners)) : directory.children

/** Static skills: everything comes from the snapshot, built once. */
const Static: Kind<Snapshot.StaticSkill> = {
  entry: (call, skill) => Effect.succeed(carvedEntry(call.snapshot, call.visible, skill)),
  resource: (_call, skill) => Effect.succeed(skill.resource),
  read: (call, _skill, uri) => {
    const file = call.snapshot.files.get(uri)
    if (file === undefined) return Effect.succeed(undefined)
    switch (file._tag) {
      case "InMemory":
        return Effect.succeed(file)
      case "OnDisk":
        return OnDemand.read(call, file)
    }
  },
  directory: (call, _skill, uri) => {
    const directory = call.snapshot.directories.get(uri)
    return Effect.succeed(directory === undefined ? undefined : staticChildren(call.visible, directory))
  },
  perCaller: false
}

/** Dynamic skills: the author's `read` and `list` on every request. */
const Dynamic: Kind<Snapshot.DynamicSkill> = {
  entry: (_call, skill) => Effect.succeed(skill.entry),
  resource: (_call, skill) => Effect.succeed(skill.resource),
  read: Effect.fnUntraced(function*(call, skill, uri) {
    const path = relativePathOf(skill, uri)
    if (path === undefined) return undefined
    const content = yield* Faults.guard(call.faults, skill.uri, `reading ${uri} of a dynamic skill failed`)(skill.definition.read(path))
    return content === undefined ? undefined : { mimeType: MimeType.fromPath(path), content: wireContent(Skill.toBytes(content)) }
  }),
  directory: Effect.fnUntraced(function*(call, skill, uri) {
    const paths = yield* dynamicPaths(call, skill)
    if (!call.snapshot.enclosed.has(skill.root)) return childrenOf(skill, uri, paths, new Map())
    // Entries inside a nested skill's folder are that skill's: they show what it holds (R10).
    const nested = yield* nestedFiles(call, skill)
    const sizes = new Map<string, number>()
    const own = paths.filter((path) => Registry.enclosing(call.snapshot, `${skill.root}/${path}`) === skill)
    for (const file of nested.values()) {
      const path = SkillUri.relativePath(skill.uri, file.uri)
      if (path === undefined) continue
      own.push(path)
      if (file.size !== undefined) sizes.set(path, file.size)
    }
    return childrenOf(skill, uri, own, sizes)
  }),
  perCaller: false
}

const dynamicPaths = (call: Call, skill: Snapshot.DynamicSkill): Effect.Effect<ReadonlyArray<string>, WireError> => {
  const list = skill.definition.list
  return list === undefined
    ? Effect.succeed([Extension.SkillFileName])
    : Faults.guard(call.faults, skill.uri, `listing the dynamic skill ${skill.uri} failed`)(list)
}

/** A file of a skill nested in a rendered or dynamic parent, as the parent shows it. */
interface NestedFile {
  readonly uri: string
  /** Known for static (held in memory) and rendered skills; a dynamic skill's are not. */
  readonly bytes: Uint8Array | undefined
  readonly size: number | undefined
  readonly digest: Digest.Digest | undefined
}

/**
 * The files of the skills inside `parent` that this caller may see, each taken from the skill it
 * belongs to (its innermost skill): a static skill's from the snapshot, a rendered one's from its
 * rendering for this request, a dynamic one's from its `list`. A hidden skill gives nothing, so
 * it is carved out of its parent for this caller.
 */
const nestedFiles: (
  call: Call,
  parent: Snapshot.DynamicSkill | Snapshot.RenderedSkill
) => Effect.Effect<Map<string, NestedFile>, WireError> = Effect.fnUntraced(function*(call, parent) {
  const found = new Map<string, NestedFile>()
  const { snapshot } = call
  for (const uri of snapshot.enclosed.get(parent.root) ?? []) {
    const skill = snapshot.byUri.get(uri)!
    if (!call.visible.skill(skill.index)) continue
    const holds = (file: string) => Registry.enclosing(snapshot, file) === skill
    switch (skill._tag) {
      case "Static":
      case "Rendered": {
        const files = skill._tag === "Static" ? skill.manifest.files : (yield* render(call, skill)).manifest.files
        for (let index = 0; index < files.length; index++) {
          const uri = files.uri(index)
          if (holds(uri)) found.set(uri, { uri, bytes: files.bytes(index), size: files.size(index), digest: files.digest(index) })
        }
        break
      }
      case "Dynamic": {
        for (const path of yield* dynamicPaths(call, skill)) {
          const file = `${skill.root}/${path}`
          if (holds(file)) found.set(file, { uri: file, bytes: undefined, size: undefined, digest: undefined })
        }
      }
    }
  }
  return found
})

/**
 * A rendered skill's rendering with the files of the skills nested in it that this caller may see
 * (R10), so its manifest lists exactly what the caller can read. A file it rendered itself inside
 * a nested skill's folder must be that skill's, byte for byte: otherwise the rendering is refused
 * (the author's fault, -32603), as a static parent's conflicting copy is refused at registration.
 */
const withNested: (call: Call, skill: Snapshot.RenderedSkill, own: Rendering) => Effect.Effect<Rendering, WireError> = Effect
  .fnUntraced(function*(call, skill, own) {
  if (!call.snapshot.enclosed.has(skill.root)) return own
  const nested = yield* nestedFiles(call, skill)
  const files: Array<Manifest.FileInput> = []
  for (const file of own.manifest.files) {
    const holder = Registry.enclosing(call.snapshot, file.uri)
    if (holder === undefined || holder === skill) {
      files.push({ path: file.path, bytes: file.bytes!, digest: file.digest })
      continue
    }
    const theirs = nested.get(file.uri)?.digest ??
      (call.visible.skill(holder.index) ? undefined : call.snapshot.files.get(file.uri)?.digest ?? file.digest)
    if (theirs !== file.digest) {
      const why = theirs === undefined ? "which does not hold it" : "which holds other bytes there"
      yield* call.faults.report(skill.uri, `the skill ${skill.uri} rendered ${file.path} inside the nested skill ${holder.uri}, ${why} (R10)`)
      return yield* Effect.fail(internalError)
    }
  }
  for (const file of nested.values()) {
    files.push({ path: SkillUri.relativePath(skill.uri, file.uri)!, bytes: file.bytes!, ...(file.digest === undefined ? {} : { digest: file.digest }) })
  }
  return yield* renderingOf(call.faults, skill.uri, files, call.snapshot.limits, `the skill ${skill.uri} with its nested skills is not a valid skill`)
})

// The rendering of rendered files, or a logged -32603 (`what` says why) when they make no valid
// skill; logged about `skill` (the rendered skill, or the family of an instance).
const renderingOf = (
  faults: Faults.Faults,
  uri: SkillUri.SkillMdUri,
  files: Iterable<Manifest.FileInput>,
  limits: Snapshot.Snapshot["limits"],
  what: string,
  error: WireError = internalError,
  skill: string = uri
): Effect.Effect<Rendering, WireError> => {
  const manifest = Manifest.make({ uri, files, limits })
  if (Result.isFailure(manifest)) return Effect.andThen(faults.report(skill, `${what}: ${manifest.failure.message}`), Effect.fail(error))
  return Effect.succeed({ manifest: manifest.success, entry: Manifest.entry(manifest.success) })
}

const filesOf = (files: Readonly<Record<string, Skill.Content>>) =>
  Object.entries(files).map(([path, content]) => ({ path, bytes: Skill.toBytes(content) }))

/**
 * The key of a shared rendering: one skill definition and one `shareKey`. It also carries what a
 * miss needs to render (the request and limits), which take no part in equality.
 */
export class RenderKey implements Equal.Equal {
  constructor(
    readonly definition: Skill.Rendered,
    readonly key: string,
    readonly uri: SkillUri.SkillMdUri,
    readonly request: Skill.RenderRequest,
    readonly limits: Snapshot.Snapshot["limits"],
    readonly keep: Duration.Duration,
    readonly faults: Faults.Faults
  ) {}
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof RenderKey && that.definition === this.definition && that.key === this.key
  }
  [Hash.symbol](): number {
    return Hash.combine(Hash.string(this.uri))(Hash.string(this.key))
  }
}

const renderNow = Effect.fnUntraced(function*(
  definition: Skill.Rendered,
  uri: SkillUri.SkillMdUri,
  request: Skill.RenderRequest,
  limits: Snapshot.Snapshot["limits"],
  faults: Faults.Faults
) {
  const files = yield* Faults.guard(faults, uri, `rendering the skill ${uri} failed`)(definition.render(request))
  return yield* renderingOf(faults, uri, filesOf(files), limits, `the skill ${uri} rendered an invalid skill`)
})


/** The render cache of one layer: renderings expire after their skill's `shareFor` (on `Clock`). */
export const makeRenderCache: Effect.Effect<RenderCache> = Cache.makeWith(
  (key: RenderKey) => renderNow(key.definition, key.uri, key.request, key.limits, key.faults),
  {
    capacity: ServerLimits.RenderCacheCapacity,
    // A failed rendering is not kept: the next request renders again.
    timeToLive: (exit, key) => Exit.isSuccess(exit) ? key.keep : Duration.zero
  }
)

const shareFor = (input: Duration.Input | undefined): Duration.Duration =>
  input === undefined ? Duration.zero : Option.getOrElse(Duration.fromInput(input), () => Duration.zero)

/** What a template or a family's callbacks see of the request: what a visibility check sees. */
const renderRequest = (call: Call): Skill.RenderRequest => requestOf(call.method, call.request)

/** The skill rendered for this request's caller (once per request, shared under `shareKey`). */
export const render: (call: Call, skill: Snapshot.RenderedSkill) => Effect.Effect<Rendering, WireError> = Effect.fnUntraced(function*(call, skill) {
  const known = call.renders.get(skill.index)
  if (known !== undefined) return known
  const definition = skill.definition
  const request = renderRequest(call)
  const key = definition.shareKey?.(request)
  const keep = shareFor(definition.shareFor)
  const own = key === undefined || Duration.isZero(keep)
    ? yield* renderNow(definition, skill.uri, request, call.snapshot.limits, call.faults)
    : yield* Cache.get(call.renderings, new RenderKey(definition, key, skill.uri, request, call.snapshot.limits, keep, call.faults))
  // Shared renderings hold the skill's own files: what of its nested skills it shows is per caller.
  const rendering = yield* withNested(call, skill, own)
  call.renders.set(skill.index, rendering)
  return rendering
})

// A family's callback: run with the request's services and the family's time limit. `NoSuchInstance`
// and `NotAllowed` are answers, not failures: `None`, the instance (or the listing) as absent, and
// nothing logged. Any other failure, or a timeout, is the author's: one line about the family
// (`Faults`), and the caller is told which skill and why, plainly.
const runCallback = <A>(
  call: Call,
  family: Snapshot.FamilyEntry,
  what: string,
  callback: Effect.Effect<A, unknown, any>
): Effect.Effect<Option.Option<A>, WireError> =>
  Effect.flatMap(call.services, (services) =>
    callback.pipe(
      Effect.provideContext(services),
      Effect.timeoutOrElse({ duration: family.timeout, orElse: () => Effect.fail(timedOut) }),
      Effect.map(Option.some),
      Effect.catchCause((cause): Effect.Effect<Option.Option<A>, WireError> => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
        const error = Cause.hasFails(cause) ? Cause.squash(cause) : undefined
        if (error instanceof SkillFamily.NoSuchInstance || error instanceof SkillFamily.NotAllowed) return Effect.succeedNone
        const why = error === timedOut ? `it did not finish within ${Duration.format(family.timeout)}` : "it failed"
        return Effect.andThen(
          call.faults.report(familyKey(family), `${what}: ${why}${error === timedOut ? "" : `: ${Faults.describe(cause)}`}`),
          Effect.fail({ code: internalError.code, message: `${what}: ${why}` })
        )
      })
    )
  ) as Effect.Effect<Option.Option<A>, WireError>

const timedOut = Symbol.for("@mcp-skills/server/FamilyTimeout")

/**
 * A family instance rendered for this request's caller (once per request); `undefined` when the
 * family says there is no such instance for this caller.
 */
export const renderInstance = Effect.fnUntraced(function*(call: Call, skill: Snapshot.InstanceSkill) {
  if (call.renders.has(skill.uri)) return call.renders.get(skill.uri)
  const what = `the skill ${skill.uri} could not be rendered`
  const files = yield* runCallback(call, skill.family, what, skill.family.definition.render(skill.params, renderRequest(call)))
  const rendering = Option.isNone(files) ? undefined : yield* renderingOf(
    call.faults,
    skill.uri,
    filesOf(files.value),
    call.snapshot.limits,
    `${what}: it rendered an invalid skill`,
    { code: internalError.code, message: `${what}: it rendered an invalid skill` },
    familyKey(skill.family)
  )
  call.renders.set(skill.uri, rendering)
  return rendering
})

/** One page of a family's instances: their parameters and the family's cursor of the next page. */
export interface InstancePage {
  readonly instances: ReadonlyArray<PathTemplate.Params>
  readonly nextCursor: string | undefined
}

const noInstances: InstancePage = { instances: [], nextCursor: undefined }

/**
 * Asks a family for one page of instances for this request's caller (none for an unlisted one, or
 * when the family says this caller has none or may not list them).
 */
export const listInstances = (
  call: Call,
  family: Snapshot.FamilyEntry,
  cursor: string | undefined
): Effect.Effect<InstancePage, WireError> => {
  const list = family.definition.list
  if (list === undefined) return Effect.succeed(noInstances)
  const what = `the family ${familyKey(family)} could not list its skills`
  return Effect.map(
    runCallback(call, family, what, list({ ...renderRequest(call), cursor })),
    Option.match({
      onNone: () => noInstances,
      onSome: (listed: Skill.Instances<PathTemplate.Params>) =>
        "instances" in listed
          ? { instances: listed.instances, nextCursor: listed.nextCursor }
          : { instances: listed, nextCursor: undefined }
    })
  )
}

// The surfaces of a skill known through one rendering per request (rendered skills, family instances).
const renderedKind = <S extends Snapshot.RenderedSkill | Snapshot.InstanceSkill>(
  render: (call: Call, skill: S) => Effect.Effect<Rendering | undefined, WireError>
): Kind<S> => ({
  entry: (call, skill) => Effect.map(render(call, skill), (rendering) => rendering?.entry),
  resource: (call, skill) =>
    Effect.map(render(call, skill), (rendering) => {
      if (rendering === undefined) return undefined
      const description = rendering.manifest.frontmatter.description
      return {
        ...skill.resource,
        name: rendering.manifest.frontmatter.name,
        ...(typeof description === "string" ? { description } : {}),
        ...(rendering.manifest.files.length === 0 ? {} : { size: rendering.manifest.files.size(0) })
      }
    }),
  read: (call, skill, uri) =>
    Effect.map(render(call, skill), (rendering) => {
      const files = rendering?.manifest.files
      const index = files === undefined ? -1 : files.indexOfUri(uri)
      return index === -1 ? undefined : { mimeType: MimeType.fromPath(files!.path(index)), content: wireContent(files!.bytes(index)!) }
    }),
  directory: (call, skill, uri) =>
    Effect.map(render(call, skill), (rendering) => {
      if (rendering === undefined) return undefined
      const files = rendering.manifest.files
      const sizes = new Map(Array.from({ length: files.length }, (_, index) => [files.path(index), files.size(index)] as const))
      return childrenOf(skill, uri, sizes.keys(), sizes)
    }),
  perCaller: true
})

/** Rendered skills: one rendering per request, from which every surface answers. */
const Rendered: Kind<Snapshot.RenderedSkill> = renderedKind(render)

/** Family instances: resolved from their URI, rendered once per request like a rendered skill. */
const Instance: Kind<Snapshot.InstanceSkill> = renderedKind(renderInstance)

/** Every kind's implementation of the port, by tag: adding a kind without one does not compile. */
const kinds: { readonly [K in Snapshot.ServedSkill["_tag"]]: Kind<Extract<Snapshot.ServedSkill, { readonly _tag: K }>> } = {
  Static,
  Dynamic,
  Rendered,
  Instance
}

/** The port implementation of `skill`'s kind. */
export const kindOf = <S extends Snapshot.ServedSkill>(skill: S): Kind<S> => kinds[skill._tag] as unknown as Kind<S>
