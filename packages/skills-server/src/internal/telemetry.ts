/**
 * Spans and metrics of the skills server by the OpenTelemetry MCP semantic conventions
 * (`docs/gen-ai/mcp.md`): the attribute and label sets as pure functions, the series, and the
 * wrappers the request paths call. Everything here reads `Current` first: without
 * `Observability.layer` it is `undefined` and each wrapper returns the effect it was given, so
 * nothing is allocated or measured.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"

/** `network.transport` by the conventions: `tcp` under HTTP, `pipe` for stdio. */
export type Transport = "tcp" | "pipe"

/** One MCP request or notification as the conventions describe it. */
export interface Operation {
  readonly method: string
  readonly protocolVersion: string | undefined
  /** The JSON-RPC id; absent for notifications (and never captured when null). */
  readonly requestId: string | number | undefined
  /** `params.uri` of the methods that name a resource. */
  readonly uri: string | undefined
  readonly sessionId: string | undefined
  readonly transport: Transport
  /** `params._meta`, where a client puts `traceparent`/`tracestate` (SEP-414). */
  readonly meta: unknown
}

/** A failure as the conventions record it: the JSON-RPC code as a string, or `_OTHER`. */
export interface Failure {
  readonly type: string
  readonly code: string | undefined
  readonly message: string | undefined
}

/** What the settings of `Observability.layer` become. */
export interface Telemetry {
  readonly spans: boolean
  readonly metrics: boolean
  /** Puts `mcp.resource.uri` into span names (the conventions' opt-in: high cardinality). */
  readonly uriInSpanName: boolean
  /** The series of one label set, made once per set (label values are bounded). */
  readonly series: <M extends Metric.Metric<any, any>>(metric: M, labels: Labels) => M
}

/** Metric labels: low-cardinality strings only, never a URI, session or user. */
export type Labels = Readonly<Record<string, string>>

/** The telemetry of this fiber: `undefined` (the default) turns every wrapper into the identity. */
export const Current = Context.Reference<Telemetry | undefined>("@mcp-skills/server/Telemetry", {
  defaultValue: () => undefined
})

/** The telemetry for `options`, with its own cache of labelled series. */
export const make = (options: {
  readonly spans?: boolean | undefined
  readonly metrics?: boolean | undefined
  readonly uriInSpanName?: boolean | undefined
}): Telemetry => {
  const cache = new WeakMap<object, Map<string, unknown>>()
  return {
    spans: options.spans ?? true,
    metrics: options.metrics ?? true,
    uriInSpanName: options.uriInSpanName ?? false,
    series: (metric, labels) => {
      let byLabels = cache.get(metric)
      if (byLabels === undefined) {
        byLabels = new Map()
        cache.set(metric, byLabels)
      }
      const key = JSON.stringify(labels)
      let labelled = byLabels.get(key)
      if (labelled === undefined) {
        labelled = Metric.withAttributes(metric, labels)
        byLabels.set(key, labelled)
      }
      return labelled as typeof metric
    }
  }
}

// The conventions' advisory boundaries for MCP durations, in seconds.
const DurationBoundaries = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
// Our answers take microseconds to milliseconds: finer buckets below the conventions' first.
const OperationBoundaries = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, ...DurationBoundaries]

