/**
 * Every bound and default of the server, each with its reason, in one place. A default
 * (`@category defaults`) is what an option falls back to: the option is named with it. A bound
 * (`@category bounds`) is the server's own and has no option, because nobody gains by moving it; a
 * bound that follows from another is derived from it. The per-skill limits (files, bytes) and the
 * URI length (`MaxUriLength`) are core's `Limits`, shared with the client.
 *
 * @since 0.1.0
 */
import { Limits } from "@mcp-skills/core"
import * as ByteSize from "effect/ByteSize"
import * as Duration from "effect/Duration"

/**
 * Largest HTTP request body (`HttpAdmission`'s `maxBodySize`, the CLI's `--max-body-size`): 4 MiB,
 * far above any MCP request a client sends to this server (a read names one URI) and far below
 * what a server can hold for many clients at once.
 *
 * @example
 * ```ts
 * import { HttpAdmission, ServerLimits, Skill, SkillsServer } from "@mcp-skills/server"
 * import { ByteSize } from "effect"
 *
 * // Options set from the defaults they replace: pages twice as long, bodies a quarter as large.
 * const Skills = SkillsServer.layer({ skills: [] as Array<Skill.Definition>, pageSize: 2 * ServerLimits.PageSize })
 * const Admission = HttpAdmission.layer({ maxBodySize: ByteSize.toBigInt(ServerLimits.MaxBodySize) / 4n })
 * ```
 *
 * @since 0.1.0
 * @category defaults
 */
export const MaxBodySize: ByteSize.ByteSize = ByteSize.mebibytes(4)

/**
 * Longest stdio line (`StdioFraming`'s `maxLineSize`): a line is one message, so it has the HTTP
 * body's bound.
 *
 * @since 0.1.0
 * @category defaults
 */
export const MaxLineSize: ByteSize.ByteSize = MaxBodySize

/**
 * The longest line `StdioFraming` can pass on: effect's stdio reader (4.1.0) fails its whole read
 * on a line over 16 MiB, so a larger `maxLineSize` is refused when the layer is made.
 *
 * @since 0.1.0
 * @category bounds
 */
export const LargestLineSize: ByteSize.ByteSize = ByteSize.mebibytes(16)

/**
 * How deeply one JSON-RPC message may nest arrays and objects, on both transports: 128 levels, far
 * beyond any MCP message and far below what overflows the stack of effect's `JSON.stringify` (a few
 * thousand levels, a body of 10 KB).
 *
 * @since 0.1.0
 * @category bounds
 */
export const MaxDepth = 128

/**
 * Largest body the fast route reads itself: 64 KiB. The reads it answers hold an id, one URI
 * (at most `Limits.MaxUriLength`, 8 KiB) and a `_meta` of a few hundred bytes; a larger request is
 * no such read, and goes to effect's path (under `MaxBodySize`).
 *
 * @since 0.1.0
 * @category bounds
 */
export const FastRouteMaxBody = 64 * 1024

/**
 * Longest cursor a listing decodes, derived from the URI bound: a cursor is the base64 of the
 * position after the last entry sent (a URI, or a family's key, its own cursor and an offset), so
 * twice the longest URI holds any the server makes and refuses garbage before decoding it.
 *
 * @since 0.1.0
 * @category bounds
 */
export const MaxCursorLength = 2 * Limits.MaxUriLength

/**
 * Entries per page of `skills/list` and `resources/directory/read` (`SkillsServer.Options.pageSize`,
 * `--page-size`): 100, a page of entries a client verifies in one go, a few KiB to a few hundred
 * KiB. effect's `McpClient` follows at most 100 pages and 10,000 items of a listing by default:
 * at 100 a page it lists 10,000 skills with its defaults (at 50 it stopped at 5,000).
 *
 * @since 0.1.0
 * @category defaults
 */
export const PageSize = 100

/**
 * Time a family's `render` or `list` may take when the family sets no `timeout`: 10 seconds, past
 * which the caller is answered -32603 rather than kept waiting on an author's backend.
 *
 * @since 0.1.0
 * @category defaults
 */
