/**
 * The port between the skills surfaces and effect's protocol adapters: what one request looks
 * like to a surface whatever the transport (`RequestInfo`), the handlers a surface gives
 * (`Handler`, `Interceptor`), and what the wrapper adds to an adapter (`Extension`).
 * `effectMcp.ts` implements it over effect's hooks.
 *
 * @internal
 */
import type * as Effect from "effect/Effect"
import type * as Headers from "effect/http/Headers"
import type * as Option from "effect/Option"
import type { McpSchema } from "effect/ai"
import type * as RpcGroup from "effect/rpc/RpcGroup"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { Notice } from "./listenPacing.js"

/** The JSON-RPC error shape effect sends as is (`{ code, message, data? }`). */
export interface WireError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/** What one incoming request looks like to our handlers, independent of the transport. */
export interface RequestInfo {
  /** 2026-07-28 (stateless, per-request `_meta`) rather than a session revision. */
  readonly modern: boolean
  readonly protocolVersion: string
  readonly requestContext: McpSchema.McpRequestContext["Service"]
  readonly headers: Headers.Headers
  readonly sessionId: string | undefined
  /**
   * Reads `uri` through effect's own resource registry for this request, so effect's middleware
   * (local and global) and visibility run around the registration's handler. `None` when effect
   * reports the resource as not found (absent, or hidden by an `McpServer.visibility`).
   */
  readonly readRegisteredResource: (uri: string) => Effect.Effect<Option.Option<unknown>, WireError>
  /**
   * Whether effect runs any `McpServer` middleware (local or global) around the registered
   * resource `uri`, whose handler must fail with an error whose message is `marker` for this
   * read: effect annotates a handler failure that crossed middleware.
   */
  readonly middlewareAround: (uri: string, marker: string) => Effect.Effect<boolean>
  /** The `McpServer` service this request belongs to (identifies the server). */
  readonly server: object
  /** The session-revision connection without HTTP (stdio) this request came on, if it is one. */
  readonly connection: Connection | undefined
  /** The server's `Implementation` for 2026-07-28 `_meta["io.modelcontextprotocol/serverInfo"]`. */
  readonly serverInfo: Readonly<Record<string, unknown>>
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

/** What the wrapper adds to an adapter. */
export interface Extension {
  readonly id: string
  readonly capability: Readonly<Record<string, unknown>>
  /**
   * Whether `server` serves the extension now: declaring it commits the server to its methods
   * (R82), so a server without it declares nothing and answers them as unknown (R89).
   */
  readonly served: (server: object) => boolean
  /** Group of our RPCs (payload schemas must accept `_meta`). */
  readonly rpcs: RpcGroup.RpcGroup<any>
  readonly handlers: Readonly<Record<string, Handler>>
  readonly intercept: Readonly<Record<string, Interceptor>>
  /** The notices `listener` may hear, from now until the scope closes. */
  readonly notices: (listener: Listener) => Effect.Effect<Stream.Stream<Notice>, never, Scope.Scope>
}

/** Whether a failure has the JSON-RPC error shape effect sends as is. */
export const isWireError = (error: unknown): error is WireError =>
  typeof error === "object" && error !== null && typeof (error as WireError).code === "number" &&
  typeof (error as WireError).message === "string"
