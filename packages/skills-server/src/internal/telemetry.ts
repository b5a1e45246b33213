/**
 * Spans and metrics of the skills server by the OpenTelemetry MCP semantic conventions
 * (`docs/gen-ai/mcp.md`, whose attribute and label sets are core's `McpTelemetry`): the series, and
 * the wrappers the request paths call. Everything here reads `McpTelemetry.Current` first: without
 * `Observability.layer` it is `undefined` and each wrapper returns the effect it was given, so
 * nothing is allocated or measured.
 *
 * @internal
 */
import { McpTelemetry } from "@mcp-skills/core"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type { Changes, Snapshot } from "../Snapshot.js"

/** The series of the server, by their OpenTelemetry names (Prometheus: dots become underscores). */
export const metrics = {
  operationDuration: Metric.histogram("mcp.server.operation.duration", {
    description: "Duration of MCP requests the server handled, in seconds",
    boundaries: McpTelemetry.OperationBoundaries
  }),
  sessionDuration: Metric.histogram("mcp.server.session.duration", {
    description: "Duration of MCP sessions (2025-11-25 HTTP sessions, stdio connections), in seconds",
    boundaries: McpTelemetry.DurationBoundaries
  }),
  skills: Metric.gauge("mcp_skills.catalogue.skills", { description: "Skills in the served catalogue" }),
  files: Metric.gauge("mcp_skills.catalogue.files", { description: "Files in the served catalogue" }),
  bytes: Metric.gauge("mcp_skills.catalogue.bytes", { description: "Bytes of the files in the served catalogue" }),
  reloads: Metric.counter("mcp_skills.reloads", {
    description:
      "Changes of the catalogue applied (reloads, watched updates, edits), by source (code, reload, watch, bus, rescan, upstream) and outcome (changed, unchanged, failure)",
    incremental: true
  }),
  reloadDuration: Metric.histogram("mcp_skills.reload.duration", {
    description: "Duration of catalogue changes (a reload's reading of its source included), in seconds",
    boundaries: McpTelemetry.OperationBoundaries
  }),
  rescans: Metric.counter("mcp_skills.rescans", {
    description: "On-demand rescans: a reader found a file changed on disk",
    incremental: true
  }),
  decisions: Metric.counter("mcp_skills.visibility.decisions", {
    description: "Runs of the visibility check, by method and decision (all, none: refused outright, some: per skill)",
    incremental: true
  }),
  sessions: Metric.gauge("mcp_skills.sessions.open", { description: "Open 2025-11-25 HTTP sessions" }),
  streams: Metric.gauge("mcp_skills.streams.open", { description: "Open 2025-11-25 session streams" }),
  listens: Metric.gauge("mcp_skills.listens.open", { description: "Open 2026-07-28 subscriptions/listen streams" }),
  subscriptions: Metric.gauge("mcp_skills.subscriptions", { description: "resources/subscribe URIs held by sessions" }),
  notifications: Metric.counter("mcp_skills.notifications", {
    description:
      "Notifications not sent as such, by outcome: coalesced (updates folded into one list_changed of a listen stream), dropped (a session stream cut for a reader too slow)",
    incremental: true
  }),
  sessionsRefused: Metric.counter("mcp_skills.sessions.refused", {
    description: "2025-11-25 sessions refused (503) at a cap, by cap (server, client)",
    incremental: true
  }),
  busMessages: Metric.counter("mcp_skills.bus.messages", {
    description: "Change bus messages, by direction (published, received), kind (Revision, Edit, Reload, Subscribed) and outcome",
    incremental: true
  }),
  busConnected: Metric.gauge("mcp_skills.bus.connected", { description: "1 while this replica is subscribed to the change bus, else 0" }),
  busApplyDuration: Metric.histogram("mcp_skills.bus.apply.duration", {
    description: "Seconds from hearing a bus message to serving what it says (the replica's lag behind the bus)",
    boundaries: McpTelemetry.OperationBoundaries
  })
} as const

const seconds = (start: bigint, end: bigint) => Number(end - start) / 1e9