export const FamilyTimeout: Duration.Duration = Duration.seconds(10)

/**
 * Pages of one family's `list` a single request follows: 1,000. A family whose cursors go round in
 * a circle ends there (logged) instead of holding the request forever.
 *
 * @since 0.1.0
 * @category bounds
 */
export const MaxFamilyPages = 1000

/**
 * Skills of one listing rendered at once: 8, so a page of slow renders takes a fraction of their
 * sum without starting a whole page's renders at the same moment.
 *
 * @since 0.1.0
 * @category bounds
 */
export const RenderConcurrency = 8

/**
 * Renderings a layer keeps for `shareKey` sharing: 1,024, the oldest going first; each expires
 * after its skill's `shareFor`.
 *
 * @since 0.1.0
 * @category bounds
 */
export const RenderCacheCapacity = 1024

/**
 * A 2025-11-25 HTTP session without a request and without an open stream for this long ends
 * (`SkillsServer.Options.sessions.idleTimeout`): 30 minutes, longer than an agent's pause between
 * two tasks, short enough that abandoned sessions do not pile up.
 *
 * @since 0.1.0
 * @category defaults
 */
export const SessionIdleTimeout: Duration.Duration = Duration.minutes(30)

/**
 * `resources/subscribe` URIs one session holds (`sessions.maxSubscriptions`): 1,000, every file of
 * a few large skills; a client subscribing without end is refused past it.
 *
 * @since 0.1.0
 * @category defaults
 */
export const MaxSubscriptions = 1000

/**
 * Sessions held at once (`sessions.maxSessions`): 10,000, each a few KiB; an `initialize` past it
 * is answered 503 with `Retry-After`.
 *
 * @since 0.1.0
 * @category defaults
 */
export const MaxSessions = 10_000

/**
 * Sessions one remote address holds at once (`sessions.maxSessionsPerClient`): 1,000, a tenth of
 * `MaxSessions`, so one client cannot take every slot.
 *
 * @since 0.1.0
 * @category defaults
 */
export const MaxSessionsPerClient = MaxSessions / 10

/**
 * Bytes of notifications a session stream holds that its reader has not taken
 * (`sessions.maxPendingBytes`): 1 MiB, thousands of notifications; a reader that stopped reading
 * is cut past it instead of making the server hold its backlog.
 *
 * @since 0.1.0
 * @category defaults
 */
export const MaxPendingBytes = 1024 * 1024

/**
 * How long a client refused a session should wait (`Retry-After`), derived from the idle timeout:
 * a slot frees when a session ends, at the latest one idle timeout away; between 1 second and a
 * minute.
 *
 * @since 0.1.0
 * @category bounds
 */
export const retryAfterSeconds = (idleTimeout: Duration.Duration): number =>
  Math.max(1, Math.min(60, Math.ceil(Duration.toMillis(idleTimeout) / 1000)))

/**
 * Notices one 2026-07-28 `subscriptions/listen` stream may have waiting before they are coalesced
 * into one `list_changed`: effect 4.1.0 keeps 64 pending notifications per stream and ends the
 * stream past them.
 *
 * @since 0.1.0
 * @category bounds
 */
export const ListenBound = 64

/**
 * Notices handed to effect's listen stream and not yet sent, derived: half of `ListenBound`,
 * leaving room for effect's own events.
 *
 * @since 0.1.0
 * @category bounds
 */
export const ListenWindow = ListenBound / 2

/**
 * How long the server tries to tell a listen it ends (`notifications/cancelled`) before effect
 * ends its HTTP stream: 1 second; a client that stopped reading is not waited for longer.
 *
 * @since 0.1.0
 * @category bounds
 */
export const CancelNoticeTimeout: Duration.Duration = Duration.seconds(1)

/**
 * Interval of the comment sent on an idle event stream: 15 seconds (as effect does on
 * `subscriptions/listen`), under the idle timeouts of common proxies and clients.
 *
 * @since 0.1.0
 * @category bounds
 */
export const KeepAliveInterval: Duration.Duration = Duration.seconds(15)

