/**
 * The one way in to what lies under a served root: every listing, stamp and read of the walk, the
 * loader, the periodic check and the reads on demand goes through here, skill files and signatures
 * files alike, so a guarantee made here holds for every channel that reads a folder.
 *
 * - A path is looked at with `lstat` first (or, on a first walk, through its folder's listing, which
 *   tells a regular file from the rest): regular files are read, folders listed, symbolic links
 *   followed only to a regular file whose real path is inside the root and not hidden, anything
 *   else (pipes, sockets, devices) never opened.
 * - A read opens without following a link at the last step and without blocking
 *   (`O_NONBLOCK | O_NOFOLLOW | O_NOCTTY`: a pipe or a device swapped in after the look cannot
 *   hold the process), then checks the descriptor with `fstat`: a regular file, with the identity
 *   (device, inode) and the stamp (size, modification and change times) the caller expects, if it
 *   has one yet (a file found by its listing alone is stamped by its descriptor). On Linux the
 *   descriptor's path must also be the one opened, so a folder swapped for a link to elsewhere
 *   between the walk and the read is caught too.
 * - The caller bounds the size before reading (from the stamp) and the read takes no more than
 *   that: a file that grew is another stamp, told by the caller's check after the read.
 *
 * effect's `FileSystem` offers `noFollow` but no non-blocking open, no `fstat` of a descriptor
 * before reading, and only asynchronous calls: the loader's synchronous calls cost a few
 * microseconds each on catalogues of 80,000 small files, the promise API ten times that (callers
 * yield to the scheduler between bounded batches). So this module is written on `node:fs`.
 */
import { SkillUri } from "@mcp-skills/core"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * What a file looked like when stat'ed: its identity and what changes when it is written. A change
 * of any of these means it must be read again. A `NodeFs.Stats` is one.
 */
export interface Stamp {
  readonly dev: number
  readonly ino: number
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
}

export const sameStamp = (a: Stamp, b: Stamp) =>
  a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino && a.dev === b.dev

/** The path on disk of `relative` (`/`-separated, no `.` or `..` segment) under `realRoot`. */
// Where `/` is the separator, joining is concatenating, without `path.join`'s normalization of
// every one of 80,000 paths.
export const under = NodePath.sep === "/"
  ? (realRoot: string, relative: string) => relative === "" ? realRoot : realRoot === "/" ? `/${relative}` : `${realRoot}/${relative}`
  : NodePath.join

const reasons: Partial<Record<string, string>> = {
  ENOENT: "does not exist",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EBUSY: "busy",
  ETIMEDOUT: "timed out",
  ENOTDIR: "not a folder",
  ELOOP: "symbolic link loop",
  ENAMETOOLONG: "path too long",
  ENXIO: "not a regular file"
}

/** A short reason for a failed system call. */
export const describeError = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return (code === undefined ? undefined : reasons[code] ?? code) ?? String(error)
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code

// A path that went away, or whose folder did, while it was looked at.
const isGone = (error: unknown) => codeOf(error) === "ENOENT" || codeOf(error) === "ENOTDIR"

// An open that found something else than a file there: gone, a folder, a socket (`ENXIO`).
const isOther = (error: unknown) => isGone(error) || codeOf(error) === "EISDIR" || codeOf(error) === "ENXIO"

const kindOf = (entry: NodeFs.Dirent | NodeFs.Stats) =>
  entry.isFile()
    ? "File"
    : entry.isDirectory()
    ? "Directory"
    : entry.isSymbolicLink()
    ? "SymbolicLink"
    : entry.isFIFO()
    ? "FIFO"
    : entry.isSocket()
    ? "Socket"
    : entry.isBlockDevice()
    ? "BlockDevice"
    : entry.isCharacterDevice()
    ? "CharacterDevice"
    : "Unknown"

