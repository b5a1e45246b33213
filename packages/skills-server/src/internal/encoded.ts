/**
 * Answers of static skills encoded once per snapshot: the UTF-8 JSON of each `skills/list` entry,
 * each `skills/get` result, each file's `resources/read` result and each directory child, built
 * on first use and kept with the snapshot (a `WeakMap` keyed by it, owned by the layer), so they
 * go when the snapshot goes. A page of `skills/list` or of a directory is assembled from encoded
 * items, never by stringifying a whole result; a page seen by every caller alike (no visibility
 * check) is kept whole too.
 *
 * Only static skills are encoded: a page or URI that touches any other kind, or a skill with nested
 * skills under a visibility check (which may carve some out of it), answers `undefined`,
 * and the caller lets effect's path answer it (dynamic and rendered skills, and any kind added
 * later, stay per request).
 *
 * What is encoded is exactly what the handlers (`handlers.ts`) return for a 2026-07-28 request
 * (`resultType`, `ttlMs`, `cacheScope`, `_meta.serverInfo`), with the same hints: the
 * equivalence test compares the two paths byte-for-byte as JSON.
 *
 * Memory: the file bytes live once, in the manifest; a read result is encoded on a file's first
 * fast read and kept only up to `MaxKeptRead` bytes (larger files are encoded per request), so a
 * snapshot holds at most one extra copy of each small file someone read.
 *
 * @internal
 */
import * as Cursor from "./cursor.js"
import * as Handlers from "./handlers.js"
import * as SkillRegistry from "../SkillRegistry.js"
import * as Registry from "./registry.js"

/** Largest read result kept encoded with the snapshot (bigger ones are encoded on each read). */
export const MaxKeptRead = 64 * 1024

/** Which skills one request may see. */
export interface Visibility {
  readonly skill: (index: number) => boolean
  /** A visibility check ran: every result is then `private`. */
  readonly checked: boolean
}

// Under a visibility check, a skill with nested skills may have some of them carved out of its
// entry for this caller (`Kind.carvedEntry`): effect's path answers it.
const carves = (snapshot: SkillRegistry.Snapshot, skill: SkillRegistry.StaticSkill, visible: Visibility) =>
  visible.checked && (snapshot.nested.get(skill.root) ?? 0) > 0

/** Everyone sees everything. */
export const everyone: Visibility = { skill: () => true, checked: false }

interface Memo {
  readonly entries: Array<Uint8Array | undefined>
  readonly gets: Map<number, Uint8Array>
  readonly reads: Map<string, Uint8Array>
  readonly children: Map<SkillRegistry.DirectoryChild, Uint8Array>
  /** Whole pages for callers without a check: `skills/list` by start index, directories by URI and start. */
  readonly pages: Map<string, Uint8Array | null>
}

const encoder = new TextEncoder()
const utf8 = (text: string) => encoder.encode(text)

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => Buffer.concat(parts)

const comma = utf8(",")

const join = (items: ReadonlyArray<Uint8Array>): Uint8Array => {
  const parts: Array<Uint8Array> = []
  for (const item of items) {
    if (parts.length > 0) parts.push(comma)
    parts.push(item)
  }
  return concat(parts)
}

/** The encoded answers of one layer, per snapshot. */
export interface Encoded {
  readonly listSkills: (snapshot: SkillRegistry.Snapshot, cursor: string | undefined, visible: Visibility) => Uint8Array | undefined
  readonly getSkill: (snapshot: SkillRegistry.Snapshot, uri: string, visible: Visibility) => Uint8Array | undefined
  readonly readResource: (snapshot: SkillRegistry.Snapshot, uri: string, visible: Visibility) => Uint8Array | undefined
  readonly readDirectory: (
    snapshot: SkillRegistry.Snapshot,
    uri: string,
    cursor: string | undefined,
    visible: Visibility
  ) => Uint8Array | undefined
}

/**
 * The encoded answers of the layer whose settings are `state`, for the server described by
 * `serverInfo`. `undefined` means "not answerable here": an error, a cursor that does not
 * decode, a hidden or absent URI, or a skill of a kind that is not encoded.
 */
