/** What a user reads of a failed file system call: the system's reason in words, never effect's tag. */
import * as PlatformError from "effect/PlatformError"

// The reasons a pull, a read or a cache meets, in this project's words (a folder, not a directory).
const reasons = new Map<string, string>([
  ["ENOSPC", "no space left on device"],
  ["EDQUOT", "disk quota exceeded"],
  ["EFBIG", "file too large"],
  ["EACCES", "permission denied"],
  ["EPERM", "operation not permitted"],
  ["EROFS", "read-only file system"],
  ["ENOTDIR", "not a folder"],
  ["EISDIR", "is a folder"],
  ["EEXIST", "already exists"],
  ["ENOENT", "no such file or folder"],
  ["ENOTEMPTY", "folder not empty"],
  ["ENAMETOOLONG", "name too long"],
  ["ELOOP", "too many symbolic links"],
  ["EMFILE", "too many open files"],
  ["ENFILE", "too many open files"],
  ["EBUSY", "busy"],
  ["EIO", "input/output error"],
  ["EXDEV", "on another file system"]
])

/**
 * The reason of `error` (an effect `PlatformError`, or Node's own error with an errno `code`):
 * "no space left on device", "permission denied", "not a folder"; for a code not named here, the
 * words Node's message gives after it (`EIO: i/o error, write`).
 */
export const reasonOf = (error: unknown): string => {
  const cause: unknown = PlatformError.isPlatformError(error) ? error.reason.cause : error
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  const named = code === undefined ? undefined : reasons.get(code)
  if (named !== undefined) return named
  const said = cause instanceof Error ? /^[A-Z][A-Z0-9_]*: ([^,]+)/.exec(cause.message)?.[1] : undefined
  return said ?? (error instanceof Error ? error.message : String(error))
}
