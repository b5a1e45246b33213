/**
 * Skills as a server author writes them: from code, from files loaded elsewhere (a directory),
 * dynamic (content produced by an Effect on each request, no digests), rendered (files rendered
 * per request from a template and the request, with digests of the rendered bytes), or a family
 * (one rendered skill per set of path parameters, see `SkillFamily`). Any of them may carry its own
 * `cacheHint`.
 *
 * These are plain descriptions. Nothing is validated here: `SkillRegistry.make` validates every
 * definition at once (names, frontmatter, paths, limits) and reports every problem it finds.
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Skill } from "@mcp-skills/server"
 *
 * const refunds = Skill.make({
 *   path: "acme/billing/refunds",
 *   files: {
 *     "SKILL.md": "---\nname: refunds\ndescription: Issue refunds\n---\n\n# Refunds\n",
 *     "references/policy.md": "# Policy\n"
 *   }
 * })
 *
 * const daily = Skill.dynamic({
 *   path: "reports/daily",
 *   frontmatter: { name: "daily", description: "Today's operations report" },
 *   read: (path) => Effect.succeed(path === "SKILL.md" ? "---\nname: daily\ndescription: Today's operations report\n---\n" : undefined),
 *   list: Effect.succeed(["SKILL.md"])
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type { McpSchema } from "effect/ai"
import type * as Headers from "effect/http/Headers"
import type * as Stream from "effect/Stream"
import type { Digest, Manifest, Signing } from "@mcp-skills/core"
import type * as PathTemplate from "./PathTemplate.js"
import * as ServerLimits from "./ServerLimits.js"

/**
 * File content as written in code: text (stored as its UTF-8 bytes) or raw bytes.
 *
 * @since 0.1.0
 * @category models
 */
export type Content = string | Uint8Array

/**
 * One file of a skill: a `/`-separated path relative to the skill root and its raw bytes. This is
 * the shape a directory loader produces.
 *
 * @since 0.1.0
 * @category models
 */
export interface File {
  readonly path: string
  readonly bytes: Uint8Array
}

/**
 * Freshness hint for 2026-07-28 results (SEP-2549): how long a client may reuse a result and
 * whether shared caches may hold it. A skill, a directory root or the whole server may set one.
 *
 * @since 0.1.0
 * @category models
 */
export interface CacheHint {
  readonly ttl: Duration.Input
  readonly scope?: "public" | "private" | undefined
}

/**
 * Where a skill a server re-serves came from (an upstream server behind a gateway): relayed in its
 * entry's `_meta` under {@link ProvenanceMetaKey}. Signatures cover none of it: it says who served
 * the bytes, not who wrote them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Provenance {
  /** The source's name (an upstream's prefix). */
  readonly source: string
  /** The skill's `SKILL.md` URI at its source. */
  readonly uri: string
  /** When the files served were verified against the source's entry (ISO 8601). */
  readonly verifiedAt: string
}

/**
 * The `_meta` key of an entry's {@link Provenance}: a prefix of this project's own (R139: never
 * `io.modelcontextprotocol.skills/`).
 *
 * @since 0.1.0
 * @category constants
 */
export const ProvenanceMetaKey = "dev.mcp-skills/provenance" as const

/**
 * Options every skill shares.
 *
 * @since 0.1.0
 * @category models
 */
export interface Common {
  /** Decoded skill-path segments; the last one is the skill's name (R4, R96). */
  readonly path: ReadonlyArray<string>
  /** URI scheme, lower case; `skill` unless a domain scheme is wanted (R100). */
  readonly scheme: string
  /** `false` keeps the skill out of `skills/list` while `skills/get` and reads still answer. */
  readonly listed: boolean
  /** This skill's own cache hint; results about it carry the stricter of it and the server's. */
  readonly cacheHint?: CacheHint | undefined
}

/**
 * A file of a static skill served on demand: left on disk at `location` (an absolute path), read
 * on every `resources/read` and sent only if its size and SHA-256 are still `size` and `digest`.
 * What `DirectorySource` makes of files above its `onDemandAbove` threshold.
 *
 * @since 0.1.0
 * @category models
 */
export interface DiskFile {
  /** Relative to the skill root, `/`-separated. */
  readonly path: string
  readonly location: string
  readonly size: number
  readonly digest: Digest.Digest
}

/**
 * A manifest as a static skill keeps it: every file's path, digest and size, and the bytes of the
 * files held in memory (files on disk are read on request), without the body, which is served only
 * as part of `SKILL.md`'s bytes. A `Manifest.Manifest` is one.
 *
 * @since 0.1.0
 * @category models
 */
export type ManifestView = Omit<Manifest.Manifest, "body">

