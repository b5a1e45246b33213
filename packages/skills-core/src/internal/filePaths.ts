/**
 * A skill file's path as a manifest holds it: whether it names a file of the skill, checked without
 * building its URI for the paths most catalogues have, and its URI path.
 *
 * @internal
 */
import * as Result from "effect/Result"
import { SkillFileName } from "../Extension.js"
import * as SkillUri from "../SkillUri.js"

// Characters `encodeURIComponent` leaves as they are: a path made only of them (and `/`) is its own
// URI path, which is every path of most catalogues.
export const verbatim = /^[A-Za-z0-9\-_.!~*'()/]*$/

/** The URI path of a valid file path. */
export const encodePath = (path: string) => verbatim.test(path) ? path : path.split("/").map(encodeURIComponent).join("/")

// Segments that need no encoding, are no dot segment and no other spelling of SKILL.md: a valid
// path as `SkillUri.file` would find it, without building its URI.
const plainSegment = /^[A-Za-z0-9\-_.!~*'()]+$/

const isPlainPath = (path: string) => {
  if (!verbatim.test(path)) return false
  let start = 0
  for (let end = path.indexOf("/"); ; end = path.indexOf("/", start)) {
    const segment = end === -1 ? path.slice(start) : path.slice(start, end)
    if (!plainSegment.test(segment) || segment === "." || segment === "..") return false
    if (end === -1) return segment === SkillFileName || segment.toLowerCase() !== "skill.md"
    start = end + 1
  }
}

/** Why `path` names no file of the skill of `uri`, if it does not. */
export const pathProblem = (uri: SkillUri.SkillMdUri, path: string): string | undefined => {
  if (isPlainPath(path)) return undefined
  const checked = SkillUri.file(uri, path)
  return Result.isFailure(checked) ? checked.failure.reason : undefined
}
