/**
 * A fast path for the frontmatter most `SKILL.md` files have: top-level `key: value` lines and
 * `key:` lines heading one level of such lines, every value a string on one line. It returns what
 * the `yaml` path (`yamlFrontmatter.ts`) returns for the same text, or `undefined` for anything it
 * does not read with certainty, which then goes to the `yaml` path: every error, refusal and
 * number is yaml's to decide.
 *
 * @internal
 */
import type { Json, JsonObject } from "effect/Schema"

// A key that needs no quotes and that the core schema reads as a string: ASCII, starting with a
// letter or `_` (never a number, `~` or an indicator), and short, far from yaml's 1,024-character
// limit on implicit keys. `true`, `null` and the like are refused by `isWord`.
const entry = /^([A-Za-z_][A-Za-z0-9_-]{0,127}):(?: (.*))?$/

// The words the core schema reads as null or booleans (`null`, `True`, `FALSE`…), and their
// other spellings too: a near miss only costs the yaml path.
const word = /^(?:null|true|false)$/i
const isWord = (text: string) => word.test(text)

// Printable (YAML's set, less NEL and the C1 controls) and neither a line break, a tab, `#`, nor a
// character yaml's lexer gives a meaning of its own: C0 controls are its tokens, a BOM its own token.
const isPlainChar = (c: number) =>
  c >= 0x20 ? c <= 0x7e ? c !== 0x23 : c >= 0xa0 && c !== 0xfeff && c < 0xfffe : false

// Where a plain scalar may start: a letter, `_`, `/`, `(`, `$` or a non-ASCII character. That
// leaves out every indicator, quotes, and what numbers (digits, signs, `.`) and null (`~`) start with.
const isPlainStart = (c: number) =>
  (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x2f || c === 0x28 || c === 0x24 ||
  (c >= 0xa0 && isPlainChar(c))

// A one-line plain scalar that the core schema reads as a string: no `: ` or trailing `:` (a
// mapping), no trailing space (trimmed), no `#` (a comment).
const plain = (text: string): string | undefined => {
  if (!isPlainStart(text.charCodeAt(0)) || text.charCodeAt(text.length - 1) === 0x20 || isWord(text)) return undefined
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (!isPlainChar(c)) return undefined
    if (c === 0x3a && !(isPlainChar(text.charCodeAt(i + 1)) && text.charCodeAt(i + 1) !== 0x20)) return undefined
  }
  return text
}

// A one-line quoted scalar with nothing that escapes or folds: between single quotes no `'`
// (written `''`), between double quotes no `"` or `\`.
const quoted = (text: string, quote: number): string | undefined => {
  if (text.length < 2 || text.charCodeAt(text.length - 1) !== quote) return undefined
  for (let i = 1; i < text.length - 1; i++) {
    const c = text.charCodeAt(i)
    if (!isPlainChar(c) || c === quote || (quote === 0x22 && c === 0x5c)) return undefined
  }
  return text.slice(1, -1)
}

const scalar = (text: string): string | undefined => {
  const first = text.charCodeAt(0)
  return first === 0x27 || first === 0x22 ? quoted(text, first) : plain(text)
}

// Keys are checked against the map itself: a repeated key is yaml's to refuse, and `__proto__`
// would set the prototype of an object written by assignment.
const isNewKey = (map: object, key: string) => key !== "__proto__" && !isWord(key) && !Object.hasOwn(map, key)

/** The frontmatter as the `yaml` path reads it, or `undefined` when it is not plain. */
export const parse = (source: string): JsonObject | undefined => {
  const top: { [key: string]: Json } = {}
  // The map under the last `key:` line, and the indentation of its lines once one is seen.
  let nested: { [key: string]: string } | undefined
  let indent = 0
  for (const line of source.split("\n")) {
    let spaces = 0
    while (line.charCodeAt(spaces) === 0x20) spaces++
    const match = entry.exec(spaces === 0 ? line : line.slice(spaces))
    if (match === null) return undefined
    const key = match[1]!
    const text = match[2]
    if (spaces === 0) {
      // A `key:` line with nothing under it is null.
      if ((nested !== undefined && indent === 0) || !isNewKey(top, key)) return undefined
      if (text === undefined) {
        top[key] = nested = {}
        indent = 0
        continue
      }
      nested = undefined
      const value = scalar(text)
      if (value === undefined) return undefined
      top[key] = value
    } else {
      // Another indentation is deeper nesting, a continuation line, or an error.
      if (nested === undefined || (indent !== 0 && spaces !== indent) || text === undefined || !isNewKey(nested, key)) return undefined
      const value = scalar(text)
      if (value === undefined) return undefined
      nested[key] = value
      indent = spaces
    }
  }
  return nested !== undefined && indent === 0 ? undefined : top
}
