/**
 * `skills/list`: one page of the listed skills (by URI), then of each listed family's instances.
 * `answerStatic` is the page of a catalogue without listed families, a pure function of the
 * snapshot, the visibility and the cursor (the fast route sends it as bytes); `listSkills`
 * answers everything else the same way, rendering what must be rendered per request.
 *
 * @internal
 */
import type { Protocol, Skill as CoreSkill } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import { familyKey } from "../../Snapshot.js"
import * as Cursor from "../cursor.js"
import type { RequestInfo } from "../effect/port.js"
import * as Kind from "../kind.js"
import type * as Visibility from "../visibility.js"
import * as Answer from "./answer.js"
import * as Native from "./native.js"
import { begin, eachInstance, eachListed, hintOfAll, unknownCursor } from "./request.js"
import type { Position, State } from "./request.js"
import type * as Snapshot from "../../Snapshot.js"

/** The cursor scope of `skills/list`. */
export const SkillsScope = "skills"

// A cursor is the position after the last entry sent: a skill URI, or (FamilyPosition-prefixed)
// a family, the family's own cursor of the page and the offset in it.
const FamilyPosition = "\u0000"

const encodePosition = (position: Position) =>
  FamilyPosition + JSON.stringify([position.key, position.cursor, position.offset])

const decodePosition = (after: string): Position | undefined => {
  try {
    const [key, cursor, offset] = JSON.parse(after.slice(FamilyPosition.length)) as [unknown, unknown, unknown]
    return typeof key === "string" && (cursor === null || typeof cursor === "string") && Number.isSafeInteger(offset) &&
        (offset as number) >= 0
      ? { key, cursor, offset: offset as number }
      : undefined
  } catch {
    return undefined
  }
}

type Start =
  | { readonly _tag: "Listed"; readonly after: string | undefined }
  | { readonly _tag: "Family"; readonly position: Position }

// `undefined`: a cursor that is not one of ours.
const startOf = (cursor: string | undefined): Start | undefined => {
  if (cursor === undefined) return { _tag: "Listed", after: undefined }
  const after = Cursor.decode(SkillsScope, cursor)
  if (after === undefined) return undefined
  if (!after.startsWith(FamilyPosition)) return { _tag: "Listed", after }
  const position = decodePosition(after)
  return position === undefined ? undefined : { _tag: "Family", position }
}

// The skills of one page, and the position after the last one; `next` is set once a further
// entry exists (the next page starts after `last`).
const selection = (pageSize: number) => {
  const selected: Array<Snapshot.ServedSkill> = []
  const page = {
    selected,
    last: undefined as string | undefined,
    next: undefined as string | undefined,
    take: (skill: Snapshot.ServedSkill, after: string) => {
      if (selected.length === pageSize) {
        page.next = page.last
        return false
      }
      selected.push(skill)
      page.last = after
      return true
    }
  }
  return page
}

const takeListed = (
  page: ReturnType<typeof selection>,
  snapshot: Snapshot.Snapshot,
  visible: Visibility.Visible,
  from: number
) => {
  const listed = snapshot.listed
  for (let i = from; i < listed.length && page.next === undefined; i++) {
    const skill = listed[i]!
    if (visible.skill(skill.index)) page.take(skill, skill.uri)
  }
}

/**
 * R36: every page of one listing carries the same scope, so the scope is the whole listing's
 * (public only if every listed skill is, and no visibility check applies), while the ttl is the
 * shortest of the page's entries.
 */
const listingScope = (state: State, snapshot: Snapshot.Snapshot): "public" | "private" =>
  !snapshot.listing.anyPrivate && (!snapshot.listing.anyDefault || state.cacheScope === "public") ? "public" : "private"

const answerOf = (
  state: State,
  snapshot: Snapshot.Snapshot,
  skills: ReadonlyArray<CoreSkill.Skill>,
  onPage: ReadonlyArray<Snapshot.ServedSkill>,
  next: string | undefined,
  checked: boolean
): Answer.Answer<Protocol.ListSkillsResult> =>
  Answer.make(
    { skills, ...(next !== undefined ? { nextCursor: Cursor.make(SkillsScope, next) } : {}) },
    { ttlMs: hintOfAll(state, onPage).ttlMs, cacheScope: listingScope(state, snapshot) },
    checked
  )

/**
 * The page of a catalogue of static skills only; `undefined` when a listed family, a skill of
 * another kind on the page, or a cursor that is not ours needs `listSkills`.
 */
export const answerStatic = (
  state: State,
  snapshot: Snapshot.Snapshot,
  visible: Visibility.Visible,
  cursor: string | undefined
): Answer.Answer<Protocol.ListSkillsResult> | undefined => {
  // Instances of listed families are rendered per request, and cursors may point into them.
  if (snapshot.families.some((family) => family.listed)) return undefined
  const start = startOf(cursor)
  if (start === undefined || start._tag === "Family") return undefined
  const from = Cursor.startAfter(snapshot.listed, (skill) => skill.uri, start.after)
  const compute = () => {
    const page = selection(state.pageSize)
    takeListed(page, snapshot, visible, from)
    const skills: Array<CoreSkill.Skill> = []
    for (const skill of page.selected) {
      if (skill._tag !== "Static") return undefined
      skills.push(Kind.carvedEntry(snapshot, visible, skill))
    }
    return answerOf(state, snapshot, skills, page.selected, page.next, visible.checked)
  }
  return visible.checked ? compute() : state.answers.keep(snapshot, `skills ${from}`, compute)
}

export const listSkills = Effect.fnUntraced(function*(params: { readonly cursor?: string | undefined } | undefined, request: RequestInfo) {
  const { call, state } = yield* begin(request, "skills/list")
  const { snapshot, visible } = call
  const known = answerStatic(state, snapshot, visible, params?.cursor)
  if (known !== undefined) return Answer.toObject(yield* Native.withListed(call, params?.cursor, known), request)
  const start = startOf(params?.cursor)
  if (start === undefined) return yield* Effect.fail(unknownCursor)
  const page = selection(state.pageSize)
  const position = start._tag === "Family" ? start.position : undefined
  if (start._tag === "Listed") takeListed(page, snapshot, visible, Cursor.startAfter(snapshot.listed, (skill) => skill.uri, start.after))
  for (const family of snapshot.families) {
    if (page.next !== undefined) break
    const key = familyKey(family)
    if (!family.listed || position !== undefined && key < position.key) continue
    const from = position !== undefined && key === position.key ? position : undefined
    yield* eachInstance(call, family, from, (skill, after) => page.take(skill, encodePosition(after)))
  }
  const rendered = yield* eachListed(page.selected, (skill) => Kind.kindOf(skill).entry(call, skill))
  const skills: Array<CoreSkill.Skill> = []
  const onPage: Array<Snapshot.ServedSkill> = []
  for (const [i, entry] of rendered.entries()) {
    if (entry === undefined) continue
    skills.push(entry)
    onPage.push(page.selected[i]!)
  }
  const answer = answerOf(state, snapshot, skills, onPage, page.next, visible.checked)
  return Answer.toObject(yield* Native.withListed(call, params?.cursor, answer), request)
})
