/**
 * The snapshot model: the immutable catalogue one request reads from start to end, and the
 * read-only queries on it. Skills are looked up by URI in a hash map; a file or directory is found
 * through the skill around its URI, in that skill's manifest (its files held as columns, see
 * `Manifest.Files` of `@mcp-skills/core`), so a snapshot holds no record per file; the listing is
 * sorted by URI for keyset pagination. A `SkillRegistry` builds snapshots (`SkillRegistry.build`)
 * and swaps them atomically.
 *
 * @since 0.1.0
 */
import type { Digest, Limits, Protocol, Signing, Skill as CoreSkill, SkillUri } from "@mcp-skills/core"
import type * as Duration from "effect/Duration"
import type * as PathTemplate from "./PathTemplate.js"
import type * as Skill from "./Skill.js"

/**
 * A file's content on the wire: text only when the bytes round-trip UTF-8 exactly, so a client
 * hashing the UTF-8 of `text` gets the published digest; otherwise a base64 blob.
 *
 * @since 0.1.0
 * @category models
 */
export type WireContent = { readonly text: string } | { readonly blob: string }

/**
 * What every file of the snapshot has. A file entry is made when a file is looked up
 * (`Snapshot.files`), from the columns of the manifest that lists it, and kept by nobody.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileBase {
  readonly uri: string
  readonly name: string
  readonly mimeType: string
  readonly size: number
  readonly digest: Digest.Digest
  /** Indices (into `Snapshot.skills`) of every skill whose manifest lists this file. */
  readonly owners: ReadonlyArray<number>
}

/**
 * A file held in memory, ready for `resources/read`: its wire content is derived from the bytes
 * when read, and kept among the most recently read files' (see `SkillRegistry.Options`).
 *
 * @since 0.1.0
 * @category models
 */
export interface InMemoryFile extends FileBase {
  readonly _tag: "InMemory"
  readonly content: WireContent
}

/**
 * A file served on demand (`Skill.DiskFile`): its bytes are not in the snapshot; a read takes them
 * from `location` and sends them only if their size and digest are this entry's.
 *
 * @since 0.1.0
 * @category models
 */
export interface OnDiskFile extends FileBase {
  readonly _tag: "OnDisk"
  readonly location: string
}

/**
 * A file of the snapshot, by where its bytes are.
 *
 * @since 0.1.0
 * @category models
 */
export type FileEntry = InMemoryFile | OnDiskFile

/**
 * One child of a directory, as `resources/directory/read` returns it.
 *
 * @since 0.1.0
 * @category models
 */
export interface DirectoryChild {
  readonly resource: Protocol.ResourceEntry
  readonly uri: string
  readonly owners: ReadonlyArray<number>
}

/**
 * A directory of the snapshot (a skill root or any directory below one) and its direct children,
 * sorted by URI.
 *
 * @since 0.1.0
 * @category models
 */
export interface DirectoryEntry {
  readonly uri: string
  readonly children: ReadonlyArray<DirectoryChild>
  readonly owners: ReadonlyArray<number>
}

/**
 * The files of a snapshot's static skills, by URI: each found through the innermost skill around
 * its URI and made per call from that skill's manifest.
 *
 * @since 0.1.0
 * @category models
 */
export interface Files {
  readonly get: (uri: string) => FileEntry | undefined
  /** Every file, made anew (O(files)): for tests and tools, not requests. */
  readonly all: () => ReadonlyArray<FileEntry>
}

/**
 * The wire entries (`skills/list`, `skills/get`) of a snapshot's static skills: each made from the
 * skill's manifest and signatures on first use and kept in a bounded cache that goes with the
 * snapshot, so a catalogue holds no entry (nor a URI or digest string per file) for skills nobody
 * asks about.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entries {
  readonly get: (skill: StaticSkill) => CoreSkill.Skill
}

/**
 * The directories of a snapshot's static skills (every skill root and every folder below one), by
 * URI. Each is derived from the manifest of the skill that holds it on first use and kept in a
 * bounded cache that goes with the snapshot: a catalogue holds no directory records until its
 * folders are read, and then only the most recently read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Directories {
  readonly get: (uri: string) => DirectoryEntry | undefined
  /** Every directory, derived anew and not kept (O(files)): for tests and tools, not requests. */
  readonly all: () => ReadonlyArray<DirectoryEntry>
}