/** The real path of a root, which must be a folder. */
export const realFolder = (root: string): { readonly real: string } | { readonly reason: string } => {
  try {
    const real = NodeFs.realpathSync(NodePath.resolve(root))
    return NodeFs.statSync(real).isDirectory() ? { real } : { reason: reasons.ENOTDIR! }
  } catch (error) {
    return { reason: describeError(error) }
  }
}

/** True when `real` is strictly inside `realRoot` and no segment of it is hidden. */
const insideVisible = (realRoot: string, real: string) => {
  const relative = NodePath.relative(realRoot, real)
  if (relative === "" || relative.startsWith("..") || NodePath.isAbsolute(relative)) return false
  return !relative.split(NodePath.sep).some(SkillUri.isHidden)
}

/** One entry under a root, as `lstat` (and for a link, its target) shows it. */
export type Entry =
  | { readonly _tag: "Directory" }
  | { readonly _tag: "File"; readonly stamp: Stamp }
  | { readonly _tag: "Ignored"; readonly reason: string }
  | { readonly _tag: "Unreadable"; readonly reason: string }
  | { readonly _tag: "Gone" }

// One options object for every `lstat`, not one per call.
const noThrow = { throwIfNoEntry: false } as const

// The entries without data: one object each, not one per path looked at.
const directory: Entry = { _tag: "Directory" }
const gone: Entry = { _tag: "Gone" }

/** Where a link leads: the real path of a regular file inside the root, or why it is left out. */
const followLink = (
  realRoot: string,
  absolute: string
):
  | { readonly _tag: "File"; readonly stamp: Stamp; readonly real: string }
  | { readonly _tag: "Ignored" | "Unreadable"; readonly reason: string } =>
{
  let real: string
  let target: NodeFs.Stats
  try {
    real = NodeFs.realpathSync(absolute)
    target = NodeFs.lstatSync(real)
  } catch (error) {
    const code = codeOf(error)
    return code === "ELOOP"
      ? { _tag: "Ignored", reason: "symbolic link loop" }
      : code === "ENOENT"
      ? { _tag: "Ignored", reason: "broken symbolic link" }
      : { _tag: "Unreadable", reason: describeError(error) }
  }
  if (!insideVisible(realRoot, real)) return { _tag: "Ignored", reason: "symbolic link to a path outside the root or hidden" }
  if (target.isDirectory()) return { _tag: "Ignored", reason: "symbolic link to a folder (not followed)" }
  if (target.isFile()) return { _tag: "File", stamp: target, real }
  return { _tag: "Ignored", reason: "symbolic link to something that is not a regular file" }
}

/**
 * What the entry at `relative` is; `listed` is its type from the folder listing, if known. A link
 * to a file has its target's stamp, and is read through its own path (see {@link read}).
 */
export const classify = (realRoot: string, relative: string, listed?: NodeFs.Dirent): Entry => {
  // A folder is listed by `list`, which checks it is one.
  if (listed?.isDirectory() === true) return directory
  const absolute = under(realRoot, relative)
  let stats: NodeFs.Stats | undefined
  try {
    stats = NodeFs.lstatSync(absolute, noThrow)
  } catch (error) {
    return isGone(error) ? gone : { _tag: "Unreadable", reason: describeError(error) }
  }
  if (stats === undefined) return gone
  if (stats.isFile()) return { _tag: "File", stamp: stats }
  if (stats.isDirectory()) return directory
  if (stats.isSymbolicLink()) {
    const target = followLink(realRoot, absolute)
    return target._tag === "File" ? { _tag: "File", stamp: target.stamp } : target
  }
  return { _tag: "Ignored", reason: `not a regular file (${kindOf(stats)})` }
}

/** A folder's entries, or why there are none. */
export type Listing =
  | { readonly _tag: "Listed"; readonly entries: ReadonlyArray<NodeFs.Dirent> }
  | { readonly _tag: "Unreadable"; readonly reason: string }
  | { readonly _tag: "Gone" }

/**
 * The entries of the folder at `relative`. A folder replaced by a link between the listing of its
 * parent and its own would list another folder's entries: it is checked to be a folder still.
 */