const record = (telemetry: McpTelemetry.Telemetry, metric: Metric.Metric<number, unknown>, labels: McpTelemetry.Labels, value: number) =>
  Metric.update(telemetry.series(metric, labels), value)

/**
 * Spans and times one skills method on effect's path. The span is SERVER kind, a child of the
 * client's span when `_meta` carries a `traceparent` (with effect's own RPC span linked), else of
 * effect's RPC span.
 */
export const serve = <A, E, R>(
  method: string,
  params: unknown,
  context: McpTelemetry.RequestContext,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry === undefined) return effect
    const transport: McpTelemetry.Transport = Context.getOption(fiber.context, HttpServerRequest.HttpServerRequest)._tag === "Some"
      ? "tcp"
      : "pipe"
    const op = McpTelemetry.operation(method, params, { ...context, transport })
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    let run: Effect.Effect<A, E, R> = effect
    const ambient = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
    if (telemetry.spans && isRequestSpan(ambient, method)) {
      // effect 4.1.4 and later open the request's SERVER span themselves (the OpenTelemetry MCP
      // conventions, `_meta.traceparent` continued): ours are its attributes, not a second span.
      for (const [key, value] of Object.entries(McpTelemetry.spanAttributes(op))) ambient.attribute(key, value)
      run = Effect.tapError(effect, (error) => Effect.sync(() => {
        for (const [key, value] of Object.entries(McpTelemetry.failureAttributes(McpTelemetry.failureOf(error)))) ambient.attribute(key, value)
      }))
    } else if (telemetry.spans) {
      const parent = McpTelemetry.remoteParent(op.meta)
      run = Effect.withSpan(
        Effect.tapError(effect, (error) => Effect.annotateCurrentSpan(McpTelemetry.failureAttributes(McpTelemetry.failureOf(error)))),
        McpTelemetry.spanName(op, telemetry.uriInSpanName),
        {
          kind: "server",
          captureStackTrace: false,
          attributes: McpTelemetry.spanAttributes(op),
          ...(parent !== undefined
            ? { parent, links: ambient === undefined ? [] : [{ span: ambient, attributes: {} }] }
            : {})
        }
      )
    }
    if (!telemetry.metrics) return run
    return Effect.onExit(run, (exit) =>
      Effect.sync(() => {
        const failure = Exit.isFailure(exit) ? McpTelemetry.failureOf(Option.getOrUndefined(Exit.findErrorOption(exit))) : undefined
        telemetry.operationSeries(metrics.operationDuration, op, failure)
          .updateUnsafe(seconds(start, clock.currentTimeNanosUnsafe()), fiber.context)
      }))
  })

// effect's own span of the request being handled: a SERVER span named for the method.
const isRequestSpan = (span: Tracer.AnySpan | undefined, method: string): span is Tracer.Span =>
  span !== undefined && span._tag === "Span" && span.kind === "server" && span.attributes.get("mcp.method.name") === method

/**
 * Spans and times an answer of the fast route. Only answers are recorded (a request it leaves
 * to effect is recorded there), after the fact: the answer has no inner work to parent. The
 * series needs only the headers the route checked against the body (`Mcp-Method`,
 * `MCP-Protocol-Version`); a span also needs the id, the URI and `_meta`: the body, which the
 * route read (and effect keeps), parsed again.
 */
