/**
 * The lines of a stdio server's output, each held only up to a bound: bytes are counted since the
 * last newline, and a line that passes the bound is let go at once and the rest of it skipped up
 * to its newline, never held. Whatever a server writes, a reader holds no more than the bound.
 * Both readers of a stdio connection split with it: the client's messages
 * (`ClientLimits.maxMessageBytes`) and the follower's notifications (`MaxEventBytes`).
 *
 * @internal
 */

const Newline = 0x0a

/** What a splitter hands out: each line within the bound, and once each line past it. */
export interface Handlers {
  /** A line without its newline; it may be a view of the chunk, valid until the push returns. */
  readonly line: (bytes: Uint8Array) => void
  readonly tooLong: () => void
}

/** A splitter: push each chunk of the output, in order. */
export const make = (maxBytes: number, handlers: Handlers): (chunk: Uint8Array) => void => {
  let pending: Array<Uint8Array> = []
  let size = 0
  let skipping = false
  return (chunk) => {
    let start = 0
    for (let end = chunk.indexOf(Newline); end !== -1; end = chunk.indexOf(Newline, start)) {
      if (!skipping && size + end - start > maxBytes) handlers.tooLong()
      else if (!skipping) {
        const head = chunk.subarray(start, end)
        handlers.line(pending.length === 0 ? head : Buffer.concat([...pending, head]))
      }
      pending = []
      size = 0
      skipping = false
      start = end + 1
    }
    if (skipping || start === chunk.length) return
    size += chunk.length - start
    if (size > maxBytes) {
      pending = []
      skipping = true
      handlers.tooLong()
    } else {
      // Copied: the stream may reuse the chunk's memory.
      pending.push(chunk.slice(start))
    }
  }
}
