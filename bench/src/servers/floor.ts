/**
 * Child process: the floor. A plain node:http server that answers each known request body with
 * response bytes computed before it starts listening: the least any Node HTTP server can do.
 *
 * Usage: node floor.js ANSWERS.json (an array of [requestBody, responseBody]). Prints `listening URL`.
 */
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const file = process.argv[2]
if (file === undefined) throw new Error("usage: floor.js ANSWERS.json")
const answers = new Map<string, Buffer>(
  (JSON.parse(readFileSync(file, "utf8")) as Array<[string, string]>).map(([body, response]) => [body, Buffer.from(response)])
)

const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const answer = answers.get(Buffer.concat(chunks).toString("utf8"))
    if (answer === undefined) {
      res.writeHead(400, { "content-type": "application/json" })
      res.end(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unknown request"}}`)
      return
    }
    res.writeHead(200, { "content-type": "application/json", "content-length": answer.length })
    res.end(answer)
  })
})

server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`)
})
