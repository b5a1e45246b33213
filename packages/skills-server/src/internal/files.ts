/**
 * A snapshot's files, found through the skills that hold them: a file URI leads to the innermost
 * skill around it, and its path to a row of that skill's manifest (`Manifest.Files`). The entry a
 * lookup gives is made for the caller and kept by nobody; its wire form comes from the registry's
 * bounded cache of the most recently read files (`wireForms.ts`).
 *
 * @internal
 */
import * as MimeType from "../MimeType.js"
import type { FileEntry, Files, InMemoryFile, Snapshot, StaticSkill } from "../Snapshot.js"
import { enclosing, ownersOf } from "./registry.js"
import type * as WireForms from "./wireForms.js"

// A file held in memory, as one lookup found it: its fields are read from the manifest's columns
// when asked for. A class, so every such entry shares one shape and its getters.
class HeldFile implements InMemoryFile {
  constructor(
    readonly skill: StaticSkill,
    readonly index: number,
    readonly owners: ReadonlyArray<number>,
    readonly forms: WireForms.WireForms
  ) {}
  get _tag(): "InMemory" {
    return "InMemory"
  }
  get uri() {
    return this.skill.manifest.files.uri(this.index)
  }
  get name() {
    return this.skill.manifest.files.name(this.index)
  }
  get mimeType() {
    return MimeType.fromPath(this.skill.manifest.files.name(this.index))
  }
  get size() {
    return this.skill.manifest.files.size(this.index)
  }
  get digest() {
    return this.skill.manifest.files.digest(this.index)
  }
  get content() {
    const files = this.skill.manifest.files
    return this.forms.of(files.digest(this.index), () => files.bytes(this.index)!)
  }
}

/** The file of `skill` at row `index` of its manifest, as an entry. */
export const entryAt = (skill: StaticSkill, index: number, forms: WireForms.WireForms): FileEntry | undefined => {
  const files = skill.manifest.files
  if (files.held(index)) return new HeldFile(skill, index, ownersOf(skill), forms)
  const path = files.path(index)
  const location = skill.onDisk.find((file) => file.path === path)?.location
  // A file neither held nor on disk is no file a manifest of the registry has.
  if (location === undefined) return undefined
  return {
    _tag: "OnDisk",
    uri: files.uri(index),
    name: files.name(index),
    mimeType: MimeType.fromPath(path),
    size: files.size(index),
    digest: files.digest(index),
    owners: ownersOf(skill),
    location
  }
}

class SnapshotFiles implements Files {
  constructor(readonly snapshot: () => Snapshot, readonly forms: WireForms.WireForms) {}
  get(uri: string): FileEntry | undefined {
    const skill = enclosing(this.snapshot(), uri)
    if (skill?._tag !== "Static") return undefined
    const index = skill.manifest.files.indexOfUri(uri)
    return index === -1 ? undefined : entryAt(skill, index, this.forms)
  }
  all(): ReadonlyArray<FileEntry> {
    const out: Array<FileEntry> = []
    for (const skill of this.snapshot().skills) {
      // The outermost static skill around a file lists it: each file once.
      if (skill._tag !== "Static" || skill.enclosedBy.length > 0) continue
      for (let index = 0; index < skill.manifest.files.length; index++) out.push(this.get(skill.manifest.files.uri(index))!)
    }
    return out
  }
}

/** The files of `snapshot` (given as a thunk, as the snapshot is made with them). */
export const make = (snapshot: () => Snapshot, forms: WireForms.WireForms): Files => new SnapshotFiles(snapshot, forms)

/** The files of another snapshot of the same registry (same wire forms) as `files`. */
export const following = (files: Files, snapshot: () => Snapshot): Files =>
  // Every snapshot's files are made by `make`.
  new SnapshotFiles(snapshot, (files as SnapshotFiles).forms)