/**
 * A skill whose files are known when the server starts: every file is hashed once and served with
 * its digest (R7, R9, R14).
 *
 * @since 0.1.0
 * @category models
 */
export interface Static extends Common {
  readonly _tag: "Static"
  /**
   * Every file held in memory. A skill made from a manifest (`fromFiles` of a directory's skill)
   * makes these from it when read: the registry takes the manifest and never reads them.
   */
  readonly files: ReadonlyArray<File>
  /**
   * Files served on demand (see `DiskFile`). They need `manifest`: the registry cannot hash bytes
   * it does not hold.
   */
  readonly onDisk?: ReadonlyArray<DiskFile> | undefined
  /**
   * The manifest of exactly `files` and `onDisk`, holding the bytes of `files`, when the caller
   * already validated and hashed them (a directory source does): the registry then hashes nothing
   * again.
   */
  readonly manifest?: ManifestView | undefined
  /**
   * Authors' signatures of this skill (`Signing.sign` of its entry, made offline), relayed in the
   * entry's `_meta` under `Signing.MetaKey`. The registry checks them against the files it serves.
   */
  readonly signatures?: ReadonlyArray<Signing.Signature> | undefined
  /** Where the skill came from, when this server re-serves it (see `Provenance`). */
  readonly provenance?: Provenance | undefined
}

/**
 * A skill whose files are produced per request (`"resources": "dynamic"`, R11). `read` answers one
 * file by its relative path (`undefined` means there is no such file); `list` gives every relative
 * file path, for directory reads. When `frontmatter` is not given, the registry reads `SKILL.md`
 * once at registration to learn it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Dynamic extends Common {
  readonly _tag: "Dynamic"
  readonly frontmatter: Readonly<Record<string, unknown>> | undefined
  readonly read: (path: string) => Effect.Effect<Content | undefined, unknown>
  readonly list: Effect.Effect<ReadonlyArray<string>, unknown> | undefined
  /** Where the skill came from, when this server re-serves it (see `Provenance`). */
  readonly provenance?: Provenance | undefined
}

/**
 * What a rendered skill's template sees of the request it renders for.
 *
 * @since 0.1.0
 * @category models
 */
export interface RenderRequest {
  readonly method: string
  readonly protocolVersion: string
  /** HTTP request headers (empty over stdio). */
  readonly headers: Headers.Headers
  /** The 2025-11-25 HTTP session id, if any. */
  readonly sessionId: string | undefined
  readonly requestContext: McpSchema.McpRequestContext["Service"]
}

/**
 * A skill whose files are rendered for each request from a template and the request (the caller's
 * name from a header, a service, ...). Unlike a dynamic skill it is fully verifiable: the entry's
 * digests are computed from the bytes rendered for that caller, and `resources/read` of its files
 * serves those same bytes. A request renders it at most once; `skills/list`, `skills/get`,
 * `resources/read`, `resources/list` and directory reads all use that one rendering.
 *
 * Results about it are `cacheScope: "private"`, and a rendering is never reused by another request
 * unless `shareKey` says two requests render the same bytes (for instance the tenant id): then
 * renderings are kept by that key for `shareFor` (default 0: only concurrent requests share).
 *
 * @since 0.1.0
 * @category models
 */
export interface Rendered extends Common {
  readonly _tag: "Rendered"
  /** Frontmatter for visibility checks before rendering; defaults to `{ name }`. */
  readonly frontmatter: Readonly<Record<string, unknown>> | undefined
  readonly render: (request: RenderRequest) => Effect.Effect<Readonly<Record<string, Content>>, unknown>
  readonly shareKey: ((request: RenderRequest) => string | undefined) | undefined
  readonly shareFor: Duration.Input | undefined
}

/**
 * What `list` sees: the request it enumerates for, and the cursor of the page it is asked for
 * (`undefined` for the first).
 *
 * @since 0.1.0
 * @category models
 */
export interface ListRequest extends RenderRequest {
  readonly cursor: string | undefined
}

/**
 * One page of instances. `nextCursor` is the family's own opaque cursor for the page after it;
 * the server wraps it in its listing cursor, so the family never sees another's cursor.
 *
 * @since 0.1.0
 * @category models
 */
export interface Page<P> {
  readonly instances: ReadonlyArray<P>
  readonly nextCursor?: string | undefined
}

/**
 * Instances of one `list` call: all of them, or one page.
 *
 * @since 0.1.0
 * @category models
 */
export type Instances<P> = ReadonlyArray<P> | Page<P>

/**
 * A family of skills addressed by a path template, rendered per instance (see `SkillFamily`),
 * as the registry receives it. The template's parameter names are erased here (the
 * constructor checked them against the template at compile time); `R` are the per-request
 * services `list` and `render` read. Families whose `list` or `render` need such services are
 * added with `SkillsServer.family`, which carries those requirements in its type.
 *
 * @since 0.1.0
 * @category models
 */
