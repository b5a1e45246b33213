/**
 * Reads the module graph of a package from its sources: every `src/**\/*.ts` file, the relative
 * imports and re-exports between them, the cycles among them, the lengths of the modules and of
 * their headers. Type-only imports count like any other: a cycle of types is still two modules
 * that cannot be read one after the other (an internal module that needs a public module's types
 * takes them from where they are defined, or is handed them).
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

/** Every module below `src`, with the modules of the same `src` it imports. */
export const modules = (src: string): ReadonlyArray<Module> => {
  const files = (fs.readdirSync(src, { recursive: true, encoding: "utf8" }))
    .map((file) => file.split(path.sep).join("/"))
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .sort()
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