/**
 * What every kind of published skill has: identity, listing and the `SKILL.md` resource.
 *
 * @since 0.1.0
 * @category models
 */
export interface SkillBase {
  readonly index: number
  readonly uri: SkillUri.SkillMdUri
  readonly root: string
  readonly path: ReadonlyArray<string>
  readonly name: string
  readonly frontmatter: Readonly<Record<string, unknown>>
  readonly listed: boolean
  /** The `SKILL.md` as a `Resource` for `resources/list` (R25); a rendered skill refines it per request. */
  readonly resource: Protocol.ResourceEntry
  /** The skill's own cache hint, if it set one. */
  readonly cacheHint: Hint | undefined
}

/**
 * A skill whose files are known: validated and hashed once, served from the snapshot.
 *
 * @since 0.1.0
 * @category models
 */
export interface StaticSkill extends SkillBase {
  readonly _tag: "Static"
  /**
   * Every file's path, digest and size, and the bytes of those held in memory (the files of its
   * nested skills included, R10). Its wire entry is `Snapshot.entries.get(skill)`.
   */
  readonly manifest: Skill.ManifestView
  /** The files of the manifest served on demand (their bytes are not held). */
  readonly onDisk: ReadonlyArray<Skill.DiskFile>
  /** Its authors' signatures, relayed in its entry's `_meta`. */
  readonly signatures: ReadonlyArray<Signing.Signature> | undefined
  /** Where it came from when this server re-serves it, relayed in its entry's `_meta`. */
  readonly provenance: Skill.Provenance | undefined
  /**
   * The static skills around this one (indices into `Snapshot.skills`), whose manifests list its
   * files too (R10); none for a skill inside no other.
   */
  readonly enclosedBy: ReadonlyArray<number>
}

/**
 * A skill whose files are produced per request (`"resources": "dynamic"`).
 *
 * @since 0.1.0
 * @category models
 */
export interface DynamicSkill extends SkillBase {
  readonly _tag: "Dynamic"
  readonly entry: CoreSkill.Skill
  readonly definition: Skill.Dynamic
}

/**
 * A skill rendered per request; its entry and files exist only for one rendering.
 *
 * @since 0.1.0
 * @category models
 */
export interface RenderedSkill extends SkillBase {
  readonly _tag: "Rendered"
  readonly definition: Skill.Rendered
}

/**
 * One published skill, by kind. Each kind answers the skills surfaces through its own
 * implementation of one port (see `internal/kind.ts`).
 *
 * @since 0.1.0
 * @category models
 */
export type SkillEntry = StaticSkill | DynamicSkill | RenderedSkill

/**
 * A family of the snapshot: its validated template and definition. Its instances are not in the
 * snapshot; a request resolves a URI against the template (`PathTemplate.match`) or asks `list`.
 *
 * @since 0.1.0
 * @category models
 */
export interface FamilyEntry {
  readonly template: PathTemplate.PathTemplate
  readonly definition: Skill.Family<any>
  /** The family's own hint, scope `private` unless it says `public`. */
  readonly cacheHint: Hint | undefined
  readonly timeout: Duration.Duration
  readonly listed: boolean
}

/**
 * One instance of a family, made for one request from its parameters. It is not in
 * `Snapshot.skills`, so it has no index: its visibility is decided by itself.
 *
 * @since 0.1.0
 * @category models
 */
export interface InstanceSkill extends Omit<SkillBase, "index"> {
  readonly _tag: "Instance"
  readonly family: FamilyEntry
  readonly params: PathTemplate.Params
}

/**
 * Any skill a request can be answered about: one of the snapshot, or a family instance.
 *
 * @since 0.1.0
 * @category models
 */
export type ServedSkill = SkillEntry | InstanceSkill

/**
 * A normalized cache hint, as sent on the wire.
 *
 * @since 0.1.0
 * @category models
 */
export interface Hint {
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
}

