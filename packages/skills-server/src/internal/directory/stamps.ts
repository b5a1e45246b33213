/**
 * Reading a skill's files so that they belong to one moment, re-reading only what changed since
 * what the root's `FoundFiles` kept of them.
 *
 * The I/O is synchronous on purpose (see `guard`): callers bound the work between two yields to
 * the scheduler, so a serving process stays responsive.
 */
import { Digest, Extension } from "@mcp-skills/core"
import { UnreadableFile } from "../../DirectoryModel.js"
import { OpenAtOnce, RacyMillis, ReadAttempts } from "../../ServerLimits.js"
import type { FoundFiles } from "./found.js"
import { classify, closeOpened, type Opened, openFile, read as readGuarded, readOpened, sameStamp, type Stamp } from "./guard.js"
import * as Signatures from "./signatures.js"

/**
 * One file of a skill as `readSkill` hands it over: bytes kept in memory (`InMemory`), bytes read
 * now and hashed but not kept (`Transient`, a file served on demand), or a file served on demand
 * whose stamp is unchanged, known by its digest only (`OnDisk`).
 */
export type Content =
  | { readonly _tag: "InMemory"; readonly path: string; readonly bytes: Uint8Array }
  | {
    readonly _tag: "Transient"
    readonly path: string
    readonly bytes: Uint8Array
    readonly digest: Digest.Digest
    readonly location: string
  }
  | { readonly _tag: "OnDisk"; readonly path: string; readonly size: number; readonly digest: Digest.Digest }

const isNamed = (relative: string, name: string) => relative === name || relative.endsWith(`/${name}`)

/**
 * Whether a file of `size` bytes at `relative` is served on demand: above the threshold, except a
 * `SKILL.md`, whose frontmatter the catalogue needs (also as a nested skill's file), and a
 * signatures file, whose records it relays.
 */
export const isOnDemand = (relative: string, size: number, onDemandAbove: number) =>
  size > onDemandAbove && !isNamed(relative, Extension.SkillFileName) && !isNamed(relative, Signatures.FileName)

/** What {@link readSkill} hands over: the contents, and the room it made for the manifest's table. */
export interface Contents {
  readonly contents: ReadonlyArray<Content>
  readonly table: Uint8Array | undefined
}

/** Counters of reads and hashes (cumulative). */
export interface Counters {
  readFiles: number
  readBytes: number
  hashedFiles: number
  hashedBytes: number
}

/**
 * Stamps the file in `slot` by `lstat`, as a walk that stats would have, if it has no stamp yet
 * (found by its folder's listing alone, and not read since). One that is no longer a regular file
 * stays unstamped: the next look at it sees a change.
 */
export const stampFound = (realRoot: string, found: FoundFiles, slot: number): void => {
  if (found.stamped(slot)) return
  const entry = classify(realRoot, found.relative(slot))
  if (entry._tag === "File") found.stamp(slot, entry.stamp)
}

/**
 * Reads one skill's files (`files`: the slots in `found` of its members, then of its signatures
 * file if it has one), re-reading only those whose stamp changed (or that were racy), each through
 * `guard` (a file a first walk found unstamped is stamped by the descriptor it is read through),
 * then stamps what it read again: if a file changed meanwhile, or read empty just after a
 * write where it had bytes, the skill is read again (`ReadAttempts` in all), so its files belong to
 * one moment; only then does each file keep what was read of it. `admit` bounds the sizes (file
 * `index`'s, by `sizeOf`) before every try (a file may have grown since). `base` is the skill
 * folder's relative path with its `/`. A racy file is read again only if `recheck` says so (given
 * its relative path). A file above `onDemandAbove` bytes is hashed here and its bytes are not kept;
 * when any file of the skill must be read (or `everything`), such files are read again too, since a
 * new manifest needs every file's bytes once. The contents come in the order of `files`, with
 * `room` bytes at the start of the buffer the files read share (`table`), for the manifest's table
 * (`Manifest.tableBytes`): when a file is read, the skill's files and its table are one allocation.
 */
