/**
 * Test support: one HTTP request with headers exactly as given, `Host` included (fetch sets its
 * own), as a DNS-rebinding page or a scraper sends them.
 */
import * as Effect from "effect/Effect"
import * as NodeHttp from "node:http"
import * as NodeNet from "node:net"

export interface RawAnswer {
  readonly status: number
  readonly body: string
}

export const rawRequest = (
  url: string,
  options: {
    readonly method?: string | undefined
    readonly headers?: Record<string, string> | undefined
    readonly body?: string | undefined
  } = {}
): Effect.Effect<RawAnswer> =>
  Effect.callback<RawAnswer>((resume) => {
    const request = NodeHttp.request(url, { method: options.method ?? "GET", headers: options.headers, agent: false }, (response) => {
      let body = ""
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body })))
    })
    request.on("error", (error) => resume(Effect.die(error)))
    request.setTimeout(10_000, () => request.destroy(new Error(`no answer from ${url} in 10 s`)))
    request.end(options.body)
    return Effect.sync(() => request.destroy())
  })

/** The JSON-RPC error of a refusal. */
export const refusalOf = (answer: RawAnswer): { readonly code: number; readonly message: string } =>
  JSON.parse(answer.body).error

/**
 * What an HTTP/1 server at `url`'s address answers `text` (a whole request, sent as it is) with,
 * over a plain socket closed by the server: the status line's code (0 if none) and the body.
 */
export const socketAnswer = (url: string, text: string): Effect.Effect<RawAnswer> =>
  Effect.callback<RawAnswer>((resume) => {
    const { hostname, port } = new URL(url)
    const socket = NodeNet.connect(Number(port), hostname, () => socket.end(text))
    let answer = ""
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk))
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.\d (\d{3})/.exec(answer)?.[1] ?? 0)
      const head = answer.indexOf("\r\n\r\n")
      resume(Effect.succeed({ status, body: head === -1 ? "" : answer.slice(head + 4) }))
    })
    socket.on("error", (error) => resume(Effect.die(error)))
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer from ${url} in 10 s`)))
    return Effect.sync(() => socket.destroy())
  })

/** The status code of `socketAnswer`. */
export const socketStatus = (url: string, text: string): Effect.Effect<number> =>
  Effect.map(socketAnswer(url, text), (answer) => answer.status)

/** A GET as an HTTP/1.0 client without `Host` sends it, over a plain socket; the status line's code. */
export const http10Status = (url: string): Effect.Effect<number> => socketStatus(url, `GET ${new URL(url).pathname} HTTP/1.0\r\n\r\n`)
