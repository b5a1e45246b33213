/** Paged requests (`skills/list`, directory reads) followed to their end, within bounds. */
import * as Effect from "effect/Effect"
import type { McpClientError } from "effect/ai/McpClientError"
import { CursorRejected, RepeatedCursor, RunawayListing, type ServerStopped } from "../SkillsClientError.js"
import * as ClientLimits from "../ClientLimits.js"
import { refusedWith } from "./results.js"

/** What one listing may hold: its entries and the bytes of its pages (their JSON); the defaults are `ClientLimits`'. */
export interface Bounds {
  readonly maxEntries?: number | undefined
  readonly maxListingBytes?: number | undefined
}

// Follows cursors with a repeated-cursor guard (R34, R35) and a bound on what the listing holds,
// not on its pages: a server's page size is its own, and a large catalogue in small pages is no
// runaway, while a server that pages forever grows the listing past the bound whatever its pages
// hold (an empty page still counts its bytes). A refused first page is `onFirstRefused`'s to type
// (a request without a cursor has nothing else to refuse).
export const walker = (
  request: (method: string, params: Record<string, unknown>) => Effect.Effect<unknown, McpClientError | ServerStopped>,
  bounds: Bounds
) => {
  const maxEntries = bounds.maxEntries ?? ClientLimits.MaxEntries
  const maxBytes = bounds.maxListingBytes ?? ClientLimits.MaxListingBytes
  return Effect.fnUntraced(function*<P extends { readonly nextCursor?: string }, E, F>(
    method: string,
    params: Record<string, unknown>,
    start: string | undefined,
    onePage: boolean,
    decode: (result: unknown) => Effect.Effect<P, McpClientError>,
    page: (result: P) => Effect.Effect<number, E>,
    onFirstRefused: (error: McpClientError) => F
  ) {
    const pages: Array<P> = []
    const seen = new Set<string>()
    let cursor = start
    let entries = 0
    let bytes = 0
    let empty = 0
    for (let n = 1; ; n++) {
      const sent = cursor
      const answer = yield* request(method, sent === undefined ? params : { ...params, cursor: sent }).pipe(
        refusedWith((error) =>
          sent === undefined ? onFirstRefused(error) : new CursorRejected({ method, cursor: sent, detail: error.message })
        )
      )
      const result = yield* decode(answer)
      const next = result.nextCursor
      bytes += JSON.stringify(answer).length
      const held = yield* page(result)
      entries += held
      empty = held === 0 ? empty + 1 : 0
      const bound = entries > maxEntries
        ? { bound: "maxEntries" as const, limit: maxEntries }
        : bytes > maxBytes
        ? { bound: "maxListingBytes" as const, limit: maxBytes }
        : empty >= ClientLimits.MaxEmptyPages && next !== undefined
        ? { bound: "emptyPages" as const, limit: ClientLimits.MaxEmptyPages }
        : undefined
      if (bound !== undefined) return yield* new RunawayListing({ method, ...bound, pages: n, entries, bytes })
      pages.push(result)
      if (next === undefined || onePage) return { pages, nextCursor: next }
      if (seen.has(next) || next === start) return yield* new RepeatedCursor({ cursor: next, page: n })
      seen.add(next)
      cursor = next
    }
  })
}
