/**
 * Search over the listed skills of one snapshot: by name, description and path, ranked, paged and
 * typo-tolerant. `make` builds the index once per snapshot (the layer keeps it with the snapshot,
 * as it keeps answers); `search` answers a query from it; `scan` gives the same answer by reading
 * every skill, the baseline the index is measured and tested against.
 *
 * Ranking, best first: the query is the skill's name; the name starts with it; then by how many
 * of the query's words match (fewest unmatched), then by how well (`cost`: each word's best match,
 * a name's before a path's before a description's, exact before prefix before one typo before
 * two); ties by URI. A word matches a word of the skill that equals it, that it begins (from two
 * letters), or, from four letters, within one edit (two from eight letters; a swap of neighbours
 * is one edit) of a word that has a letter too: numbers are identifiers, not words to misspell.
 *
 * @internal
 */
import * as ToolLimits from "../ToolLimits.js"
import type * as Snapshot from "../Snapshot.js"

/** Where a page ends: the last hit's rank and URI (a position, so it outlives the snapshot). */
export interface Position {
  readonly rank: number
  readonly uri: string
}

/** One page of hits, best first, and the position after it when more follow. */
export interface Page {
  readonly hits: ReadonlyArray<Snapshot.SkillEntry>
  readonly next: Position | undefined
}

/** The index of one snapshot's listed skills. */
export interface Index {
  /** The listed skills, by URI: a skill's position is its document number. */
  readonly docs: ReadonlyArray<Snapshot.SkillEntry>
  readonly names: ReadonlyArray<string>
  /** Every word, sorted (prefix look-ups), with its postings (`doc * Fields + field`). */
  readonly words: ReadonlyArray<string>
  readonly postings: ReadonlyArray<Int32Array>
  readonly byWord: ReadonlyMap<string, number>
  /** Word numbers by word length, with each word's letter mask (typo look-ups). */
  readonly byLength: ReadonlyArray<{ readonly ids: Int32Array; readonly masks: Int32Array }>
  /** Per query word, each document's best cost so far (`Unmatched` when none): reused by queries. */
  readonly scratch: Uint8Array
  /** The documents a query matched so far (1): reused by queries. */
  readonly marked: Uint8Array
}

// Fields by rank (`fieldsOf`): a match in the name outweighs one in the path, which outweighs one
// in the description.
const Fields = 3

// A word's cost: field * 4 + quality, quality 0 exact, 1 prefix, 2 one edit, 3 two edits.
const Unmatched = 255
const Qualities = 4

// The scratch's cells of one document: one per query word that counts.
const Stride = ToolLimits.MaxQueryWords

// A rank is (tier, unmatched words, cost); keys add the document number below it.
const DocBits = 2 ** 27
const rankOf = (tier: number, unmatched: number, cost: number) => (tier * 32 + unmatched) * 256 + cost

/** The words of a text: lower-case runs of letters and digits. */
const wordsOf = (text: string): Array<string> => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 0)

/** The distinct words of a query that count, in order. */
export const queryWords = (query: string): ReadonlyArray<string> => [...new Set(wordsOf(query))].slice(0, ToolLimits.MaxQueryWords)

const descriptionOf = (skill: Snapshot.SkillEntry) => {
  const description = skill.frontmatter["description"]
  return typeof description === "string" ? description : ""
}

const fieldsOf = (skill: Snapshot.SkillEntry): ReadonlyArray<ReadonlyArray<string>> => [
  wordsOf(skill.name),
  skill.path.flatMap(wordsOf),
  wordsOf(descriptionOf(skill))
]

const hasLetter = (word: string) => /\p{L}/u.test(word)

const maxEdits = (word: string) => !hasLetter(word) ? 0 : word.length >= 8 ? 2 : word.length >= 4 ? 1 : 0

// A set of the letters of a word, folded into 31 bits: each edit changes at most two of them.
const maskOf = (word: string) => {
  let mask = 0
  for (let i = 0; i < word.length; i++) mask |= 1 << (word.charCodeAt(i) % 31)
  return mask
}

const bits = (n: number) => {
  let count = 0
  for (let v = n; v !== 0; v &= v - 1) count++
  return count
}

const row0 = new Int32Array(64)
const row1 = new Int32Array(64)
const row2 = new Int32Array(64)

/**
 * The edit distance of `a` and `b` (insertions, deletions, substitutions and swaps of neighbours),
 * or `limit + 1` once it exceeds `limit`.
 */