/**
 * Characters of files' wire forms (text, or base64) one registry keeps, the most recently read
 * first: 32 MiB. Kept without a bound, they were a second copy of every file any client had read
 * (110 MiB more after one client read the 80,000 files of a 10,000-skill catalogue).
 *
 * @since 0.1.0
 * @category bounds
 */
export const WireFormsBudget = 32 * 1024 * 1024

/**
 * What the answers kept per snapshot (pages, entries, reads that are the same for every caller)
 * weigh together: 4 MiB, so a client reading every file of a large catalogue leaves neither every
 * answer nor every file's wire form in memory.
 *
 * @since 0.1.0
 * @category bounds
 */
export const AnswerMemoBytes = 4 * 1024 * 1024

/**
 * What a kept answer weighs besides its content (a page or an entry): 1 KiB; one with contents
 * weighs this plus twice the content (its wire form, and its bytes kept beside it).
 *
 * @since 0.1.0
 * @category bounds
 */
export const AnswerWeight = 1024

/**
 * Largest answer whose bytes the fast route keeps with it: 64 KiB; a larger one (a large file) is
 * encoded per request rather than held twice.
 *
 * @since 0.1.0
 * @category bounds
 */
export const MaxKeptAnswerBytes = 64 * 1024

/**
 * Wire entries (`skills/list` items, `skills/get` results) kept per snapshot, the most recently
 * used: 1,024. An entry is made from its skill's manifest when first needed, so a catalogue of
 * 100,000 skills holds the entries clients read, not one per skill.
 *
 * @since 0.1.0
 * @category bounds
 */
export const KeptEntries = 1024

/**
 * Directories kept per snapshot, the most recently read (each at most one skill's file list): 1,024.
 *
 * @since 0.1.0
 * @category bounds
 */
export const KeptDirectories = 1024

/**
 * Distinct request `_meta` whose decoding the fast route keeps: 256. Clients send the same `_meta`
 * on every request, so a few are enough; more distinct ones are decoded each time.
 *
 * @since 0.1.0
 * @category bounds
 */
export const FastRouteProfiles = 256

/**
 * Endpoint paths the fast route learns: 64 (a router with path parameters could offer many).
 *
 * @since 0.1.0
 * @category bounds
 */
export const FastRouteEndpoints = 64

/**
 * The least time between two log lines about the failures of one skill's author code: a minute
 * (the others are counted); a caller cannot fill the logs.
 *
 * @since 0.1.0
 * @category bounds
 */
export const FaultInterval: Duration.Duration = Duration.minutes(1)

/**
 * Skills whose last failure line is remembered (for `FaultInterval`): 1,024, the oldest forgotten.
 *
 * @since 0.1.0
 * @category bounds
 */
export const FaultSkills = 1024

/**
 * Characters of a failure's text in a log line: 300; an author's message may quote what the caller
 * sent.
 *
 * @since 0.1.0
 * @category bounds
 */
export const FaultText = 300

/**
 * The rest between two coalesced reloads, as a share of how long the last one took: 1, so however
 * many requests arrive, reloading takes at most half the time.
 *
 * @since 0.1.0
 * @category bounds
 */
export const ReloadRest = 1

/**
 * Quiet time after the last file event before a watched folder reloads
 * (`DirectorySource.WatchOptions.debounce`): 100 milliseconds, the length of an editor's save.
 *
 * @since 0.1.0
 * @category defaults
 */
export const WatchDebounce: Duration.Duration = Duration.millis(100)

/**
 * The longest a change waits for its reload under a stream of events (`maxDelay`): 1 second.
 *
 * @since 0.1.0
 * @category defaults
 */
export const WatchMaxDelay: Duration.Duration = Duration.seconds(1)

/**
 * Interval of the periodic stamp check of watched folders (`sweep`), the safety net for file
 * systems whose events are unreliable: 5 seconds, stretched by `SweepShare`.
 *
 * @since 0.1.0
 * @category defaults
 */
export const WatchSweep: Duration.Duration = Duration.seconds(5)

/**
 * The stamp check takes at most one twentieth of the time: on a catalogue where one check takes
 * 200 ms, checks are 4 s apart at least.
 *
 * @since 0.1.0
 * @category bounds
 */
