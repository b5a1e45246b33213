/**
 * Files' wire forms (`text`, or a base64 `blob`), derived from their bytes on first read and kept
 * for the most recently read files up to `Budget` bytes. Kept with each file for as long as its
 * snapshot lives, they were a second copy of every file any client had read: after one client
 * read all 80,000 files of a 10,000-skill catalogue, the server held 110 MiB more than at rest.
 *
 * @internal
 */
import type { WireContent } from "../Snapshot.js"
import { wireContent } from "../Snapshot.js"
import { Lru } from "./lru.js"
import * as ServerLimits from "../ServerLimits.js"

/** What the wire forms of one registry may weigh together (their length in characters). */
export const Budget = ServerLimits.WireFormsBudget

const weightOf = (content: WireContent) => "text" in content ? content.text.length : content.blob.length

/**
 * The wire forms of one registry's files, by the files' digests: the same bytes have the same wire
 * form in every skill and snapshot that holds them.
 */
export interface WireForms {
  readonly of: (digest: string, bytes: () => Uint8Array) => WireContent
}

/** A registry's wire forms, at most `budget` characters of them. */
export const make = (budget = Budget): WireForms => {
  const kept = new Lru<string, WireContent>(budget, weightOf)
  return { of: (digest, bytes) => kept.getOrCompute(digest, () => wireContent(bytes())) }
}