export interface Family<R = never> {
  readonly _tag: "Family"
  /** The skill-path template (`customers/{customer}/onboarding`), validated on registration. */
  readonly path: string
  /** URI scheme, lower case; `skill` unless a domain scheme is wanted (R100). */
  readonly scheme: string
  /** Enumerates instances for `skills/list` and `resources/list`; `undefined`: unlisted. */
  readonly list: ((request: ListRequest) => Effect.Effect<Instances<PathTemplate.Params>, unknown, R>) | undefined
  readonly render: (
    params: PathTemplate.Params,
    request: RenderRequest
  ) => Effect.Effect<Readonly<Record<string, Content>>, unknown, R>
  /** The instances' own hint; its scope is `private` unless it says `public`. */
  readonly cacheHint: CacheHint | undefined
  /** The time limit of one `render` and of one `list` call. */
  readonly timeout: Duration.Input
  /**
   * Emits whenever the family's instances changed (a customer added, a runbook edited): each
   * listener that may see an instance of a listed family is told `list_changed`, and re-lists.
   */
  readonly changes: Stream.Stream<unknown> | undefined
}


/**
 * Options of `family`. The parameter names in `render`'s and `list`'s types come from `path` alone.
 *
 * @since 0.1.0
 * @category options
 */
export interface FamilyOptions<T extends string, R> {
  readonly path: T
  readonly scheme?: string | undefined
  readonly list?: ((request: ListRequest) => Effect.Effect<Instances<NoInfer<PathTemplate.Params<T>>>, unknown, R>) | undefined
  readonly render: (
    params: NoInfer<PathTemplate.Params<T>>,
    request: RenderRequest
  ) => Effect.Effect<Readonly<Record<string, Content>>, unknown, R>
  readonly cacheHint?: CacheHint | undefined
  /** Time `render` and `list` may take; default `ServerLimits.FamilyTimeout` (10 seconds). */
  readonly timeout?: Duration.Input | undefined
  readonly changes?: Stream.Stream<unknown> | undefined
}

/**
 * Any skill the registry accepts.
 *
 * @since 0.1.0
 * @category models
 */
export type Definition = Static | Dynamic | Rendered | Family

/**
 * Plain data for one skill loaded elsewhere: skill-path segments and its files.
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  readonly path: ReadonlyArray<string>
  readonly files: ReadonlyArray<File>
}

/**
 * One skill loaded and validated elsewhere (`DirectorySource.load`): skill-path segments and its
 * manifest, holding the bytes of every file but those served on demand.
 *
 * @since 0.1.0
 * @category models
 */
export interface Validated {
  readonly path: ReadonlyArray<string>
  readonly manifest: ManifestView
  readonly onDisk?: ReadonlyArray<DiskFile> | undefined
}

/**
 * Options of `make`, `fromFiles` and `dynamic` besides the content.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /** `"acme/billing/refunds"` or `["acme", "billing", "refunds"]` (decoded segments). */
  readonly path: string | ReadonlyArray<string>
  readonly listed?: boolean | undefined
  readonly scheme?: string | undefined
  readonly cacheHint?: CacheHint | undefined
}

const encoder = new TextEncoder()

/**
 * The bytes of file content: strings become UTF-8.
 *
 * @since 0.1.0
 * @category utils
 */
export const toBytes = (content: Content): Uint8Array => typeof content === "string" ? encoder.encode(content) : content

const common = (options: Options): Common => ({
  path: typeof options.path === "string" ? options.path.split("/") : options.path,
  scheme: options.scheme ?? "skill",
  listed: options.listed ?? true,
  ...(options.cacheHint === undefined ? {} : { cacheHint: options.cacheHint })
})

const signed = (signatures: ReadonlyArray<Signing.Signature> | undefined) =>
  signatures === undefined || signatures.length === 0 ? {} : { signatures }

/**
 * A skill from code: `files` maps relative paths (`SKILL.md`, `references/policy.md`) to text or
 * bytes; `signatures` are its authors' signatures (see `Static.signatures`).
 *
 * @example
 * ```ts
 * import { Skill } from "@mcp-skills/server"
 *
 * const refunds = Skill.make({
 *   path: "acme/billing/refunds",                   // skill://acme/billing/refunds/SKILL.md
 *   files: {
 *     "SKILL.md": "---\nname: refunds\ndescription: Decide refund requests\n---\n# Refunds\n",
 *     "references/policy.md": "# Policy\n"            // strings or Uint8Array
 *   },
 *   cacheHint: { ttl: "5 minutes", scope: "public" }
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options & {
    readonly files: Readonly<Record<string, Content>>
    readonly signatures?: ReadonlyArray<Signing.Signature> | undefined
  }
): Static => ({
  _tag: "Static",
  ...common(options),
  files: Object.entries(options.files).map(([path, content]) => ({ path, bytes: toBytes(content) })),
  ...signed(options.signatures)
})

/**
 * The files of `manifest` whose bytes it holds, made now.
 *
 * @since 0.1.0
 * @category utils
 */
