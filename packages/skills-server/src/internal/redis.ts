/**
 * The node-redis set-up of the Redis bus (`ChangeBus.layerRedis`, `publishRedis`): how its
 * connections are made, how they report failures, and how a message goes out. It knows nothing
 * of the bus's messages: they arrive encoded, with the revision to keep.
 */
import type { RedisClientType } from "@redis/client"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ServerLimits from "../ServerLimits.js"

export type RedisClient = RedisClientType<{}, {}, {}, 3, {}>
type CreateClient = typeof import("@redis/client").createClient

// node-redis takes milliseconds.
export const connectMillis = Duration.toMillis(ServerLimits.BusConnectTimeout)
const reconnectBase = Duration.toMillis(ServerLimits.BusReconnect.base)
const reconnectCap = Duration.toMillis(ServerLimits.BusReconnect.cap)

export const describe = (error: unknown) => error instanceof Error ? error.message || error.name : String(error)

// node-redis reports a refused connection as an AggregateError (one per address) with no message.
export const reasonOf = (error: unknown) =>
  error instanceof AggregateError && error.errors.length > 0 ? describe(error.errors[0]) : describe(error)

// An optional peer: only a Redis bus loads it, so a server without one needs no Redis client.
export const load = <E>(missing: (reason: string) => E): Effect.Effect<CreateClient, E> =>
  Effect.tryPromise({ try: () => import("@redis/client"), catch: (error) => missing(describe(error)) }).pipe(
    Effect.map((module) => module.createClient)
  )

// Where the bus is, for messages: the URL without its password.
export const where = (url: string) => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "the Redis URL given (not a valid URL)"
  }
}

export const revisionKey = (channel: string) => `${channel}:revision`

// The publishing connection: it reconnects by itself, with capped backoff, and refuses (rather
// than queues) commands while it is down.
export const publisher = (createClient: CreateClient, url: string): RedisClient => {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: connectMillis, reconnectStrategy: (retries) => Math.min(reconnectBase * 2 ** retries, reconnectCap) }
  })
  // Connection errors surface as failed commands; without a listener they would crash the process.
  client.on("error", () => {})
  client.connect().catch(() => {})
  return client
}

// A connection that is never made again: a subscription's (which ends when it drops) or a
// one-off publish's.
export const once = (createClient: CreateClient, url: string, connectTimeout = connectMillis): RedisClient =>
  createClient({ url, socket: { connectTimeout, reconnectStrategy: false } })

// A revision is also stored as the bus's last one, in the same transaction as its announcement.
export const send = async (client: RedisClient, channel: string, payload: string, revision: string | undefined): Promise<number> => {
  if (revision === undefined) return client.publish(channel, payload)
  const [, receivers] = await client.multi().set(revisionKey(channel), revision).publish(channel, payload).exec()
  return Number(receivers)
}