/**
 * An immutable catalogue.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  /** The catalogue revision (`Revision.of` its skills and families). */
  readonly revision: string
  /**
   * Every skill; `SkillEntry.index` is the position here. A full build sorts them by URI; an
   * `upsert` appends new skills and a `remove` moves the last skill into the freed index.
   */
  readonly skills: ReadonlyArray<SkillEntry>
  /** Listed skills only, sorted by URI (the `skills/list` order). */
  readonly listed: ReadonlyArray<SkillEntry>
  readonly byUri: ReadonlyMap<string, SkillEntry>
  readonly files: Files
  readonly entries: Entries
  readonly directories: Directories
  /** Dynamic and rendered skills by root URI: their files are produced per request. */
  readonly dynamicRoots: ReadonlyMap<string, DynamicSkill | RenderedSkill>
  /**
   * Families, sorted by template (code units): the order their instances follow the listed
   * skills in `skills/list`. No two can name or nest in each other's skills, nor in a skill's.
   */
  readonly families: ReadonlyArray<FamilyEntry>
  /** URI schemes of the catalogue (always `skill`): such URIs are answered by the registry. */
  readonly schemes: ReadonlySet<string>
  /** What building this snapshot hashed (files and bytes); unchanged skills cost nothing. */
  readonly hashed: { readonly files: number; readonly bytes: number }
  /** The per-skill limits rendered skills are checked against. */
  readonly limits: Limits.Limits
  /**
   * How the listing's own hints bear on its scope: some listed skill is private by itself
   * (its own hint, or rendered), and some listed skill takes the server's hint. The counts of
   * such listed skills let an update of a few skills keep these without a scan.
   */
  readonly listing: {
    readonly anyPrivate: boolean
    readonly anyDefault: boolean
    readonly privateSkills: number
    readonly defaultSkills: number
  }
  /**
   * How many skills lie strictly below each URI prefix of a skill root (`skill://acme` of
   * `skill://acme/billing/refunds`): what tells, without a scan, whether a skill encloses another.
   */
  readonly nested: ReadonlyMap<string, number>
  /**
   * The skills strictly inside each rendered or dynamic skill (by its root URI; SKILL.md URIs): a
   * rendered parent's manifest takes in their files per request, a dynamic parent's directories
   * their entries (R10).
   */
  readonly enclosed: ReadonlyMap<string, ReadonlyArray<string>>
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const encoder = new TextEncoder()

/**
 * How bytes go on the wire: `text` when they round-trip UTF-8 exactly, otherwise a base64 `blob`.
 *
 * @example
 * ```ts
 * import { Snapshot } from "@mcp-skills/server"
 *
 * Snapshot.wireContent(new TextEncoder().encode("# Policy\n")) // { text: "# Policy\n" }
 * Snapshot.wireContent(new Uint8Array([0xff, 0x00]))           // { blob: "/wA=" }: not UTF-8, so base64
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const wireContent = (bytes: Uint8Array): WireContent => {
  try {
    const text = utf8.decode(bytes)
    const encoded = encoder.encode(text)
    if (Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength).equals(bytes)) return { text }
  } catch {
    // not UTF-8: served as a blob
  }
  // Node's encoder: about five times effect's `Base64.encode` on a 1 MiB file.
  return { blob: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64") }
}

/**
 * The key a family is known and sorted by: `<scheme>://<template>`.
 *
 * @since 0.1.0
 * @category utils
 */
export const familyKey = (family: FamilyEntry): string => `${family.template.scheme}://${family.template.template}`

/**
 * One skill present before and after a change, and which of its files changed (file URIs).
 *
 * @since 0.1.0
 * @category models
 */
export interface SkillChange {
  readonly uri: string
  readonly filesAdded: ReadonlyArray<string>
  readonly filesRemoved: ReadonlyArray<string>
  readonly filesChanged: ReadonlyArray<string>
}

/**
 * What changed between two snapshots.
 *
 * @since 0.1.0
 * @category models
 */
export interface Changes {
  /** Skill URIs (`.../SKILL.md`) new in the catalogue. */
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  /** Skills whose entry changed: frontmatter, files, digests, listing or cache hint. */
  readonly changed: ReadonlyArray<SkillChange>
  /** Whether any listed entry changed (`skills/list` or `resources/list` would answer differently). */
  readonly listChanged: boolean
  /** Every file URI whose content changed or that disappeared (for `notifications/resources/updated`). */
  readonly updated: ReadonlyArray<string>
}