export const fastRoute = <A, E, R>(
  request: HttpServerRequest.HttpServerRequest,
  answer: Effect.Effect<A, E, R>,
  answered: (a: A) => boolean
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry === undefined || !telemetry.spans && !telemetry.metrics) return answer
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    return Effect.tap(answer, (result) => {
      if (!answered(result)) return Effect.void
      const end = clock.currentTimeNanosUnsafe()
      if (!telemetry.spans) {
        return Effect.sync(() => {
          const op = McpTelemetry.operation(request.headers["mcp-method"]!, undefined, {
            protocolVersion: request.headers["mcp-protocol-version"],
            requestId: undefined,
            sessionId: undefined,
            transport: "tcp"
          })
          telemetry.operationSeries(metrics.operationDuration, op).updateUnsafe(seconds(start, end), fiber.context)
        })
      }
      return Effect.flatMap(Effect.orElseSucceed(request.arrayBuffer, () => undefined), (body) => {
        const message = body === undefined ? undefined : parseMessage(body)
        if (message === undefined) return Effect.void
        const op = McpTelemetry.operation(message.method, message.params, {
          protocolVersion: request.headers["mcp-protocol-version"],
          requestId: message.id,
          sessionId: undefined,
          transport: "tcp"
        })
        const parent = McpTelemetry.remoteParent(op.meta)
        const ambient = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
        const span = fiber.getRef(Tracer.Tracer).span({
          name: McpTelemetry.spanName(op, telemetry.uriInSpanName),
          parent: parent !== undefined ? Option.some(parent) : Option.fromUndefinedOr(ambient),
          annotations: Context.empty(),
          links: parent !== undefined && ambient !== undefined ? [{ span: ambient, attributes: {} }] : [],
          startTime: start,
          kind: "server",
          root: false,
          sampled: parent?.sampled ?? ambient?.sampled ?? true
        })
        for (const [key, value] of Object.entries(McpTelemetry.spanAttributes(op))) span.attribute(key, value)
        span.end(end, Exit.void)
        if (telemetry.metrics) telemetry.operationSeries(metrics.operationDuration, op).updateUnsafe(seconds(start, end), fiber.context)
        return Effect.void
      })
    })
  })

const decoder = new TextDecoder()

const parseMessage = (body: ArrayBuffer) => {
  try {
    const message = JSON.parse(decoder.decode(body)) as { method?: unknown; id?: unknown; params?: unknown }
    return typeof message === "object" && message !== null && typeof message.method === "string"
      ? { method: message.method, id: message.id, params: message.params }
      : undefined
  } catch {
    return undefined
  }
}


/** Adds `value` to the series of `metric` under `labels`, only when metrics are on. */
export const count = (metric: Metric.Metric<number, unknown>, labels: McpTelemetry.Labels = {}, value = 1): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    return telemetry?.metrics === true ? record(telemetry, metric, labels, value) : Effect.void
  })

/** The visibility check `check`, each decision counted by method and outcome. */
export const visibility = <Request extends { readonly method: string }, D, E, R>(
  check: (request: Request) => Effect.Effect<D, E, R>
) =>
(request: Request): Effect.Effect<D, E, R> =>
  Effect.tap(check(request), (decision) =>
    count(metrics.decisions, {
      "mcp.method.name": request.method,
      decision: decision === true ? "all" : decision === false ? "none" : "some"
    }))

/**
 * One change bus message, published or received (and handled): its span, counted by direction,
 * kind and outcome.
 */
export const busMessage = (direction: "published" | "received", kind: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry === undefined) return effect
    const spanned = telemetry.spans
      ? Effect.withSpan(effect, `mcp_skills.bus.${direction === "published" ? "publish" : "receive"}`, {
        kind: direction === "published" ? "producer" : "consumer",
        attributes: { "mcp_skills.bus.message": kind },
        captureStackTrace: false
      })
      : effect
    if (!telemetry.metrics) return spanned
    return Effect.onExit(spanned, (exit) =>
      record(telemetry, metrics.busMessages, { direction, kind, outcome: Exit.isSuccess(exit) ? "success" : "failure" }, 1))
  })

/**
 * The time from hearing a bus message of `kind` (now) to serving what it says (when `effect`
 * ends): the replica's lag behind the bus.
 */
export const busLag = (kind: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry?.metrics !== true) return effect
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    return Effect.onExit(effect, () => record(telemetry, metrics.busApplyDuration, { kind }, seconds(start, clock.currentTimeNanosUnsafe())))
  })

/** Sets the bus gauge: subscribed (1) or not (0). */
export const busConnected = (connected: boolean): Effect.Effect<void> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(McpTelemetry.Current)?.metrics === true ? Metric.update(metrics.busConnected, connected ? 1 : 0) : Effect.void
  )

