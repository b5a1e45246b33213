/**
 * A tampering proxy in front of an upstream, on loopback: it forwards every request and, while a
 * tamper is set, rewrites the answers about one file: its bytes changed under the listed digest,
 * or its bytes changed with the listing's digest and size recomputed to match (what only a
 * signature can catch). Event streams (notifications) pass through as they come.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export type Tamper =
  | { readonly _tag: "Honest" }
  /** The file's bytes changed (same length), its listed digest and size left as they were. */
  | { readonly _tag: "Bytes"; readonly uri: string }
  /** The file's bytes changed and the listing's digest and size recomputed to match. */
  | { readonly _tag: "Listing"; readonly uri: string }

const tampered = (text: string) => text.replace(/[a-z]/, (c) => (c === "z" ? "y" : String.fromCharCode(c.charCodeAt(0) + 1)))

const digestOf = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`

// Rewrites one JSON-RPC answer for `tamper`; `reads` holds the honest text of the file once read.
const rewrite = (message: any, tamper: Tamper, honest: Map<string, string>): any => {
  if (tamper._tag === "Honest" || typeof message !== "object" || message === null || message.result === undefined) return message
  const result = message.result
  if (Array.isArray(result.contents)) {
    const contents = result.contents.map((item: any) => {
      if (item.uri !== tamper.uri || typeof item.text !== "string") return item
      honest.set(item.uri, item.text)
      return { ...item, text: tampered(item.text) }
    })
    return { ...message, result: { ...result, contents } }
  }
  if (tamper._tag !== "Listing") return message
  const entry = (skill: any) =>
    Array.isArray(skill?.resources)
      ? {
        ...skill,
        resources: skill.resources.map((resource: any) => {
          const text = honest.get(resource.uri)
          if (resource.uri !== tamper.uri || text === undefined) return resource
          const bytes = Buffer.from(tampered(text), "utf8")
          return { ...resource, digest: digestOf(tampered(text)), size: bytes.length }
        })
      }
      : skill
  if (Array.isArray(result.skills)) return { ...message, result: { ...result, skills: result.skills.map(entry) } }
  if (result.skill !== undefined) return { ...message, result: { ...result, skill: entry(result.skill) } }
  return message
}

export interface TamperProxy {
  readonly url: string
  /** What the proxy does from now on. */
  tamper: Tamper
  /** Holds every request until `release` (an upstream that does not answer). */
  hold: boolean
  /** With `hold`: holds only requests of this JSON-RPC method (an upstream slow to serve files). */
  holdOnly: string | undefined
  readonly release: () => void
  /** Honest texts of the tampered file as the upstream served them (a listing tamper needs one read first). */
  readonly honest: Map<string, string>
}

/** A proxy for the upstream at `target` (an MCP endpoint URL), stopped with the scope. */
export const start = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const upstream = new URL(target)
      const held: Array<() => void> = []
      const proxy: TamperProxy = {
        url: "",
        tamper: { _tag: "Honest" },
        honest: new Map(),
        hold: false,
        holdOnly: undefined,
        release: () => {
          proxy.hold = false
          for (const forward of held.splice(0)) forward()
        }
      }
      const server = Http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        const holding = () => {
          if (!proxy.hold) return false
          if (proxy.holdOnly === undefined) return true
          try {
            return JSON.parse(Buffer.concat(chunks).toString("utf8"))?.method === proxy.holdOnly
          } catch {
            return false
          }
        }
        req.on("end", () => (holding() ? held.push(forwarding) : forwarding()))
        const forwarding = () => {
          const forward = Http.request(
            { host: upstream.hostname, port: upstream.port, path: upstream.pathname, method: req.method, headers: req.headers },
            (answer) => {
              const type = answer.headers["content-type"] ?? ""
              if (!type.startsWith("application/json")) {
                res.writeHead(answer.statusCode ?? 502, answer.headers)
                answer.pipe(res)
                return
              }
              const body: Array<Buffer> = []
              answer.on("data", (chunk: Buffer) => body.push(chunk))
              answer.on("end", () => {
                const text = Buffer.concat(body).toString("utf8")
                let out = text
                try {
                  out = JSON.stringify(rewrite(JSON.parse(text), proxy.tamper, proxy.honest))
                } catch {
                  // not JSON: passed on as it is
                }
                const { "content-length": _, ...headers } = answer.headers
                res.writeHead(answer.statusCode ?? 502, headers)
                res.end(out)
              })
            }
          )
          forward.on("error", () => res.destroy())
          res.on("close", () => forward.destroy())
          forward.end(Buffer.concat(chunks))
        }
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      ;(proxy as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}`
      return { proxy, server }
    }),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  ).pipe(Effect.map(({ proxy }) => proxy))