export const heldFiles = (manifest: ManifestView): ReadonlyArray<File> => {
  const files: Array<File> = []
  for (let index = 0; index < manifest.files.length; index++) {
    const bytes = manifest.files.bytes(index)
    if (bytes !== undefined) files.push({ path: manifest.files.path(index), bytes })
  }
  return files
}

/**
 * A skill from files loaded elsewhere: their paths and bytes, or the manifest `DirectorySource.load`
 * validated them into (then its `files` are made from the manifest when read).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFiles = (
  loaded: (Loaded | Validated) & { readonly signatures?: ReadonlyArray<Signing.Signature> | undefined },
  options?: Omit<Options, "path">
): Static => {
  const base = { ...common({ ...options, path: loaded.path }), ...signed(loaded.signatures) }
  if (!("manifest" in loaded)) return { _tag: "Static", ...base, files: loaded.files }
  // Made with its `files` accessor, then given its fields: a new object, nothing patched.
  const skill: Static = Object.assign(Object.create(Object.prototype, manifestFiles), {
    _tag: "Static" as const,
    ...base,
    ...(loaded.onDisk === undefined || loaded.onDisk.length === 0 ? {} : { onDisk: loaded.onDisk }),
    manifest: loaded.manifest
  })
  return skill
}

// The `files` of every skill made from a manifest: one getter, shared. A getter written in the
// object literal is a new function for each skill, and V8 keeps an object with an accessor of its
// own as a dictionary (about 450 B a skill, 4.5 MiB at 10,000 skills).
const manifestFiles: PropertyDescriptorMap = {
  files: {
    get(this: { readonly manifest: ManifestView }) {
      return heldFiles(this.manifest)
    },
    enumerable: true,
    configurable: true
  }
}

/**
 * A dynamic skill (`"resources": "dynamic"`): files come from `read` on every request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const dynamic = (
  options: Options & {
    readonly read: (path: string) => Effect.Effect<Content | undefined, unknown>
    readonly list?: Effect.Effect<ReadonlyArray<string>, unknown> | undefined
    readonly frontmatter?: Readonly<Record<string, unknown>> | undefined
  }
): Dynamic => ({
  _tag: "Dynamic",
  ...common(options),
  frontmatter: options.frontmatter,
  read: options.read,
  list: options.list
})

/**
 * A skill rendered per request (see {@link Rendered}). `render` returns every file by relative
 * path, `SKILL.md` included.
 *
 * ```ts
 * const greeting = Skill.rendered({
 *   path: "greeting",
 *   render: (request) => Effect.succeed({
 *     "SKILL.md": `---\nname: greeting\ndescription: Greets ${request.headers["x-user"] ?? "you"}\n---\n`
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const rendered = (
  options: Options & {
    readonly render: (request: RenderRequest) => Effect.Effect<Readonly<Record<string, Content>>, unknown>
    readonly frontmatter?: Readonly<Record<string, unknown>> | undefined
    readonly shareKey?: ((request: RenderRequest) => string | undefined) | undefined
    readonly shareFor?: Duration.Input | undefined
  }
): Rendered => ({
  _tag: "Rendered",
  ...common(options),
  frontmatter: options.frontmatter,
  render: options.render,
  shareKey: options.shareKey,
  shareFor: options.shareFor
})

/**
 * A family of skills, one per set of path parameters (see `SkillFamily`).
 *
 * ```ts
 * const onboarding = Skill.family({
 *   path: "customers/{customer}/onboarding",
 *   list: () => Effect.succeed([{ customer: "acme" }]),
 *   render: ({ customer }) => Effect.succeed({
 *     "SKILL.md": `---\nname: onboarding\ndescription: Onboarding ${customer}\n---\n`
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const family = <const T extends string, R = never>(options: FamilyOptions<T, R>): Family<R> => ({
  _tag: "Family",
  path: options.path,
  scheme: options.scheme ?? "skill",
  // The registry only ever passes parameters that matched this template, so the names agree.
  list: options.list as Family<R>["list"],
  render: options.render as Family<R>["render"],
  cacheHint: options.cacheHint,
  timeout: options.timeout ?? ServerLimits.FamilyTimeout,
  changes: options.changes
})
