/**
 * How deeply one JSON-RPC message may nest arrays and objects, on both transports.
 *
 * effect 4.1.0 re-serializes every stdio message with `JSON.stringify`, which recurses, and the
 * fast route keys a request's `_meta` by its JSON: a few thousand levels down either overflows the
 * stack, and the request ends in an empty HTTP 500 or, over stdio, in no answer at all (a body of
 * 10 KB suffices). `JSON.parse` does not recurse, so the edge (`HttpAdmission`, the skills layer's
 * own admission, `StdioFraming`) reads the message, counts its depth without building anything,
 * and answers a deeper one `-32600` with its id instead of handing it on.
 *
 * @internal
 */
import * as ServerLimits from "../ServerLimits.js"

/** Whether the JSON text `bytes` nests arrays and objects deeper than `ServerLimits.MaxDepth` (strings skipped). */
export const tooDeep = (bytes: Uint8Array): boolean => {
  let depth = 0
  let inString = false
  // UTF-8 continuation bytes are all 0x80 and above, so only ASCII bytes are looked at.
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!
    if (inString) {
      if (byte === 0x5c) i++
      else if (byte === 0x22) inString = false
    } else if (byte === 0x22) {
      inString = true
    } else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > ServerLimits.MaxDepth) return true
    } else if (byte === 0x5d || byte === 0x7d) {
      depth--
    }
  }
  return false
}

/** The id of a parsed message, when it has one a JSON-RPC answer can carry. */
export const idOf = (message: unknown): string | number | null => {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return null
  const id = (message as { readonly id?: unknown }).id
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null
}

/** The id of a message's text; `null` when it is not JSON or has no id an answer can carry. */
export const idOfText = (text: string): string | number | null => {
  try {
    return idOf(JSON.parse(text))
  } catch {
    return null
  }
}

/** The error a message nested deeper than `ServerLimits.MaxDepth` is answered with. */
export const error = {
  code: -32600,
  message: `Invalid Request: nested deeper than ${ServerLimits.MaxDepth} levels`,
  data: { maxDepth: ServerLimits.MaxDepth }
} as const
