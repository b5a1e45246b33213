/**
 * Test support: what a hostile or careless folder holds where a file is expected. Each maker puts
 * one entry at an absolute path: a named pipe, a Unix socket (held open by this process for the
 * scope), links to a device and out of the root, a sparse file of any size, and signatures files
 * over their bounds.
 */
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { SignaturesMaxBytes, SignaturesMaxRecords } from "../../src/internal/directory/bounds.js"

/** A named pipe: opening it for reading blocks until a writer comes, which none ever does. */
export const fifo = (at: string): void => {
  fs.mkdirSync(path.dirname(at), { recursive: true })
  execFileSync("mkfifo", [at])
}

/** A Unix socket listening at `at` for the rest of the scope. */
export const socket = (at: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<net.Server>((resolve, reject) => {
        fs.mkdirSync(path.dirname(at), { recursive: true })
        const server = net.createServer()
        server.once("error", reject)
        server.listen(at, () => resolve(server))
      })
    ),
    (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

/** A link to `/dev/zero`: endless bytes for whoever follows it. */
export const linkToZero = (at: string): void => {
  fs.mkdirSync(path.dirname(at), { recursive: true })
  fs.symlinkSync("/dev/zero", at)
}

/** A link to a readable file outside every root (`content`, default a secret). */
export const linkOut = (at: string, content = "secret outside the root\n"): void => {
  const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "skills-outside-")), "secret.md")
  fs.writeFileSync(outside, content)
  fs.mkdirSync(path.dirname(at), { recursive: true })
  fs.symlinkSync(outside, at)
}

/** A file of `size` bytes that takes no room on disk (a hole). */
export const sparse = (at: string, size: number): void => {
  fs.mkdirSync(path.dirname(at), { recursive: true })
  fs.writeFileSync(at, "")
  fs.truncateSync(at, size)
}

/** `count` records that decode as signatures (not verified), by distinct keys unless `sameKey`. */
export const records = (count: number, sameKey = false) =>
  Array.from({ length: count }, (_, index) => ({
    keyId: `sha256:${(sameKey ? 0 : index).toString(16).padStart(64, "0")}`,
    algorithm: "ed25519",
    publicKey: Buffer.alloc(44, index).toString("base64"),
    signature: Buffer.alloc(64, index).toString("base64")
  }))

/** A signatures file's text holding `signatures`, padded with spaces to `size` bytes if given. */
export const signaturesText = (signatures: ReadonlyArray<unknown>, size?: number) => {
  const text = JSON.stringify({ version: 1, signatures }, null, 2)
  return size === undefined ? text : text + " ".repeat(size - Buffer.byteLength(text))
}

/** Valid but for its size: one byte over the bound. */
export const oversizedSignatures = () => signaturesText(records(1), SignaturesMaxBytes + 1)

/** Valid but for its count: one record over the bound. */
export const overRecordSignatures = () => signaturesText(records(SignaturesMaxRecords + 1))
