/** Paged requests (`skills/list`, directory reads) followed to their end, within bounds. */
import * as Effect from "effect/Effect"
import type { McpClientError } from "effect/ai/McpClientError"
import { CursorRejected, RepeatedCursor, RunawayListing, type ServerStopped } from "../SkillsClientError.js"
import { refusedWith } from "./results.js"

// Follows cursors with a repeated-cursor and a page-count guard (R34, R35). A refused first page
// is `onFirstRefused`'s to type (a request without a cursor has nothing else to refuse).
export const walker = (
  request: (method: string, params: Record<string, unknown>) => Effect.Effect<unknown, McpClientError | ServerStopped>,
  maxPages: number
) =>
  Effect.fnUntraced(function*<P extends { readonly nextCursor?: string }, E, F>(
    method: string,
    params: Record<string, unknown>,
    start: string | undefined,
    onePage: boolean,
    decode: (result: unknown) => Effect.Effect<P, McpClientError>,
    page: (result: P) => Effect.Effect<void, E>,
    onFirstRefused: (error: McpClientError) => F
  ) {
    const pages: Array<P> = []
    const seen = new Set<string>()
    let cursor = start
    for (let n = 1; n <= maxPages; n++) {
      const sent = cursor
      const answer = yield* request(method, sent === undefined ? params : { ...params, cursor: sent }).pipe(
        refusedWith((error) =>
          sent === undefined ? onFirstRefused(error) : new CursorRejected({ method, cursor: sent, detail: error.message })
        )
      )
      const result = yield* decode(answer)
      const next = result.nextCursor
      yield* page(result)
      pages.push(result)
      if (next === undefined || onePage) return { pages, nextCursor: next }
      if (seen.has(next) || next === start) return yield* new RepeatedCursor({ cursor: next, page: n })
      seen.add(next)
      cursor = next
    }
    return yield* new RunawayListing({ maxPages })
  })
