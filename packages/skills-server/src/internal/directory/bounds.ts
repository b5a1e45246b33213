/**
 * The bounds of reading skill folders, in one place, each with its reason. The per-skill limits
 * (files, bytes) are `Limits` of `@mcp-skills/core`, given as an option; these are the reader's own.
 */

/**
 * Tries at reading a skill's files as of one moment. A try fails when a file changed while it was
 * read (its stamp, size, modification or change time, or inode, differ afterwards) or read empty
 * where it was not; past this many, the skill keeps its last good version. A rewrite is over in
 * microseconds: three tries see it through unless writes never stop.
 */
export const ReadAttempts = 3

/**
 * Filesystem timestamps tick more coarsely than writes (Linux takes them from a clock that ticks
 * every few milliseconds, some filesystems every second or two): a file modified this recently may
 * change again without its stamp changing, so what was read of it is trusted only until an event
 * names it, and an empty read of it is not believed where the file had bytes before.
 */
export const RacyMillis = 1_000

/**
 * Bytes of a signatures file. A record (key id, algorithm, public key, signature) takes about 300
 * bytes as `sign` writes it, so the records allowed below fit in 5 KiB; this leaves room for any
 * formatting, and a file past it is refused before a byte of it is read.
 */
export const SignaturesMaxBytes = 16_384

/**
 * Records in a signatures file, one per key. A skill is signed by its author, perhaps a reviewer
 * and a release pipeline: a few keys. Every record is verified when the skill is loaded and relayed
 * in every `skills/list` and `skills/get` answer, so 20,000 of them made start-up four times slower
 * and every listing 5 MiB larger.
 */
export const SignaturesMaxRecords = 16