/** The series of the server, by their OpenTelemetry names (Prometheus: dots become underscores). */
export const metrics = {
  operationDuration: Metric.histogram("mcp.server.operation.duration", {
    description: "Duration of MCP requests the server handled, in seconds",
    boundaries: OperationBoundaries
  }),
  sessionDuration: Metric.histogram("mcp.server.session.duration", {
    description: "Duration of MCP sessions (2025-11-25 HTTP sessions, stdio connections), in seconds",
    boundaries: DurationBoundaries
  }),
  skills: Metric.gauge("mcp_skills.catalogue.skills", { description: "Skills in the served catalogue" }),
  files: Metric.gauge("mcp_skills.catalogue.files", { description: "Files in the served catalogue" }),
  bytes: Metric.gauge("mcp_skills.catalogue.bytes", { description: "Bytes of the files in the served catalogue" }),
  reloads: Metric.counter("mcp_skills.reloads", {
    description: "Catalogue reloads, by outcome (success, failure)",
    incremental: true
  }),
  reloadDuration: Metric.histogram("mcp_skills.reload.duration", {
    description: "Duration of catalogue reloads, in seconds",
    boundaries: OperationBoundaries
  }),
  rescans: Metric.counter("mcp_skills.rescans", {
    description: "On-demand rescans: a reader found a file changed on disk",
    incremental: true
  }),
  refusals: Metric.counter("mcp_skills.visibility.refusals", {
    description: "Skills requests the visibility check refused outright",
    incremental: true
  }),
  sessions: Metric.gauge("mcp_skills.sessions.open", { description: "Open 2025-11-25 HTTP sessions" }),
  streams: Metric.gauge("mcp_skills.streams.open", { description: "Open session streams" }),
  subscriptions: Metric.gauge("mcp_skills.subscriptions", { description: "resources/subscribe URIs held by sessions" }),
  notifications: Metric.counter("mcp_skills.notifications", {
    description: "Notifications a listener was not sent, by outcome (coalesced, dropped)",
    incremental: true
  }),
  busMessages: Metric.counter("mcp_skills.bus.messages", {
    description: "Change bus messages, by direction (published, received) and outcome",
    incremental: true
  }),
  busConnected: Metric.gauge("mcp_skills.bus.connected", { description: "1 while the change bus is connected, else 0" }),
  busLag: Metric.gauge("mcp_skills.bus.lag", { description: "Seconds between a bus message's publication and its application here" })
} as const

const ResourceMethods: ReadonlySet<string> = new Set([
  "skills/get",
  "resources/read",
  "resources/directory/read",
  "resources/subscribe",
  "resources/unsubscribe"
])

/** The operation of a request to `method` with `params`. */
export const operation = (
  method: string,
  params: unknown,
  context: {
    readonly protocolVersion: string | undefined
    readonly requestId: unknown
    readonly sessionId: string | undefined
    readonly transport: Transport
  }
): Operation => {
  const fields = typeof params === "object" && params !== null ? params as Record<string, unknown> : undefined
  const uri = fields?.uri
  const id = context.requestId
  return {
    method,
    protocolVersion: context.protocolVersion,
    requestId: typeof id === "string" || typeof id === "number" ? id : undefined,
    uri: ResourceMethods.has(method) && typeof uri === "string" ? uri : undefined,
    sessionId: context.sessionId,
    transport: context.transport,
    meta: fields?._meta
  }
}

/** `{mcp.method.name}`, or with the URI as target when the operator opted in. */
export const spanName = (op: Operation, uriInSpanName: boolean): string =>
  uriInSpanName && op.uri !== undefined ? `${op.method} ${op.uri}` : op.method

/** The span attributes of `op` (and of its failure, when it failed). */
export const spanAttributes = (op: Operation, failure?: Failure): Record<string, string> => {
  const attributes: Record<string, string> = {
    "mcp.method.name": op.method,
    "network.transport": op.transport
  }
  if (op.protocolVersion !== undefined) attributes["mcp.protocol.version"] = op.protocolVersion
  if (op.transport === "tcp") attributes["network.protocol.name"] = "http"
  if (op.requestId !== undefined) attributes["jsonrpc.request.id"] = String(op.requestId)
  if (op.uri !== undefined) attributes["mcp.resource.uri"] = op.uri
  if (op.sessionId !== undefined) attributes["mcp.session.id"] = op.sessionId
  if (failure !== undefined) Object.assign(attributes, failureAttributes(failure))
  return attributes
}

/** What a failure adds to a span: `error.type`, and the JSON-RPC code as `rpc.response.status_code`. */
export const failureAttributes = (failure: Failure): Record<string, string> =>
  failure.code === undefined
    ? { "error.type": failure.type }
    : { "error.type": failure.type, "rpc.response.status_code": failure.code }

/** The labels of `mcp.server.operation.duration` (and the client's): no URI, id or session. */
export const operationLabels = (op: Operation, failure?: Failure): Labels => {
  const labels: Record<string, string> = { "mcp.method.name": op.method, "network.transport": op.transport }
  if (op.protocolVersion !== undefined) labels["mcp.protocol.version"] = op.protocolVersion
  if (failure !== undefined) labels["error.type"] = failure.type
  return labels
}