export const readSkill = <E>(
  realRoot: string,
  counters: Counters,
  found: FoundFiles,
  files: ReadonlyArray<number>,
  base: string,
  now: number,
  recheck: (relative: string) => boolean,
  onDemandAbove: number,
  everything: boolean,
  admit: (sizeOf: (index: number) => number) => E | undefined,
  room: number
): Contents | UnreadableFile | E => {
  // The stamps the files read are expected to have: as last stat'ed (copied into `stamp`, one
  // object for the whole skill), or for a file found unstamped as its descriptor shows it on the
  // first try (`opened`), then as stat'ed again after a try during which they changed. A file
  // without a stamp yet counts, but weighs nothing until it is opened.
  let restamped: Array<Stamp> | undefined
  let opened: Array<Opened | undefined> = []
  const stamp = { dev: 0, ino: 0, size: 0, mtimeMs: 0, ctimeMs: 0 }
  const expected = (index: number): Stamp => restamped?.[index] ?? opened[index]?.stamp ?? found.stampInto(files[index]!, stamp)
  const sizeOf = (index: number) =>
    restamped?.[index]?.size ?? opened[index]?.stamp.size ?? (found.stamped(files[index]!) ? found.size(files[index]!) : 0)
  // A skill refused before its unstamped files are opened has every problem said: they are
  // stamped to be measured.
  const refused = admit(sizeOf)
  if (refused !== undefined) {
    for (const slot of files) stampFound(realRoot, found, slot)
    return admit(sizeOf) ?? refused
  }
  // Whether what was last read of a file can be handed over without reading the file again.
  const trusted = (slot: number) => {
    if (everything) return false
    const trust = found.trust(slot)
    return trust === "Sound" || (trust === "Racy" && !recheck(found.relative(slot)))
  }
  const known: Array<Content> = []
  for (const slot of files) {
    if (!trusted(slot)) break
    const path = found.relative(slot).slice(base.length)
    const bytes = found.bytes(slot)
    const digest = bytes === undefined ? found.digest(slot) : undefined
    if (bytes !== undefined) known.push({ _tag: "InMemory", path, bytes })
    else if (digest !== undefined) known.push({ _tag: "OnDisk", path, size: found.size(slot), digest })
    else break
  }
  if (known.length === files.length) return { contents: known, table: undefined }

  // The files whose held bytes are handed over as they are.
  const held = (slot: number) => found.holds(slot) && trusted(slot)
  // The files that read empty, suspiciously, on the last try.
  let suspect: Array<number> = []
  for (let attempt = 0; attempt < ReadAttempts; attempt++) {
    let moved = false
    // The files found unstamped are opened first, on the first try: each is stamped by its
    // descriptor, and the sizes are bounded before anything is read. One that is no longer a
    // regular file there is stamped after the try, which is then made again. Past `OpenAtOnce`
    // descriptors, the rest are stamped by path and read as stamped files are.
    opened = []
    const unread = new Set<Opened>()
    try {
      if (restamped === undefined) {
        for (let index = 0; index < files.length; index++) {
          const slot = files[index]!
          if (found.stamped(slot)) continue
          if (unread.size >= OpenAtOnce) {
            stampFound(realRoot, found, slot)
            if (!found.stamped(slot)) moved = true
            continue
          }
          const got = openFile(realRoot, found.relative(slot), undefined)
          if (got._tag === "Refused") return new UnreadableFile({ path: found.relative(slot), reason: got.reason })
          if (got._tag === "Changed") moved = true
          else unread.add(opened[index] = got)
        }
      }
      if (restamped !== undefined || opened.length > 0) {
        const tooLarge = admit(sizeOf)
        if (tooLarge !== undefined) return tooLarge
      }
      // Whether the file at `index` is read on this try: held bytes are handed over, and a file
      // found unstamped that could not be opened as one has no size yet.
      const reading = (index: number) => {
        const slot = files[index]!
        return !held(slot) && (restamped !== undefined || opened[index] !== undefined || found.stamped(slot))
      }
      // Every file but those whose bytes are held and trusted is read: a file on disk too, as a
      // new version of the skill needs its bytes once.
      let total = 0
      for (let index = 0; index < files.length; index++) {
        if (!reading(index)) continue
        const size = sizeOf(index)
        if (!isOnDemand(found.relative(files[index]!), size, onDemandAbove)) total += size
      }
      // The files read together share one allocation: one buffer per skill rather than per file is
      // what keeps a catalogue of small files from costing an allocation (and a collection) each.
      // A file read again later gets its own; the rest of the skill keeps the old buffer.
      // Files served on demand get their own buffer, so that none of the slab is theirs.
      // The table's room, in front of the files, only in a buffer that holds some.
      let offset = total === 0 ? 0 : room
      const slab = Buffer.allocUnsafeSlow(offset + total)
      suspect = []
      const inputs: Array<Content> = []
      // What each file read keeps once the skill is read whole (by index; `undefined`: not read).
      const reads: Array<Uint8Array | Digest.Digest | undefined> = []
      // Whether the new buffer holds bytes that are kept: only then does the table go in it.
      let kept = false
      for (let index = 0; index < files.length; index++) {
        const slot = files[index]!
        const relative = found.relative(slot)
        const path = relative.slice(base.length)
        if (held(slot)) {
          inputs.push({ _tag: "InMemory", path, bytes: found.bytes(slot)! })
          continue
        }
        if (!reading(index)) continue
        const size = sizeOf(index)
        const onDemand = isOnDemand(relative, size, onDemandAbove)
        const into = onDemand ? new Uint8Array(size) : slab.subarray(offset, offset + size)
        if (!onDemand) offset += size
        const open = opened[index]
        if (open !== undefined) unread.delete(open)
        const got = open === undefined ? readGuarded(realRoot, relative, expected(index), into) : readOpened(open, into)
        if (got._tag === "Refused") return new UnreadableFile({ path: relative, reason: got.reason })
        if (got._tag === "Changed") {
          moved = true
          continue
        }
        const read = got.bytes
        counters.readFiles++
        counters.readBytes += read.byteLength
        if (read.byteLength === 0 && found.hadBytes(slot) && now - expected(index).mtimeMs < RacyMillis) {
          moved = true
          suspect.push(slot)
        }
        if (onDemand) {
          const digest = Digest.make(read)
          counters.hashedFiles++
          counters.hashedBytes += read.byteLength
          inputs.push({ _tag: "Transient", path, bytes: read, digest, location: got.location })
          reads[index] = digest
          continue
        }
        // Unchanged bytes keep their buffer, so the skill's manifest is reused rather than rehashed.
        const last = found.bytes(slot)
        const bytes = last !== undefined && last.byteLength === read.byteLength && Buffer.compare(last, read) === 0 ? last : read
        if (bytes === read) kept = true
        inputs.push({ _tag: "InMemory", path, bytes })
        reads[index] = bytes
      }
      // Stamped again once all are read: a file that changed during its read, or while the others
      // were read, makes the skill be read again.
      const again: Array<Stamp> = []
      for (let index = 0; index < files.length; index++) {
        const slot = files[index]!
        if (held(slot)) continue
        const entry = classify(realRoot, found.relative(slot))
        if (entry._tag !== "File") {
          const reason = entry._tag === "Gone" ? "does not exist" : entry._tag === "Directory" ? "now a folder" : entry.reason
          return new UnreadableFile({ path: found.relative(slot), reason })
        }
        if (!sameStamp(entry.stamp, expected(index))) moved = true
        again[index] = entry.stamp
      }
      if (!moved) {
        for (let index = 0; index < files.length; index++) {
          const read = reads[index]
          if (read !== undefined) found.keep(files[index]!, expected(index), read, now)
        }
        return { contents: inputs, table: kept ? slab.subarray(0, room) : undefined }
      }
      restamped = again
    } finally {
      // A try left early (a file refused, the skill too large) closes what it opened and did not read.
      for (const open of unread) closeOpened(open)
    }
  }
  if (suspect.length > 0) {
    // Its last good version is served meanwhile; the periodic check reads it again.
    for (const slot of suspect) found.suspect(slot)
    return new UnreadableFile({
      path: found.relative(suspect[0]!),
      reason: `read empty while being rewritten (${ReadAttempts} attempts)`
    })
  }
  return new UnreadableFile({
    path: `${base}${Extension.SkillFileName}`,
    reason: `its files kept changing while being read (${ReadAttempts} attempts)`
  })
}
