/**
 * `resources/read` of a file served on demand (`Snapshot.OnDiskFile`): its bytes are read from
 * disk on every request and sent only if their size and SHA-256 are the snapshot's. A file changed
 * behind the server's back (no watcher, or a write the watcher has not reported yet) makes the
 * registry reload; the request is then answered from the reloaded snapshot (if the caller may see
 * the file there), verified the same way, or with a `-32602` asking the client to try again. Bytes
 * of another digest are never sent: a client pinning digests (R14) would reject them, and a cache
 * would keep them under a wrong key.
 */
import { Digest } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import { McpSchema } from "effect/ai"
import * as SkillRegistry from "../SkillRegistry.js"
import { wireContent } from "../Snapshot.js"
import { readAt } from "./directory/guard.js"
import type { WireError } from "./effect/port.js"
import * as Telemetry from "./telemetry.js"
import type { Visible } from "./visibility.js"
import type * as Snapshot from "../Snapshot.js"

type Checked =
  | { readonly _tag: "Verified"; readonly bytes: Uint8Array }
  | { readonly _tag: "Changed"; readonly reason: string }

// Read as every file under a root is (see `directory/guard`): never blocking on a pipe or device
// swapped in, never more than one byte past the entry's size.
const check = (file: Snapshot.OnDiskFile): Effect.Effect<Checked> =>
  Effect.promise(() => readAt(file.location, file.size)).pipe(
    Effect.map((bytes): Checked =>
      !(bytes instanceof Uint8Array)
        ? { _tag: "Changed", reason: bytes.changed }
        : Digest.make(bytes) !== file.digest
        ? { _tag: "Changed", reason: "its SHA-256 differs" }
        : { _tag: "Verified", bytes }
    )
  )

/** A file's answer to `resources/read`. */
export interface FileAnswer {
  readonly mimeType: string
  readonly content: Snapshot.WireContent
}

/** What a read on demand needs of its request (`Kind.Call` is one). */
export interface Reader {
  /** The registry the request's snapshot came from: a file on disk that changed makes it reload. */
  readonly registry: SkillRegistry.SkillRegistry["Service"]
  /** Reloads the registry, once for every reader that asks before it starts (`rescan`). */
  readonly rescan: (why: string) => Effect.Effect<void>
  /** What the request's caller may see in another snapshot (one reloaded meanwhile). */
  readonly visibleIn: (snapshot: Snapshot.Snapshot) => Visible
}

const answer = (file: Snapshot.FileBase, bytes: Uint8Array): FileAnswer => ({
  mimeType: file.mimeType,
  content: wireContent(bytes)
})

/**
 * The rescan readers of changed files share: a reload of `registry` asked for by the reader, which
 * joins one already asked for and not started (the registry's intake coalesces them), so only the
 * reader whose request starts one logs `why` and counts it. Its failure is not theirs: the
 * snapshot stays, and their second check says so.
 */
export const rescan = (registry: SkillRegistry.SkillRegistry["Service"]) => (why: string): Effect.Effect<void> =>
  Effect.gen(function*() {
    const asked = yield* registry.requestReload("rescan")
    if (!asked.joined) yield* Effect.andThen(Telemetry.count(Telemetry.metrics.rescans), Effect.logWarning(why))
    yield* Effect.ignore(asked.result)
  })

/**
 * The bytes of `file` if they are still those of the snapshot; otherwise reloads and answers from
 * the new snapshot (`undefined` when the file is no longer served).
 */
export const read = (call: Reader, file: Snapshot.OnDiskFile): Effect.Effect<FileAnswer | undefined, WireError> =>
  Effect.gen(function*() {
    const first = yield* check(file)
    if (first._tag === "Verified") return answer(file, first.bytes)
    // Unless a reload since this request began already gave the file another entry (readers of one
    // changed file reload once, not once each, when they come one after another).
    const latest = (yield* call.registry.snapshot).files.get(file.uri)
    if (latest !== undefined && latest._tag === file._tag && latest.digest === file.digest && latest.size === file.size) {
      // A failed reload keeps the snapshot, whose entry then fails the check again below.
      yield* call.rescan(`${file.uri} changed on disk (${first.reason}); reloading the catalogue`)
    }
    const after = yield* call.registry.snapshot
    const current = after.files.get(file.uri)
    // The reload may also have changed what the caller may see: hidden is "not found", as before.
    if (current === undefined || !call.visibleIn(after).file(current.owners)) return undefined
    switch (current._tag) {
      case "InMemory":
        return { mimeType: current.mimeType, content: current.content }
      case "OnDisk": {
        const second = yield* check(current)
        if (second._tag === "Verified") return answer(current, second.bytes)
        return yield* Effect.fail<WireError>({
          code: McpSchema.INVALID_PARAMS_ERROR_CODE,
          message: "Resource changed on disk while being read; try again",
          data: { uri: file.uri }
        })
      }
    }
  })
