/**
 * The model of a directory source: what loading a folder of skills yields (`Loaded`,
 * `LoadedSkill`, `Ignored`), the options that shape it (`Options`, `Root`), what a scan reports
 * (`Scan`, `Changes`, `Stats`), the `Source` port, and the errors of reading a folder.
 * `DirectorySource` re-exports every name; they live here so that the loader's internals name
 * them without importing the module that runs them.
 *
 * @since 0.1.0
 */
import type { Limits, Signing } from "@mcp-skills/core"
import { Manifest, SkillUri } from "@mcp-skills/core"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Skill from "./Skill.js"
/**
 * The root folder cannot be used: it does not exist, is not a folder, or cannot be read.
 *
 * @since 0.1.0
 * @category errors
 */
export class SourceDirectoryError extends Schema.TaggedError<SourceDirectoryError>()("SourceDirectoryError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot load skills from ${this.path}: ${this.reason}`
  }
}

/**
 * A file of a skill could not be read from disk.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnreadableFile extends Schema.TaggedError<UnreadableFile>()("UnreadableFile", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot read ${this.path}: ${this.reason}`
  }
}

/**
 * A folder inside a skill could not be listed (permission denied, say): the skill is not served
 * without the files it may hold.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnreadableFolder extends Schema.TaggedError<UnreadableFolder>()("UnreadableFolder", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `cannot list the folder ${this.path}: ${this.reason}`
  }
}

/**
 * Why one skill folder is not served: its URI cannot be built, a file or a folder in it cannot be
 * read, or the skill is invalid (`InvalidSkill` lists every problem).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SkillProblem = Schema.Union([Manifest.InvalidSkill, SkillUri.InvalidSkillUri, UnreadableFile, UnreadableFolder])

/**
 * @since 0.1.0
 * @category models
 */
export type SkillProblem = typeof SkillProblem.Type

/**
 * A skill folder that was not loaded, with the reason. `directory` is the folder relative to the root
 * (`.` for the root itself).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSkillDirectory extends Schema.TaggedError<InvalidSkillDirectory>()("InvalidSkillDirectory", {
  directory: Schema.String,
  error: SkillProblem
}) {
  override get message(): string {
    return `skipped skill folder ${this.directory}: ${this.error.message}`
  }
}

/**
 * In `strict` mode: at least one skill folder is invalid, so nothing is loaded.
 *
 * @example
 * ```ts
 * import { DirectoryModel, DirectorySource } from "@mcp-skills/server"
 * import { Effect } from "effect"
 *
 * // With `strict`, every broken skill of the folder is one problem of one error.
 * const loaded = DirectorySource.load("./skills", { strict: true }).pipe(
 *   Effect.catchIf(
 *     (error): error is DirectoryModel.InvalidSkills => error._tag === "InvalidSkills",
 *     (error) => Effect.die(error.message)
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSkills extends Schema.TaggedError<InvalidSkills>()("InvalidSkills", {
  root: Schema.String,
  invalid: Schema.Array(InvalidSkillDirectory)
}) {
  override get message(): string {
    return `${this.invalid.length} invalid skill folder(s) under ${this.root}:\n` +
      this.invalid.map((entry) => `  ${entry.directory}: ${entry.error.message}`).join("\n")
  }
}

/**
 * Two roots of one source produce the same skill URI.
 *
 * @since 0.1.0
 * @category errors
 */
export class UriCollision extends Schema.TaggedError<UriCollision>()("UriCollision", {
  uri: Schema.String,
  first: Schema.String,
  second: Schema.String
}) {
  override get message(): string {
    return `${this.uri} is served from both ${this.first} and ${this.second}; give one of the roots a prefix`
  }
}

/**
 * One line per problem of a skill folder, naming the file (relative to the root) and the rule:
 * `acme/billing/refunds/SKILL.md:3: anchor &x is not allowed`.
 *
 * @since 0.1.0
 * @category utils
 */
export const describeProblem = (invalid: InvalidSkillDirectory): string => {
  const folder = invalid.directory === "." ? "" : `${invalid.directory}/`
  const error = invalid.error
  if (error._tag === "InvalidSkill") {
    return error.problems.map((problem) =>
      problem.path === undefined
        ? `${invalid.directory}: ${problem.reason}`
        : Manifest.describe({ ...problem, path: folder + problem.path })
    ).join("; ")
  }
  if (error._tag === "UnreadableFile") return `${error.path}: ${error.reason}`
  if (error._tag === "UnreadableFolder") return `${error.path}: cannot list the folder: ${error.reason}`
  return `${invalid.directory}: ${error.reason}`
}