export const SweepShare = 20

/**
 * Distinct paths of one round of file events checked one by one: 10,000; past it, checking each is
 * no cheaper than a rescan.
 *
 * @since 0.1.0
 * @category bounds
 */
export const MaxEventPaths = 10_000

/**
 * Tries at reading a skill's files as of one moment. A try fails when a file changed while it was
 * read (its size, modification or change time, or inode, differ afterwards) or read empty where it
 * was not; past this many, the skill keeps its last good version. A rewrite is over in
 * microseconds: three tries see it through unless writes never stop.
 *
 * @since 0.1.0
 * @category bounds
 */
export const ReadAttempts = 3

/**
 * Filesystem timestamps tick more coarsely than writes (Linux takes them from a clock that ticks
 * every few milliseconds, some filesystems every second or two): a file modified this recently may
 * change again without its stamp changing, so what was read of it is trusted only until an event
 * names it, and an empty read of it is not believed where the file had bytes before.
 *
 * @since 0.1.0
 * @category bounds
 */
export const RacyMillis = 1_000

/**
 * Bytes of a signatures file. A record (key id, algorithm, public key, signature) takes about 300
 * bytes as `sign` writes it, so the records allowed below fit in 5 KiB; this leaves room for any
 * formatting, and a file past it is refused before a byte of it is read.
 *
 * @since 0.1.0
 * @category bounds
 */
export const SignaturesMaxBytes = 16_384

/**
 * Records in a signatures file, one per key. A skill is signed by its author, perhaps a reviewer
 * and a release pipeline: a few keys. Every record is verified when the skill is loaded and relayed
 * in every `skills/list` and `skills/get` answer, so 20,000 of them made start-up four times slower
 * and every listing 5 MiB larger.
 *
 * @since 0.1.0
 * @category bounds
 */
export const SignaturesMaxRecords = 16

/**
 * Skills validated, and file-system calls made, between two yields to the scheduler while a folder
 * loads: a few milliseconds of work, so requests keep being answered during a reload.
 *
 * @since 0.1.0
 * @category bounds
 */
export const LoadSlice = { skills: 64, calls: 512 } as const

/**
 * Descriptors a skill's first read holds open at once: its files are opened first, so their sizes
 * are bounded before anything is read; past this many, the rest are stamped by path and read one
 * at a time. A skill has 512 files at most by the specification's limits, which a caller may
 * raise, and a process's default limit is often 1,024.
 *
 * @since 0.1.0
 * @category bounds
 */
export const OpenAtOnce = 256

/**
 * Characters of one parameter of a family's path template: 255, a file name's limit on most file
 * systems; an instance URI stays within `Limits.MaxUriLength` whatever its parameters.
 *
 * @since 0.1.0
 * @category bounds
 */
export const MaxParameterLength = 255

/**
 * How long the change bus waits for a Redis connection: 2 seconds, long enough for a server across
 * a data centre, short enough that a replica reports the bus down quickly (it keeps serving).
 *
 * @since 0.1.0
 * @category bounds
 */
export const BusConnectTimeout: Duration.Duration = Duration.seconds(2)

/**
 * How long `mcp-skills-server reload --redis` waits for its connection: 5 seconds, an operator's
 * one-off command, which may cross a slower link than the replicas' own.
 *
 * @since 0.1.0
 * @category bounds
 */
export const BusCommandTimeout: Duration.Duration = Duration.seconds(5)

/**
 * The publishing connection reconnects after `BusReconnect.base` doubled per try, at most
 * `BusReconnect.cap` apart: 100 milliseconds to 5 seconds.
 *
 * @since 0.1.0
 * @category bounds
 */
export const BusReconnect = { base: Duration.millis(100), cap: Duration.seconds(5) } as const

/**
 * A replica subscribes again after the bus is lost after `retryBase` doubled per try, at most
 * `retryCap` apart (`ChangeBus.ReplicaOptions`): 200 milliseconds to 5 seconds.
 *
 * @since 0.1.0
 * @category defaults
 */
export const BusRetry = { base: Duration.millis(200), cap: Duration.seconds(5) } as const

