/**
 * The shapes the port (`port.ts`) speaks in: what one request looks like to a surface whatever the
 * transport (`RequestInfo`), the handlers a surface gives (`Handler`, `Interceptor`), who is told
 * of changes (`Listener`), and what the wrapper adds to an adapter (`Extension`). Nothing here
 * names an internal of effect; the modules of this folder implement these shapes over them.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Headers from "effect/http/Headers"
import type { McpSchema } from "effect/ai"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { Notice } from "./listenPacing.js"

export type { Notice }

/** The JSON-RPC error shape effect sends as is (`{ code, message, data? }`). */
export interface WireError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** Whether a failure has the JSON-RPC error shape effect sends as is. */
export const isWireError = (error: unknown): error is WireError =>
  typeof error === "object" && error !== null && typeof (error as WireError).code === "number" &&
  typeof (error as WireError).message === "string"

/**
 * What this folder keeps of a request for its own use (reading effect's registrations for it):
 * opaque to the rest of the server.
 */
export interface EffectRequest {
  readonly _: unique symbol
}

/** What one incoming request looks like to our handlers, independent of the transport. */
export interface RequestInfo {
  /** 2026-07-28 (stateless, per-request `_meta`) rather than a session revision. */
  readonly modern: boolean
  readonly protocolVersion: string
  readonly requestContext: McpSchema.McpRequestContext["Service"]
  readonly headers: Headers.Headers
  readonly sessionId: string | undefined
  /** The `McpServer` service this request belongs to (identifies the server). */
  readonly server: object
  /** The session-revision connection without HTTP (stdio) this request came on, if it is one. */
  readonly connection: Connection | undefined
  /** The server's `Implementation` for 2026-07-28 `_meta["io.modelcontextprotocol/serverInfo"]`. */
  readonly serverInfo: Readonly<Record<string, unknown>>
  readonly effect: EffectRequest
  /** The skills the app registered through effect's own API (`McpServer.skill`), for this request. */
  readonly native: NativeSkills
}

/** A `skills/list` / `skills/get` entry of one of effect's own skills, as effect builds it. */
export interface NativeEntry {
  readonly uri: string
  readonly frontmatter: Readonly<Record<string, unknown>>
  readonly resources: ReadonlyArray<{ readonly uri: string; readonly digest: string; readonly size: number }> | "dynamic"
}

/** A `resources/directory/read` child of one of effect's own skills. */
export interface NativeChild {
  readonly uri: string
  readonly name: string
  readonly description?: string | undefined
  readonly mimeType: string
  readonly size?: number | undefined
}

/**
 * effect's own skills as one request sees them, each decided by effect's visibility for that
 * request; `undefined` where effect serves no such skill or directory.
 */
export interface NativeSkills {
  /** Whether effect holds any skill now (nothing else is asked otherwise). */
  readonly present: Effect.Effect<boolean>
  readonly list: Effect.Effect<ReadonlyArray<NativeEntry>, WireError>
  readonly get: (uri: string) => Effect.Effect<NativeEntry | undefined, WireError>
  readonly directory: (uri: string) => Effect.Effect<ReadonlyArray<NativeChild> | undefined, WireError>
  /** The cache hint effect gives its skills' results (`cacheHints.skills`, else `ttlMs: 0`, private). */
  readonly hint: { readonly ttlMs: number; readonly cacheScope: "public" | "private" }
}

/** One method's handler: the decoded params in, the wire result (or a JSON-RPC error) out. */
export type Handler = (params: any, request: RequestInfo) => Effect.Effect<unknown, WireError>

/**
 * A handler that may answer a built-in method itself and otherwise falls back to effect's
 * handler (`next`).
 */
export type Interceptor = (
  params: any,
  request: RequestInfo,
  next: Effect.Effect<unknown, unknown>
) => Effect.Effect<unknown, unknown>

/**
 * A session-revision connection without HTTP (stdio: effect's client 0), from its `initialize`
 * until it initializes again or the server stops. What it is told is decided by its latest skills
 * request, and `resources/updated` only for the URIs it subscribed to through the skills layer.
 */
export interface Connection {
  readonly latest: () => RequestInfo | undefined
  readonly remember: (request: RequestInfo) => void
  readonly subscribed: (uri: string) => boolean
  readonly subscribe: (uri: string) => void
  readonly unsubscribe: (uri: string) => void
}

/** Who is being told: a `subscriptions/listen` request, or a stdio connection. */
export type Listener =
  | { readonly _tag: "Listen"; readonly request: RequestInfo }
  | { readonly _tag: "Connection"; readonly server: object; readonly connection: Connection }

/** The Skills extension's own methods, which the wrapper adds to effect's adapters. */
export type Method = "skills/list" | "skills/get" | "resources/directory/read"

/** What the wrapper adds to an adapter. */
export interface Extension {
  readonly id: string
  readonly capability: Readonly<Record<string, unknown>>
  /**
   * Whether `server` serves the extension now: declaring it commits the server to its methods
   * (R82), so a server without it declares nothing and answers them as unknown (R89).
   */
  readonly served: (server: object) => boolean
  /** The extension's methods served, each with its handler (`resources/directory/read` may be left out). */
  readonly handlers: { readonly [M in Method]?: Handler }
  /** Built-in methods answered for skill URIs, every other request passed on to effect. */
  readonly intercept: Readonly<Record<string, Interceptor>>
  /**
   * Told of every request a handler or interceptor is about to answer: what a listener hears is
   * decided by its latest request.
   */
  readonly seen: (request: RequestInfo) => Effect.Effect<void>
  /**
   * Told, when the server starts, of the `SKILL.md` URIs of the skills registered through
   * effect's own API: one that shares a URI or a folder with the layer's skills is refused (a
   * defect naming both, stopping the server).
   */
  readonly claimed: (server: object, effectSkills: ReadonlyArray<string>) => Effect.Effect<void>
  /** The notices `listener` may hear, from now until the scope closes. */
  readonly notices: (listener: Listener) => Effect.Effect<Stream.Stream<Notice>, never, Scope.Scope>
}
