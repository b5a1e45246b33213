/**
 * @since 0.1.0
 */
export * as AdmitList from "./AdmitList.js"

/**
 * @since 0.1.0
 */
export * as ChangeBus from "./ChangeBus.js"

/**
 * @since 0.1.0
 */
export * as DirectoryModel from "./DirectoryModel.js"

/**
 * @since 0.1.0
 */
export * as DirectorySource from "./DirectorySource.js"

/**
 * @since 0.1.0
 */
export * as HttpAdmission from "./HttpAdmission.js"

/**
 * @since 0.1.0
 */
export * as MimeType from "./MimeType.js"

/**
 * @since 0.1.0
 */
export * as Revision from "./Revision.js"

/**
 * @since 0.1.0
 */
export * as Observability from "./Observability.js"

/**
 * @since 0.1.0
 */
export * as PathTemplate from "./PathTemplate.js"

/**
 * @since 0.1.0
 */
export * as Skill from "./Skill.js"

/**
 * @since 0.1.0
 */
export * as ServerLimits from "./ServerLimits.js"

/**
 * @since 0.1.0
 */
export * as SkillFamily from "./SkillFamily.js"

/**
 * @since 0.1.0
 */
export * as SkillRegistry from "./SkillRegistry.js"

/**
 * @since 0.1.0
 */
export * as SkillResolver from "./SkillResolver.js"

/**
 * @since 0.1.0
 */
export * as SkillsServer from "./SkillsServer.js"

/**
 * @since 0.1.0
 */
export * as Snapshot from "./Snapshot.js"

/**
 * @since 0.1.0
 */
export * as StdioFraming from "./StdioFraming.js"

/**
 * @since 0.2.0
 */
export * as ToolLimits from "./ToolLimits.js"

/**
 * @since 0.1.0
 */
export * as UpstreamSource from "./UpstreamSource.js"

/**
 * @since 0.1.0
 */
export * as UpstreamStatus from "./UpstreamStatus.js"

/**
 * @since 0.1.0
 */
export * as Visibility from "./Visibility.js"
