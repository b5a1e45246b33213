/**
 * Building a skill's entry from its files: validate everything and hash every file once.
 *
 * A manifest keeps its files as columns ({@link Files}): the paths in one string, sizes and where
 * each file's bytes are in one table, the SHA-256 digests as 32 bytes each, and the bytes
 * themselves where they already were (usually one buffer for the whole skill). A server holding
 * tens of thousands of skills then holds no object, string or view per file: URIs, `sha256:`
 * digests and views of the bytes are made when asked for, as the wire needs them.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import { hash } from "node:crypto"
import * as Digest from "./Digest.js"
import { SkillFileName } from "./Extension.js"
import { encodePath, pathProblem, verbatim } from "./internal/filePaths.js"
import { FilePath, Segment } from "./internal/generated.js"
import * as Limits from "./Limits.js"
import type { Skill, SkillResource } from "./Skill.js"
import * as SkillFrontmatter from "./SkillFrontmatter.js"
import * as SkillUri from "./SkillUri.js"

/**
 * One file handed to `make`: a `/`-separated path relative to the skill root and its raw bytes.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileInput {
  readonly path: string
  readonly bytes: Uint8Array
  /**
   * The digest of exactly these bytes when the caller already has it (a rebuild that kept the file
   * unchanged): it is trusted, so a reload hashes only what changed.
   */
  readonly digest?: Digest.Digest | undefined
}

/**
 * One file of a manifest, made when asked for (see {@link Files.at}): nothing keeps it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ManifestFile {
  readonly uri: SkillUri.SkillUri
  readonly path: string
  /** A view of the file's bytes; `undefined` when the holder keeps the file on disk. */
  readonly bytes: Uint8Array | undefined
  readonly digest: Digest.Digest
  readonly size: number
}

// One row per file, four unsigned 32-bit numbers: where its path ends in the paths string, its
// size, the index of the buffer holding its bytes plus one (0: not held), and where in that buffer
// they start. Then the SHA-256 digests, 32 bytes each, in the same block: one view per manifest.
const RowBytes = 16
const End = 0
const Size = 4
const Buffer1 = 8
const Offset = 12
const DigestBytes = 32

/**
 * The bytes of the table a manifest of `count` files keeps (each file's size, where its path ends
 * and where its bytes are, and its digest): a caller that reads a skill's files into one buffer can
 * make room for it there and give it to {@link make} (`table`), so that a skill costs one allocation,
 * not two.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tableBytes = (count: number): number => count * (RowBytes + DigestBytes)

// Whether two views share any byte.
const overlaps = (a: Uint8Array, b: Uint8Array) =>
  a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength

/**
 * A manifest's files, `SKILL.md` first and the others in code-unit order of their paths, held as
 * columns: no object per file. Accessors make what they return (a path, a URI, a `sha256:` digest,
 * a view of the bytes) on each call; a caller that needs one many times keeps it.
 *
 * @since 0.1.0
 * @category models
 */
export class Files implements Iterable<ManifestFile> {
  readonly #root: string
  readonly #paths: string
  // The rows, then the digests (see `RowBytes`); `#length` rows.
  readonly #block: Buffer
  readonly #length: number
  // The buffers holding the bytes: the one buffer itself in the usual case of one (an array of one
  // is two more objects a skill).
  readonly #buffers: ArrayBufferLike | ReadonlyArray<ArrayBufferLike>

  private constructor(root: string, paths: string, block: Buffer, length: number, buffers: ReadonlyArray<ArrayBufferLike>) {
    this.#root = root
    this.#paths = paths
    this.#block = block
    this.#length = length
    // A list of exactly its length: one grown by pushes keeps room for 17.
    this.#buffers = buffers.length === 1 ? buffers[0]! : buffers.slice()
  }