export const distance = (a: string, b: string, limit: number): number => {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  if (b.length >= row0.length) return limit + 1
  let before = row0, previous = row1, current = row2
  for (let j = 0; j <= b.length; j++) previous[j] = j
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    let least = i
    for (let j = 1; j <= b.length; j++) {
      const substitution = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + substitution)
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        value = Math.min(value, before[j - 2]! + 1)
      }
      current[j] = value
      if (value < least) least = value
    }
    if (least > limit) return limit + 1
    const spare = before
    before = previous
    previous = current
    current = spare
  }
  return previous[b.length]!
}

/** How well the query word `word` matches the skill's word `other`: 0 to 3, or -1 for not at all. */
export const quality = (word: string, other: string): number => {
  if (word === other) return 0
  if (word.length >= 2 && other.startsWith(word)) return 1
  const limit = maxEdits(word)
  if (limit === 0 || !hasLetter(other)) return -1
  const edits = distance(word, other, limit)
  return edits <= limit ? 1 + edits : -1
}

const tierOf = (name: string, query: string) => name === query ? 0 : query.length > 0 && name.startsWith(query) ? 1 : 2

/**
 * One layer's indexes, each kept with the snapshot it was built from and built on its first
 * search: a snapshot is immutable, so its index never goes stale, and goes when it goes.
 */
export const makeMemo = (): (snapshot: Snapshot.Snapshot) => Index => {
  const bySnapshot = new WeakMap<Snapshot.Snapshot, Index>()
  return (snapshot) => {
    let index = bySnapshot.get(snapshot)
    if (index === undefined) bySnapshot.set(snapshot, index = make(snapshot.listed))
    return index
  }
}

/** The index of `listed` (a snapshot's listed skills, sorted by URI). */
export const make = (listed: ReadonlyArray<Snapshot.SkillEntry>): Index => {
  const lists = new Map<string, Array<number>>()
  for (const [doc, skill] of listed.entries()) {
    for (const [field, words] of fieldsOf(skill).entries()) {
      for (const word of new Set(words)) {
        let list = lists.get(word)
        if (list === undefined) lists.set(word, list = [])
        list.push(doc * Fields + field)
      }
    }
  }
  const words = [...lists.keys()].sort()
  const byWord = new Map<string, number>()
  const postings: Array<Int32Array> = []
  const lengths: Array<Array<number>> = []
  for (const [id, word] of words.entries()) {
    byWord.set(word, id)
    postings.push(Int32Array.from(lists.get(word)!))
    if (hasLetter(word)) (lengths[word.length] ??= []).push(id)
  }
  const byLength = Array.from(lengths, (ids = []) => ({
    ids: Int32Array.from(ids),
    masks: Int32Array.from(ids, (id) => maskOf(words[id]!))
  }))
  const scratch = new Uint8Array(listed.length * Stride).fill(Unmatched)
  const marked = new Uint8Array(listed.length)
  return { docs: listed, names: listed.map((skill) => skill.name.toLowerCase()), words, postings, byWord, byLength, scratch, marked }
}

// Calls `found` with each word of the index `word` matches and how well.
const eachMatch = (index: Index, word: string, found: (id: number, quality: number) => void) => {
  const exact = index.byWord.get(word)
  if (exact !== undefined) found(exact, 0)
  if (word.length >= 2) {
    let low = 0
    let high = index.words.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (index.words[mid]! <= word) low = mid + 1
      else high = mid
    }
    for (let id = low; id < index.words.length && index.words[id]!.startsWith(word); id++) found(id, 1)
  }
  const limit = maxEdits(word)
  if (limit === 0) return
  const mask = maskOf(word)
  for (let length = word.length - limit; length <= word.length + limit; length++) {
    const bucket = index.byLength[length]
    if (bucket === undefined) continue
    for (let k = 0; k < bucket.ids.length; k++) {
      if (bits(bucket.masks[k]! ^ mask) > 2 * limit) continue
      const id = bucket.ids[k]!
      const other = index.words[id]!
      if (other === word || word.length >= 2 && other.startsWith(word)) continue
      const edits = distance(word, other, limit)
      if (edits <= limit) found(id, 1 + edits)
    }
  }
}

/**
 * The best `limit` hits after `after` of `admits` (the request's visibility) for `query`, one more
 * looked for to tell whether a next page exists.
 */
