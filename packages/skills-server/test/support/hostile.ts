/**
 * Test support: what a hostile or careless folder holds where a file is expected. Each maker puts
 * one entry at an absolute path: a named pipe, a Unix socket (held open by this process for the
 * scope), links to a device and out of the root, a sparse file of any size, and signatures files
 * over their bounds.
 */
import { Limits } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { SignaturesFileName } from "../../src/DirectorySource.js"
import { SignaturesMaxBytes, SignaturesMaxRecords } from "../../src/ServerLimits.js"

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

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`

/** What {@link hostileSkills} made, and what a source must make of it. */
export interface Hostile {
  /** Skills served without their hostile file, which is left out: its path and the reason. */
  readonly leftOut: ReadonlyArray<{ readonly skill: string; readonly path: string; readonly reason: string }>
  /** Skills refused, with the file refused (none: the skill's size) and the reason. */
  readonly refused: ReadonlyArray<{ readonly skill: string; readonly file: string | undefined; readonly reason: string }>
}

/**
 * One skill per hostile entry under `folder`, each named `<prefix>-<entry>`: a pipe, a socket, a
 * link to `/dev/zero`, a link out of the root as a skill's file (left out) and as its signatures
 * file (refused), a file past the skill's size limit, and signatures files over their byte and
 * record bounds. The socket listens for the rest of the scope.
 */
export const hostileSkills = (folder: string, prefix: string) =>
  Effect.gen(function*() {
    const named = (skill: string) => `${prefix}-${skill}`
    const at = (relative: string) => path.join(folder, `${prefix}-${relative}`)
    const outside = "symbolic link to a path outside the root or hidden"
    const leftOut = [
      { skill: "f-fifo", file: "pipe.md", reason: "not a regular file (FIFO)" },
      { skill: "f-socket", file: "socket.md", reason: "not a regular file (Socket)" },
      { skill: "f-zero", file: "zero.md", reason: outside },
      { skill: "f-out", file: "secret.md", reason: outside }
    ]
    const refused = [
      {
        skill: "f-big",
        file: undefined,
        reason: `${Buffer.byteLength(skillMd(named("f-big"))) + Limits.MaxTotalBytes + 1} bytes exceed the limit of ${Limits.MaxTotalBytes} per skill (R16)`
      },
      { skill: "s-fifo", file: SignaturesFileName, reason: "cannot read: not a regular file (FIFO)" },
      { skill: "s-socket", file: SignaturesFileName, reason: "cannot read: not a regular file (Socket)" },
      { skill: "s-zero", file: SignaturesFileName, reason: `cannot read: ${outside}` },
      { skill: "s-out", file: SignaturesFileName, reason: `cannot read: ${outside}` },
      { skill: "s-big", file: SignaturesFileName, reason: `${SignaturesMaxBytes + 1} bytes, more than the ${SignaturesMaxBytes} allowed` },
      {
        skill: "s-many",
        file: SignaturesFileName,
        reason: `not a signatures file: ${SignaturesMaxRecords + 1} records, more than the ${SignaturesMaxRecords} allowed (one per key); at ["signatures"]`
      }
    ]
    for (const { skill } of [...leftOut, ...refused]) {
      fs.mkdirSync(at(skill), { recursive: true })
      fs.writeFileSync(at(`${skill}/SKILL.md`), skillMd(named(skill)))
    }
    fifo(at("f-fifo/pipe.md"))
    yield* socket(at("f-socket/socket.md"))
    linkToZero(at("f-zero/zero.md"))
    linkOut(at("f-out/secret.md"))
    sparse(at("f-big/big.bin"), Limits.MaxTotalBytes + 1)
    fifo(at(`s-fifo/${SignaturesFileName}`))
    yield* socket(at(`s-socket/${SignaturesFileName}`))
    linkToZero(at(`s-zero/${SignaturesFileName}`))
    linkOut(at(`s-out/${SignaturesFileName}`), signaturesText(records(1)))
    fs.writeFileSync(at(`s-big/${SignaturesFileName}`), oversizedSignatures())
    fs.writeFileSync(at(`s-many/${SignaturesFileName}`), overRecordSignatures())
    return {
      leftOut: leftOut.map(({ file, reason, skill }) => ({ skill: named(skill), path: `${named(skill)}/${file}`, reason })),
      refused: refused.map(({ file, reason, skill }) => ({ skill: named(skill), file, reason }))
    } satisfies Hostile
  })
