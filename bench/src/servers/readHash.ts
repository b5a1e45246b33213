/**
 * Child process: the plain script `serve`'s start-up is compared with. It lists a folder, reads
 * every file with `readFileSync` and SHA-256s it, one file at a time, and prints one JSON line with
 * the time that took (the parent also times the process, spawn to exit).
 *
 * Usage: node readHash.js DIR
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: readHash.js DIR")

const start = performance.now()
let files = 0
let bytes = 0
const walk = (folder: string) => {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = Path.join(folder, entry.name)
    if (entry.isDirectory()) walk(path)
    else if (entry.isFile()) {
      const content = readFileSync(path)
      createHash("sha256").update(content).digest("hex")
      files++
      bytes += content.byteLength
    }
  }
}
walk(dir)
console.log(JSON.stringify({ files, bytes, ms: performance.now() - start }))
