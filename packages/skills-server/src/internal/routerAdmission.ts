/**
 * The router-wide part of HTTP admission (see `HttpAdmission.layerRouter`): which `Host` and
 * `Origin` a request may carry, checked by one global `HttpRouter` middleware before the router
 * looks for a route, so every route of the router (the MCP endpoint, `/metrics`, an app's own,
 * routes added later, and the 404 of a path that has none) answers only what it admits.
 *
 * Why `Host`: a page whose name an attacker re-points at 127.0.0.1 (DNS rebinding) is, for the
 * browser, same-origin with the server; its GET carries no `Origin`, only its own name in `Host`.
 * A server listening on loopback therefore answers only Host names that reach it on loopback.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { HttpRouter, HttpServer, HttpServerRequest, type HttpServerResponse } from "effect/http"
import * as NetAddress from "effect/net/NetAddress"
import type * as Types from "effect/Types"
import * as Admission from "./admission.js"
import * as Port from "./effect/port.js"

/** The Host names a router admits. */
export type Hosts =
  | { readonly _tag: "Any" }
  | { readonly _tag: "Listed"; readonly names: ReadonlySet<string> }

/** The Origins a router admits; `Unchecked` leaves them to each route (effect's MCP endpoint checks its own). */
export type Origins =
  | { readonly _tag: "Unchecked" }
  | { readonly _tag: "Listed"; readonly origins: ReadonlySet<string> }

/** What one router admits. */
export interface Policy {
  readonly hosts: Hosts
  readonly origins: Origins
}

/**
 * Names that reach this machine on loopback only: a browser sends them in `Host` only for a page
 * it loaded from this machine, never for an attacker's name resolved to it.
 */
export const loopbackNames: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]"]

/** `allowedHosts` entry meaning any Host. */
export const AnyHost = "*"

const hostname = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?)$/

/**
 * A Host header's name: lower-cased, without its port, IPv6 in brackets; `undefined` when the
 * header is no `host[:port]`.
 */
export const hostnameOf = (header: string): string | undefined => {
  const lower = header.toLowerCase()
  const close = lower.startsWith("[") ? lower.indexOf("]") + 1 : 0
  const colon = lower.indexOf(":", close)
  const name = colon === -1 ? lower : lower.slice(0, colon)
  if (colon !== -1 && !/^[0-9]{1,5}$/.test(lower.slice(colon + 1))) return undefined
  return hostname.test(name) ? name : undefined
}

/**
 * An `allowedHosts` entry as it is compared: lower-cased; `undefined` for anything that is not a
 * host name (a port, a scheme, a path, an IPv6 address without brackets, which reads like one
 * with a port).
 */
export const normalizeName = (name: string): string | undefined => {
  const lower = name.trim().toLowerCase()
  return lower === AnyHost || hostname.test(lower) ? lower : undefined
}

const literalOf = (address: NetAddress.IpAddress) => {
  const text = NetAddress.formatIp(address)
  return NetAddress.isIpv6Address(address) ? `[${text}]` : text
}

/**
 * The Host names a server listening at `address` admits, given `allowed` (normalized names).
 * `*` admits any; named hosts are admitted with the loopback names and the listening address
 * itself; with none named, a loopback listener admits only those, and any other listener (or one
 * whose address is unknown) any Host, since it cannot know the names it is reached by.
 */
export const hostsFor = (address: NetAddress.SocketAddress | undefined, allowed: ReadonlyArray<string>): Hosts => {
  if (allowed.includes(AnyHost)) return { _tag: "Any" }
  const inet = address !== undefined && NetAddress.isInetAddress(address) ? address.address : undefined
  const loopback = inet !== undefined && NetAddress.isLoopback(inet)
  if (allowed.length === 0 && !loopback) return { _tag: "Any" }
  const names = new Set([...loopbackNames, ...allowed])
  if (inet !== undefined && !NetAddress.isUnspecified(inet)) names.add(literalOf(inet))
  return { _tag: "Listed", names }
}

/**
 * The origins of pages loaded from this listener itself (`http://127.0.0.1:PORT` and the other
 * loopback names on a loopback listener, `http://ADDRESS:PORT` on another address): none can be
 * an attacker's, and the official conformance suite expects a local server to admit them. None
 * for a listener on every interface, whose names are unknown.
 */
export const ownOrigins = (address: NetAddress.SocketAddress): ReadonlyArray<string> => {
  if (!NetAddress.isInetAddress(address) || NetAddress.isUnspecified(address.address)) return []
  const names = NetAddress.isLoopback(address.address) ? new Set([...loopbackNames, literalOf(address.address)]) : [literalOf(address.address)]
  return [...names].map((name) => `http://${name}:${address.port}`)
}

/** What an `allowedOrigins` option means (`undefined`: each route decides). */
export const originsFor = (allowed: ReadonlyArray<string> | undefined): Origins =>
  allowed === undefined ? { _tag: "Unchecked" } : { _tag: "Listed", origins: new Set(allowed) }

const refused = (message: string) => Admission.errorResponse(403, null, { code: Admission.INVALID_REQUEST, message })

/** The refusal of a request with these headers, or `undefined` when the policy admits it. */
export const refusal = (
  policy: Policy,
  headers: Readonly<Record<string, string | undefined>>
): HttpServerResponse.HttpServerResponse | undefined => {
  if (policy.hosts._tag === "Listed") {
    const host = headers.host
    if (host === undefined || host === "") return refused("A Host header is required")
    const name = hostnameOf(host)
    if (name === undefined || !policy.hosts.names.has(name)) return refused(`Host ${host} is not allowed`)
  }
  const origin = headers.origin
  if (policy.origins._tag === "Listed" && origin !== undefined && !policy.origins.origins.has(origin)) {
    return refused(Admission.originNotAllowed(origin))
  }
  return undefined
}

const middleware = (policy: Policy) => (httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const refuse = refusal(policy, Port.requestHeaders(request))
    return refuse === undefined ? httpEffect : Effect.succeed(refuse)
  })

/**
 * Set where `layerRouter` is provided: the router has its admission, and a skills layer built
 * under it puts no default one in front of its router.
 */
export const Installed = Context.Reference<boolean>("@mcp-skills/server/HttpAdmission/Router", {
  defaultValue: () => false
})

const listening = Effect.map(
  Effect.serviceOption(HttpServer.HttpServer),
  Option.match({ onNone: () => undefined, onSome: (server) => server.address })
)

// A global middleware runs in the order it was added: first added, first to see the request.
const install = (router: HttpRouter.HttpRouter, policy: Policy) =>
  policy.hosts._tag === "Any" && policy.origins._tag === "Unchecked"
    ? Effect.void
    : router.addGlobalMiddleware(middleware(policy))

/** `HttpAdmission.layerRouter`: `allowedHosts` normalized already. */
export const layer = (allowedHosts: ReadonlyArray<string>, allowedOrigins: ReadonlyArray<string> | undefined) =>
  Layer.effectContext(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    yield* install(router, { hosts: hostsFor(yield* listening, allowedHosts), origins: originsFor(allowedOrigins) })
    return Context.make(Installed, true)
  }))

/**
 * What the skills layer puts in front of its router where no `layerRouter` was provided: the
 * default Host names of the listener (loopback names on a loopback listener), Origins left to
 * each route.
 */
export const installDefault = (router: HttpRouter.HttpRouter) =>
  Effect.gen(function*() {
    if (yield* Installed) return
    yield* install(router, { hosts: hostsFor(yield* listening, []), origins: { _tag: "Unchecked" } })
  })
