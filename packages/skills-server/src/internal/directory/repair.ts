/**
 * The lenient reading of a `SKILL.md` (`Options.lenient`): the frontmatter its author plainly meant,
 * where YAML or the Agent Skills rules refuse what is written, and the `SKILL.md` to serve for it:
 * the frontmatter written back as one JSON value a line, which YAML 1.2, effect's reader and the
 * `yaml` package read alike (checked with `SkillFrontmatter.portability`), the body byte for byte.
 */
import { SkillFrontmatter, SkillName } from "@mcp-skills/core"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type { Repair } from "../../DirectoryModel.js"

/** A repair and the line of the file it concerns. */
export interface Placed {
  readonly line?: number | undefined
  readonly repair: Repair
}

/** What the lenient reading made of a `SKILL.md`. */
export type Reading =
  /** Valid as written: served as it is, under `name`. */
  | { readonly _tag: "AsWritten"; readonly name: string }
  /** Repaired: `text` is the `SKILL.md` to serve. */
  | { readonly _tag: "Rewritten"; readonly name: string; readonly text: string; readonly repairs: ReadonlyArray<Placed> }
  /** No meaning is plain enough: refused as the strict reading refuses it. */
  | { readonly _tag: "Refused" }

const refused: Reading = { _tag: "Refused" }
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const delimiter = /^---[ \t]*\r?$/
// A top-level `key: value` line: a quoted key, or a plain one up to its first `:` (a `: ` later on
// the line is the value's).
const keyLine = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"{}[\],&*!|>%@`-][^:]*?):(?:[ \t]+(.*)|)$/
// Values that begin so are YAML's own syntax (anchors, tags, quotes, flow collections): refused
// as written rather than guessed at.
const syntactic = /^[&*!"'[{%@`]/
const blockIndicator = /^([|>])[+-]?[1-9]?[ \t]+(\S.*)$/
const plainKey = /^[A-Za-z_][A-Za-z0-9_-]*$/

/** The longest description the Agent Skills rules allow, and the mark a cut one ends with. */
const maxDescription = 1024
const cutMark = "…"

/** The frontmatter lines (without `\r`), the file line of the first, and the body exactly as it follows. */
const split = (text: string) => {
  const lines = text.split("\n")
  if (!delimiter.test(lines[0]!)) return undefined
  const close = lines.findIndex((line, index) => index > 0 && delimiter.test(line))
  if (close === -1) return undefined
  const bodyAt = lines.slice(0, close + 1).reduce((sum, line) => sum + line.length + 1, 0)
  return { lines: lines.slice(1, close).map((line) => line.replace(/\r$/, "")), body: text.slice(Math.min(bodyAt, text.length)) }
}

/** The key and the rest of a top-level `key: value` line, or `undefined` for another line. */
const keyOf = (line: string): { readonly key: string; readonly rest: string } | undefined => {
  const match = keyLine.exec(line)
  if (match === null) return undefined
  const raw = match[1]!
  let key = raw
  if (raw.startsWith("'")) key = raw.slice(1, -1).replaceAll("''", "'")
  else if (raw.startsWith("\"")) {
    try {
      key = JSON.parse(raw) as string
    } catch {
      return undefined
    }
  }
  return { key, rest: (match[2] ?? "").trim() }
}

const parseOne = (lines: ReadonlyArray<string>) =>
  Result.map(SkillFrontmatter.parse(`---\n${lines.join("\n")}\n---\n`), (document) => document.frontmatter)

/**
 * The frontmatter of `lines` read key by key: a top-level key whose lines YAML refuses is read as
 * its literal text, a line under no key as the end of the value above it; `undefined` if what is
 * written is YAML's own syntax, or a key comes twice.
 */
const readByKey = (lines: ReadonlyArray<string>, repairs: Array<Placed>, keyLines: Map<string, number>) => {
  const blocks: Array<{
    readonly key: string
    readonly rest: string
    readonly line: number
    readonly lines: Array<string>
    readonly stray: Array<string>
  }> = []
  for (const [index, line] of lines.entries()) {
    const key = keyOf(line)
    if (key !== undefined) {
      blocks.push({ key: key.key, rest: key.rest, line: index + 2, lines: [line], stray: [] })
      continue
    }
    const last = blocks.at(-1)
    if (line.trim() === "" || line.startsWith("#")) continue
    if (last === undefined) return undefined
    if (/^[ \t]/.test(line)) last.lines.push(line)
    else last.stray.push(line.trim())
  }
  const frontmatter: Record<string, Schema.Json> = {}
  for (const block of blocks) {
    if (Object.hasOwn(frontmatter, block.key)) return undefined
    keyLines.set(block.key, block.line)
    const parsed = parseOne(block.lines)
    let value: Schema.Json
    if (Result.isSuccess(parsed)) {
      value = parsed.success[block.key]!
    } else {
      const rest = block.rest
      const more = block.lines.slice(1).map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"))
      const indicated = blockIndicator.exec(rest)
      if (indicated === null && (rest === "" || syntactic.test(rest))) return undefined
      value = indicated === null
        ? [rest, ...more].join(" ")
        : [indicated[2]!, ...more].join(indicated[1] === "|" ? "\n" : " ")
      repairs.push({ line: block.line, repair: { _tag: "LiteralValue", key: block.key, refused: parsed.failure.reason } })
    }
    if (block.stray.length > 0) {
      if (typeof value !== "string") return undefined
      value = [value, ...block.stray].join(" ")
      repairs.push({ line: block.line, repair: { _tag: "JoinedLine", key: block.key } })
    }
    frontmatter[block.key] = value
  }
  return frontmatter
}

/** A name made a slug: lowercase, every run of other characters one `-`, at most 64 characters. */
const slug = (name: string) =>
  name.toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, "-").replace(/^-+/, "").slice(0, 64).replace(/-+$/, "")

