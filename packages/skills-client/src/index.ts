/**
 * A verifying client for the MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`).
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as ClientLimits from "./ClientLimits.js"

/**
 * @since 0.1.0
 */
export * as SkillsClient from "./SkillsClient.js"

/**
 * @since 0.1.0
 */
export * as SkillsClientError from "./SkillsClientError.js"

/**
 * @since 0.1.0
 */
export * as SkillCache from "./SkillCache.js"

/**
 * @since 0.1.0
 */
export * as Pull from "./Pull.js"

/**
 * @since 0.1.0
 */
export * as PullError from "./PullError.js"

/**
 * @since 0.1.0
 */
export * as PullModel from "./PullModel.js"

/**
 * @since 0.1.0
 */
export * as Host from "./Host.js"

/**
 * @since 0.1.0
 */
export * as Sync from "./Sync.js"

/**
 * @since 0.1.0
 */
export * as LockFile from "./LockFile.js"

/**
 * @since 0.2.0
 */
export * as SkillsLock from "./SkillsLock.js"

/**
 * @since 0.1.0
 */
export * as Verification from "./Verification.js"

/**
 * @since 0.1.0
 */
export * as Follow from "./Follow.js"

/**
 * @since 0.1.0
 */
export * as FollowChannel from "./FollowChannel.js"
