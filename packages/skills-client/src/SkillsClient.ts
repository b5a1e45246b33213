/**
 * A verifying client for the MCP Skills extension (SEP-2640) over effect's `McpClient` transports.
 * Nothing is fetched before it is needed (R127); every file is checked against the held entry
 * (spec §5.1) before its bytes are handed out.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as McpClient from "effect/ai/McpClient"
import { McpClientError } from "effect/ai/McpClientError"
import type * as HttpClient from "effect/http/HttpClient"
import * as ChildProcess from "effect/process/ChildProcess"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import * as Scope from "effect/Scope"
import {
  CacheHint,
  type Digest,
  type EffectSupport,
  Extension,
  Limits,
  type McpTelemetry,
  type Protocol,
  Skill
} from "@mcp-skills/core"
import * as ClientLimits from "./ClientLimits.js"
import * as Entries from "./internal/entries.js"
import * as HttpConnection from "./internal/httpConnection.js"
import * as Negotiate from "./internal/negotiate.js"
import * as Paging from "./internal/paging.js"
import * as Results from "./internal/results.js"
import * as Settings from "./internal/settings.js"
import * as StdioConnection from "./internal/stdioConnection.js"
import * as Telemetry from "./internal/telemetry.js"
import * as Transport from "./internal/transport.js"
import * as SkillCache from "./SkillCache.js"
import * as Verification from "./Verification.js"
import {
  CursorRejected,
  DigestMismatch,
  DirectoryNotFound,
  DirectoryReadNotSupported,
  type DynamicSkillRefused,
  ExtensionNotSupported,
  LimitExceeded,
  RepeatedCursor,
  ResourceNotFound,
  RunawayListing,
  type ServerStopped,
  SizeMismatch,
  type SignatureError,
  SkillNotFound,
  type StdioError,
  type UnlistedResource,
  type VerificationError,
  WrongResourceReturned
} from "./SkillsClientError.js"

/**
 * Options shared by every constructor.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /**
   * The host-assigned identity of the server (R21, R23, R144): it namespaces the cache and is
   * named in errors. The layers default it to the URL or the command line.
   */
  readonly server: string
  /** Deadline of every request, the handshake included. Default `ClientLimits.Timeout` (60 seconds). */
  readonly timeout?: Duration.Input | undefined
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  /**
   * Per-skill limits; larger values are an explicit choice (R15). Default the spec limits. The
   * largest message follows from them (`ClientLimits.maxMessageBytes`).
   */
  readonly limits?: Limits.Limits | undefined
  /** The most entries one listing holds, whatever the page size. Default `ClientLimits.MaxEntries`. */
  readonly maxEntries?: number | undefined
  /** The most bytes of pages one listing holds. Default `ClientLimits.MaxListingBytes` (1 GiB). */
  readonly maxListingBytes?: number | undefined
  /** Load `"dynamic"` skills, which carry no digests (R12, R141). Default false. */
  readonly allowDynamic?: boolean | undefined
  /**
   * The authors whose signatures this client trusts (see `Verification.Trust`). With it, every
   * entry's signatures are checked before any of its files is read, and a skill that fails the
   * check is refused (`UnsignedSkill`, `SignatureInvalid`, `UntrustedSigner`). Default: no
   * signature is checked.
   */
  readonly trust?: Verification.Trust | undefined
}

/**
 * A listing of skills.
 *
 * @since 0.1.0
 * @category models
 */
export interface Listing {
  /** Valid entries in server order. */
  readonly skills: ReadonlyArray<Skill.Skill>
  /** Entries that were refused (R6); they are never loaded. */
  readonly invalid: ReadonlyArray<Skill.InvalidSkillEntry>
  /** The hint of the first page (R36: every page has the same scope). */
  readonly cacheHint: CacheHint.CacheHint
  /** Set only when one page was asked for and more follow. */
  readonly nextCursor?: string | undefined
}

/**
 * @since 0.1.0
 * @category options
 */
