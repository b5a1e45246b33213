/**
 * `resources/directory/read`: one page of a directory's direct children. `answerStatic` is the
 * page of a static skill's directory, a pure function of the snapshot, the visibility, the URI and
 * the cursor (the fast route sends it as bytes).
 *
 * @internal
 */
import type { Protocol } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Cursor from "../cursor.js"
import { isWireError } from "../effect/port.js"
import type { RequestInfo, WireError } from "../effect/port.js"
import type { Call } from "../kind.js"
import * as Kind from "../kind.js"
import type * as Visibility from "../visibility.js"
import * as Answer from "./answer.js"
import * as Native from "./native.js"
import { ownerOf } from "./owner.js"
import { begin, hintOfAll, invalidParams, skillsOf, unknownCursor } from "./request.js"
import type { State } from "./request.js"
import type * as Snapshot from "../../Snapshot.js"

const scopeOf = (uri: string) => `dir ${uri}`

// `undefined`: a cursor that is not this directory's.
const startOf = (uri: string, children: ReadonlyArray<Kind.Child>, cursor: string | undefined) => {
  if (cursor === undefined) return 0
  const after = Cursor.decode(scopeOf(uri), cursor)
  return after === undefined ? undefined : Cursor.startAfter(children, (child) => child.uri, after)
}

// The spec types this result without cache fields (§1.7), but the official TypeScript SDK
// (2.4.0) rejects a 2026-07-28 directory result without them, so they are sent too.
const pageOf = (
  state: State,
  uri: string,
  children: ReadonlyArray<Kind.Child>,
  start: number,
  owners: ReadonlyArray<Snapshot.ServedSkill>,
  checked: boolean
): Answer.Answer<Protocol.ReadResourceDirectoryResult> => {
  const page = children.slice(start, start + state.pageSize)
  const last = page.at(-1)
  const more = start + page.length < children.length
  return Answer.make(
    {
      resources: page.map((child) => child.resource),
      ...(more && last !== undefined ? { nextCursor: Cursor.make(scopeOf(uri), last.uri) } : {})
    },
    hintOfAll(state, owners),
    checked
  )
}

/** A page of a static skill's directory; `undefined` when `readDirectory` must answer. */
export const answerStatic = (
  state: State,
  snapshot: Snapshot.Snapshot,
  visible: Visibility.Visible,
  uri: string,
  cursor: string | undefined
): Answer.Answer<Protocol.ReadResourceDirectoryResult> | undefined =>
  // Unchecked, the page is the snapshot's alone: kept by URI and cursor (the URI's length first,
  // and a cursor, even an empty one, after a space: no other pair spells the same key), a repeated
  // read finds it without deriving it again.
  visible.checked
    ? pageAt(state, snapshot, visible, uri, cursor)
    : state.answers.keep(
      snapshot,
      `dir ${uri.length} ${uri}${cursor === undefined ? "" : ` ${cursor}`}`,
      () => pageAt(state, snapshot, visible, uri, cursor)
    )

const pageAt = (
  state: State,
  snapshot: Snapshot.Snapshot,
  visible: Visibility.Visible,
  uri: string,
  cursor: string | undefined
) => {
  const directory = snapshot.directories.get(uri)
  const owner = directory?.owners.find(visible.skill)
  if (directory === undefined || owner === undefined || snapshot.skills[owner]!._tag !== "Static") return undefined
  const children = Kind.staticChildren(visible, directory)
  const start = startOf(uri, children, cursor)
  if (start === undefined) return undefined
  return pageOf(state, uri, children, start, skillsOf(snapshot, directory.owners), visible.checked)
}

export const readDirectory = Effect.fnUntraced(function*(
  params: { readonly uri: string; readonly cursor?: string | undefined },
  request: RequestInfo
) {
  const { call, state } = yield* begin(request, "resources/directory/read")
  const uri = params.uri
  const known = answerStatic(state, call.snapshot, call.visible, uri, params.cursor)
  if (known !== undefined) return Answer.toObject(yield* withTheirs(call, uri, params.cursor, known), request)
  const owner = ownerOf(call, uri, call.snapshot.directories.get(uri), true)
  if (isWireError(owner)) return yield* Effect.fail(owner)
  const children = owner === undefined ? undefined : yield* Kind.kindOf(owner.skill).directory(call, owner.skill, uri)
  if (owner === undefined || children === undefined) {
    // A directory of effect's own skills alone (`McpServer.skill`): one page, as effect answers it.
    const theirs = params.cursor === undefined ? yield* Native.directory(call, uri, new Set()) : undefined
    if (theirs !== undefined) {
      return Answer.toObject(Answer.make({ resources: theirs as ReadonlyArray<Protocol.ResourceEntry> }, call.request.native.hint, call.visible.checked), request)
    }
    return yield* Effect.fail(invalidParams(`no directory resource is served at ${uri}`, { uri }))
  }
  const start = startOf(uri, children, params.cursor)
  if (start === undefined) return yield* Effect.fail(unknownCursor)
  return Answer.toObject(yield* withTheirs(call, uri, params.cursor, pageOf(state, uri, children, start, owner.owners, call.visible.checked)), request)
})

// A folder above skills of both the layer and effect (`skill://acme` over both): effect's
// children join the first page.
const withTheirs = (
  call: Call,
  uri: string,
  cursor: string | undefined,
  answer: Answer.Answer<Protocol.ReadResourceDirectoryResult>
): Effect.Effect<Answer.Answer<Protocol.ReadResourceDirectoryResult>, WireError> =>
  cursor !== undefined ? Effect.succeed(answer) : Effect.map(
    Native.directory(call, uri, new Set(answer.body.resources.map((resource) => resource.uri))),
    (theirs) =>
      theirs === undefined || theirs.length === 0 ? answer : Answer.make(
        { ...answer.body, resources: [...answer.body.resources, ...theirs as ReadonlyArray<Protocol.ResourceEntry>].sort(byUri) },
        Native.hintWith(call, answer.hint),
        answer.checked
      )
  )

const byUri = (a: { readonly uri: string }, b: { readonly uri: string }) => a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0