  /** @internal */
  static of(
    uri: SkillUri.SkillMdUri,
    rows: ReadonlyArray<{ readonly path: string; readonly size: number; readonly bytes: Uint8Array; readonly hex: string }>,
    room: Uint8Array | undefined
  ): Files {
    const count = rows.length
    // Sizes and offsets fit 32 bits: `make` refuses a skill of more bytes (`Limits.MaxSkillBytes`).
    // `alloc`, not the shared pool: a slice of the pool would keep its whole chunk. In the room the
    // caller made, if it has the length and holds no file's bytes: every cell is written.
    const block = room !== undefined && room.byteLength === tableBytes(count) && !rows.some((row) => overlaps(room, row.bytes))
      ? Buffer.from(room.buffer, room.byteOffset, room.byteLength)
      : Buffer.alloc(tableBytes(count))
    const buffers: Array<ArrayBufferLike> = []
    const paths: Array<string> = []
    let end = 0
    for (let index = 0; index < count; index++) {
      const row = rows[index]!
      paths.push(row.path)
      end += row.path.length
      const at = index * RowBytes
      block.writeUInt32LE(end, at + End)
      block.writeUInt32LE(row.size, at + Size)
      let buffer = buffers.lastIndexOf(row.bytes.buffer)
      if (buffer === -1) buffer = buffers.push(row.bytes.buffer) - 1
      block.writeUInt32LE(buffer + 1, at + Buffer1)
      block.writeUInt32LE(row.bytes.byteOffset, at + Offset)
      block.write(row.hex, count * RowBytes + index * DigestBytes, DigestBytes, "hex")
    }
    // One flat string, written once by `join` (concatenating with `+=` made a rope whose cell
    // stayed in front of it).
    return new Files(SkillUri.root(uri), paths.join(""), block, count, buffers)
  }

  /** How many files. */
  get length(): number {
    return this.#length
  }

  /** The URI of the skill's root (its `SKILL.md` URI without `/SKILL.md`). */
  get root(): string {
    return this.#root
  }