/**
 * A directory entry that was deliberately left out (see the module description).
 *
 * @since 0.1.0
 * @category models
 */
export interface Ignored {
  /** Relative to the root, `/`-separated. */
  readonly path: string
  readonly reason: string
}

/**
 * One skill found on disk and validated: what `Skill.fromFiles` takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoadedSkill {
  /** The skill folder relative to the root, `/`-separated (`.` for the root itself). */
  readonly directory: string
  /**
   * The decoded skill-path segments: prefix, then the folder path without the container holding it
   * (`skills/`, `.claude/skills`), and with `lenient` the skill's name below it when that is not the
   * folder's, or a segment of its own when another folder would have the same path.
   */
  readonly path: ReadonlyArray<string>
  /**
   * The validated skill: frontmatter and every file with its path, digest and size, and the bytes
   * of every file held in memory (those read together in one buffer), `SKILL.md` first.
   */
  readonly manifest: Skill.ManifestView
  /** The files served on demand (above `onDemandAbove`): where they are, their size and digest. */
  readonly onDisk: ReadonlyArray<Skill.DiskFile>
  /**
   * The signatures stored beside the skill's `SKILL.md` in {@link DirectorySource.SignaturesFileName}, relayed
   * with its entry (see `Skill.Static.signatures`); absent when the skill is not signed.
   */
  readonly signatures?: ReadonlyArray<Signing.Signature> | undefined
}

/**
 * The result of {@link DirectorySource.load}: plain data, ordered by skill URI.
 *
 * @since 0.1.0
 * @category models
 */
export interface Loaded {
  readonly skills: ReadonlyArray<LoadedSkill>
  readonly skipped: ReadonlyArray<InvalidSkillDirectory>
  readonly ignored: ReadonlyArray<Ignored>
  /** Skills served that some clients refuse, one line each (since 0.2.0). */
  readonly warnings: ReadonlyArray<Warning>
  /** What was repaired to serve a skill as found, and URIs given so that none is shared (since 0.2.0). */
  readonly repairs: ReadonlyArray<Repaired>
}

/**
 * A skill that is served, as this server reads it, but that another reader reads otherwise: a
 * `SKILL.md` whose frontmatter effect's `McpClient` reads as other values than YAML 1.2 does (see
 * `SkillFrontmatter.portability` of `@mcp-skills/core`), which it then refuses. `Manifest.describe`
 * writes it as one line, `path:line: reason`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Warning {
  /** The `SKILL.md`, relative to the root, `/`-separated. */
  readonly path: string
  readonly line?: number
  /** The skill's URI, what differs and how to write it portably. */
  readonly reason: string
}

/**
 * One repair the loader made so that a skill is served as found (`lenient`), or a URI it gave a skill
 * so that no two share one. A tagged union: each kind carries what its line says.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Repair = Schema.Union([
  /** The folder is not the skill's name: served under the name its `SKILL.md` gives. */
  Schema.TaggedStruct("Renamed", { folder: Schema.String, name: Schema.String }),
  /** A top-level `key: value` line YAML refuses (a `: ` in a plain value, `| text`): read as its text. */
  Schema.TaggedStruct("LiteralValue", { key: Schema.String, refused: Schema.String }),
  /** A line under no key, after a value: read as the end of that value. */
  Schema.TaggedStruct("JoinedLine", { key: Schema.String }),
  /** A `metadata` value that is not a string: served as its JSON text. */
  Schema.TaggedStruct("MetadataAsJson", { key: Schema.String }),
  /** A name that is not a slug (`Terraform Cloud`): served as one (`terraform-cloud`). */
  Schema.TaggedStruct("NameAsSlug", { from: Schema.String, to: Schema.String }),
  /** A description over 1,024 characters: cut at a word boundary, and marked so. */
  Schema.TaggedStruct("DescriptionCut", { from: Schema.Int, to: Schema.Int }),
  /** Two skills would have one URI (`skills/x` and `.claude/skills/x`): each gets its own. */
  Schema.TaggedStruct("SharedUri", { uri: Schema.String, with: Schema.Array(Schema.String) })
])

