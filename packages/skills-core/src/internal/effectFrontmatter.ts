/**
 * effect's own reading of a `SKILL.md` frontmatter. effect's `McpClient.readSkillResource` reads a
 * `SKILL.md` again this way and refuses the skill unless the result `Equal.equals` the listed
 * frontmatter, so `SkillFrontmatter.portability` compares it with what `parse` reads.
 *
 * It mirrors `parseFrontmatter` of effect 4.1.5's `ai/internal/mcpSkills.ts`, which effect does not
 * export (`effect/ai/internal/*` is closed): the same pattern, effect's public `Yaml.parse`, the
 * same trip through JSON. Once effect exports that reader, `portability` calls it and this module
 * goes; once effect reads frontmatter as YAML 1.2 core does, `portability` goes too.
 *
 * @internal
 */
import * as Yaml from "effect/encoding/Yaml"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type { JsonObject } from "effect/Schema"

// effect's pattern as it is: the block stops before the line break of the closing `---` line.
const block = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/** Why effect's reader finds no frontmatter; `line` is 1-based in the whole file. */
export interface Unread {
  readonly reason: string
  readonly line?: number
}

/** The frontmatter effect's `McpClient` reads from the text of a `SKILL.md`. */
export const read = (text: string): Result.Result<JsonObject, Unread> => {
  const yaml = block.exec(text)?.[1]
  if (yaml === undefined) return Result.fail({ reason: "it finds no frontmatter block" })
  let parsed: unknown
  try {
    parsed = Yaml.parse(yaml)
  } catch (error) {
    // effect's syntax errors end with the line in the block, which starts on line 2 of the file.
    const message = error instanceof Error ? error.message : String(error)
    const at = / at line (\d+)$/.exec(message)
    return Result.fail(at === null ? { reason: message } : { reason: message.slice(0, at.index), line: Number(at[1]) + 1 })
  }
  return Predicate.isObject(parsed)
    ? Result.succeed(JSON.parse(JSON.stringify(parsed)) as JsonObject)
    : Result.fail({ reason: "it reads no mapping" })
}
