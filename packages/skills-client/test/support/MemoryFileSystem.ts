/**
 * A small in-memory `FileSystem` with the operations `Pull` uses, POSIX paths only. Links are
 * stored but never followed, which is all a pull may ever do with them. `failRename` makes one
 * rename fail, to test what a failure in the middle of a commit leaves behind.
 */
import * as Path from "node:path"
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PlatformError from "effect/PlatformError"
import * as Stream from "effect/Stream"

export type Node =
  | { readonly type: "Directory" }
  | { readonly type: "File"; readonly bytes: Uint8Array }
  | { readonly type: "SymbolicLink"; readonly target: string }

export interface Memory {
  readonly nodes: Map<string, Node>
  /** A rename whose destination satisfies this fails with PermissionDenied. */
  failRename?: ((to: string) => boolean) | undefined
}

const error = (tag: PlatformError.SystemErrorTag, method: string, path: string) =>
  PlatformError.systemError({ _tag: tag, module: "FileSystem", method, pathOrDescriptor: path })

const info = (node: Node): FileSystem.File.Info => ({
  type: node.type,
  mtime: Option.none(),
  atime: Option.none(),
  birthtime: Option.none(),
  dev: 1n,
  ino: Option.none(),
  mode: 0o644,
  nlink: Option.none(),
  uid: Option.none(),
  gid: Option.none(),
  rdev: Option.none(),
  size: ByteSize.bytes(node.type === "File" ? node.bytes.byteLength : 0),
  blksize: Option.none(),
  blocks: Option.none()
})

export const make = (): Memory => ({ nodes: new Map([["/", { type: "Directory" }]]) })

export const layer = (memory: Memory): Layer.Layer<FileSystem.FileSystem> => {
  const { nodes } = memory
  let temp = 0
  const parentIsDir = (path: string) => nodes.get(Path.dirname(path))?.type === "Directory"
  const below = (path: string) => [...nodes.keys()].filter((p) => p.startsWith(path + "/"))
  const write = (method: string, path: string, bytes: Uint8Array, flag: FileSystem.OpenFlag | undefined) =>
    Effect.suspend(() => {
      if (!parentIsDir(path)) return Effect.fail(error("NotFound", method, path))
      if (flag === "wx" && nodes.has(path)) return Effect.fail(error("AlreadyExists", method, path))
      if (nodes.get(path)?.type === "Directory") return Effect.fail(error("BadResource", method, path))
      nodes.set(path, { type: "File", bytes: Uint8Array.from(bytes) })
      return Effect.void
    })
  return FileSystem.layerNoop({
    lstat: (path) => Effect.suspend(() => {
      const node = nodes.get(path)
      return node === undefined ? Effect.fail(error("NotFound", "lstat", path)) : Effect.succeed(info(node))
    }),
    makeDirectory: (path, options) =>
      Effect.suspend(() => {
        if (options?.recursive === true) {
          const missing: Array<string> = []
          for (let p = path; !nodes.has(p); p = Path.dirname(p)) missing.unshift(p)
          for (const p of missing) nodes.set(p, { type: "Directory" })
          return nodes.get(path)?.type === "Directory" ? Effect.void : Effect.fail(error("AlreadyExists", "makeDirectory", path))
        }
        if (nodes.has(path)) return Effect.fail(error("AlreadyExists", "makeDirectory", path))
        if (!parentIsDir(path)) return Effect.fail(error("NotFound", "makeDirectory", path))
        nodes.set(path, { type: "Directory" })
        return Effect.void
      }),
    makeTempDirectory: (options) =>
      Effect.suspend(() => {
        const path = Path.join(options?.directory ?? "/tmp", `${options?.prefix ?? ""}${temp++}`)
        if (!parentIsDir(path)) return Effect.fail(error("NotFound", "makeTempDirectory", path))
        nodes.set(path, { type: "Directory" })
        return Effect.succeed(path)
      }),
    readDirectory: (path) =>
      Effect.suspend(() =>
        nodes.get(path)?.type !== "Directory"
          ? Effect.fail(error("NotFound", "readDirectory", path))
          : Effect.succeed(below(path).filter((p) => Path.dirname(p) === path).map((p) => Path.basename(p)))
      ),
    readFileString: (path) =>
      Effect.suspend(() => {
        const node = nodes.get(path)
        return node?.type === "File"
          ? Effect.succeed(new TextDecoder().decode(node.bytes))
          : Effect.fail(error("NotFound", "readFileString", path))
      }),
    stream: (path, options) => {
      const node = nodes.get(path)
      if (node?.type !== "File") return Stream.fail(error("NotFound", "stream", path))
      const end = options?.bytesToRead === undefined ? undefined : Number(ByteSize.fromInputUnsafe(options.bytesToRead))
      return Stream.make(node.bytes.slice(0, end))
    },
    writeFile: (path, data, options) => write("writeFile", path, data, options?.flag),
    writeFileString: (path, data, options) => write("writeFileString", path, new TextEncoder().encode(data), options?.flag),
    rename: (from, to) =>
      Effect.suspend(() => {
        const node = nodes.get(from)
        if (node === undefined) return Effect.fail(error("NotFound", "rename", from))
        if (memory.failRename?.(to) === true || !parentIsDir(to)) return Effect.fail(error("PermissionDenied", "rename", to))
        if (nodes.has(to) && (nodes.get(to)!.type === "Directory") !== (node.type === "Directory")) {
          return Effect.fail(error("BadResource", "rename", to))
        }
        for (const p of below(to)) nodes.delete(p)
        const moved = below(from)
        nodes.delete(from)
        nodes.set(to, node)
        for (const p of moved) {
          nodes.set(to + p.slice(from.length), nodes.get(p)!)
          nodes.delete(p)
        }
        return Effect.void
      }),
    remove: (path, options) =>
      Effect.suspend(() => {
        if (!nodes.has(path)) return options?.force === true ? Effect.void : Effect.fail(error("NotFound", "remove", path))
        const inside = below(path)
        if (inside.length > 0 && options?.recursive !== true) return Effect.fail(error("Busy", "remove", path))
        for (const p of inside) nodes.delete(p)
        nodes.delete(path)
        return Effect.void
      })
  })
}

/** The files and links under `dir`, relative, sorted; folders only as the paths of what they hold. */
export const files = (memory: Memory, dir: string): Array<string> =>
  [...memory.nodes].filter(([p, node]) => p.startsWith(dir + "/") && node.type !== "Directory").map(([p]) => p.slice(dir.length + 1))
    .sort()
