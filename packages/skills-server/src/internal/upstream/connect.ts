/**
 * Connecting to an upstream: our verifying `SkillsClient` over HTTP or stdio, with the files the
 * gateway already verified as its cache (a new version of a skill reads only what changed), and
 * the notifications of the revision it negotiated.
 *
 * @internal
 */
import type { Limits } from "@mcp-skills/core"
import { SkillCache, SkillsClient, type Verification } from "@mcp-skills/client"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpClient from "effect/http/HttpClient"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Connection } from "./follow.js"
import * as Listen from "./listen.js"
import * as StdioTap from "./stdioTap.js"
import type { HeldFile } from "./verify.js"

/** Where an upstream is and how to speak to it. */
export type Transport =
  | { readonly _tag: "Http"; readonly url: string; readonly headers: Readonly<Record<string, string>> }
  | {
    readonly _tag: "Stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>> | undefined
    readonly cwd: string | undefined
  }

/** What every connection of one upstream is made with. */
export interface Options {
  readonly name: string
  readonly transport: Transport
  readonly protocolVersion: SkillsClient.ProtocolChoice
  readonly trust: Verification.Trust | undefined
  readonly limits: Limits.Limits
  readonly timeout: Duration.Input
}

// The gateway's verified files answer the client's cache lookups; what it reads is kept by the
// gateway itself once the whole skill verified, never here.
const heldCache = (held: (uri: string, digest: string) => HeldFile | undefined): SkillCache.Store => ({
  get: (key) => Effect.sync(() => held(key.uri, key.digest)),
  set: () => Effect.void
})

// Messages the gateway writes to a stdio upstream carry ids its client never uses.
const StdioIds = "mcp-skills-gateway"

/** Connects once; the scope owns the connection (the session, or the process). */
export const connect = (
  options: Options,
  held: (uri: string, digest: string) => HeldFile | undefined
): Effect.Effect<Connection, unknown, Scope.Scope | HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.gen(function*() {
    const common = {
      server: options.name,
      protocolVersion: options.protocolVersion,
      allowDynamic: true,
      trust: options.trust,
      limits: options.limits,
      timeout: options.timeout
    }
    const cache = Effect.provideService(SkillCache.SkillCache, heldCache(held))
    const transport = options.transport
    if (transport._tag === "Http") {
      const http = yield* HttpClient.HttpClient
      const built = yield* cache(Layer.build(SkillsClient.layerHttp({ ...common, url: transport.url, headers: transport.headers })))
      const client = Context.get(built, SkillsClient.SkillsClient)
      const listen = { url: transport.url, headers: transport.headers }
      return {
        client,
        signals: (uris) =>
          Stream.provideService(
            client.protocolVersion === "2026-07-28" ? Listen.listen2026({ ...listen, uris }) : Listen.session2025({ ...listen, uris }),
            HttpClient.HttpClient,
            http
          )
      } satisfies Connection
    }
    const tap = yield* StdioTap.make(yield* ChildProcessSpawner.ChildProcessSpawner)
    const built = yield* cache(Layer.build(
      SkillsClient.layerStdio({
        ...common,
        command: transport.command,
        args: transport.args,
        env: transport.env,
        cwd: transport.cwd
      }).pipe(Layer.provide(Layer.succeed(ChildProcessSpawner.ChildProcessSpawner, tap.spawner)))
    ))
    const client = Context.get(built, SkillsClient.SkillsClient)
    return {
      client,
      // Over stdio the connection is the channel: ask for notifications on it, then hear them.
      // (A 2026-07-28 listen is acknowledged; a 2025-11-25 connection has been heard since it opened.)
      signals: (uris) =>
        Stream.unwrap(
          client.protocolVersion === "2026-07-28"
            ? Effect.as(tap.write(Listen.listenRequest(`${StdioIds}-listen`, uris)), Stream.fromQueue(tap.signals))
            : Effect.as(
              Effect.forEach(Listen.subscribeRequests(`${StdioIds}-subscribe`, uris), tap.write, { discard: true }),
              Stream.concat(Stream.succeed<Listen.Signal>({ _tag: "Opened" }), Stream.fromQueue(tap.signals))
            )
        )
    } satisfies Connection
  })
