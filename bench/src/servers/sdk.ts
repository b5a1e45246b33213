/**
 * Child process: the official SDK (`@modelcontextprotocol/server` 2.4.0, `ext/skills`) serving a
 * skills folder the way its docs recommend (`loadSkills(root)`, `catalog.attach(mcp)` in the
 * per-request factory of `createMcpHandler`), on node:http through a minimal Node-to-fetch bridge
 * (the SDK's own `toNodeHandler` lives in `@modelcontextprotocol/node`, which is not installed).
 *
 * Usage: node sdk.js DIR PAGE_SIZE. Prints `listening URL` when ready.
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { loadSkills } from "@modelcontextprotocol/server/ext/skills/node"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const [dir, pageSize] = process.argv.slice(2)
if (dir === undefined) throw new Error("usage: sdk.js DIR [PAGE_SIZE]")

const started = performance.now()
const catalog = await loadSkills(dir, { pageSize: Number(pageSize ?? 50), onWarning: (w) => console.error("warning", JSON.stringify(w)) })
const loadedMs = performance.now() - started

const handler = createMcpHandler(() => {
  const mcp = new McpServer({ name: "sdk-skills-bench", version: "2.4.0" })
  catalog.attach(mcp)
  return mcp
})

const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const headers = new Headers()
    for (const [key, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(key, value)
      else if (Array.isArray(value)) for (const v of value) headers.append(key, v)
    }
    const hasBody = req.method !== "GET" && req.method !== "HEAD"
    const request = new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, {
      method: req.method ?? "GET",
      headers,
      ...(hasBody ? { body: Buffer.concat(chunks) } : {})
    })
    handler.fetch(request).then(async (response) => {
      const body = Buffer.from(await response.arrayBuffer())
      const out: Record<string, string> = {}
      response.headers.forEach((value, key) => {
        out[key] = value
      })
      res.writeHead(response.status, out)
      res.end(body)
    }, (error: unknown) => {
      res.writeHead(500)
      res.end(String(error))
    })
  })
})

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo
  console.log(`loaded ${catalog.entries.length} skills in ${loadedMs.toFixed(1)} ms`)
  console.log(`listening http://127.0.0.1:${port}/mcp`)
})
