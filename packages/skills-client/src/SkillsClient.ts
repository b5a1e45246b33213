/**
 * A verifying client for the MCP Skills extension (SEP-2640) over effect's `McpClient` transports.
 * Nothing is fetched before it is needed (R127); every file is checked against the held entry
 * (spec §5.1) before its bytes are handed out.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as McpClient from "effect/ai/McpClient"
import { ConfigurationError, McpClientError, ValidationError } from "effect/ai/McpClientError"
import * as McpProtocol from "effect/ai/McpProtocol"
import type * as HttpClient from "effect/http/HttpClient"
import * as ChildProcess from "effect/process/ChildProcess"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import * as Scope from "effect/Scope"
import { CacheHint, Digest, Extension, Limits, Protocol, Skill, SkillFrontmatter, SkillUri } from "@mcp-skills/core"
import * as Transport from "./internal/transport.js"
import * as SkillCache from "./SkillCache.js"
import {
  DigestMismatch,
  DirectoryReadNotSupported,
  DynamicSkillRefused,
  ExtensionNotSupported,
  FrontmatterMismatch,
  InvalidResourceContents,
  InvalidSkillEntry,
  LimitExceeded,
  RepeatedCursor,
  RunawayListing,
  SizeMismatch,
  SkillNotFound,
  UnlistedResource,
  type VerificationError,
  WrongResourceReturned
} from "./SkillsClientError.js"

/**
 * The protocol revisions the client speaks.
 *
 * @since 0.1.0
 */
export type ProtocolVersion = McpClient.ProtocolVersion

/**
 * Options shared by every constructor.
 *
 * @since 0.1.0
 */
export interface Options {
  /**
   * The host-assigned identity of the server (R21, R23, R144): it namespaces the cache and is
   * named in errors. The layers default it to the URL or the command line.
   */
  readonly server: string
  /** Deadline of every request, the handshake included. Default 60 seconds. */
  readonly timeout?: Duration.Input | undefined
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  /** Per-skill limits; larger values are an explicit choice (R15). Default the spec limits. */
  readonly limits?: Limits.Limits | undefined
  /** The most `skills/list` pages one listing follows. Default 100. */
  readonly maxPages?: number | undefined
  /** Load `"dynamic"` skills, which carry no digests (R12, R141). Default false. */
  readonly allowDynamic?: boolean | undefined
}

/**
 * A listing of skills.
 *
 * @since 0.1.0
 */
export interface Listing {
  /** Valid entries in server order. */
  readonly skills: ReadonlyArray<Skill.Skill>
  /** Entries that were refused (R6); they are never loaded. */
  readonly invalid: ReadonlyArray<InvalidSkillEntry>
  /** The hint of the first page (R36: every page has the same scope). */
  readonly cacheHint: CacheHint.CacheHint
  /** Set only when one page was asked for and more follow. */
  readonly nextCursor?: string | undefined
}

/**
 * @since 0.1.0
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
 */
export interface Fetched {
  readonly skill: Skill.Skill
  readonly cacheHint: CacheHint.CacheHint
}

/**
 * A file that passed every check against its entry.
 *
 * @since 0.1.0
 */
export interface VerifiedFile {
  readonly skill: string
  readonly uri: string
  readonly mimeType: string | undefined
  readonly bytes: Uint8Array
  /** False for files of `"dynamic"` skills, which cannot be verified beyond their frontmatter. */
  readonly verified: boolean
}

/**
 * A loaded skill: its `SKILL.md`, verified, and the parsed frontmatter and body.
 *
 * @since 0.1.0
 */
export interface LoadedSkill {
  readonly skill: Skill.Skill
  readonly skillMd: VerifiedFile
  readonly frontmatter: SkillFrontmatter.JsonObject
  readonly body: string
}

/**
 * One child of a directory resource (an MCP `Resource`; directories have `mimeType` `inode/directory`).
 *
 * @since 0.1.0
 */
export type DirectoryChild = Protocol.ResourceEntry

/**
 * @since 0.1.0
 */
export type ListError = McpClientError | ExtensionNotSupported | InvalidSkillEntry | RepeatedCursor | RunawayListing