/**
 * Deadline of every request the gateway sends an upstream (`UpstreamSource.Options.timeout`): 30
 * seconds, past a slow upstream's listing of a large catalogue; one that answers nothing is
 * reconnected rather than waited for.
 *
 * @since 0.1.0
 * @category defaults
 */
export const UpstreamTimeout: Duration.Duration = Duration.seconds(30)

/**
 * Bounds of the gateway's look again after an upstream's `ttlMs` (`UpstreamSource.Options.recheck`):
 * no sooner than 5 seconds (an upstream saying `ttlMs: 0` is not polled in a loop), no later than
 * 10 minutes (an upstream that says nothing is still caught up with).
 *
 * @since 0.1.0
 * @category defaults
 */
export const UpstreamRecheck = { min: Duration.seconds(5), max: Duration.minutes(10) } as const

/**
 * Reconnection to a lost upstream (`UpstreamSource.Options.backoff`): doubling from 500
 * milliseconds up to 30 seconds, so a restart is caught quickly and a long outage costs a request
 * every half minute.
 *
 * @since 0.1.0
 * @category defaults
 */
export const UpstreamBackoff = { base: Duration.millis(500), cap: Duration.seconds(30) } as const

/**
 * Quiet time after an upstream's notification before the gateway looks again
 * (`UpstreamSource.Options.settle`): 50 milliseconds, so a burst of notifications costs one look.
 *
 * @since 0.1.0
 * @category defaults
 */
export const UpstreamSettle: Duration.Duration = Duration.millis(50)

/**
 * One deadline for all upstreams' first looks, spawning to verifying (`UpstreamSource.make`'s `startup`): 10 seconds.
 *
 * @since 0.1.0
 * @category defaults
 */
export const UpstreamStartup: Duration.Duration = Duration.seconds(10)

/**
 * Refusals of an upstream `serve`'s start-up line quotes with their reasons: 3, then a count.
 *
 * @since 0.2.0
 * @category bounds
 */
export const UpstreamRefusalsQuoted = 3

/**
 * Skills of one upstream verified at once: 4. Each reads its files `UpstreamFileConcurrency` at a
 * time, so one upstream has at most 16 reads in flight: enough to keep a remote server busy, few
 * enough that a gateway following many upstreams does not flood any of them.
 *
 * @since 0.1.0
 * @category bounds
 */
export const UpstreamSkillConcurrency = 4

/**
 * Files of one upstream skill read at once: 4 (its `SKILL.md` is always read, and checked, first).
 *
 * @since 0.1.0
 * @category bounds
 */
export const UpstreamFileConcurrency = 4

/**
 * Get-only skills of one upstream resolved at once: 2. Any caller can ask for any URI, so the work a
 * stream of `skills/get` for unknown URIs makes the gateway do upstream is bounded.
 *
 * @since 0.1.0
 * @category bounds
 */
export const UpstreamResolveConcurrency = 2

/**
 * Get-only skills of one upstream the gateway holds (`UpstreamSource.Options.maxUnlisted`): 256,
 * the least recently asked for going first; any caller can ask for any URI, so they are bounded.
 *
 * @since 0.1.0
 * @category defaults
 */
export const UpstreamMaxUnlisted = 256

/**
 * Bytes of an admit list file: 64 MiB, about 300,000 entries, every skill version of a large
 * organisation's upstreams; a file past it is refused before it is read.
 *
 * @since 0.1.0
 * @category bounds
 */
export const AdmitListMaxBytes = 64 * 1024 * 1024

/**
 * Quiet time after an admit list file's folder says it changed before it is read again: 100
 * milliseconds, as `WatchDebounce` (a write comes in several events).
 *
 * @since 0.1.0
 * @category bounds
 */
export const AdmitListSettle: Duration.Duration = WatchDebounce

/**
 * Discovery's bounds: plugin manifests read to 1 MiB; a hidden folder searched 5 levels, 1,000 folders deep.
 *
 * @since 0.2.0
 * @category bounds
 */
export const Discovery = { manifestBytes: 1024 * 1024, hiddenDepth: 5, hiddenFolders: 1000 } as const