export interface ListOptions {
  /** Fetch the single page at this cursor instead of walking every page. */
  readonly cursor?: string | undefined
  /** Fetch only one page (the first, or the one at `cursor`). */
  readonly onePage?: boolean | undefined
  /** `"report"` (default) returns invalid entries in `invalid`; `"fail"` fails the call on the first. */
  readonly invalid?: "report" | "fail" | undefined
}

/**
 * One skill entry from `skills/get`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Fetched {
  readonly skill: Skill.Skill
  readonly cacheHint: CacheHint.CacheHint
}

/**
 * A file that passed every check against its entry.
 *
 * @since 0.1.0
 * @category models
 */
export interface VerifiedFile {
  readonly skill: string
  readonly uri: string
  readonly mimeType: string | undefined
  readonly bytes: Uint8Array
  /** The manifest digest the bytes were verified against; `undefined` for `"dynamic"` skills. */
  readonly digest: Digest.Digest | undefined
  /** False for files of `"dynamic"` skills, which cannot be verified beyond their frontmatter. */
  readonly verified: boolean
}

/**
 * A loaded skill: its `SKILL.md`, verified, and the parsed frontmatter and body.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoadedSkill {
  readonly skill: Skill.Skill
  readonly skillMd: VerifiedFile
  readonly frontmatter: Schema.JsonObject
  readonly body: string
}

/**
 * @since 0.1.0
 * @category errors
 */
export type ListError =
  | McpClientError
  | ServerStopped
  | ExtensionNotSupported
  | Skill.InvalidSkillEntry
  | CursorRejected
  | RepeatedCursor
  | RunawayListing

/**
 * @since 0.1.0
 * @category errors
 */
export type GetError =
  | McpClientError
  | ServerStopped
  | ExtensionNotSupported
  | SkillNotFound
  | Skill.InvalidSkillEntry
  | WrongResourceReturned

/**
 * @since 0.1.0
 * @category errors
 */
export type ReadError = McpClientError | ServerStopped | VerificationError | ResourceNotFound

/**
 * @since 0.1.0
 * @category errors
 */
export type DirectoryError =
  | McpClientError
  | ServerStopped
  | DirectoryReadNotSupported
  | DirectoryNotFound
  | CursorRejected
  | RepeatedCursor
  | RunawayListing
  | WrongResourceReturned

/**
 * The operations of a connected Skills client.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The host-assigned identity of the server. */
  readonly server: string
  readonly protocolVersion: McpClient.ProtocolVersion
  /** The declared extension settings, or `undefined` when the server does not declare it. */
  readonly capability: Extension.Capability | undefined
  /** The underlying MCP client, for tools, prompts and plain resources. */
  readonly mcp: McpClient.McpClient
  /** Lists skills; never fetches any file (R127). */
  readonly listSkills: (options?: ListOptions) => Effect.Effect<Listing, ListError>
  /** Fetches one entry by its `SKILL.md` uri (R30, R42). */
  readonly getSkill: (uri: string) => Effect.Effect<Fetched, GetError>
  /**
   * Lists the direct children of a directory (MCP `Resource`s; a directory's `mimeType` is
   * `inode/directory`); refused locally unless `directoryRead` (R49).
   */
  readonly readResourceDirectory: (uri: string) => Effect.Effect<ReadonlyArray<Protocol.ResourceEntry>, DirectoryError>
  /**
   * The checks an entry alone allows beyond its shape: limits, `"dynamic"` (R12, R17) and, with
   * `trust`, its signatures; every read makes them first. Answers the entry as checked, with the
   * trusted signers whose signatures verify.
   */
  readonly checkEntry: (
    skill: Skill.Skill
  ) => Effect.Effect<Verification.CheckedEntry, LimitExceeded | DynamicSkillRefused | SignatureError>
  /**
   * Reads one file of a skill by uri or by a reference relative to the skill root (R103) and
   * verifies it (spec §5.1 steps 3-8).
   */
  readonly readSkillResource: (skill: Skill.Skill, uriOrReference: string) => Effect.Effect<VerifiedFile, ReadError>
  /** Reads and verifies `SKILL.md` alone (R127); supporting files are read on demand. */
  readonly loadSkill: (skill: Skill.Skill) => Effect.Effect<LoadedSkill, ReadError>
}