/**
 * @since 0.1.0
 */
export type GetError = McpClientError | ExtensionNotSupported | SkillNotFound | InvalidSkillEntry | WrongResourceReturned

/**
 * @since 0.1.0
 */
export type ReadError = McpClientError | VerificationError

/**
 * The operations of a connected Skills client.
 *
 * @since 0.1.0
 */
export interface Service {
  /** The host-assigned identity of the server. */
  readonly server: string
  readonly protocolVersion: ProtocolVersion
  /** The declared extension settings, or `undefined` when the server does not declare it. */
  readonly capability: Extension.Capability | undefined
  /** The underlying MCP client, for tools, prompts and plain resources. */
  readonly mcp: McpClient.McpClient
  /** Lists skills; never fetches any file (R127). */
  readonly listSkills: (options?: ListOptions) => Effect.Effect<Listing, ListError>
  /** Fetches one entry by its `SKILL.md` uri (R30, R42). */
  readonly getSkill: (uri: string) => Effect.Effect<Fetched, GetError>
  /** Lists the direct children of a directory; refused locally unless `directoryRead` (R49). */
  readonly readResourceDirectory: (
    uri: string
  ) => Effect.Effect<ReadonlyArray<DirectoryChild>, McpClientError | DirectoryReadNotSupported | RepeatedCursor | RunawayListing | WrongResourceReturned>
  /** The checks an entry alone allows beyond its shape: limits and `"dynamic"` (R12, R17). */
  readonly checkEntry: (skill: Skill.Skill) => Effect.Effect<void, LimitExceeded | DynamicSkillRefused>
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
 */
export class SkillsClient extends Context.Service<SkillsClient, Service>()("@mcp-skills/client/SkillsClient") {}

const DefaultTimeout = Duration.seconds(60)
const DefaultMaxPages = 100
// base64 inflates a 16 MiB file to about 21.4 MiB before JSON framing.
const MaxMessageBytes = 32 * 1024 * 1024
const defaultClientInfo = { name: "mcp-skills-client", version: "0.1.0" }

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const invalidResult = (method: string, detail: string, cause?: unknown) =>
  new McpClientError({
    reason: new ValidationError({ description: `Invalid ${method} result: ${detail}`, ...(cause === undefined ? {} : { cause }) })
  })

// Results are decoded with the core envelope schemas; entries one by one, so one bad entry
// never hides the others (R6, spec §7 item 8).
const decodeResult = <S extends Schema.Decoder<unknown>>(schema: S, method: string) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return (result: unknown): Effect.Effect<S["Type"], McpClientError> =>
    Effect.mapError(decode(result), (cause) => invalidResult(method, cause.message, cause))
}
const decodeListPage = decodeResult(Protocol.ListSkillsPage, Extension.ListSkillsMethod)
const decodeGetEnvelope = decodeResult(Protocol.GetSkillEnvelope, Extension.GetSkillMethod)
const decodeDirectoryPage = decodeResult(Protocol.ReadResourceDirectoryResult, Extension.ReadResourceDirectoryMethod)

const decodeCapability = Schema.decodeUnknownOption(Extension.Capability)

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

const utf8 = new TextEncoder()

// Strict base64 (the `base64` pattern) decoded to fresh bytes, or undefined. `Buffer.from` skips
// characters outside the alphabet, so its answer is trusted only when it re-encodes to the exact
// input (canonical base64, the common case: one native pass each way instead of a regex over the
// whole string); anything else goes through the pattern, which also admits non-zero pad bits.
const decodeBase64 = (blob: string): Uint8Array | undefined => {
  const decoded = Buffer.from(blob, "base64")
  if (decoded.toString("base64") !== blob && !base64.test(blob)) return undefined
  // A copy: small Buffers share a pooled ArrayBuffer with unrelated data.
  return new Uint8Array(decoded)
}

// What an entry alone decides (R12, R15-R17) and its manifest by uri.
interface CheckedEntry {
  readonly failure: Effect.Effect<never, LimitExceeded | DynamicSkillRefused> | undefined
  readonly byUri: ReadonlyMap<string, Skill.SkillResource>
}

