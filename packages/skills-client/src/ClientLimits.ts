/**
 * Every bound and default of the client, each with its reason. An option of `SkillsClient`
 * overrides the ones a caller may need to change; a bound that follows from another is derived
 * from it. The per-skill limits themselves are core's `Limits` (the `limits` option).
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import type { Limits } from "@mcp-skills/core"

/**
 * Deadline of each request, the handshake included (`SkillsClient.Options.timeout`): 60 seconds.
 * The largest answer, one file at the byte limit (16 MiB, about 21 MiB as base64), crosses a link
 * of a few MiB/s well within it; a server silent for a minute is not going to answer.
 *
 * @since 0.1.0
 * @category defaults
 */
export const Timeout: Duration.Duration = Duration.seconds(60)

/**
 * The most entries one listing holds (`SkillsClient.Options.maxEntries`): 250,000 skills, four
 * times the largest public registry known (61,452), whatever the server's page size. A server
 * whose cursors never end is stopped there (`RunawayListing`) instead of being followed for as
 * long as it likes.
 *
 * @since 0.2.0
 * @category defaults
 */
export const MaxEntries = 250_000

/**
 * The most bytes of pages one listing holds (`SkillsClient.Options.maxListingBytes`): 1 GiB, the
 * JSON of 250,000 entries of about 4 KiB each (a manifest of a few dozen files). It stops a server
 * paging forever with empty or huge pages, which the entry count alone would not.
 *
 * @since 0.2.0
 * @category defaults
 */
export const MaxListingBytes = 1024 * 1024 * 1024

/**
 * Pages in a row without an entry after which a listing is a runaway: 100. A server fills its
 * pages; one that keeps answering empty pages with new cursors would otherwise be followed until
 * its pages' bytes reach `MaxListingBytes`, millions of requests later.
 *
 * @since 0.2.0
 * @category bounds
 */
export const MaxEmptyPages = 100

/**
 * Sockets of the `"lean"` HTTP sender (`layerHttp`'s `maxConnections`), which bound the requests in
 * flight to one server: 8. A pull reads a few files at a time, and a server on two cores answers
 * no faster past a handful of connections; more requests wait in the agent's queue.
 *
 * @since 0.1.0
 * @category defaults
 */
export const MaxConnections = 8

/**
 * Bytes allowed around the content of a message: 64 KiB for the JSON-RPC envelope, the id, the
 * uri (at most `Limits.MaxUriLength` characters, escaped), the `mimeType` and `_meta`.
 *
 * @since 0.1.0
 * @category bounds
 */
export const EnvelopeBytes = 65_536

/**
 * The largest message the client sends or reads, derived from the per-skill byte limit: one file
 * may be all of a skill's bytes, sent as base64 (4/3 of them) or as JSON text, where the characters
 * texts escape (`"`, `\`, line ends) take two bytes. Twice the limit and an envelope: 32 MiB and
 * 64 KiB for the spec's limits, more when `limits` allows larger skills. (Other control characters
 * take six bytes escaped: a file mostly made of them, sent as text, can be refused below the
 * limit.) An answer past it fails with effect's `LimitError` before it is held whole.
 *
 * @example
 * ```ts
 * import { ClientLimits } from "@mcp-skills/client"
 * import { Limits } from "@mcp-skills/core"
 *
 * ClientLimits.maxMessageBytes(Limits.defaults)                                 // 33_619_968: 2 × 16 MiB + 64 KiB
 * ClientLimits.maxMessageBytes({ maxResources: 512, maxTotalBytes: 1_048_576 }) // 2_162_688
 * ```
 *
 * @since 0.1.0
 * @category bounds
 */
export const maxMessageBytes = (limits: Limits.Limits): number => 2 * limits.maxTotalBytes + EnvelopeBytes

/**
 * Lines of a stopped stdio server's stderr its error keeps (`SkillsClientError.ServerStopped`): the
 * last 10, enough for the error a server prints as it dies and the lines leading to it.
 *
 * @since 0.1.0
 * @category bounds
 */
export const StderrLines = 10

/**
 * Bytes of a stdio server's stderr the client holds while it runs, the last 4 KiB: what
 * {@link StderrLines} are taken from. A server may write to stderr without end; the client keeps
 * no more than this of it, whatever it writes.
 *
 * @since 0.1.0
 * @category bounds
 */
export const StderrBytes = 4096

/**
 * How long the client waits, once a stdio server stopped talking (its output closed, or a write to
 * it failed), for it to exit and its stderr to end, to report its exit code and last words: 2
 * seconds. A server that stopped exits within milliseconds; one still running after this is
 * reported as such.
 *
 * @since 0.1.0
 * @category bounds
 */
export const ExitWait: Duration.Duration = Duration.seconds(2)

/**
 * Causes the client follows down a failure's chain for the operating system's own words
 * (`connect ECONNREFUSED 127.0.0.1:3999`): 8, deeper than any real chain, and a stop for one that
 * loops.
 *
 * @since 0.1.0
 * @category bounds
 */
export const MaxCauseDepth = 8
