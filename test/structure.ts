/**
 * Reads the module graph of a package from its sources: every `src/**\/*.ts` file, the relative
 * imports and re-exports between them, the cycles among them, the lengths of the modules and of
 * their headers. Type-only imports count like any other: a cycle of types is still two modules
 * that cannot be read one after the other (an internal module that needs a public module's types
 * takes them from where they are defined, or is handed them).
 *
 * It also reads where a package touches effect's internals (`trespasses`): the fence rule of the
 * server, whose `internal/effect/` folder is the only one allowed to.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** One module of a package: its path below the package's `src`, `/`-separated, its lines, header lines and imports. */
export interface Module {
  readonly file: string
  readonly lines: number
  /** Lines of the comment the module opens with (its purpose and `@since`), 0 without one. */
  readonly header: number
  readonly imports: ReadonlyArray<string>
}

// Top-level statements start a line (the formatter puts them there), so a JSDoc example, always
// behind ` * `, is never read as one. A statement may span lines up to its specifier, the first quote it holds.
const statement = /^(?:(import|export)\s+(type\s+)?(?=[\w*{])|export\s+(?=[*{]))[^;"'`]*?\bfrom\s*["']([^"']+)["']|^import\s*["']([^"']+)["']/gm

/** One import or re-export: what it names and whether it is `import type` / `export type`. */
export interface Specifier {
  readonly specifier: string
  readonly typeOnly: boolean
}

/** The specifiers a module's text imports or re-exports from, in order. */
export const specifiers = (text: string): ReadonlyArray<Specifier> =>
  [...text.matchAll(statement)].map((match) => ({ specifier: match[3] ?? match[4]!, typeOnly: match[2] !== undefined }))

/** Lines as `wc -l` counts them: a last line without its newline still counts. */
export const lineCount = (text: string): number => text.length === 0 ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0)

/** Lines of the block comment a module opens with, its closing line included; 0 when it opens with code. */
export const headerLines = (text: string): number => {
  const body = text.startsWith("#!") ? text.slice(text.indexOf("\n") + 1) : text
  if (!body.startsWith("/*")) return 0
  const end = body.indexOf("*/")
  return end === -1 ? lineCount(body) : lineCount(body.slice(0, end + 2))
}

// `./x.js` names `x.ts` in the sources; anything not relative is another package.
const resolve = (from: string, specifier: string): string | undefined => {
  if (!specifier.startsWith(".")) return undefined
  return path.posix.join(path.posix.dirname(from), specifier).replace(/\.js$/, ".ts")
}

const sources = (src: string): ReadonlyArray<string> =>
  fs.readdirSync(src, { recursive: true, encoding: "utf8" })
    .map((file) => file.split(path.sep).join("/"))
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .sort()

/** Every module below `src`, with the modules of the same `src` it imports. */
export const modules = (src: string): ReadonlyArray<Module> => {
  const files = sources(src)
  const known = new Set(files)
  return files.map((file) => {
    const text = fs.readFileSync(path.join(src, file), "utf8")
    const imports = specifiers(text).flatMap(({ specifier }) => {
      const target = resolve(file, specifier)
      return target === undefined || !known.has(target) ? [] : [target]
    })
    return { file, lines: lineCount(text), header: headerLines(text), imports: [...new Set(imports)] }
  })
}

/**
 * Modules that import one another: every module of a strongly connected component (`members`,
 * sorted) and the shortest loop through its first one (`path`, `["a.ts", "b.ts", "a.ts"]`).
 */
export interface Cycle {
  readonly members: ReadonlyArray<string>
  readonly path: ReadonlyArray<string>
}

/** Every import cycle, one per strongly connected component (Tarjan); a module importing itself is one. */
export const cycles = (graph: ReadonlyArray<Module>): ReadonlyArray<Cycle> => {
  const edges = new Map(graph.map((module) => [module.file, module.imports]))
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const components: Array<Array<string>> = []
  const visit = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    onStack.add(file)
    for (const next of edges.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!))
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== file)
      if (component.length > 1 || edges.get(file)!.includes(file)) components.push(component.sort())
    }
  }
  for (const module of graph) if (!index.has(module.file)) visit(module.file)
  return components.sort((a, b) => a[0]! < b[0]! ? -1 : 1).map((members) => ({ members, path: shortestLoop(members, edges) }))
}

// The shortest way from a component's first file back to it, inside the component (breadth first).
const shortestLoop = (component: ReadonlyArray<string>, edges: ReadonlyMap<string, ReadonlyArray<string>>) => {
  const inside = new Set(component)
  const start = component[0]!
  const before = new Map<string, string>()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    const file = queue[i]!
    for (const next of edges.get(file)!) {
      if (!inside.has(next)) continue
      if (next === start) {
        const loop = [start]
        for (let at = file; at !== start; at = before.get(at)!) loop.splice(1, 0, at)
        return [...loop, start]
      }
      if (!before.has(next) && next !== start) {
        before.set(next, file)
        queue.push(next)
      }
    }
  }
  throw new Error(`${start} is on no cycle`)
}

/** A string literal of a module: its value, its line, and whether it names what an import or re-export reads. */
export interface Literal {
  readonly value: string
  readonly line: number
  readonly specifier: boolean
}

/**
 * A module's text as the fence rule reads it: `code`, the text with comments and the insides of
 * string literals blanked (lines kept), and its string literals. Template literals count as
 * strings whole (their `${}` parts included), which is enough to find what they name.
 */
