/**
 * Connecting to an upstream: the client package's `Follow.connect` (our verifying `SkillsClient`
 * over HTTP or stdio, and the notifications of the revision it negotiated), with the files the
 * gateway already verified as its cache, so a new version of a skill reads only what changed.
 *
 * @internal
 */
import type { Limits } from "@mcp-skills/core"
import { Follow, SkillCache, type SkillsClient, type Verification } from "@mcp-skills/client"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import type * as Scope from "effect/Scope"
import type { HeldFile } from "./verify.js"

/** What every connection of one upstream is made with. */
export interface Options {
  readonly name: string
  readonly transport: Follow.Transport
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

// Who the gateway says it is to its upstreams (its own requests' ids start with the name).
const ClientInfo = { name: "mcp-skills-gateway", version: "0.1.0" }

/** Connects once; the scope owns the connection (the session, or the process). */
export const connect = (
  options: Options,
  held: (uri: string, digest: string) => HeldFile | undefined
): Effect.Effect<Follow.Connection, unknown, Scope.Scope | HttpClient.HttpClient | ChildProcessSpawner.ChildProcessSpawner> =>
  Follow.connect(options.transport, {
    server: options.name,
    protocolVersion: options.protocolVersion,
    allowDynamic: true,
    trust: options.trust,
    limits: options.limits,
    timeout: options.timeout,
    clientInfo: ClientInfo
  }).pipe(Effect.provideService(SkillCache.SkillCache, heldCache(held)))
