/**
 * @since 0.1.0
 */
export * as CacheHint from "./CacheHint.js"

/**
 * @since 0.1.0
 */
export * as CliReport from "./CliReport.js"

/**
 * @since 0.1.0
 */
export * as Digest from "./Digest.js"

/**
 * @since 0.1.0
 */
export * as EffectSupport from "./EffectSupport.js"

/**
 * @since 0.1.0
 */
export * as Extension from "./Extension.js"

/**
 * @since 0.1.0
 */
export * as Limits from "./Limits.js"

/**
 * @since 0.1.0
 */
export * as Manifest from "./Manifest.js"

/**
 * @since 0.1.0
 */
export * as McpTelemetry from "./McpTelemetry.js"

/**
 * @since 0.1.0
 */
export * as Protocol from "./Protocol.js"

/**
 * @since 0.1.0
 */
export * as Signing from "./Signing.js"

/**
 * @since 0.1.0
 */
export * as Skill from "./Skill.js"

/**
 * @since 0.1.0
 */
export * as SkillFrontmatter from "./SkillFrontmatter.js"

/**
 * @since 0.1.0
 */
export * as SkillName from "./SkillName.js"

/**
 * @since 0.1.0
 */
export * as SkillUri from "./SkillUri.js"
