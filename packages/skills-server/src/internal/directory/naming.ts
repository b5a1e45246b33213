/**
 * Naming: the skill path a folder is served under. Its folder path without the container holding
 * it (`layout`), so `serve REPO` and `serve REPO/skills` name it alike; then, when its `SKILL.md`
 * gives another name (`lenient`), that name below it; and when two folders would still have one
 * URI, each gets a segment of its own before its name, derived from its folder's path alone, so the
 * URIs stay the same across restarts and replicas.
 */
import { createHash } from "node:crypto"
import * as Layout from "./layout.js"
import type * as Repair from "./repair.js"

/** The segment a folder's skill path gets when another folder's would be the same. */
export const ownSegment = (folder: string) => `at-${createHash("sha256").update(folder).digest("hex").slice(0, 8)}`

/** The skill path of the folder at `folder` (`segments`, below `base`), without its container. */
export const pathOf = (base: ReadonlyArray<string>, folder: string, segments: ReadonlyArray<string>): ReadonlyArray<string> =>
  base.concat(Layout.withoutContainer(folder, segments))

/** `path` with the folder's own segment before its name. */
export const sharedPath = (path: ReadonlyArray<string>, folder: string): ReadonlyArray<string> =>
  path.slice(0, -1).concat([ownSegment(folder), path.at(-1)!])

/**
 * The folders (keys of `uris`, each with the URI it would have) whose URI another has, each with
 * those others, in order.
 */
export const shared = (uris: ReadonlyMap<string, string>): Map<string, ReadonlyArray<string>> => {
  const byUri = new Map<string, Array<string>>()
  for (const [folder, uri] of uris) {
    const group = byUri.get(uri)
    if (group === undefined) byUri.set(uri, [folder])
    else group.push(folder)
  }
  const out = new Map<string, ReadonlyArray<string>>()
  for (const group of byUri.values()) {
    if (group.length < 2) continue
    group.sort()
    for (const folder of group) out.set(folder, group.filter((other) => other !== folder))
  }
  return out
}

/** The lenient reading of a folder's `SKILL.md`, kept while its bytes are the very same. */
export interface Reading {
  readonly source: Uint8Array
  readonly reading: Repair.Reading
  /** The `SKILL.md` served, when rewritten: one buffer for as long as the source stays. */
  readonly bytes: Uint8Array | undefined
}

const utf8 = new TextEncoder()

/** The reading of `source`, from `kept` when its bytes are those read before. */
export const readingOf = (
  kept: Reading | undefined,
  source: Uint8Array,
  read: (bytes: Uint8Array) => Repair.Reading
): Reading => {
  if (kept !== undefined && Buffer.from(kept.source.buffer, kept.source.byteOffset, kept.source.byteLength).equals(source)) return kept
  const reading = read(source)
  return { source, reading, bytes: reading._tag === "Rewritten" ? utf8.encode(reading.text) : undefined }
}
