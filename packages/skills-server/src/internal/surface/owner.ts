/**
 * Which skill a URI belongs to for one request: a static file or directory by its owners, a
 * family instance by its template, anything else by the per-request skill whose root encloses
 * it. Hidden owners do not count, so a hidden URI and an absent one look the same.
 *
 * @internal
 */
import { SkillUri } from "@mcp-skills/core"
import * as PathTemplate from "../../PathTemplate.js"
import * as Registry from "../registry.js"
import type { WireError } from "../effect/port.js"
import type { Call } from "../kind.js"
import { invalidParams, skillsOf } from "./request.js"
import type * as Snapshot from "../../Snapshot.js"

const none = { _tag: "None" } as const

/**
 * The family instance `uri` falls in, if the caller may see it, with the decoded path below its
 * root; or, for a URI with a family's shape but an invalid parameter, the refusal (-32602, naming
 * what was wrong unless a visibility check applies, under which it must look like any absent URI).
 * Nothing is rendered here.
 */
export const resolveInstance = (
  call: Call,
  uri: string
):
  | { readonly _tag: "None" }
  | { readonly _tag: "Invalid"; readonly error: WireError }
  | { readonly _tag: "Found"; readonly skill: Snapshot.InstanceSkill; readonly file: ReadonlyArray<string> } =>
{
  for (const family of call.snapshot.families) {
    const match = PathTemplate.match(family.template, uri)
    if (match._tag === "Outside") continue
    if (match._tag === "Invalid") {
      return call.visible.checked ? none : { _tag: "Invalid", error: invalidParams(match.error.message, { uri }) }
    }
    const skill = Registry.instance(family, match)
    return call.visible.instance(skill) ? { _tag: "Found", skill, file: match.file } : none
  }
  return none
}

/**
 * The skill a file or directory URI belongs to for this request, and every skill whose answers it
 * depends on (a file of a nested skill is in its enclosing skill too); `undefined` when no visible
 * skill holds the URI.
 */
export const ownerOf = (
  call: Call,
  uri: string,
  indexed: Snapshot.FileEntry | Snapshot.DirectoryEntry | undefined,
  directory = false
):
  | { readonly skill: Snapshot.ServedSkill; readonly owners: ReadonlyArray<Snapshot.ServedSkill> }
  | WireError
  | undefined =>
{
  const { snapshot, visible } = call
  if (indexed !== undefined) {
    // A file is its innermost owner's; a directory is any skill's that holds a file below it.
    const first = "children" in indexed
      ? indexed.owners.find(visible.skill)
      : visible.file(indexed.owners)
      ? Registry.innermost(snapshot.skills, indexed.owners)
      : undefined
    return first === undefined ? undefined : { skill: snapshot.skills[first]!, owners: skillsOf(snapshot, indexed.owners) }
  }
  // Not a static file or directory: the innermost skill around it answers (a static one has no
  // such file or directory). A folder of a hidden nested skill may still lead to a visible skill
  // inside it: the nearest visible skill around it lists what the caller may see there.
  let owner = SkillUri.isCanonical(uri) ? Registry.enclosing(snapshot, uri) : undefined
  if (owner !== undefined) {
    while (directory && owner !== undefined && !visible.skill(owner.index)) {
      owner = Registry.enclosing(snapshot, owner.root.slice(0, owner.root.lastIndexOf("/")))
    }
    return owner !== undefined && owner._tag !== "Static" && visible.skill(owner.index) ? { skill: owner, owners: [owner] } : undefined
  }
  const resolved = resolveInstance(call, uri)
  return resolved._tag === "Invalid"
    ? resolved.error
    : resolved._tag === "Found"
    ? { skill: resolved.skill, owners: [resolved.skill] }
    : undefined
}