export const scan = (text: string): { readonly code: string; readonly literals: ReadonlyArray<Literal> } => {
  const code: Array<string> = []
  const literals: Array<Literal> = []
  let line = 1
  let i = 0
  const blank = (char: string) => char === "\n" ? "\n" : " "
  while (i < text.length) {
    const char = text[i]!
    const next = text[i + 1]
    if (char === "/" && (next === "/" || next === "*")) {
      const end = next === "/" ? text.indexOf("\n", i) : text.indexOf("*/", i + 2) + 2
      const stop = end === -1 || end === 1 ? text.length : end
      for (const c of text.slice(i, stop)) {
        code.push(blank(c))
        if (c === "\n") line++
      }
      i = stop
      continue
    }
    // A regular expression literal (a `/` where an expression starts): skipped whole, so the
    // quotes it may hold start no string.
    if (char === "/" && /(^|[(,=:[!&|?{};]|\breturn)\s*$/.test(code.slice(-24).join(""))) {
      let j = i + 1
      let inClass = false
      while (j < text.length && text[j] !== "\n" && (inClass || text[j] !== "/")) {
        if (text[j] === "\\") j++
        else if (text[j] === "[") inClass = true
        else if (text[j] === "]") inClass = false
        j++
      }
      code.push(...[...text.slice(i, j + 1)].map(blank))
      i = j + 1
      continue
    }
    if (char === "\"" || char === "'" || char === "`") {
      const start = line
      let value = ""
      let j = i + 1
      while (j < text.length && text[j] !== char) {
        if (text[j] === "\\") value += text[j++]
        if (text[j] === "\n") line++
        value += text[j++]
      }
      const before = code.slice(-24).join("").trimEnd()
      literals.push({ value, line: start, specifier: /(?:\bfrom|\bimport\s*\(?)$/.test(before) })
      code.push(char, ...[...value].map(blank), char)
      i = j + 1
      continue
    }
    if (char === "\n") line++
    code.push(char)
    i++
  }
  return { code: code.join(""), literals }
}

/** What the fence rule of one package says (see `trespasses`). */
export interface Fence {
  /** The folder below `src` that alone may touch effect's internals, ending in `/`. */
  readonly folder: string
  /** The module of that folder the rest of the package may import. */
  readonly port: string
}

/**
 * effect's undocumented hooks, by name: the adapter methods and installation context of its MCP
 * runtime (4.1.0's `McpProtocol` adapters, `installHandlers`' `target`), and `Context.mapUnsafe`,
 * through which a context is read by effect's own keys.
 */
export const hookNames = [
  "installHandlers",
  "handlerRpcs",
  "clientRpcs",
  "profileFromRequestMetadata",
  "registrationPresence",
  "subscribeServerNotifications",
  "terminateSubscription",
  "sendNotification",
  "projectNotification",
  "handlerTarget",
  "mapUnsafe"
] as const

// The members of effect's `McpServer` service that register or answer: assigning one patches it.
const serviceMembers = [
  "addResource",
  "addResourceTemplate",
  "addTool",
  "addPrompt",
  "findResource",
  "callTool",
  "getPromptResult",
  "completion",
  "notifyElicitationComplete"
]

const patches: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bObject\s*\.\s*(defineProperty|setPrototypeOf)\b/g, "patches an object (Object.$1)"],
  [/\bReflect\s*\.\s*(set|defineProperty)\b/g, "patches an object (Reflect.$1)"],
  [new RegExp(`\\.\\s*(${serviceMembers.join("|")})\\s*=(?![=>])`, "g"), "patches effect's McpServer service ($1)"]
]

const isEffect = (specifier: string) => /^@?effect(\/|$)/.test(specifier)

/**
 * Where modules outside `fence.folder` touch effect's internals, one line each
 * (`file:line: what`). Outside the fence a module may not:
 *
 * 1. import `effect/rpc/*` (the RPC machinery beneath `McpServer`) or any `internal` path of
 *    effect's packages;
 * 2. import a module of the fence other than its port;
 * 3. write a string naming one of effect's own keys (a literal starting `effect/` or `@effect/`
 *    that is not an import specifier: context keys, annotation keys);
 * 4. name one of effect's undocumented hooks (`hookNames`);
 * 5. patch an object at run time (`Object.defineProperty`, `Object.setPrototypeOf`,
 *    `Reflect.set`, `Reflect.defineProperty`) or assign a member of the `McpServer` service.
 */
export const trespasses = (src: string, fence: Fence): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (const file of sources(src)) {
    if (file.startsWith(fence.folder)) continue
    const text = fs.readFileSync(path.join(src, file), "utf8")
    const { code, literals } = scan(text)
    const lineOf = (offset: number) => lineCount(code.slice(0, offset + 1))
    for (const literal of literals) {
      const where = `${file}:${literal.line}`
      if (literal.specifier) {
        const target = resolve(file, literal.value)
        if (isEffect(literal.value) && /(^|\/)rpc(\/|$)|(^|\/)internal(\/|$)/.test(literal.value.replace(/^@?effect\/?/, ""))) {
          found.push(`${where}: imports ${literal.value}`)
        } else if (target !== undefined && target.startsWith(fence.folder) && target !== fence.port) {
          found.push(`${where}: enters the fence by ${target}, not by ${fence.port}`)
        }
      } else if (isEffect(literal.value)) {
        found.push(`${where}: names effect's key ${JSON.stringify(literal.value)}`)
      }
    }
    for (const match of code.matchAll(new RegExp(`\\b(${hookNames.join("|")})\\b`, "g"))) {
      found.push(`${file}:${lineOf(match.index)}: names effect's hook ${match[1]}`)
    }
    for (const [pattern, what] of patches) {
      for (const match of code.matchAll(pattern)) found.push(`${file}:${lineOf(match.index)}: ${what.replace("$1", match[1]!)}`)
    }
  }
  return found
}
