/**
 * The gateway rows: `skills/list`, `skills/get` and `resources/read` through a gateway
 * (`mcp-skills-server serve --upstream up=URL`, in front of our server) against the same requests
 * straight to our server serving the same folder under the same prefix (`--prefix up`, so both
 * answer the same URIs), interleaved as every other row; and the time from a skill added to the
 * upstream's folder to the `list_changed` a listener of the gateway hears, beside the time to the
 * upstream's own listener.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import type * as Catalogue from "./catalogue.js"
import * as Children from "./child.js"
import { median, rounds, type Row, type Target } from "./load.js"
import * as Wire from "./wire.js"

const Prefix = "up"

/** What the section measured. */
export interface Result {
  readonly rows: ReadonlyArray<Row>
  readonly notes: ReadonlyArray<string>
  /** Milliseconds from the file written to `list_changed`, per run. */
  readonly change: { readonly upstreamMs: ReadonlyArray<number>; readonly gatewayMs: ReadonlyArray<number> }
}

// A 2026-07-28 listen stream on `url`: resolves `ready` once acknowledged, `heard` at the first
// list_changed (performance.now()); `close` ends it.
const listen = (url: string) => {
  const abort = new AbortController()
  let ready!: () => void
  let heard!: (at: number) => void
  const result = {
    ready: new Promise<void>((resolve) => (ready = resolve)),
    heard: new Promise<number>((resolve) => (heard = resolve)),
    close: () => abort.abort()
  }
  const request = Wire.request("subscriptions/listen", "subscriptions/listen", { notifications: { resourcesListChanged: true } }, () => {})
  void fetch(url, { method: "POST", headers: request.headers, body: request.body, signal: abort.signal }).then(async (response) => {
    const decoder = new TextDecoder()
    let buffer = ""
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true })
      if (buffer.includes("notifications/subscriptions/acknowledged")) ready()
      if (buffer.includes("notifications/resources/list_changed")) return heard(performance.now())
    }
  }).catch(() => {})
  return result
}

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<A>((_, reject) => {
      setTimeout(() => reject(new Error(`${what}: nothing in ${ms} ms`)), ms).unref()
    })
  ])

/** Runs the section over `catalogue`, written at `dir`. */
export const run = async (
  catalogue: Catalogue.Catalogue,
  dir: string,
  config: Parameters<typeof rounds>[2] & { readonly changeRuns: number },
  lifecycle: {
    readonly started: (make: () => Promise<Children.Child>) => Promise<Children.Child>
    readonly stop: (child: Children.Child) => Promise<void>
    readonly verifiedTargets: (
      servers: ReadonlyArray<Children.Child>,
      requests: ReadonlyArray<Wire.Request>,
      notes: Array<string>
    ) => Promise<Array<Target>>
  }
): Promise<Result> => {
  const prefixed: Catalogue.Catalogue = { ...catalogue, skills: catalogue.skills.map((skill) => ({ ...skill, path: `${Prefix}/${skill.path}` })) }
  const one = Wire.sortedSkills(prefixed).filter((skill) => skill.path.startsWith(`${Prefix}/team-`))[0]!
  const requests = [
    Wire.listFirstPage(prefixed),
    Wire.getSkill(one),
    Wire.readFile("resources/read small text", one, "references/guide.md")
  ]
  const upstream = await lifecycle.started(() => Children.start("upstream", [...Children.oursArgs(dir), "--watch"]))
  const ours = await lifecycle.started(() => Children.start("ours", [...Children.oursArgs(dir), "--prefix", Prefix]))
  const gateway = await lifecycle.started(() =>
    Children.start("gateway", [Children.serverBin, "serve", "--upstream", `${Prefix}=${upstream.url}`, ...Children.loopback])
  )
  const notes: Array<string> = []
  const rows = await rounds(await lifecycle.verifiedTargets([ours, gateway], requests, notes), requests, config)

  const upstreamMs: Array<number> = []
  const gatewayMs: Array<number> = []
  for (let i = 0; i < config.changeRuns; i++) {
    const direct = listen(upstream.url)
    const through = listen(gateway.url)
    try {
      await withTimeout(Promise.all([direct.ready, through.ready]), 10_000, "listen acknowledgements")
      const written = performance.now()
      mkdirSync(Path.join(dir, `added-${i}`))
      writeFileSync(Path.join(dir, `added-${i}/SKILL.md`), `---\nname: added-${i}\ndescription: Added while served\n---\n`)
      const [a, b] = await withTimeout(Promise.all([direct.heard, through.heard]), 30_000, "list_changed")
      upstreamMs.push(a - written)
      gatewayMs.push(b - written)
    } catch (error) {
      notes.push(`change run ${i + 1}: ${String(error)}`)
    } finally {
      direct.close()
      through.close()
    }
  }
  for (const child of [gateway, ours, upstream]) await lifecycle.stop(child)
  return { rows, notes, change: { upstreamMs, gatewayMs } }
}

/** The section's lines of the report, and its targets. */
export const report = (
  result: Result,
  config: { readonly connections: number; readonly rounds: number; readonly seconds: number },
  check: (target: string, measured: string, met: boolean | undefined) => void
): Array<string> => {
  const lines = [
    "",
    `Gateway: through mcp-skills-server serve --upstream against our server directly (same folder, same URIs), ${config.connections} connections, median of ${config.rounds} interleaved rounds x ${config.seconds} s`,
    `${"request".padEnd(28)}${"direct req/s".padEnd(14)}${"gateway req/s".padEnd(15)}${"gateway/direct".padEnd(16)}${"p50 direct/gateway ms".padEnd(24)}errors`
  ]
  const byRequest = new Map<string, Record<string, Row>>()
  for (const row of result.rows) byRequest.set(row.request, { ...byRequest.get(row.request), [row.server]: row })
  for (const [request, r] of byRequest) {
    const direct = r["ours"]!, through = r["gateway"]!
    const ratio = through.rps / direct.rps
    lines.push(
      `${request.padEnd(28)}${direct.rps.toFixed(0).padEnd(14)}${through.rps.toFixed(0).padEnd(15)}${`${(ratio * 100).toFixed(0)}%`.padEnd(16)}${`${direct.p50}/${through.p50}`.padEnd(24)}${direct.errors}/${through.errors}`
    )
    check(`${request}: gateway >= 80% of direct`, `${(ratio * 100).toFixed(0)}%`, ratio >= 0.8)
    if (direct.errors + through.errors > 0) check(`${request} through the gateway: zero errors`, `${direct.errors}/${through.errors}`, false)
  }
  const { upstreamMs, gatewayMs } = result.change
  lines.push(
    `upstream change to list_changed, median of ${gatewayMs.length}: upstream's own listener ${median(upstreamMs).toFixed(0)} ms, ` +
      `the gateway's ${median(gatewayMs).toFixed(0)} ms (the gateway adds ${(median(gatewayMs) - median(upstreamMs)).toFixed(0)} ms)`
  )
  for (const note of result.notes) lines.push(`  note: ${note}`)
  return lines
}