export const list = (realRoot: string, relative: string): Listing => {
  const directory = under(realRoot, relative)
  let entries: Array<NodeFs.Dirent>
  try {
    entries = NodeFs.readdirSync(directory, { withFileTypes: true })
  } catch (error) {
    return isGone(error) ? { _tag: "Gone" } : { _tag: "Unreadable", reason: describeError(error) }
  }
  try {
    const after = NodeFs.lstatSync(directory, noThrow)
    return after?.isDirectory() === true ? { _tag: "Listed", entries } : { _tag: "Gone" }
  } catch (error) {
    return { _tag: "Unreadable", reason: describeError(error) }
  }
}

const { O_NOCTTY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY } = NodeFs.constants

/**
 * How every file is opened: read-only, never blocking (a pipe opens at once, a device is never
 * waited on), never following a link at the last step, never becoming a controlling terminal.
 */
const OpenFlags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY

// A link met where a file was expected (`O_NOFOLLOW`).
const isLink = (error: unknown) => codeOf(error) === "ELOOP" || codeOf(error) === "EMLINK"

/**
 * Whether descriptor `fd` is the file at `location`: on Linux the kernel names the file a
 * descriptor is open on, so a folder on the way swapped for a link is seen. Elsewhere (or without
 * `/proc`) the identity check of the caller is all there is.
 */
const opensAt = (fd: number, location: string) => {
  if (process.platform !== "linux") return true
  try {
    return NodeFs.readlinkSync(`/proc/self/fd/${fd}`) === location
  } catch {
    return true
  }
}

/** What {@link read} found. */
export type Read =
  | { readonly _tag: "Read"; readonly bytes: Uint8Array; readonly location: string }
  /** Not the file that was stamped (another identity or stamp, another type): stamp it again. */
  | { readonly _tag: "Changed" }
  | { readonly _tag: "Refused"; readonly reason: string }

/**
 * A file opened by {@link openFile}, not read yet: its descriptor, its stamp as the descriptor's
 * `fstat` shows it, and the path it was opened at. {@link readOpened} or {@link closeOpened}
 * closes it.
 */
export interface Opened {
  readonly _tag: "Opened"
  readonly fd: number
  readonly stamp: Stamp
  readonly location: string
}

// Opens `location` as every file is opened: a descriptor, `"Link"`, or the error.
const open = (location: string): number | "Link" | { readonly error: unknown } => {
  try {
    return NodeFs.openSync(location, OpenFlags)
  } catch (error) {
    return isLink(error) ? "Link" : { error }
  }
}

const closeQuietly = (fd: number) => {
  try {
    NodeFs.closeSync(fd)
  } catch {
    // Closing a read-only descriptor cannot lose anything: what was read stands or was refused.
  }
}

/**
 * Opens the file at `relative` and checks its descriptor: a regular file at the location opened,
 * with the identity and stamp `expected` when one is given (a file found by its listing alone has
 * none yet: the descriptor's stamp is its first). `Changed` when it is not that file (or not a
 * regular file). A link is followed only to a regular file inside the root; the location is the
 * path opened: the link's target, for a link.
 */
export const openFile = (realRoot: string, relative: string, expected: Stamp | undefined): Opened | Exclude<Read, { readonly _tag: "Read" }> => {
  let location = under(realRoot, relative)
  let fd = open(location)
  if (fd === "Link") {
    const target = followLink(realRoot, location)
    if (target._tag !== "File") return { _tag: "Refused", reason: target.reason }
    location = target.real
    fd = open(location)
  }
  if (fd === "Link") return { _tag: "Changed" }
  if (typeof fd !== "number") return isOther(fd.error) ? { _tag: "Changed" } : { _tag: "Refused", reason: describeError(fd.error) }
  try {
    const stats = NodeFs.fstatSync(fd)
    if (stats.isFile() && (expected === undefined || sameStamp(stats, expected)) && opensAt(fd, location)) {
      return { _tag: "Opened", fd, stamp: stats, location }
    }
    closeQuietly(fd)
    return { _tag: "Changed" }
  } catch (error) {
    closeQuietly(fd)
    return { _tag: "Refused", reason: describeError(error) }
  }
}