/**
 * The Skills client service.
 *
 * @since 0.1.0
 * @category services
 */
export class SkillsClient extends Context.Service<SkillsClient, Service>()("@mcp-skills/client/SkillsClient") {}

/**
 * Connects over an existing transport. The scope owns the connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  transport: McpClient.Transport,
  options: Options
): Effect.Effect<Service, McpClientError | EffectSupport.UnsupportedEffect, Scope.Scope> =>
  makeWith(transport, options, undefined)

// `lift` takes a failure of the connection's own (a stopped stdio server) out of the
// McpClientError that carried it through effect's McpClient.
const makeWith = Effect.fnUntraced(function*(
  transport: McpClient.Transport,
  options: Options,
  send: Transport.Send | undefined,
  network?: McpTelemetry.Transport | undefined,
  lift: (error: McpClientError) => McpClientError | ServerStopped = (error) => error
): Effect.fn.Return<Service, McpClientError | EffectSupport.UnsupportedEffect, Scope.Scope> {
  const { timeout, trust } = yield* Settings.settle(options.timeout, options.trust)
  const limits = options.limits ?? Limits.defaults
  const server = options.server
  const cache = yield* SkillCache.SkillCache
  const clientInfo = options.clientInfo ?? Settings.clientInfo
  const connection = yield* Transport.connect(transport, { clientInfo, timeout, send, network })
  const extensions = Predicate.isObject(connection.capabilities) ? connection.capabilities.extensions : undefined
  const declared = Predicate.isObject(extensions) ? extensions[Extension.ExtensionId] : undefined
  // A declaration that is not an object is treated as absent: nothing it promises can be relied on.
  const capability = declared === undefined ? undefined : Option.getOrUndefined(Results.decodeCapability(declared))

  const request = (method: string, params: Record<string, unknown>) =>
    Effect.mapError(connection.request(method, params, timeout), lift)

  const requireExtension = capability === undefined
    ? Effect.fail(new ExtensionNotSupported({ server }))
    : Effect.void

  const walk = Paging.walker(request, options)

  const { remember, isFresh, checkedOf } = Entries.make({ limits, allowDynamic: options.allowDynamic ?? false, trust })

  const listSkills = Effect.fnUntraced(function*(listOptions: ListOptions = {}) {
    yield* requireExtension
    const invalidMode = listOptions.invalid ?? "report"
    const skills: Array<Skill.Skill> = []
    const invalid: Array<Skill.InvalidSkillEntry> = []
    const { pages, nextCursor } = yield* walk(
      Extension.ListSkillsMethod,
      {},
      listOptions.cursor,
      listOptions.onePage === true || listOptions.cursor !== undefined,
      Results.decodeListPage,
      Effect.fnUntraced(function*(result) {
        const page = Results.decodeEntries(result.skills)
        if (invalidMode === "fail" && page.invalid.length > 0) return yield* page.invalid[0]!
        skills.push(...page.skills)
        invalid.push(...page.invalid)
        return page.skills.length + page.invalid.length
      }),
      // skills/list takes no parameter but the cursor: a refusal without one is a protocol fault.
      (error) => error
    )
    const { unique, repeated } = Results.withoutRepeated(skills)
    if (invalidMode === "fail" && repeated.length > 0) return yield* repeated[0]!
    invalid.push(...repeated)
    yield* remember(skills, CacheHint.fromResult(pages[0]!))
    return {
      skills: unique,
      invalid,
      cacheHint: CacheHint.fromResult(pages[0]!),
      ...(listOptions.onePage === true || listOptions.cursor !== undefined ? { nextCursor } : {})
    } satisfies Listing as Listing
  })

  const fetchSkill = Effect.fnUntraced(function*(uri: string) {
    yield* requireExtension
    const result = yield* request(Extension.GetSkillMethod, { uri }).pipe(
      Results.refusedWith((error) => new SkillNotFound({ uri, detail: error.message }))
    )
    const envelope = yield* Results.decodeGetEnvelope(result)
    // An answer for another skill is never accepted in place of the one asked for (spec §7 item 12).
    const answered = Predicate.isObject(envelope.skill) ? envelope.skill.uri : undefined
    if (answered !== uri) return yield* new WrongResourceReturned({ uri, returned: [String(answered)] })
    const decoded = Skill.decode(envelope.skill)
    if (Result.isFailure(decoded)) return yield* decoded.failure
    const fetched: Fetched = { skill: decoded.success, cacheHint: CacheHint.fromResult(envelope) }
    yield* remember([fetched.skill], fetched.cacheHint)
    return fetched
  })

  const getSkill = (uri: string) => Telemetry.verified("mcp_skills.get_verified", Telemetry.verificationKind, fetchSkill(uri))

  const readResourceDirectory = Effect.fnUntraced(function*(uri: string) {
    if (capability?.directoryRead !== true) return yield* new DirectoryReadNotSupported({ uri })
    const children: Array<Protocol.ResourceEntry> = []
    yield* walk(
      Extension.ReadResourceDirectoryMethod,
      { uri },
      undefined,
      false,
      Results.decodeDirectoryPage,
      Effect.fnUntraced(function*(result) {
        const { children: found, outside } = Results.directChildren(uri, result.resources)
        if (outside.length > 0) return yield* new WrongResourceReturned({ uri, returned: outside })
        children.push(...found)
        return found.length
      }),
      (error) => new DirectoryNotFound({ uri, detail: error.message })
    )
    return children as ReadonlyArray<Protocol.ResourceEntry>
  })

  const checkEntry = (skill: Skill.Skill) => Effect.fromResult(checkedOf(skill))

  // Bytes fetched per `"dynamic"` skill, counted against the byte limit (R18): per entry held, so
  // a load that fetches the entry again (or a gateway reading on each request) starts anew.
  const dynamicBudget = new WeakMap<Skill.Skill, number>()

  // Answers the verified file, the entry it was verified against and, for SKILL.md, its parsed document.
  const readOnce = Effect.fnUntraced(function*(skill: Skill.Skill, uriOrReference: string) {
    const entry = yield* Effect.fromResult(checkedOf(skill))
    const target = yield* Effect.fromResult(Verification.resolveTarget(entry, uriOrReference))
    const { uri, resource } = target
    const isSkillMd = uri === skill.uri
    const document = (bytes: Uint8Array) =>
      isSkillMd ? Effect.fromResult(Verification.checkFrontmatter(skill, bytes)) : Effect.succeed(undefined)

    if (resource !== undefined) {
      const cached = yield* cache.get({ server, uri, digest: resource.digest, size: resource.size })
      if (cached !== undefined) {
        // A hit matches the digest it is stored under (the store hashed it); the entry's size must
        // agree with it too, as after a network read (an entry contradicting itself is not cured
        // by a cache).
        yield* Effect.fromResult(Verification.checkSize(skill.uri, resource, cached.bytes))
        const file: VerifiedFile = { skill: skill.uri, uri, mimeType: cached.mimeType, bytes: cached.bytes, digest: resource.digest, verified: true }
        return { skill, file, document: yield* document(cached.bytes) }
      }
    }

    const result = yield* request("resources/read", { uri }).pipe(
      Results.refusedWith((error) => new ResourceNotFound({ skill: skill.uri, uri, detail: error.message }), Results.ResourceNotFoundCodes)
    )
    const items = yield* Effect.fromResult(Verification.decodeContents(uri, result))
    const { bytes, mimeType } = yield* Effect.fromResult(Verification.selectItem(entry, target, items))
    if (resource === undefined) {
      const used = (dynamicBudget.get(skill) ?? 0) + bytes.byteLength
      if (used > limits.maxTotalBytes) {
        return yield* new LimitExceeded({ uri: skill.uri, limit: "bytes", actual: used, max: limits.maxTotalBytes })
      }
      dynamicBudget.set(skill, used)
    }
    const parsed = yield* document(bytes)
    if (resource !== undefined) yield* cache.set({ server, uri, digest: resource.digest, size: resource.size }, { bytes, mimeType })
    const file: VerifiedFile = { skill: skill.uri, uri, mimeType, bytes, digest: resource?.digest, verified: resource !== undefined }
    return { skill, file, document: parsed }
  })

  // A size or digest mismatch or a missing file against an entry that may be stale gets the entry
  // again and reads once more (spec §5.1: a client re-gets the entry and retries); a second
  // failure, or one against a fresh entry, is the error, counting the re-get. A file the new entry
  // no longer lists was removed.
  const readVerified = (skill: Skill.Skill, uriOrReference: string) =>
    Telemetry.verified(
      "mcp_skills.read_verified",
      Telemetry.verificationKind,
      readOnce(skill, uriOrReference).pipe(
        Effect.catchTags({
          SizeMismatch: (error) => heal(skill, uriOrReference, error),
          DigestMismatch: (error) => heal(skill, uriOrReference, error),
          ResourceNotFound: (error) => heal(skill, uriOrReference, error)
        })
      )
    )

  const heal = (skill: Skill.Skill, uriOrReference: string, error: SizeMismatch | DigestMismatch | ResourceNotFound) =>
    Effect.gen(function*() {
      if (skill.resources === "dynamic" || capability === undefined || (yield* isFresh(skill))) return yield* error
      const fetched = yield* Effect.option(getSkill(skill.uri))
      if (Option.isNone(fetched)) return yield* error
      return yield* readOnce(fetched.value.skill, uriOrReference).pipe(
        Effect.catchTags({
          SizeMismatch: (again) => Effect.fail(new SizeMismatch({ ...again, entryRefetches: 1 })),
          DigestMismatch: (again) => Effect.fail(new DigestMismatch({ ...again, entryRefetches: 1 })),
          ResourceNotFound: (again) => Effect.fail(new ResourceNotFound({ ...again, entryRefetches: 1 })),
          UnlistedResource: (unlisted: UnlistedResource) =>
            Effect.fail(
              new ResourceNotFound({
                skill: unlisted.skill,
                uri: unlisted.uri,
                detail: `the entry fetched again no longer lists it (${error.message})`,
                entryRefetches: 1
              })
            )
        })
      )
    })

  const readSkillResource = (skill: Skill.Skill, uriOrReference: string) =>
    Effect.map(readVerified(skill, uriOrReference), ({ file }) => file)

  const loadSkill = (skill: Skill.Skill) =>
    Effect.map(readVerified(skill, skill.uri), ({ skill, file, document }): LoadedSkill => ({
      // The entry fetched again when the one given was stale.
      skill,
      skillMd: file,
      // readVerified parses every SKILL.md it answers.
      frontmatter: document!.frontmatter,
      body: document!.body
    }))

  return SkillsClient.of({
    server,
    protocolVersion: connection.protocolVersion,
    capability,
    mcp: connection.mcp,
    listSkills,
    getSkill,
    readResourceDirectory,
    checkEntry,
    readSkillResource,
    loadSkill
  })
})

/**
 * A protocol revision, or `"auto"`: 2026-07-28 first, and 2025-11-25 when the server rejects the
 * 2026-07-28 handshake.
 *
 * @since 0.1.0
 * @category models
 */