export const search = (
  index: Index,
  query: string,
  options: {
    readonly admits: (skill: Snapshot.SkillEntry) => boolean
    readonly after?: Position | undefined
    readonly limit: number
  }
): Page => {
  const words = queryWords(query)
  const whole = query.trim().toLowerCase()
  const { marked, scratch } = index
  const matched: Array<number> = []
  for (const [w, word] of words.entries()) {
    eachMatch(index, word, (id, quality) => {
      const postings = index.postings[id]!
      for (let p = 0; p < postings.length; p++) {
        const posting = postings[p]!
        const doc = (posting / Fields) | 0
        const cost = (posting - doc * Fields) * Qualities + quality
        const slot = doc * Stride + w
        if (cost < scratch[slot]!) scratch[slot] = cost
        if (marked[doc] === 0) {
          marked[doc] = 1
          matched.push(doc)
        }
      }
    })
  }
  // Each matched document's rank from its words' best costs; the scratch is left clean.
  const threshold = options.after === undefined
    ? -1
    : options.after.rank * DocBits + startAfter(index.docs, options.after.uri)
  const keys: Array<number> = []
  for (const doc of matched) {
    marked[doc] = 0
    let unmatched = 0
    let cost = 0
    for (let w = 0; w < words.length; w++) {
      const slot = doc * Stride + w
      const best = scratch[slot]!
      scratch[slot] = Unmatched
      if (best === Unmatched) unmatched++
      else cost += best
    }
    const key = rankOf(tierOf(index.names[doc]!, whole), unmatched, cost) * DocBits + doc
    if (key >= threshold) keys.push(key)
  }
  return pageOf(index.docs, keys, options.admits, options.limit)
}

// The first URI of `docs` after `uri`: the page goes on there among skills of the same rank.
const startAfter = (docs: ReadonlyArray<Snapshot.SkillEntry>, uri: string) => {
  let low = 0
  let high = docs.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (docs[mid]!.uri <= uri) low = mid + 1
    else high = mid
  }
  return low
}

// The `count` smallest of `keys`, in order: a bounded max-heap, so a word every skill holds costs
// a pass over its matches, not a sort of them.
const smallest = (keys: ReadonlyArray<number>, count: number): Float64Array => {
  if (count >= keys.length) return Float64Array.from(keys).sort()
  const heap = new Float64Array(count)
  let size = 0
  const down = (from: number) => {
    let i = from
    while (true) {
      const left = 2 * i + 1
      if (left >= size) return
      const child = left + 1 < size && heap[left + 1]! > heap[left]! ? left + 1 : left
      if (heap[child]! <= heap[i]!) return
      const swap = heap[i]!
      heap[i] = heap[child]!
      heap[child] = swap
      i = child
    }
  }
  for (const key of keys) {
    if (size < count) {
      let i = size++
      heap[i] = key
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (heap[parent]! >= heap[i]!) break
        const swap = heap[i]!
        heap[i] = heap[parent]!
        heap[parent] = swap
        i = parent
      }
    } else if (key < heap[0]!) {
      heap[0] = key
      down(0)
    }
  }
  return heap.sort()
}

// The `limit` smallest keys of visible documents, in order; visibility is asked best first, and
// only of documents that could still make the page: twice as many looked at while too few are.
const pageOf = (
  docs: ReadonlyArray<Snapshot.SkillEntry>,
  keys: ReadonlyArray<number>,
  admits: (skill: Snapshot.SkillEntry) => boolean,
  limit: number
): Page => {
  for (let count = limit + 1;; count *= 2) {
    const hits: Array<Snapshot.SkillEntry> = []
    let last = -1
    for (const key of smallest(keys, count)) {
      const skill = docs[key % DocBits]!
      if (!admits(skill)) continue
      if (hits.length === limit) {
        return { hits, next: { rank: Math.floor(last / DocBits), uri: hits[hits.length - 1]!.uri } }
      }
      hits.push(skill)
      last = key
    }
    if (count >= keys.length) return { hits, next: undefined }
  }
}

/**
 * The same page as `search`, found by reading every skill: the words of each skill's fields are
 * taken and compared with the query's for every query.
 */
export const scan = (
  listed: ReadonlyArray<Snapshot.SkillEntry>,
  query: string,
  options: Parameters<typeof search>[2]
): Page => {
  const words = queryWords(query)
  const whole = query.trim().toLowerCase()
  const threshold = options.after === undefined ? -1 : options.after.rank * DocBits + startAfter(listed, options.after.uri)
  const keys: Array<number> = []
  for (const [doc, skill] of listed.entries()) {
    const fields = fieldsOf(skill)
    let unmatched = 0
    let cost = 0
    for (const word of words) {
      let best = Unmatched
      for (const [field, others] of fields.entries()) {
        for (const other of others) {
          const q = quality(word, other)
          if (q >= 0) best = Math.min(best, field * Qualities + q)
        }
      }
      if (best === Unmatched) unmatched++
      else cost += best
    }
    if (unmatched === words.length) continue
    const key = rankOf(tierOf(skill.name.toLowerCase(), whole), unmatched, cost) * DocBits + doc
    if (key >= threshold) keys.push(key)
  }
  return pageOf(listed, keys, options.admits, options.limit)
}