export const make = (state: Handlers.State, serverInfo: Readonly<Record<string, unknown>>): Encoded => {
  const memos = new WeakMap<SkillRegistry.Snapshot, Memo>()
  const memoOf = (snapshot: SkillRegistry.Snapshot): Memo => {
    let memo = memos.get(snapshot)
    if (memo === undefined) {
      memo = { entries: [], gets: new Map(), reads: new Map(), children: new Map(), pages: new Map() }
      memos.set(snapshot, memo)
    }
    return memo
  }
  const meta = JSON.stringify({ "io.modelcontextprotocol/serverInfo": serverInfo })
  // `{"resultType":"complete",<body>,"ttlMs":..,"cacheScope":..,"_meta":..}`, as `Handlers.complete` builds it.
  const result = (body: ReadonlyArray<Uint8Array>, hint: SkillRegistry.Hint, visible: Visibility) =>
    concat([
      utf8(`{"resultType":"complete",`),
      ...body,
      utf8(`,"ttlMs":${hint.ttlMs},"cacheScope":"${visible.checked ? "private" : hint.cacheScope}","_meta":${meta}}`)
    ])
  const entryOf = (memo: Memo, skill: SkillRegistry.StaticSkill) =>
    memo.entries[skill.index] ??= utf8(JSON.stringify(skill.entry))
  const childOf = (memo: Memo, child: SkillRegistry.DirectoryChild) => {
    let known = memo.children.get(child)
    if (known === undefined) {
      known = utf8(JSON.stringify(child.resource))
      memo.children.set(child, known)
    }
    return known
  }
  const nextCursor = (scope: string, last: string | undefined) =>
    last === undefined ? [] : [utf8(`,"nextCursor":${JSON.stringify(Cursor.make(scope, last))}`)]
  const startOf = (scope: string, cursor: string | undefined, keys: (after: string) => number) => {
    if (cursor === undefined) return 0
    const after = Cursor.decode(scope, cursor)
    return after === undefined ? undefined : keys(after)
  }
  // A kept page is keyed by where it starts; `null` marks a page effect's path must answer.
  const kept = (memo: Memo, key: string, visible: Visibility, build: () => Uint8Array | undefined) => {
    if (visible.checked) return build()
    const known = memo.pages.get(key)
    if (known !== undefined) return known ?? undefined
    const built = build()
    memo.pages.set(key, built ?? null)
    return built
  }

  const listSkills: Encoded["listSkills"] = (snapshot, cursor, visible) => {
    // A listing goes on into the instances of listed families, rendered per request, and its
    // cursors may point into them: effect's path answers every page of such a catalogue.
    if (snapshot.families.some((family) => family.listed)) return undefined
    const listed = snapshot.listed
    const start = startOf(
      Handlers.SkillsScope,
      cursor,
      (after) => after.startsWith(Handlers.FamilyPosition) ? -1 : Cursor.startAfter(listed, (skill) => skill.uri, after)
    )
    if (start === undefined || start < 0) return undefined
    const memo = memoOf(snapshot)
    return kept(memo, `skills ${start}`, visible, () => {
      const items: Array<Uint8Array> = []
      const onPage: Array<SkillRegistry.SkillEntry> = []
      let more = false
      for (let i = start; i < listed.length; i++) {
        const skill = listed[i]!
        if (!visible.skill(skill.index)) continue
        if (items.length === state.pageSize) {
          more = true
          break
        }
        if (skill._tag !== "Static" || carves(snapshot, skill, visible)) return undefined
        items.push(entryOf(memo, skill))
        onPage.push(skill)
      }
      const hint = {
        ttlMs: Handlers.hintOfAll(state, onPage).ttlMs,
        cacheScope: Handlers.listingScope(state, snapshot)
      }
      return result([
        utf8(`"skills":[`),
        join(items),
        utf8("]"),
        ...nextCursor(Handlers.SkillsScope, more ? onPage.at(-1)?.uri : undefined)
      ], hint, visible)
    })
  }

  const getSkill: Encoded["getSkill"] = (snapshot, uri, visible) => {
    const skill = snapshot.byUri.get(uri)
    if (skill === undefined || skill._tag !== "Static" || !visible.skill(skill.index) || carves(snapshot, skill, visible)) {
      return undefined
    }
    const memo = memoOf(snapshot)
    const build = () => result([utf8(`"skill":`), entryOf(memo, skill)], Handlers.hintOf(state, skill), visible)
    if (visible.checked) return build()
    let known = memo.gets.get(skill.index)
    if (known === undefined) {
      known = build()
      memo.gets.set(skill.index, known)
    }
    return known
  }

  const ownersOf = (snapshot: SkillRegistry.Snapshot, owners: ReadonlyArray<number>) => owners.map((index) => snapshot.skills[index]!)

  const readResource: Encoded["readResource"] = (snapshot, uri, visible) => {
    const file = snapshot.files.get(uri)
    // A file served on demand is read and verified per request (`onDemand.ts`): effect's path.
    if (file === undefined || file._tag !== "InMemory" || !visible.skill(Registry.innermost(snapshot.skills, file.owners))) {
      return undefined
    }
    const memo = memoOf(snapshot)
    const build = () =>
      result(
        [utf8(`"contents":${JSON.stringify([{ uri, mimeType: file.mimeType, ...file.content }])}`)],
        Handlers.hintOfAll(state, ownersOf(snapshot, file.owners)),
        visible
      )
    if (visible.checked || file.size > MaxKeptRead) return build()
    let known = memo.reads.get(uri)
    if (known === undefined) {
      known = build()
      memo.reads.set(uri, known)
    }
    return known
  }

  const readDirectory: Encoded["readDirectory"] = (snapshot, uri, cursor, visible) => {
    const directory = snapshot.directories.get(uri)
    if (directory === undefined || !directory.owners.some(visible.skill)) return undefined
    const scope = Handlers.directoryScope(uri)
    const children = visible.checked
      ? directory.children.filter((child) => child.owners.some(visible.skill))
      : directory.children
    const start = startOf(scope, cursor, (after) => Cursor.startAfter(children, (child) => child.uri, after))
    if (start === undefined) return undefined
    const memo = memoOf(snapshot)
    return kept(memo, `dir ${start} ${uri}`, visible, () => {
      const page = children.slice(start, start + state.pageSize)
      const more = start + page.length < children.length
      return result([
        utf8(`"resources":[`),
        join(page.map((child) => childOf(memo, child))),
        utf8("]"),
        ...nextCursor(scope, more ? page.at(-1)?.uri : undefined)
      ], Handlers.hintOfAll(state, ownersOf(snapshot, directory.owners)), visible)
    })
  }

  return { listSkills, getSkill, readResource, readDirectory }
}