/** A handler's failure: a JSON-RPC error by its code, anything else `_OTHER`. */
export const failureOf = (error: unknown): Failure => {
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { readonly code?: unknown; readonly message?: unknown }
    if (typeof code === "number" && Number.isInteger(code)) {
      return { type: String(code), code: String(code), message: typeof message === "string" ? message : undefined }
    }
    if (typeof message === "string") return { type: "_OTHER", code: undefined, message }
  }
  return { type: "_OTHER", code: undefined, message: undefined }
}

/** W3C `traceparent` (version 00): the remote parent it names, if it is well formed. */
export const parseTraceparent = (value: unknown): Tracer.ExternalSpan | undefined => {
  if (typeof value !== "string") return undefined
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value.trim())
  if (match === null || match[1] === "ff" || /^0+$/.test(match[2]!) || /^0+$/.test(match[3]!)) return undefined
  return Tracer.externalSpan({
    traceId: match[2]!,
    spanId: match[3]!,
    sampled: (parseInt(match[4]!, 16) & 1) === 1
  })
}

/** The `traceparent` naming `span` as the parent of the peer's work. */
export const traceparentOf = (span: Tracer.AnySpan): string =>
  `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/** The remote parent carried in `_meta`, if any. */
export const remoteParent = (meta: unknown): Tracer.ExternalSpan | undefined =>
  typeof meta === "object" && meta !== null ? parseTraceparent((meta as Record<string, unknown>).traceparent) : undefined

const seconds = (start: bigint, end: bigint) => Number(end - start) / 1e9

const record = (telemetry: Telemetry, metric: Metric.Metric<number, any>, labels: Labels, value: number) =>
  Metric.update(telemetry.series(metric, labels), value)

/**
 * Spans and times one skills method on effect's path. The span is SERVER kind, a child of the
 * client's span when `_meta` carries a `traceparent` (with effect's own RPC span linked), else of
 * effect's RPC span.
 */
export const serve = <A, E, R>(
  method: string,
  params: unknown,
  context: {
    readonly protocolVersion: string | undefined
    readonly requestId: unknown
    readonly sessionId: string | undefined
  },
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(Current)
    if (telemetry === undefined) return effect
    const transport: Transport = Context.getOption(fiber.context, HttpServerRequest.HttpServerRequest)._tag === "Some"
      ? "tcp"
      : "pipe"
    const op = operation(method, params, { ...context, transport })
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    let run: Effect.Effect<A, E, R> = effect
    if (telemetry.spans) {
      const parent = remoteParent(op.meta)
      const ambient = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
      run = Effect.withSpan(
        Effect.tapError(effect, (error) => Effect.annotateCurrentSpan(failureAttributes(failureOf(error)))),
        spanName(op, telemetry.uriInSpanName),
        {
          kind: "server",
          captureStackTrace: false,
          attributes: spanAttributes(op),
          ...(parent !== undefined
            ? { parent, links: ambient === undefined ? [] : [{ span: ambient, attributes: {} }] }
            : {})
        }
      )
    }
    if (!telemetry.metrics) return run
    return Effect.onExit(run, (exit) => {
      const failure = Exit.isFailure(exit) ? failureOf(Option.getOrUndefined(Exit.findErrorOption(exit))) : undefined
      return record(telemetry, metrics.operationDuration, operationLabels(op, failure), seconds(start, clock.currentTimeNanosUnsafe()))
    })
  })

/**
 * Spans and times an answer of the fast route. Only answers are recorded (a request it leaves
 * to effect is recorded there), after the fact: the answer has no inner work to parent. The
 * request's body was read (and kept) by the route, so reading it again costs a parse.
 */
export const fastRoute = <A, E, R>(
  request: HttpServerRequest.HttpServerRequest,
  answer: Effect.Effect<A, E, R>,
  answered: (a: A) => boolean
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(Current)
    if (telemetry === undefined) return answer
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    return Effect.tap(answer, (result) => {
      if (!answered(result)) return Effect.void
      const end = clock.currentTimeNanosUnsafe()
      return Effect.flatMap(Effect.orElseSucceed(request.arrayBuffer, () => undefined), (body) => {
        const message = body === undefined ? undefined : parseMessage(body)
        if (message === undefined) return Effect.void
        const op = operation(message.method, message.params, {
          protocolVersion: request.headers["mcp-protocol-version"],
          requestId: message.id,
          sessionId: undefined,
          transport: "tcp"
        })
        if (telemetry.spans) {
          const parent = remoteParent(op.meta)
          const ambient = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
          const span = fiber.getRef(Tracer.Tracer).span({
            name: spanName(op, telemetry.uriInSpanName),
            parent: parent !== undefined ? Option.some(parent) : Option.fromUndefinedOr(ambient),
            annotations: Context.empty(),
            links: parent !== undefined && ambient !== undefined ? [{ span: ambient, attributes: {} }] : [],
            startTime: start,
            kind: "server",
            root: false,
            sampled: parent?.sampled ?? ambient?.sampled ?? true
          })
          for (const [key, value] of Object.entries(spanAttributes(op))) span.attribute(key, value)
          span.end(end, Exit.void)
        }
        return telemetry.metrics
          ? record(telemetry, metrics.operationDuration, operationLabels(op), seconds(start, end))
          : Effect.void
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

/** A span named `name` around `effect`, only when spans are on. */
export const span = (name: string, attributes?: Record<string, unknown>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(Current)
    return telemetry?.spans === true ? Effect.withSpan(effect, name, { attributes, captureStackTrace: false }) : effect
  })

/** Adds `value` to the series of `metric` under `labels`, only when metrics are on. */
export const count = (metric: Metric.Metric<number, any>, labels: Labels = {}, value = 1): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(Current)
    return telemetry?.metrics === true ? record(telemetry, metric, labels, value) : Effect.void
  })

/** A reload: its span, its outcome counted and its duration recorded. */
export const reload = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(Current)
    if (telemetry === undefined) return effect
    const clock = fiber.getRef(Clock.Clock)
    const start = clock.currentTimeNanosUnsafe()
    const spanned = telemetry.spans ? Effect.withSpan(effect, "mcp_skills.reload", { captureStackTrace: false }) : effect
    if (!telemetry.metrics) return spanned
    return Effect.onExit(spanned, (exit) => {
      const outcome = Exit.isSuccess(exit) ? "success" : "failure"
      return Effect.andThen(
        record(telemetry, metrics.reloads, { outcome }, 1),
        record(telemetry, metrics.reloadDuration, { outcome }, seconds(start, clock.currentTimeNanosUnsafe()))
      )
    })
  })

/** What the catalogue gauges show of one snapshot: its skills, and its files and their bytes. */
export const catalogueOf = (snapshot: {
  readonly skills: ReadonlyArray<unknown>
  readonly files: ReadonlyMap<string, { readonly size: number }>
}): { readonly skills: number; readonly files: number; readonly bytes: number } => {
  let bytes = 0
  for (const file of snapshot.files.values()) bytes += file.size
  return { skills: snapshot.skills.length, files: snapshot.files.size, bytes }
}

/** Sets the catalogue gauges to what `snapshot` holds (measured only when metrics are on). */
export const catalogue = (snapshot: Parameters<typeof catalogueOf>[0]): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(Current)
    if (telemetry?.metrics !== true) return Effect.void
    const sizes = catalogueOf(snapshot)
    return Effect.all([
      Metric.update(metrics.skills, sizes.skills),
      Metric.update(metrics.files, sizes.files),
      Metric.update(metrics.bytes, sizes.bytes)
    ], { discard: true })
  })

/**
 * Reports `read()` as the gauges of `fields` whenever metrics are read (scrape or export), for as
 * long as the scope is open: values that live in a structure are read, not pushed on each change.
 */
export const observe = <K extends string>(
  gauges: Readonly<Record<K, Metric.Metric<number, any>>>,
  read: () => Readonly<Record<K, number>> | undefined
) =>
  Effect.withFiber((fiber) => {
    const telemetry = fiber.getRef(Current)
    if (telemetry?.metrics !== true) return Effect.void
    const context = fiber.context
    return Effect.acquireRelease(
      Effect.sync(() =>
        (Object.keys(gauges) as Array<K>).map((key) =>
          Metric.registerUnsafe(gauges[key], context, {
            get: () => ({ value: read()?.[key] ?? 0 }) as any,
            update: () => {},
            modify: () => {}
          })
        )
      ),
      (registrations) => Effect.sync(() => registrations.forEach((registration) => registration.remove()))
    )
  })