  // Buffer `index` (from 0) of those holding the bytes.
  #buffer(index: number): ArrayBufferLike {
    const buffers = this.#buffers
    return Array.isArray(buffers) ? buffers[index]! : buffers as ArrayBufferLike
  }

  // Number `column` of file `index`'s row.
  #cell(index: number, column: number): number {
    return this.#block.readUInt32LE(index * RowBytes + column)
  }

  // Where the digest of file `index` starts in the block.
  #digestAt(index: number): number {
    return this.#length * RowBytes + index * DigestBytes
  }

  /** The `/`-separated path of file `index`, relative to the skill root. */
  path(index: number): string {
    return this.#paths.slice(index === 0 ? 0 : this.#cell(index - 1, End), this.#cell(index, End))
  }

  /** The last segment of file `index`'s path. */
  name(index: number): string {
    const path = this.path(index)
    return path.slice(path.lastIndexOf("/") + 1)
  }

  /** The URI of file `index`. */
  uri(index: number): SkillUri.SkillUri {
    return `${this.#root}/${encodePath(this.path(index))}` as SkillUri.SkillUri
  }

  /** The size of file `index` in bytes. */
  size(index: number): number {
    return this.#cell(index, Size)
  }

  /** The `sha256:` digest of file `index`. */
  digest(index: number): Digest.Digest {
    const at = this.#digestAt(index)
    return `sha256:${this.#block.toString("hex", at, at + DigestBytes)}` as Digest.Digest
  }

  /** Whether file `index` has the same digest as file `other` of `files`. */
  sameDigest(index: number, files: Files, other: number): boolean {
    const theirs = files.#digestAt(other)
    const ours = this.#digestAt(index)
    return this.#block.compare(files.#block, theirs, theirs + DigestBytes, ours, ours + DigestBytes) === 0
  }

  /** Whether the bytes of file `index` are held (not only its size and digest). */
  held(index: number): boolean {
    return this.#cell(index, Buffer1) !== 0
  }

  /** A view of the bytes of file `index`, or `undefined` when they are not held. */
  bytes(index: number): Uint8Array | undefined {
    const buffer = this.#cell(index, Buffer1)
    return buffer === 0 ? undefined : new Uint8Array(this.#buffer(buffer - 1), this.#cell(index, Offset), this.#cell(index, Size))
  }

  /** Whether file `index` holds exactly `bytes`: the very memory, or equal bytes. */
  sameBytes(index: number, bytes: Uint8Array): boolean {
    const buffer = this.#cell(index, Buffer1)
    if (buffer === 0 || bytes.byteLength !== this.#cell(index, Size)) return false
    const offset = this.#cell(index, Offset)
    if (bytes.buffer === this.#buffer(buffer - 1) && bytes.byteOffset === offset) return true
    return Buffer.from(this.#buffer(buffer - 1), offset, bytes.byteLength).equals(bytes)
  }

  /** The bytes of every file held, each buffer once (for figures: what a holder keeps in memory). */
  buffers(): ReadonlyArray<ArrayBufferLike> {
    const buffers = this.#buffers
    return Array.isArray(buffers) ? buffers : [buffers as ArrayBufferLike]
  }

  // Compares the path of file `index` with `path` in code-unit order, without making a string.
  #compare(index: number, path: string): number {
    const start = index === 0 ? 0 : this.#cell(index - 1, End)
    const end = this.#cell(index, End)
    const length = Math.min(end - start, path.length)
    for (let i = 0; i < length; i++) {
      const difference = this.#paths.charCodeAt(start + i) - path.charCodeAt(i)
      if (difference !== 0) return difference
    }
    return end - start - path.length
  }

  /** The index of the file at `path`, or -1. */
  indexOf(path: string): number {
    if (this.length === 0) return -1
    if (this.#compare(0, path) === 0) return 0
    let low = 1
    let high = this.length - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      const order = this.#compare(middle, path)
      if (order === 0) return middle
      if (order < 0) low = middle + 1
      else high = middle - 1
    }
    return -1
  }

  /**
   * The index of the file whose URI is `uri`, or -1. Only the canonical URI names a file, as only
   * it is published.
   */
  indexOfUri(uri: string): number {
    const root = this.#root
    if (uri.length <= root.length + 1 || uri.charCodeAt(root.length) !== 47 || !uri.startsWith(root)) return -1
    const tail = uri.slice(root.length + 1)
    // Every path held is valid, so a tail equal to one is canonical as it stands.
    if (verbatim.test(tail)) return this.indexOf(tail)
    const segments: Array<string> = []
    for (const raw of tail.split("/")) {
      try {
        segments.push(decodeURIComponent(raw))
      } catch {
        return -1
      }
    }
    const path = segments.join("/")
    // A lone surrogate decodes but cannot be encoded again (encodeURIComponent throws): no file's.
    return path.isWellFormed() && encodePath(path) === tail ? this.indexOf(path) : -1
  }

  /** File `index` as a record, made now. */
  at(index: number): ManifestFile {
    return { uri: this.uri(index), path: this.path(index), bytes: this.bytes(index), digest: this.digest(index), size: this.size(index) }
  }

  /** The same files, without the bytes of those `drop` names (by index): their holder keeps them elsewhere. */
  withoutBytes(drop: (index: number) => boolean): Files {
    // Its own memory (`Buffer.from` would take a slice of the shared pool, and keep it whole).
    const block = Buffer.alloc(this.#block.length)
    this.#block.copy(block)
    const buffers: Array<ArrayBufferLike> = []
    for (let index = 0; index < this.#length; index++) {
      const at = index * RowBytes
      const buffer = block.readUInt32LE(at + Buffer1)
      if (buffer === 0) continue
      if (drop(index)) {
        block.writeUInt32LE(0, at + Buffer1)
        block.writeUInt32LE(0, at + Offset)
        continue
      }
      let now = buffers.lastIndexOf(this.#buffer(buffer - 1))
      if (now === -1) now = buffers.push(this.#buffer(buffer - 1)) - 1
      block.writeUInt32LE(now + 1, at + Buffer1)
    }
    return new Files(this.#root, this.#paths, block, this.#length, buffers)
  }

  *[Symbol.iterator](): IterableIterator<ManifestFile> {
    for (let index = 0; index < this.length; index++) yield this.at(index)
  }
}

/**
 * A validated skill: its parsed `SKILL.md` and its files, `SKILL.md` first. Its entry (what
 * `skills/list` and `skills/get` send) is {@link entry}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Manifest {
  readonly uri: SkillUri.SkillMdUri
  readonly frontmatter: SkillFrontmatter.SkillFrontmatter
  readonly body: string
  readonly files: Files
}

/**
 * The entry of a manifest (`skills/list`, `skills/get`): its URI, frontmatter and every file with
 * its digest and size, made now.
 *
 * @since 0.1.0
 * @category utils
 */
export const entry = (manifest: Omit<Manifest, "body">): Skill => ({
  uri: manifest.uri,
  frontmatter: manifest.frontmatter,
  resources: resources(manifest.files)
})

/**
 * The resources of an entry, one per file, made now.
 *
 * @since 0.1.0
 * @category utils
 */
export const resources = (files: Files): ReadonlyArray<SkillResource> => {
  const out: Array<SkillResource> = []
  for (let index = 0; index < files.length; index++) {
    out.push({ uri: files.uri(index), digest: files.digest(index), size: files.size(index) })
  }
  return out
}

// Equal columns: the same paths, sizes and digests, and the same bytes where both hold them.
const sameFiles = (a: Files, b: Files) => {
  if (a.length !== b.length) return false
  for (let index = 0; index < a.length; index++) {
    const bytes = b.bytes(index)
    if (
      a.path(index) !== b.path(index) || a.size(index) !== b.size(index) || !a.sameDigest(index, b, index) ||
      bytes === undefined || !a.sameBytes(index, bytes)
    ) return false
  }
  return true
}

const isManifest = (u: unknown): u is Manifest => {
  if (typeof u !== "object" || u === null) return false
  const m = u as { readonly [K in keyof Manifest]?: unknown }
  if (typeof m.uri !== "string" || !(m.files instanceof Files)) return false
  const uri = SkillUri.parseSkillMd(m.uri)
  if (Result.isFailure(uri)) return false
  const files = m.files
  const inputs: Array<FileInput> = []
  for (let index = 0; index < files.length; index++) {
    const bytes = files.bytes(index)
    if (bytes === undefined) return false
    inputs.push({ path: files.path(index), bytes })
  }
  // Valid means exactly what `make` builds from the same files: every derived field agrees.
  const rebuilt = make({ uri: uri.success, files: inputs })
  if (Result.isFailure(rebuilt)) return false
  const expected = rebuilt.success
  return m.body === expected.body &&
    SkillFrontmatter.jsonEquals(m.frontmatter as Schema.Json, expected.frontmatter) &&
    sameFiles(files, expected.files) && files.uri(0) === expected.files.uri(0)
}

// A directory and a file of the same name cannot both exist on disk, where tests write manifests.
const collides = (paths: Iterable<string>, path: string) => {
  for (const other of paths) if (other === path || other.startsWith(`${path}/`) || path.startsWith(`${other}/`)) return true
  return false
}

/**
 * A manifest exactly as `make` builds it from its own files. Generating it (`Arbitrary.schema`,
 * `it.prop`) gives valid skills with real files: a rendered `SKILL.md` under a prefix of up to three
 * segments and up to six other files whose names need percent-encoding. Validating one rebuilds and
 * hashes it, which suits tests rather than a hot path.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Manifest: Schema.declare<Manifest> = Schema.declare<Manifest>(isManifest, {
  expected: "a manifest as Manifest.make builds it from its files",
  toCodecArbitrary: () =>
    Schema.link<Manifest>()(
      Schema.Struct({
        prefix: Schema.Array(Segment).check(Schema.isMaxLength(3)),
        frontmatter: SkillFrontmatter.SkillFrontmatter,
        body: Schema.String,
        files: Schema.Array(Schema.Struct({ path: FilePath, bytes: Schema.Uint8Array })).check(Schema.isMaxLength(6))
      }),
      {
        decode: SchemaGetter.transform(({ prefix, frontmatter, body, files }) => {
          const uri = Result.getOrThrow(SkillUri.skillMd("skill", [...prefix, frontmatter.name]))
          const inputs = new Map<string, Uint8Array>([[SkillFileName, new TextEncoder().encode(SkillFrontmatter.render(frontmatter, body))]])
          for (const { path, bytes } of files) {
            if (!collides(inputs.keys(), path) && Result.isSuccess(SkillUri.file(uri, path))) inputs.set(path, bytes)
          }
          return Result.getOrThrow(make({ uri, files: [...inputs].map(([path, bytes]) => ({ path, bytes })) }))
        }),
        encode: SchemaGetter.forbiddenEncoding
      }
    )
})

/**
 * One thing wrong with a skill: the file it concerns (when one does), the line (for frontmatter) and why.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Problem = Schema.Struct({
  path: Schema.optionalKey(Schema.String),
  line: Schema.optionalKey(Schema.Int),
  reason: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type Problem = typeof Problem.Type

/**
 * A skill that cannot be served, with every problem found (not only the first).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSkill extends Schema.TaggedError<InvalidSkill>()("InvalidSkill", {
  uri: Schema.String,
  problems: Schema.Array(Problem)
}) {
  override get message(): string {
    return `invalid skill ${this.uri}: ${this.problems.map(describe).join("; ")}`
  }
}

/**
 * A problem as one line: `path:line: reason`.
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (problem: Problem): string =>
  `${problem.path === undefined ? "" : `${problem.path}${problem.line === undefined ? "" : `:${problem.line}`}: `}${problem.reason}`

const byPathOrder = (a: { readonly path: string }, b: { readonly path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

/**
 * Validates and hashes a skill's files into its manifest: `SKILL.md` first, then the other files in
 * code-unit order of their paths, each with digest and size; the frontmatter from `SKILL.md` with the
 * name equal to the last skill-path segment (R4); every path inside the skill; the limits (R16).
 * The manifest refers to the given bytes where they are: files given as views of one buffer stay
 * one buffer.
 *
 * @example
 * ```ts
 * import { Manifest, SkillUri } from "@mcp-skills/core"
 * import { Result } from "effect"
 *
 * const text = (content: string) => new TextEncoder().encode(content)
 * const manifest = Manifest.make({
 *   uri: Result.getOrThrow(SkillUri.skillMd("skill", ["acme", "billing", "refunds"])),
 *   files: [
 *     { path: "SKILL.md", bytes: text("---\nname: refunds\ndescription: Issue refunds\n---\n# Refunds\n") },
 *     { path: "references/policy.md", bytes: text("# Policy\n") }
 *   ]
 * })
 * // Success: the skill's entry (frontmatter, and each file's URI, digest and size) and its files,
 * // or Failure: InvalidSkill listing every problem (paths, frontmatter with its line, name, limits)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly uri: SkillUri.SkillMdUri
  readonly files: Iterable<FileInput>
  readonly limits?: Limits.Limits | undefined
  /**
   * Room for the manifest's table, {@link tableBytes} of the files' count long, which the manifest
   * then keeps (its bytes are overwritten): a part of the buffer the files were read into. Room of
   * another length, or holding a file's bytes, is left alone, and the manifest allocates its own.
   */
  readonly table?: Uint8Array | undefined
}): Result.Result<Manifest, InvalidSkill> => {
  const problems: Array<Problem> = []
  const byPath = new Map<string, FileInput>()
  for (const input of options.files) {
    const problem = pathProblem(options.uri, input.path)
    if (problem !== undefined) {
      problems.push({ path: input.path, reason: problem })
      continue
    }
    if (byPath.has(input.path)) {
      problems.push({ path: input.path, reason: "the same path is given twice" })
      continue
    }
    byPath.set(input.path, input)
  }
  // A path cannot be a file and a folder at once: no file system holds both, so a host that
  // materialises the skill could not give relative references their URI meaning (R104).
  for (const path of byPath.keys()) {
    for (let slash = path.indexOf("/"); slash !== -1; slash = path.indexOf("/", slash + 1)) {
      if (byPath.has(path.slice(0, slash))) {
        problems.push({ path, reason: `${path.slice(0, slash)} is a file, so it cannot also be a folder holding ${path} (R104)` })
      }
    }
  }
  const skillMd = byPath.get(SkillFileName)
  let parsed: { readonly frontmatter: SkillFrontmatter.SkillFrontmatter; readonly body: string } | undefined
  if (skillMd === undefined) {
    problems.push({ reason: `no ${SkillFileName} at the skill root (R1)` })
  } else {
    const result = SkillFrontmatter.parseSkillMd(skillMd.bytes)
    if (Result.isFailure(result)) {
      const error = result.failure
      problems.push({
        path: SkillFileName,
        ...(error.line === undefined ? {} : { line: error.line }),
        reason: error.field === undefined ? error.reason : `${error.field}: ${error.reason}`
      })
    } else {
      parsed = result.success
      const name = SkillUri.skillName(options.uri)
      if (parsed.frontmatter.name !== name) {
        problems.push({
          path: SkillFileName,
          reason: `frontmatter name "${parsed.frontmatter.name}" differs from the skill's directory name "${name}" (R4)`
        })
      }
    }
  }
  const rest: Array<FileInput> = []
  for (const input of byPath.values()) if (input !== skillMd) rest.push(input)
  rest.sort(byPathOrder)
  const inputs = skillMd === undefined ? rest : [skillMd, ...rest]
  let total = 0
  for (const input of inputs) total += input.bytes.byteLength
  for (const violation of Limits.violations(inputs.length, total, options.limits)) {
    problems.push({ reason: `${Limits.describe(violation)} (R16)` })
  }
  if (problems.length > 0 || parsed === undefined) return Result.fail(new InvalidSkill({ uri: options.uri, problems }))
  const files = Files.of(
    options.uri,
    inputs.map((input) => ({
      path: input.path,
      size: input.bytes.byteLength,
      bytes: input.bytes,
      hex: input.digest === undefined ? hash("sha256", input.bytes, "hex") : input.digest.slice(7)
    })),
    options.table
  )
  // The parsed strings are slices of the decoded SKILL.md: kept as they are, every manifest a
  // server holds would keep a second copy of its SKILL.md alive. A holder that does not need the
  // body drops it (the server does), and the frontmatter is a copy, made through its JSON (it is
  // JSON by its schema): `structuredClone` costs tens of microseconds a call in a process holding
  // a large heap, most of a 10,000-skill start-up's manifest work.
  return Result.succeed({ uri: options.uri, frontmatter: JSON.parse(JSON.stringify(parsed.frontmatter)), body: parsed.body, files })
}