/** One `subscriptions/listen` stream open for as long as the scope is. */
export const listenOpen: Effect.Effect<void, never, Scope.Scope> = Effect.withFiber((fiber) =>
  fiber.getRef(McpTelemetry.Current)?.metrics === true
    ? Effect.acquireRelease(Metric.modify(metrics.listens, 1), () => Metric.modify(metrics.listens, -1))
    : Effect.void
)

/** A session of `protocolVersion` opened at `opened` (`Clock` millis) ended now. */
export const sessionEnded = (
  opened: number,
  protocolVersion = "2025-11-25",
  transport: McpTelemetry.Transport = "tcp"
): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry?.metrics !== true) return Effect.void
    const seconds = (fiber.getRef(Clock.Clock).currentTimeMillisUnsafe() - opened) / 1000
    return record(telemetry, metrics.sessionDuration, { "mcp.protocol.version": protocolVersion, "network.transport": transport }, seconds)
  })

/** A session (a stdio connection) open for as long as the scope is: its duration when it closes. */
export const session = (protocolVersion: string, transport: McpTelemetry.Transport): Effect.Effect<void, never, Scope.Scope> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(McpTelemetry.Current)?.metrics === true
      ? Effect.asVoid(Effect.acquireRelease(Clock.currentTimeMillis, (opened) => sessionEnded(opened, protocolVersion, transport)))
      : Effect.void
  )

/**
 * One change of the catalogue applied (a reload, an update, an edit): its span, counted by what
 * asked for it (`source`) and its outcome (`changed`, `unchanged`, `failure`), and its duration.
 */
export const applied = <E, R>(
  source: string,
  effect: Effect.Effect<Changes, E, R>
): Effect.Effect<Changes, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry === undefined) return effect
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    const spanned = telemetry.spans
      ? Effect.withSpan(effect, "mcp_skills.reload", { attributes: { "mcp_skills.reload.source": source }, captureStackTrace: false })
      : effect
    if (!telemetry.metrics) return spanned
    return Effect.onExit(spanned, (exit) => {
      // A caller that went away before its change was made changed nothing.
      if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return Effect.void
      const outcome = Exit.isFailure(exit)
        ? "failure"
        : exit.value.added.length + exit.value.removed.length + exit.value.changed.length > 0
        ? "changed"
        : "unchanged"
      return Effect.andThen(
        record(telemetry, metrics.reloads, { source, outcome }, 1),
        record(telemetry, metrics.reloadDuration, { source, outcome }, seconds(start, clock.currentTimeNanosUnsafe()))
      )
    })
  })

/**
 * What the catalogue gauges show of one snapshot: its skills, and its files and their bytes (a
 * skill inside another lists files its outermost static skill lists too: each counts once).
 */
export const catalogueOf = (snapshot: Pick<Snapshot, "skills">): { readonly skills: number; readonly files: number; readonly bytes: number } => {
  let files = 0
  let bytes = 0
  for (const skill of snapshot.skills) {
    if (skill._tag !== "Static" || skill.enclosedBy.length > 0) continue
    files += skill.manifest.files.length
    for (let index = 0; index < skill.manifest.files.length; index++) bytes += skill.manifest.files.size(index)
  }
  return { skills: snapshot.skills.length, files, bytes }
}

/**
 * Reports `read()` as `gauges` whenever metrics are read (scrape or export), for as
 * long as the scope is open: values that live in a structure are read, not pushed on each change.
 */
export const observe = <K extends string>(
  gauges: Readonly<Record<K, Metric.Gauge<number>>>,
  read: () => Readonly<Record<K, number>> | undefined
) =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(McpTelemetry.Current)
    if (telemetry?.metrics !== true) return Effect.void
    const context = fiber.context
    return Effect.acquireRelease(
      Effect.sync(() =>
        (Object.keys(gauges) as Array<K>).map((key) =>
          Metric.registerUnsafe(gauges[key], context, {
            get: () => ({ value: read()?.[key] ?? 0 }),
            update: () => {},
            modify: () => {}
          })
        )
      ),
      (registrations) => Effect.sync(() => registrations.forEach((registration) => registration.remove()))
    )
  })
