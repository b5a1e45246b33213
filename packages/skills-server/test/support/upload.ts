/**
 * Raw HTTP uploads over loopback: a body of any size sent in chunks with backpressure (held one
 * chunk at a time, never whole), declared or chunked, stopped as soon as the answer arrives.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { request as httpRequest } from "node:http"

export interface Raw {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
  /** Body bytes the client managed to hand to the socket before it got the answer. */
  readonly sent: number
}

const jsonHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/**
 * Sends `chunk` `count` times with node:http, respecting backpressure, and
 * stops writing as soon as the answer arrives. Holds one chunk in memory, never the body.
 */
export const upload = (url: string, options: {
  readonly method?: string | undefined
  readonly headers?: Record<string, string> | undefined
  readonly chunk: Uint8Array
  readonly count: number
  readonly declareLength?: boolean
}): Effect.Effect<Raw> =>
  Effect.callback<Raw>((resume) => {
    const total = options.chunk.length * options.count
    let sent = 0
    let answered = false
    const req = httpRequest(url, {
      method: options.method ?? "POST",
      headers: { ...jsonHeaders, ...options.headers, ...(options.declareLength === true ? { "content-length": String(total) } : {}) }
    })
    req.on("response", (res) => {
      answered = true
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () =>
        resume(Effect.succeed({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString("utf8"),
          sent
        })))
      res.on("error", (error) => resume(Effect.die(error)))
    })
    // A server that refuses early closes the connection: writes after that fail, the answer stands.
    req.on("error", (error) => {
      if (!answered) resume(Effect.die(error))
    })
    let written = 0
    const pump = () => {
      while (!answered && written < options.count) {
        written++
        sent += options.chunk.length
        if (!req.write(options.chunk)) return void req.once("drain", pump)
      }
      if (!answered) req.end()
    }
    pump()
    return Effect.sync(() => req.destroy())
  })

/** The JSON-RPC error of an answer, whose id must be `id`. */
export const errorOf = (raw: Raw, id: string | number | null = null) => {
  const body = JSON.parse(raw.text)
  assert.strictEqual(body.jsonrpc, "2.0")
  assert.strictEqual(body.id, id)
  assert.isString(body.error.message)
  return body.error as { code: number; message: string; data?: any }
}
