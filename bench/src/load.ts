/**
 * Load with autocannon's programmatic API. A measurement sends one request body again and again on
 * `connections` keep-alive connections for `seconds`, and counts as errors: socket errors, timeouts,
 * non-2xx answers, and any body that differs from the one verified (digests and all) beforehand.
 */
import autocannon from "autocannon"
import type { Request } from "./wire.js"

export interface Measurement {
  readonly requests: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

/**
 * One measurement; when fewer than 8 requests completed in the window (a very slow server, or a busy
 * machine), it is repeated with a window four times as long, up to 12 s.
 */
export const measure = async (url: string, request: Request, expectBody: string | undefined, connections: number, seconds: number): Promise<Measurement> => {
  let m = await measureOnce(url, request, expectBody, connections, seconds)
  await drain(url, request)
  while (m.requests < 8 && seconds < 12) {
    seconds = Math.min(12, seconds * 4)
    m = await measureOnce(url, request, expectBody, connections, seconds)
    await drain(url, request)
  }
  return m
}

/**
 * Waits until the server has worked off what autocannon left in flight when its window closed (a
 * server keeps computing answers for closed connections), so the next measurement starts on an idle
 * server: one more request, answered after the backlog, then a short pause.
 */
export const drain = async (url: string, request: Request) => {
  try {
    await fetch(url, { method: "POST", headers: request.headers, body: request.body }).then((r) => r.arrayBuffer())
  } catch {
    // a refused or reset connection also means nothing is queued any more
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
}

export const measureOnce = (url: string, request: Request, expectBody: string | undefined, connections: number, seconds: number) =>
  new Promise<Measurement>((resolve, reject) => {
    autocannon({
      url,
      method: "POST",
      headers: request.headers,
      body: request.body,
      connections,
      pipelining: 1,
      duration: seconds,
      timeout: 30,
      ...(expectBody === undefined ? {} : { expectBody })
    }, (error, result) => {
      if (error !== null && error !== undefined) return reject(error)
      resolve({
        requests: result.requests.total,
        rps: result.requests.total / (result.duration > 0 ? result.duration : seconds),
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.timeouts + result.non2xx + (result.mismatches ?? 0)
      })
    })
  })

export const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export interface Target {
  readonly name: string
  readonly url: string
  /** The verified body of each request label, for mismatch counting. */
  readonly bodies: ReadonlyMap<string, string>
}

export interface Row {
  readonly request: string
  readonly server: string
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  readonly rounds: ReadonlyArray<Measurement>
}

/**
 * Interleaved rounds: each round measures every (request, server) pair once, rotating which server
 * goes first, so slow drifts of the machine hit every server alike. Figures are medians over rounds.
 */
export const rounds = async (
  targets: ReadonlyArray<Target>,
  requests: ReadonlyArray<Request>,
  options: { readonly rounds: number; readonly seconds: number; readonly warmup: number; readonly connections: number; readonly log: (line: string) => void }
): Promise<Array<Row>> => {
  const results = new Map<string, Array<Measurement>>()
  for (const request of requests) {
    for (const target of targets) {
      await measureOnce(target.url, request, target.bodies.get(request.label), options.connections, options.warmup)
      await drain(target.url, request)
    }
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const request of requests) {
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!)
      for (const target of order) {
        const m = await measure(target.url, request, target.bodies.get(request.label), options.connections, options.seconds)
        const key = `${request.label}\u0000${target.name}`
        results.set(key, [...(results.get(key) ?? []), m])
        options.log(`  round ${round + 1} ${request.label.padEnd(26)} ${target.name.padEnd(5)} ${m.rps.toFixed(0).padStart(7)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms${m.errors > 0 ? `  ERRORS ${m.errors}` : ""}`)
      }
    }
  }
  return requests.flatMap((request) =>
    targets.map((target) => {
      const ms = results.get(`${request.label}\u0000${target.name}`) ?? []
      return {
        request: request.label,
        server: target.name,
        rps: median(ms.map((m) => m.rps)),
        p50: median(ms.map((m) => m.p50)),
        p99: median(ms.map((m) => m.p99)),
        errors: ms.reduce((n, m) => n + m.errors, 0),
        rounds: ms
      }
    })
  )
}