/**
 * Connects over an existing transport. The scope owns the connection.
 *
 * @since 0.1.0
 */
export const make = (transport: McpClient.Transport, options: Options): Effect.Effect<Service, McpClientError, Scope.Scope> =>
  makeWith(transport, options, undefined)

const makeWith = Effect.fnUntraced(function*(
  transport: McpClient.Transport,
  options: Options,
  send: Transport.Send | undefined
): Effect.fn.Return<Service, McpClientError, Scope.Scope> {
  const timeout = Option.getOrUndefined(Duration.fromInput(options.timeout ?? DefaultTimeout))
  if (timeout === undefined || !Duration.isGreaterThan(timeout, Duration.zero)) {
    return yield* new McpClientError({
      reason: new ConfigurationError({ description: `timeout must be a positive duration, got ${String(options.timeout)}` })
    })
  }
  const limits = options.limits ?? Limits.defaults
  const maxPages = options.maxPages ?? DefaultMaxPages
  const allowDynamic = options.allowDynamic ?? false
  const server = options.server
  const cache = yield* SkillCache.SkillCache
  const connection = yield* Transport.connect(transport, {
    clientInfo: options.clientInfo ?? defaultClientInfo,
    timeout,
    send
  })
  const extensions = isRecord(connection.capabilities) ? connection.capabilities.extensions : undefined
  const declared = isRecord(extensions) ? extensions[Extension.ExtensionId] : undefined
  // A declaration that is not an object is treated as absent: nothing it promises can be relied on.
  const capability = declared === undefined ? undefined : Option.getOrUndefined(decodeCapability(declared))

  const request = (method: string, params: Record<string, unknown>) => connection.request(method, params, timeout)

  const requireExtension = capability === undefined
    ? Effect.fail(new ExtensionNotSupported({ server }))
    : Effect.void

  // Follows cursors with a repeated-cursor and a page-count guard (R34, R35).
  const walk = Effect.fnUntraced(function*<P extends { readonly nextCursor?: string }, E>(
    method: string,
    params: Record<string, unknown>,
    start: string | undefined,
    onePage: boolean,
    decode: (result: unknown) => Effect.Effect<P, McpClientError>,
    page: (result: P) => Effect.Effect<void, E>
  ) {
    const pages: Array<P> = []
    const seen = new Set<string>()
    let cursor = start
    for (let n = 1; n <= maxPages; n++) {
      const result = yield* decode(yield* request(method, cursor === undefined ? params : { ...params, cursor }))
      const next = result.nextCursor
      yield* page(result)
      pages.push(result)
      if (next === undefined || onePage) return { pages, nextCursor: next }
      if (seen.has(next) || next === start) return yield* new RepeatedCursor({ cursor: next, page: n })
      seen.add(next)
      cursor = next
    }
    return yield* new RunawayListing({ maxPages })
  })

  const listSkills = Effect.fnUntraced(function*(listOptions: ListOptions = {}) {
    yield* requireExtension
    const invalidMode = listOptions.invalid ?? "report"
    const skills: Array<Skill.Skill> = []
    const invalid: Array<InvalidSkillEntry> = []
    const { pages, nextCursor } = yield* walk(
      Extension.ListSkillsMethod,
      {},
      listOptions.cursor,
      listOptions.onePage === true || listOptions.cursor !== undefined,
      decodeListPage,
      Effect.fnUntraced(function*(result) {
        for (const raw of result.skills) {
          const decoded = Skill.decode(raw)
          if (Result.isFailure(decoded)) {
            if (invalidMode === "fail") return yield* decoded.failure
            invalid.push(decoded.failure)
          } else {
            skills.push(decoded.success)
          }
        }
      })
    )
    // One uri on two entries (or two pages) makes both ambiguous: neither is loaded (R31).
    const counts = new Map<string, number>()
    for (const skill of skills) counts.set(skill.uri, (counts.get(skill.uri) ?? 0) + 1)
    const repeated = skills.filter((skill) => counts.get(skill.uri)! > 1)
    for (const skill of repeated) {
      const error = new InvalidSkillEntry({ uri: skill.uri, problems: [`${skill.uri} is listed more than once (R31)`] })
      if (invalidMode === "fail") return yield* error
      invalid.push(error)
    }
    const listing: Listing = {
      skills: repeated.length === 0 ? skills : skills.filter((skill) => counts.get(skill.uri) === 1),
      invalid,
      cacheHint: CacheHint.fromResult(pages[0]!),
      ...(listOptions.onePage === true || listOptions.cursor !== undefined ? { nextCursor } : {})
    }
    return listing
  })

  const getSkill = Effect.fnUntraced(function*(uri: string) {
    yield* requireExtension
    const result = yield* request(Extension.GetSkillMethod, { uri }).pipe(
      Effect.catchIf(
        (error) => Transport.errorCode(error) === -32602,
        (error) => Effect.fail(new SkillNotFound({ uri, detail: error.message }))
      )
    )
    const envelope = yield* decodeGetEnvelope(result)
    // An answer for another skill is never accepted in place of the one asked for (spec §7 item 12).
    const answered = isRecord(envelope.skill) ? envelope.skill.uri : undefined
    if (answered !== uri) return yield* new WrongResourceReturned({ uri, returned: [String(answered)] })
    const decoded = Skill.decode(envelope.skill)
    if (Result.isFailure(decoded)) return yield* decoded.failure
    const fetched: Fetched = { skill: decoded.success, cacheHint: CacheHint.fromResult(envelope) }
    return fetched
  })

  const readResourceDirectory = Effect.fnUntraced(function*(uri: string) {
    if (capability?.directoryRead !== true) return yield* new DirectoryReadNotSupported({ uri })
    const children: Array<DirectoryChild> = []
    yield* walk(
      Extension.ReadResourceDirectoryMethod,
      { uri },
      undefined,
      false,
      decodeDirectoryPage,
      Effect.fnUntraced(function*(result) {
        const outside: Array<string> = []
        for (const item of result.resources) {
          const rest = item.uri.startsWith(uri + "/") ? item.uri.slice(uri.length + 1) : ""
          // Only direct children of the directory asked for are accepted (R52).
          if (rest.length === 0 || rest.includes("/")) {
            outside.push(item.uri)
            continue
          }
          children.push(item)
        }
        if (outside.length > 0) return yield* new WrongResourceReturned({ uri, returned: outside })
      })
    )
    return children as ReadonlyArray<DirectoryChild>
  })

  // What an entry alone decides, computed once per entry object rather than on every read (a
  // pull reads every file of an entry: per-read sums and scans would be quadratic in its files).
  const checked = new WeakMap<Skill.Skill, CheckedEntry>()
  const checkedOf = (skill: Skill.Skill): CheckedEntry => {
    let entry = checked.get(skill)
    if (entry !== undefined) return entry
    if (skill.resources === "dynamic") {
      entry = {
        failure: allowDynamic ? undefined : Effect.fail(new DynamicSkillRefused({ uri: skill.uri })),
        byUri: new Map()
      }
    } else {
      const violation = Skill.limitViolations(skill, limits)[0]
      const byUri = new Map<string, Skill.SkillResource>()
      // The first listing of a uri wins, as with `Skill.findResource`.
      for (const resource of skill.resources) if (!byUri.has(resource.uri)) byUri.set(resource.uri, resource)
      entry = {
        failure: violation === undefined
          ? undefined
          : Effect.fail(new LimitExceeded({ uri: skill.uri, limit: violation.limit, actual: violation.actual, max: violation.max })),
        byUri
      }
    }
    checked.set(skill, entry)
    return entry
  }

  const checkEntry = (skill: Skill.Skill): Effect.Effect<void, LimitExceeded | DynamicSkillRefused> =>
    checkedOf(skill).failure ?? Effect.void

  // Bytes fetched per `"dynamic"` skill, counted against the byte limit (R18).
  const dynamicBudget = new Map<string, number>()

  const contentsOf = (uri: string, result: unknown) =>
    Effect.gen(function*() {
      if (!isRecord(result) || !Array.isArray(result.contents)) {
        return yield* invalidResult("resources/read", "contents is not an array")
      }
      const items = result.contents.filter(isRecord)
      const item = items.find((c) => c.uri === uri)
      if (item === undefined) {
        return yield* new WrongResourceReturned({ uri, returned: items.map((c) => String(c.uri)) })
      }
      const mimeType = typeof item.mimeType === "string" ? item.mimeType : undefined
      // The raw bytes of a text item are the UTF-8 encoding of the string exactly as received.
      if (typeof item.text === "string") return { bytes: utf8.encode(item.text), mimeType }
      const bytes = typeof item.blob === "string" ? decodeBase64(item.blob) : undefined
      if (bytes !== undefined) return { bytes, mimeType }
      return yield* new InvalidResourceContents({
        uri,
        detail: typeof item.blob === "string" ? "blob is not valid base64" : "neither text nor blob"
      })
    })

  // R126: the fetched SKILL.md must carry exactly the entry's frontmatter.
  const checkFrontmatter = (skill: Skill.Skill, bytes: Uint8Array) => {
    const parsed = SkillFrontmatter.parse(bytes)
    if (Result.isFailure(parsed)) {
      return Effect.fail(new FrontmatterMismatch({ uri: skill.uri, fields: [], detail: parsed.failure.message }))
    }
    const differences = SkillFrontmatter.diff(skill.frontmatter, parsed.success.frontmatter)
    return differences.length > 0
      ? Effect.fail(new FrontmatterMismatch({ uri: skill.uri, fields: differences.map((d) => d.field) }))
      : Effect.succeed(parsed.success)
  }

  // Answers the verified file and, for SKILL.md, its parsed document.
  const readVerified = Effect.fnUntraced(function*(skill: Skill.Skill, uriOrReference: string) {
    const entry = checkedOf(skill)
    if (entry.failure !== undefined) return yield* entry.failure
    const resolved = SkillUri.resolve(skill.uri, uriOrReference)
    // A reference that leaves the skill can never be listed (R125).
    if (Result.isFailure(resolved)) return yield* new UnlistedResource({ skill: skill.uri, uri: uriOrReference })
    const uri: string = resolved.success
    const item = entry.byUri.get(uri)
    if (skill.resources !== "dynamic" && item === undefined) {
      return yield* new UnlistedResource({ skill: skill.uri, uri })
    }
    const isSkillMd = uri === skill.uri

    if (item !== undefined) {
      const cached = yield* cache.get({ server, uri, digest: item.digest })
      if (cached !== undefined) {
        const document = isSkillMd ? yield* checkFrontmatter(skill, cached) : undefined
        const file: VerifiedFile = { skill: skill.uri, uri, mimeType: undefined, bytes: cached, verified: true }
        return { file, document }
      }
    }

    const result = yield* request("resources/read", { uri })
    const { bytes, mimeType } = yield* contentsOf(uri, result)
    if (item === undefined) {
      const used = (dynamicBudget.get(skill.uri) ?? 0) + bytes.byteLength
      if (used > limits.maxTotalBytes) {
        return yield* new LimitExceeded({ uri: skill.uri, limit: "bytes", actual: used, max: limits.maxTotalBytes })
      }
      dynamicBudget.set(skill.uri, used)
    } else {
      // A wrong length fails before hashing (R121).
      if (bytes.byteLength !== item.size) {
        return yield* new SizeMismatch({ skill: skill.uri, uri, expected: item.size, actual: bytes.byteLength })
      }
      const digest = Digest.make(bytes)
      if (digest !== item.digest) {
        return yield* new DigestMismatch({ skill: skill.uri, uri, expected: item.digest, actual: digest })
      }
    }
    const document = isSkillMd ? yield* checkFrontmatter(skill, bytes) : undefined
    if (item !== undefined) yield* cache.set({ server, uri, digest: item.digest }, bytes)
    const file: VerifiedFile = { skill: skill.uri, uri, mimeType, bytes, verified: item !== undefined }
    return { file, document }
  })

  const readSkillResource = (skill: Skill.Skill, uriOrReference: string) =>
    Effect.map(readVerified(skill, uriOrReference), ({ file }) => file)

  const loadSkill = (skill: Skill.Skill) =>
    Effect.map(readVerified(skill, skill.uri), ({ file, document }): LoadedSkill => ({
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
 */
export type ProtocolChoice = ProtocolVersion | "auto"

// Answers that mean "not this revision" rather than "server unreachable".
const rejectsRevision = (error: McpClientError) => {
  const reason = error.reason
  return reason._tag === "ProtocolError" || reason._tag === "UnsupportedError" ||
    (reason._tag === "HttpError" && reason.status >= 400 && reason.status < 500)
}

const negotiate = <R>(
  choice: ProtocolChoice | undefined,
  connect: (
    protocol: McpProtocol.ProtocolAdapter<ProtocolVersion>
  ) => Effect.Effect<{ readonly transport: McpClient.Transport; readonly send?: Transport.Send | undefined }, McpClientError, R | Scope.Scope>,
  options: Options
): Effect.Effect<Service, McpClientError, R | Scope.Scope> => {
  const attempt = (version: ProtocolVersion) =>
    Effect.flatMap(connect(version === "2025-11-25" ? McpProtocol.v2025_11_25 : McpProtocol.v2026_07_28), ({ transport, send }) =>
      makeWith(transport, options, send))
  if (choice !== undefined && choice !== "auto") return attempt(choice)
  return Effect.gen(function*() {
    // The first attempt gets its own scope, so a refused connection (a spawned server included)
    // is closed before the second one starts.
    const child = yield* Scope.fork(yield* Scope.Scope)
    const modern = yield* attempt("2026-07-28").pipe(Scope.provide(child), Effect.exit)
    if (Exit.isSuccess(modern)) return modern.value
    yield* Scope.close(child, modern)
    const error = modern.cause.reasons.find(Cause.isFailReason)?.error
    if (error === undefined || !rejectsRevision(error)) return yield* Effect.failCause(modern.cause)
    return yield* attempt("2025-11-25")
  })
}

/**
 * Connects over Streamable HTTP. Needs an `HttpClient` (`FetchHttpClient.layer` or
 * `NodeHttpClient.layerNodeHttp`). `server` defaults to the URL; `protocolVersion` to `"auto"`.
 *
 * @since 0.1.0
 */
export const layerHttp = (
  options: Omit<Options, "server"> & {
    readonly url: string
    readonly server?: string | undefined
    readonly headers?: Readonly<Record<string, string>> | undefined
    readonly protocolVersion?: ProtocolChoice | undefined
  }
): Layer.Layer<SkillsClient, McpClientError, HttpClient.HttpClient> =>
  Layer.effect(
    SkillsClient,
    negotiate(
      options.protocolVersion,
      (protocol) =>
        Effect.all({
          transport: McpClient.http({
            url: options.url,
            protocol,
            maxMessageBytes: MaxMessageBytes,
            ...(options.headers === undefined ? {} : { headers: options.headers })
          }),
          // Stateless 2026-07-28 only: 2025-11-25 sessions stay with McpClient's transport.
          send: protocol.protocolVersion === "2026-07-28"
            ? Transport.httpSend({ url: options.url, headers: options.headers, maxMessageBytes: MaxMessageBytes })
            : Effect.succeed(undefined)
        }),
      { ...options, server: options.server ?? options.url }
    )
  )

/**
 * Spawns a server and connects over stdio. Needs a `ChildProcessSpawner`
 * (`NodeServices.layer`). `server` defaults to the command line; `protocolVersion` to `"auto"`.
 *
 * @since 0.1.0
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
): Layer.Layer<SkillsClient, McpClientError, ChildProcessSpawner> =>
  Layer.effect(
    SkillsClient,
    negotiate(
      options.protocolVersion,
      (protocol) =>
        Effect.map(McpClient.stdio({
          command: ChildProcess.make(options.command, [...(options.args ?? [])], {
            ...(options.env === undefined ? {} : { env: options.env, extendEnv: true }),
            ...(options.cwd === undefined ? {} : { cwd: options.cwd })
          }),
          protocol,
          maxMessageBytes: MaxMessageBytes
        }), (transport) => ({ transport })),
      { ...options, server: options.server ?? [options.command, ...(options.args ?? [])].join(" ") }
    )
  )
