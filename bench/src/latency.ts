/**
 * Unloaded latency: `count` requests one after another on one keep-alive connection, timed with
 * `performance.now()` (autocannon's histogram has whole-millisecond resolution, too coarse for a
 * sub-millisecond p50). Every answer must be HTTP 200 with the verified body, else it counts as an error.
 */
import * as Http from "node:http"
import type { Request } from "./wire.js"
import { median } from "./load.js"

export interface Latency {
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

const once = (agent: Http.Agent, url: URL, request: Request) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = Http.request(url, { method: "POST", agent, headers: { ...request.headers, "content-length": Buffer.byteLength(request.body) } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(request.body)
  })

export const sequential = async (url: string, request: Request, expectBody: string, count: number, warmup: number): Promise<Latency> => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  const target = new URL(url)
  const times: Array<number> = []
  let errors = 0
  try {
    for (let i = 0; i < warmup + count; i++) {
      const start = performance.now()
      const response = await once(agent, target, request)
      const elapsed = performance.now() - start
      if (response.status !== 200 || response.body !== expectBody) errors++
      if (i >= warmup) times.push(elapsed)
    }
  } finally {
    agent.destroy()
  }
  times.sort((a, b) => a - b)
  return { p50: median(times), p99: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]!, errors }
}