/** A description cut at the last word boundary that leaves room for the mark. */
const cut = (description: string) => {
  const room = description.slice(0, maxDescription - cutMark.length)
  const space = room.search(/\s\S*$/)
  // Without a space in its second half, a description is cut mid-word rather than halved.
  let kept = space > room.length / 2 ? room.slice(0, space) : room
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1)
  return `${kept.trimEnd()}${cutMark}`
}

const isRecord = (value: Schema.Json | undefined): value is Schema.JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The frontmatter as the canonical form writes it: one key a line, its value as JSON. */
const canonical = (frontmatter: Schema.JsonObject, body: string) =>
  `---\n${
    Object.entries(frontmatter).map(([key, value]) => `${plainKey.test(key) ? key : JSON.stringify(key)}: ${JSON.stringify(value)}\n`)
      .join("")
  }---\n${body}`

/** Reads a `SKILL.md` leniently (see the module description). */
export const read = (bytes: Uint8Array): Reading => {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return refused
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  const parts = split(text)
  if (parts === undefined) return refused
  const repairs: Array<Placed> = []
  const keyLines = new Map<string, number>()
  const parsed = SkillFrontmatter.parse(text)
  const frontmatter: Record<string, Schema.Json> | undefined = Result.isSuccess(parsed)
    ? { ...parsed.success.frontmatter }
    : readByKey(parts.lines, repairs, keyLines)
  if (frontmatter === undefined) return refused
  if (keyLines.size === 0) {
    for (const [index, line] of parts.lines.entries()) {
      const key = keyOf(line)?.key
      if (key !== undefined && !keyLines.has(key)) keyLines.set(key, index + 2)
    }
  }
  const { description, metadata, name } = frontmatter
  if (typeof name !== "string" || typeof description !== "string") return refused
  if (!SkillName.isSkillName(name)) {
    const to = slug(name)
    if (!SkillName.isSkillName(to)) return refused
    frontmatter.name = to
    repairs.push({ line: keyLines.get("name"), repair: { _tag: "NameAsSlug", from: name, to } })
  }
  if (description.length > maxDescription) {
    const to = cut(description)
    frontmatter.description = to
    repairs.push({ line: keyLines.get("description"), repair: { _tag: "DescriptionCut", from: description.length, to: to.length } })
  }
  if (isRecord(metadata)) {
    const strings: Record<string, Schema.Json> = {}
    for (const [key, value] of Object.entries(metadata)) {
      strings[key] = typeof value === "string" ? value : JSON.stringify(value)
      if (typeof value !== "string") repairs.push({ line: keyLines.get("metadata"), repair: { _tag: "MetadataAsJson", key } })
    }
    frontmatter.metadata = strings
  }
  if (repairs.length === 0) return Result.isSuccess(parsed) ? { _tag: "AsWritten", name } : refused
  const rewritten = canonical(frontmatter, parts.body)
  // What is served must be what every reader reads, and valid: otherwise the skill is refused as
  // the strict reading refuses it.
  const again = SkillFrontmatter.parseSkillMd(rewritten)
  if (
    Result.isFailure(again) || !SkillFrontmatter.jsonEquals(again.success.frontmatter as Schema.Json, frontmatter) ||
    SkillFrontmatter.portability(rewritten, frontmatter).length > 0
  ) {
    return refused
  }
  return { _tag: "Rewritten", name: frontmatter.name as string, text: rewritten, repairs }
}