/** Closes a file opened by {@link openFile} without reading it. */
export const closeOpened = (opened: Opened): void => closeQuietly(opened.fd)

/**
 * Reads the file `opened` into `into` (exactly as long as the caller bounded it), then closes it:
 * `Changed` when it holds fewer bytes; the caller's stamp after the read tells whether it changed
 * meanwhile.
 */
export const readOpened = (opened: Opened, into: Uint8Array): Read => {
  try {
    const size = into.byteLength
    let filled = 0
    while (filled < size) {
      const count = NodeFs.readSync(opened.fd, into, filled, size - filled, filled)
      if (count === 0) return { _tag: "Changed" }
      filled += count
    }
    return { _tag: "Read", bytes: into, location: opened.location }
  } catch (error) {
    return { _tag: "Refused", reason: describeError(error) }
  } finally {
    closeQuietly(opened.fd)
  }
}

/**
 * Reads the file at `relative` that had `expected` when stamped, into `into` (exactly
 * `expected.size` long, bounded by the caller): {@link openFile}, then {@link readOpened}.
 */
export const read = (realRoot: string, relative: string, expected: Stamp, into: Uint8Array): Read => {
  const opened = openFile(realRoot, relative, expected)
  return opened._tag === "Opened" ? readOpened(opened, into) : opened
}

/**
 * The `size` bytes of a file served on demand, at `location` (a real path, as {@link read} gave
 * it), or why not: it is no longer a regular file of that size there. One byte more is asked for,
 * so a file that grew is told without reading it. Asynchronous: a request waits on it, not the
 * process.
 */
export const readAt = async (location: string, size: number): Promise<Uint8Array | { readonly changed: string }> => {
  let handle: NodeFs.promises.FileHandle
  try {
    handle = await NodeFs.promises.open(location, OpenFlags)
  } catch (error) {
    return { changed: isLink(error) ? "it is now a symbolic link" : isGone(error) ? "it is gone" : describeError(error) }
  }
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) return { changed: `it is no longer a regular file (${kindOf(stats)})` }
    if (!opensAt(handle.fd, location)) return { changed: "its path leads elsewhere" }
    const into = new Uint8Array(size + 1)
    let filled = 0
    while (filled < into.byteLength) {
      const { bytesRead } = await handle.read(into, filled, into.byteLength - filled, filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    return filled === size ? into.subarray(0, size) : { changed: `its size is no longer ${size} bytes` }
  } catch (error) {
    return { changed: describeError(error) }
  } finally {
    await handle.close().catch(() => undefined)
  }
}

/**
 * An operator's file named on the command line (an admit list): links are followed (deployments
 * mount such files through links), but the descriptor is opened without blocking and must be a
 * regular file of at most `maxBytes`, read to no more than that. The text, or why not.
 */
export const readConfig = async (
  path: string,
  maxBytes: number
): Promise<{ readonly text: string } | { readonly reason: string }> => {
  let handle: NodeFs.promises.FileHandle
  try {
    handle = await NodeFs.promises.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY)
  } catch (error) {
    return { reason: describeError(error) }
  }
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) return { reason: `not a regular file (${kindOf(stats)})` }
    if (stats.size > maxBytes) return { reason: `larger than ${maxBytes} bytes` }
    // Room for the stat'ed size and one byte more: a file that grew while read is told, not read on.
    const into = new Uint8Array(stats.size + 1)
    let filled = 0
    while (filled < into.byteLength) {
      const { bytesRead } = await handle.read(into, filled, into.byteLength - filled, filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    if (filled !== stats.size) return { reason: "changed while it was read; read it again once it is written" }
    return { text: new TextDecoder().decode(into.subarray(0, filled)) }
  } catch (error) {
    return { reason: describeError(error) }
  } finally {
    await handle.close().catch(() => undefined)
  }
}