export type ProtocolChoice = McpClient.ProtocolVersion | "auto"

const negotiate = <C, R>(
  choice: ProtocolChoice | undefined,
  connect: Negotiate.Connect<C, R>,
  options: Options,
  lift?: (error: McpClientError) => McpClientError | ServerStopped
): Effect.Effect<Service, C | McpClientError | EffectSupport.UnsupportedEffect, R | Scope.Scope> =>
  Negotiate.negotiate(choice, connect, (transport, send, network) => makeWith(transport, options, send, network, lift))

/**
 * Headers for every HTTP request: fixed values, or an Effect run before each request (a token
 * that refreshes). The Effect cannot fail: recover from a failed refresh inside it.
 *
 * @since 0.1.0
 * @category models
 */
export type Headers = Readonly<Record<string, string>> | Effect.Effect<Readonly<Record<string, string>>>

/**
 * Connects over Streamable HTTP. Needs an `HttpClient` (`FetchHttpClient.layer` or
 * `NodeHttpClient.layerNodeHttp`). `server` defaults to the URL; `protocolVersion` to `"auto"`;
 * `headers` go with every request, the handshake included (see {@link Headers}).
 *
 * @example
 * ```ts
 * import { SkillsClient } from "@mcp-skills/client"
 * import { Effect, Layer } from "effect"
 * import { FetchHttpClient } from "effect/http"
 * const uris = Effect.map(Effect.flatMap(SkillsClient.SkillsClient, (client) => client.listSkills()), (l) => l.skills.map((s) => s.uri))
 * Effect.provide(uris, SkillsClient.layerHttp({ url: "http://127.0.0.1:3000/mcp" }).pipe(Layer.provide(FetchHttpClient.layer)))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttp = (
  options: Omit<Options, "server"> & {
    readonly url: string
    readonly server?: string | undefined
    readonly headers?: Headers | undefined
    readonly protocolVersion?: ProtocolChoice | undefined
    /**
     * How the extension's own requests (`skills/*`, `resources/read`, directory reads) travel over
     * stateless 2026-07-28: `"HttpClient"` (default) through the provided `HttpClient`, or `"lean"`
     * through `node:http(s)` on one keep-alive agent with at most `maxConnections` sockets (default
     * `ClientLimits.MaxConnections`, 8), bypassing `HttpClient` middleware (use `headers` instead),
     * and faster for it. Every rule, check and error is the same; the handshake and every other
     * method always use `McpClient`, and 2025-11-25 sessions stay there.
     */
    readonly readTransport?: "HttpClient" | "lean" | undefined
    readonly maxConnections?: number | undefined
  }
): Layer.Layer<SkillsClient, McpClientError | EffectSupport.UnsupportedEffect, HttpClient.HttpClient> => {
  const connect = negotiate(
    options.protocolVersion,
    (protocol) =>
      HttpConnection.connect(protocol, {
        url: options.url,
        headers: options.headers,
        readTransport: options.readTransport,
        maxConnections: options.maxConnections,
        maxMessageBytes: ClientLimits.maxMessageBytes(options.limits ?? Limits.defaults)
      }),
    { ...options, server: options.server ?? options.url }
  )
  return Layer.effect(SkillsClient, HttpConnection.withHeaders(options.headers, connect))
}