/**
 * @since 0.2.0
 * @category models
 */
export type Repair = typeof Repair.Type

/**
 * A repair of one skill, where it was made: the file (relative to the root), its line, and the URI
 * the skill is served under.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Repaired = Schema.Struct({
  path: Schema.String,
  line: Schema.optionalKey(Schema.Int),
  uri: Schema.String,
  repair: Repair
})

/**
 * @since 0.2.0
 * @category models
 */
export type Repaired = typeof Repaired.Type

/**
 * What a repair did, in words (without its place).
 *
 * @since 0.2.0
 * @category utils
 */
export const describeRepair = (repair: Repair): string => {
  switch (repair._tag) {
    case "Renamed":
      return `the folder ${repair.folder} is not the skill's name; served under its name, ${repair.name}`
    case "LiteralValue":
      return `${repair.key}: YAML refuses it (${repair.refused}); read as its literal text`
    case "JoinedLine":
      return `a line under no key; read as the end of ${repair.key}`
    case "MetadataAsJson":
      return `metadata.${repair.key} is not a string; served as its JSON text`
    case "NameAsSlug":
      return `the name ${JSON.stringify(repair.from)} is not a skill name; served as ${repair.to}`
    case "DescriptionCut":
      return `the description has ${repair.from} characters, over 1024; cut at a word boundary to ${repair.to}`
    case "SharedUri":
      return `${repair.uri} would also be the URI of ${repair.with.join(", ")}; each gets its own`
  }
}

/**
 * One line for a repair: `skills/x/SKILL.md:3: description: ... (served as skill://x/SKILL.md)`.
 *
 * @since 0.2.0
 * @category utils
 */
export const describeRepaired = (repaired: Repaired): string =>
  `${repaired.path}${repaired.line === undefined ? "" : `:${repaired.line}`}: ${describeRepair(repaired.repair)} (served as ${repaired.uri})`

/**
 * Where discovery found a skill, as the `npx skills` installer looks: the folder given itself
 * (`Root`), one of its containers (`skills/`, `skills/.curated/`, an agent's folder such as
 * `.claude/skills`), a folder a plugin manifest names (`.claude-plugin/marketplace.json`,
 * `plugin.json`), or elsewhere in the tree.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Found = Schema.Union([
  Schema.TaggedStruct("Root", {}),
  Schema.TaggedStruct("Container", { container: Schema.String }),
  Schema.TaggedStruct("Manifest", { manifest: Schema.String }),
  Schema.TaggedStruct("Tree", {})
])

/**
 * @since 0.2.0
 * @category models
 */
export type Found = typeof Found.Type

/**
 * What `serve` would make of a folder (`DirectorySource.check`): each skill served, with where it
 * was found; what was repaired, refused, left out and warned of; and the counts of each kind.
 *
 * @since 0.2.0
 * @category models
 */
export interface Check {
  readonly root: string
  readonly served: ReadonlyArray<{ readonly uri: string; readonly directory: string; readonly found: Found }>
  readonly repairs: ReadonlyArray<Repaired>
  readonly refused: ReadonlyArray<InvalidSkillDirectory>
  readonly ignored: ReadonlyArray<Ignored>
  readonly warnings: ReadonlyArray<Warning>
  /** How many of each: `served`, `refused`, `ignored`, `warnings`, and each repair kind found. */
  readonly counts: Readonly<Record<string, number>>
}

/**
 * Options of {@link DirectorySource.load}.
 *
 * @since 0.1.0
 * @category options
 */
export interface Options {
  /** Skill-path segments put before each folder path, e.g. `["acme"]`. Default: none. */
  readonly prefix?: ReadonlyArray<string> | undefined
  /** URI scheme. Default `skill` (R92). */
  readonly scheme?: string | undefined
  /** Fail the whole load when any skill folder is invalid, instead of skipping it. Default `false`. */
  readonly strict?: boolean | undefined
  /**
   * Serve a skill as found where its meaning is unambiguous (since 0.2.0): a folder that is not the
   * skill's name, frontmatter YAML refuses line by line, `metadata` values that are not strings, a
   * name that is not a slug, a description over 1,024 characters; each repair is in `repairs`, and
   * the `SKILL.md` served has its frontmatter written back in a canonical form (the body byte for
   * byte). A signed skill is never rewritten: one that needs a repair is refused. Default `false`.
   */
  readonly lenient?: boolean | undefined
  /** Per-skill limits (R15, R16). Default: those of the specification. */
  readonly limits?: Limits.Limits | undefined
  /**
   * Files larger than this many bytes (except `SKILL.md`) are served on demand, for catalogues
   * larger than memory: read and hashed once when scanned, their bytes then kept neither by the
   * catalogue nor by the file stamps; each `resources/read` reads the file again and sends it only
   * if its size and SHA-256 are those of the catalogue. A file changed behind the server's back
   * triggers a reload and is answered from the reloaded catalogue, verified the same way, or with
   * an error asking to try again (see docs/live-catalogues.md); never with bytes of another digest.
   * Default: every file is held in memory.
   */
  readonly onDemandAbove?: number | undefined
}

