/**
 * Frontmatter through the `yaml` parser: YAML 1.2, core schema, normalised to JSON, refusing what
 * lets two honest parsers read one file differently. Apart from the public module so that tests
 * can reach it directly.
 *
 * @internal
 */
import * as Result from "effect/Result"
import type { JsonObject } from "effect/Schema"
import { Composer, type Document, isAlias, isCollection, isMap, isPair, isScalar, Lexer, LineCounter, Parser, visit } from "yaml"
import { MaxFrontmatterDepth } from "../Limits.js"

/** Why a frontmatter is refused; `line` is 1-based in the whole file. */
export interface Problem {
  readonly reason: string
  readonly line?: number
}

// Beyond ±(2^53−1) a JSON number no longer names one value: a parser that reads integers exactly
// (Python, Go's json.Number) and one that reads doubles (JavaScript) disagree on it, and a double
// there is always an integer that its JSON text (`18446744073709552000`) misstates. I-JSON
// (RFC 7493 §2.2) draws the line at the same place. Non-finite numbers have no JSON form at all.
/** Whether every JSON parser reads `n` as the same number. */
export const isExactNumber = (n: number) => Math.abs(n) <= Number.MAX_SAFE_INTEGER

/** What is wrong with a number that is not exact. */
export const inexact = "is not a number within ±9007199254740991 (2^53−1), the range every JSON parser reads alike"

const problem = (reason: string, line: number | undefined): Problem => line === undefined ? { reason } : { reason, line }

const coreTags: ReadonlySet<string> = new Set(
  ["str", "int", "float", "bool", "null", "map", "seq"].map((name) => `tag:yaml.org,2002:${name}`)
)

/** Parses LF-ended frontmatter whose first line is line `lineOffset + 1` of the file. */
export const parse = (source: string, lineOffset: number): Result.Result<JsonObject, Problem> => {
  const lineCounter = new LineCounter()
  // `uniqueKeys` is off because yaml compares each key with every earlier key of its map, which
  // made a frontmatter of n keys cost n²; keys are checked below, each once, against a Set. No
  // `prettyErrors` either: it copies the whole line of every error, n² on one long line of errors.
  const composer = new Composer({ version: "1.2", schema: "core", uniqueKeys: false, merge: false, strict: true })
  // yaml's composer recurses and gives up at a depth that depends on the stack left to it; the
  // syntax tree is built without recursion, so its depth is checked there first, with a margin
  // for the tokens that are not collections, and exactly below.
  const parser = new Parser(lineCounter.addNewLine)
  let tooDeep: number | undefined
  const tokens = function*() {
    lineCounter.addNewLine(0)
    for (const lexeme of new Lexer().lex(source)) {
      yield* parser.next(lexeme)
      if (parser.stack.length > 2 * MaxFrontmatterDepth) return void (tooDeep = parser.offset)
    }
    yield* parser.end()
  }
  const docs: Array<Document.Parsed> = []
  // yaml makes an Error per problem, and capturing its stack costs five times the parsing: garbage
  // made of problems would take far longer than any frontmatter. Only the first problem is shown,
  // with its line, never its stack; the limit is restored before anything else runs.
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    for (const doc of composer.compose(tokens())) {
      if (docs.push(doc) === 2) break
    }
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
  const lineAt = (offset: number | undefined) => (offset === undefined ? undefined : lineCounter.linePos(offset).line + lineOffset)
  const deep = `nesting deeper than ${MaxFrontmatterDepth} levels (Limits.MaxFrontmatterDepth)`
  if (tooDeep !== undefined) return Result.fail(problem(deep, lineAt(tooDeep)))
  if (docs.length === 0 || docs[0]!.contents === null) {
    return Result.fail(problem("the frontmatter is empty; it must be a mapping with name and description", lineOffset + 1))
  }
  if (docs.length > 1) return Result.fail(problem("the frontmatter holds several YAML documents", lineAt(docs[1]!.range[0])))
  const doc = docs[0]!
  const first = doc.errors[0] ?? doc.warnings[0]
  if (first !== undefined) return Result.fail(problem(first.message, lineAt(first.pos[0])))
  if (!isMap(doc.contents)) return Result.fail(problem("the frontmatter must be a mapping", lineAt(doc.contents?.range?.[0])))
  let refusal: Problem | undefined
  const refuse = (reason: string, offset: number | undefined) => {
    refusal = problem(reason, lineAt(offset))
    return visit.BREAK
  }
  const keysOf = new Map<unknown, Set<string>>()
  visit(doc, {
    Alias: (_, node) => refuse("aliases are not allowed (the JSON mapping would be ambiguous)", node.range?.[0]),
    Node: (_, node, path) => {
      if (isCollection(node) && path.length >= MaxFrontmatterDepth && path.filter(isCollection).length >= MaxFrontmatterDepth) {
        return refuse(deep, node.range?.[0])
      }
      if (node.anchor !== undefined) return refuse(`anchor &${node.anchor} is not allowed`, node.range?.[0])
      if (node.tag !== undefined && !coreTags.has(node.tag)) return refuse(`tag ${node.tag} is not allowed`, node.range?.[0])
      if (isScalar(node) && typeof node.value === "number" && !isExactNumber(node.value)) {
        return refuse(`${String(node.source ?? node.value)} ${inexact}; quote it`, node.range?.[0])
      }
      return undefined
    },
    Pair: (_, pair, path) => {
      if (!isPair(pair) || !isScalar(pair.key) || typeof pair.key.value !== "string") {
        const key = isScalar(pair.key) ? String(pair.key.value) : "a complex key"
        return refuse(`key ${key} is not a string; quote it`, isAlias(pair.key) ? pair.key.range?.[0] : (pair.key as { range?: [number] } | null)?.range?.[0])
      }
      const parent = path[path.length - 1]
      if (!isMap(parent)) return undefined
      let keys = keysOf.get(parent)
      if (keys === undefined) keysOf.set(parent, keys = new Set())
      if (keys.has(pair.key.value)) return refuse(`duplicate key ${pair.key.value}: map keys must be unique`, pair.key.range?.[0])
      keys.add(pair.key.value)
      return undefined
    }
  })
  if (refusal !== undefined) return Result.fail(refusal)
  return Result.succeed(doc.toJS() as JsonObject)
}