/**
 * Spawns a server and connects over stdio. Needs a `ChildProcessSpawner`
 * (`NodeServices.layer`). `server` defaults to the command line; `protocolVersion` to `"auto"`.
 * A command that cannot start fails with `ServerNotStarted`; a server that stops, at the
 * handshake or later, with `ServerStopped`: its exit code and the end of its stderr.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStdio = (
  options: Omit<Options, "server"> & {
    readonly command: string
    readonly args?: ReadonlyArray<string> | undefined
    readonly env?: Readonly<Record<string, string>> | undefined
    readonly cwd?: string | undefined
    readonly server?: string | undefined
    readonly protocolVersion?: ProtocolChoice | undefined
  }
): Layer.Layer<SkillsClient, McpClientError | EffectSupport.UnsupportedEffect | StdioError, ChildProcessSpawner> => {
  const server = options.server ?? [options.command, ...(options.args ?? [])].join(" ")
  const command = ChildProcess.make(options.command, [...(options.args ?? [])], {
    ...(options.env === undefined ? {} : { env: options.env, extendEnv: true }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd })
  })
  const maxMessageBytes = ClientLimits.maxMessageBytes(options.limits ?? Limits.defaults)
  return Layer.effect(
    SkillsClient,
    negotiate(
      options.protocolVersion,
      (protocol) => StdioConnection.connect(protocol, { command, server, maxMessageBytes }),
      { ...options, server },
      StdioConnection.lift
    ).pipe(Effect.mapError((error) => error instanceof McpClientError ? StdioConnection.lift(error) : error))
  )
}