/**
 * Counters of a `Source` (cumulative).
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  readonly scans: number
  /**
   * Entries looked at on disk (listed or stat'ed): a full scan looks at every one, a reload driven by
   * `watch` only at the paths its events named (and what is below the folders among them).
   */
  readonly lookedAt: number
  /** Files read from disk, and their bytes; unchanged files are not read again. */
  readonly readFiles: number
  readonly readBytes: number
  /** Files hashed; a skill whose files are all unchanged is not hashed again. */
  readonly hashedFiles: number
  readonly hashedBytes: number
  /** Files of the last scan served on demand: their bytes are not held (see `onDemandAbove`). */
  readonly onDiskFiles: number
  /** Bytes of file content the source holds (shared with the catalogue). */
  readonly heldBytes: number
}

/**
 * One folder of a `Source`, with its own options (prefix, scheme, cache hint for its skills).
 *
 * @since 0.1.0
 * @category models
 */
export interface Root extends Options {
  readonly path: string
  readonly cacheHint?: Skill.CacheHint | undefined
}

/**
 * The result of one scan of every root.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scan {
  readonly roots: ReadonlyArray<{ readonly root: Root; readonly loaded: Loaded }>
  readonly definitions: ReadonlyArray<Skill.Static>
  /** Problems whose line differs from the previous scan's (a new or changed bad edit). */
  readonly newProblems: ReadonlyArray<string>
  /** Skill folders that had a problem on the previous scan and are valid again. */
  readonly fixed: ReadonlyArray<string>
  /** Entries left out that the previous scan did not leave out (or left out for another reason). */
  readonly newIgnored: ReadonlyArray<string>
  /** Warnings whose line differs from the previous scan's (since 0.2.0). */
  readonly newWarnings: ReadonlyArray<string>
  /** Repairs whose line differs from the previous scan's (since 0.2.0). */
  readonly newRepairs: ReadonlyArray<string>
}

/**
 * What changed since the previous scan (see `Source.changes`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Changes {
  readonly upsert: ReadonlyArray<Skill.Static>
  /** `SKILL.md` URIs. */
  readonly remove: ReadonlyArray<string>
}

/**
 * Skill folders that can be scanned again, cheaply.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source {
  readonly roots: ReadonlyArray<Root>
  /** Scans every root (reading only changed files); invalid edits keep their skill's last good version. */
  readonly scan: Effect.Effect<Scan, SourceDirectoryError | InvalidSkills | UriCollision>
  /**
   * `scan`, logging each new problem once (see the module description), as definitions: what
   * `SkillsServer.layer({ skills })` takes, run again by `SkillRegistry.reload`.
   */
  readonly definitions: Effect.Effect<ReadonlyArray<Skill.Static>, SourceDirectoryError | InvalidSkills | UriCollision>
  /**
   * `definitions` as a change: the definitions that differ from those of the previous scan (of
   * any kind), and the URIs of the skills that went away; what `watch` hands
   * `SkillRegistry.update`, so a reload costs the registry what changed, not the catalogue.
   */
  readonly changes: Effect.Effect<Changes, SourceDirectoryError | InvalidSkills | UriCollision>
  readonly stats: Effect.Effect<Stats>
  /**
   * Stats every file under the roots and reads none: `missed` lists the absolute paths whose size,
   * modification time or inode differ from the last scan, or that appeared or went away since;
   * `racy` the files read too soon after a write to trust their stamp. What `watch`'s periodic
   * check runs.
   */
  readonly check: Effect.Effect<
    { readonly missed: ReadonlyArray<string>; readonly racy: ReadonlyArray<string> },
    SourceDirectoryError
  >
}
