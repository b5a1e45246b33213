/**
 * Identifiers and the capability settings object of the Skills extension (SEP-2640).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The extension identifier, the key under `capabilities.extensions` (R81).
 *
 * @example
 * ```ts
 * import { Extension } from "@mcp-skills/core"
 *
 * // What a server declares in its capabilities, and what a client looks for.
 * const capabilities = { extensions: { [Extension.ExtensionId]: { directoryRead: true } } }
 * const method: string = Extension.ListSkillsMethod // "skills/list"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const ExtensionId = "io.modelcontextprotocol/skills" as const

/**
 * The file name every skill is addressed by, with this exact case (R95).
 *
 * @since 0.1.0
 * @category constants
 */
export const SkillFileName = "SKILL.md" as const

/**
 * The MIME type of directory resources (R52).
 *
 * @since 0.1.0
 * @category constants
 */
export const DirectoryMimeType = "inode/directory" as const

/**
 * The MIME type of a `SKILL.md` resource (R25).
 *
 * @since 0.1.0
 * @category constants
 */
export const MarkdownMimeType = "text/markdown" as const

/**
 * The reserved `_meta` key prefix for skill resources (R26, R91).
 *
 * @since 0.1.0
 * @category constants
 */
export const MetaPrefix = "io.modelcontextprotocol.skills/" as const

/**
 * The reserved frontmatter `metadata` key prefix (R13, R91).
 *
 * @since 0.1.0
 * @category constants
 */
export const ReservedMetadataPrefix = "io.modelcontextprotocol/" as const

/**
 * The method that lists skills (R27).
 *
 * @since 0.1.0
 * @category constants
 */
export const ListSkillsMethod = "skills/list" as const

/**
 * The method that answers one skill entry (R39).
 *
 * @since 0.1.0
 * @category constants
 */
export const GetSkillMethod = "skills/get" as const

/**
 * The optional method that lists the children of a directory resource (R48).
 *
 * @since 0.1.0
 * @category constants
 */
export const ReadResourceDirectoryMethod = "resources/directory/read" as const

/**
 * The capability settings object at `capabilities.extensions["io.modelcontextprotocol/skills"]` (R81).
 * Unknown keys are tolerated: a later revision may add settings.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Capability = Schema.StructWithRest(
  Schema.Struct({
    directoryRead: Schema.optionalKey(Schema.Boolean)
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

/**
 * @since 0.1.0
 * @category models
 */
export type Capability = typeof Capability.Type
