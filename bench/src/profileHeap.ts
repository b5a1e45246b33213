/**
 * Where the memory of a served catalogue goes: generates N skills x 8 files (`catalogue.ts`, default
 * 10,000), starts `mcp-skills-server serve` on it exactly as the bench does, takes a heap snapshot
 * once it listens (`servers/heapHook.ts`, preloaded) and summarises the snapshot by type and
 * constructor (count, self bytes, bytes per file), and the strings and arrays by what holds them
 * (`Constructor.property` of their first retainer), next to RSS, heapUsed, external and
 * arrayBuffers. Self sizes only: retained sizes need a dominator tree, and the holder table already
 * says which field keeps which bytes.
 *
 * Usage: node bench/dist/profileHeap.js [SKILLS | DIR] [TOP]
 * (a number generates that many skills in a temporary folder, removed at the end, and a 10-skill
 * baseline, so each row also shows what it adds per file served; a path serves that folder)
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Catalogue from "./catalogue.js"
import * as Children from "./child.js"

const arg = process.argv[2] ?? "10000"
const top = Number(process.argv[3] ?? 25)
const generated = /^\d+$/.test(arg)
// Beside the catalogues (tmpfs where there is one): the snapshot of 10,000 skills is hundreds of MiB.
const snapshotFile = Path.join(existsSync("/dev/shm") ? "/dev/shm" : Os.tmpdir(), `mcp-skills-heap-${process.pid}.heapsnapshot`)
const made: Array<string> = []

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`

const cleanup = () => {
  rmSync(snapshotFile, { force: true })
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
}
process.once("SIGINT", () => {
  cleanup()
  process.exit(130)
})

const catalogue = async (skills: number) => {
  const t = performance.now()
  const dir = await Catalogue.tempDir("heap")
  made.push(dir)
  Catalogue.write(Catalogue.generate({ skills }), dir)
  console.log(`catalogue: ${skills.toLocaleString("en")} skills written in ${seconds(t)}`)
  return dir
}

interface Memory {
  readonly rss: number
  readonly heapTotal: number
  readonly heapUsed: number
  readonly external: number
  readonly arrayBuffers: number
}

const serve = async (dir: string) => {
  process.env["HEAP_SNAPSHOT_FILE"] = snapshotFile
  const child = await Children.start("ours", ["--import", Path.join(Children.repoRoot, "bench/dist/servers/heapHook.js"), ...Children.oursArgs(dir)])
  try {
    const listening = Children.memoryOf(child.process.pid!)
    const t = performance.now()
    const taken = new Promise<{ before: Memory; after: Memory }>((resolve) => {
      let out = ""
      child.process.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        const match = /heap-snapshot (\{.*\})\n/.exec(out)
        if (match !== null) resolve(JSON.parse(match[1]!))
      })
    })
    child.process.kill("SIGUSR2")
    const memory = await taken
    console.log(`snapshot: ${mib(statSync(snapshotFile).size)} written in ${seconds(t)}`)
    return { ...memory, listening, startMs: child.startMs }
  } finally {
    await child.stop()
  }
}

/** The non-negative integers of a JSON array starting at `from`, into `out`; returns the index after `]`. */
const readInts = (buf: Buffer, from: number, out: Uint32Array | Float64Array): number => {
  let i = from
  let n = 0
  let value = 0
  let inNumber = false
  for (; n < out.length; i++) {
    const c = buf[i]!
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48)
      inNumber = true
    } else if (inNumber) {
      out[n++] = value
      value = 0
      inNumber = false
    }
  }
  return buf.indexOf("]", i)
}

/** The JSON strings of the array starting at `from` (V8 already cut each to 1,024 characters). */
const readStrings = (buf: Buffer, from: number): Array<string> => {
  const strings: Array<string> = []
  let i = from
  for (;;) {
    while (buf[i] !== 0x22 && buf[i] !== 0x5d) i++
    if (buf[i] === 0x5d) return strings
    const start = i + 1
    let escaped = false
    i = start
    while (buf[i] !== 0x22) {
      if (buf[i] === 0x5c) {
        escaped = true
        i++
      }
      i++
    }
    strings.push(escaped ? JSON.parse(buf.toString("utf8", start - 1, i + 1)) : buf.toString("utf8", start, i))
    i++
  }
}

interface Row {
  count: number
  bytes: number
}

const summarise = (file: string) => {
  const buf = readFileSync(file)
  const nodesAt = buf.indexOf('"nodes":[')
  const header = JSON.parse(`${buf.toString("utf8", 0, nodesAt).replace(/,\s*$/, "")}}`).snapshot as {
    meta: { node_fields: Array<string>; node_types: [Array<string>]; edge_fields: Array<string>; edge_types: [Array<string>] }
    node_count: number
    edge_count: number
  }
  const { meta } = header
  const nodeFields = meta.node_fields.length
  const edgeFields = meta.edge_fields.length
  const nodes = new Float64Array(header.node_count * nodeFields)
  const edges = new Uint32Array(header.edge_count * edgeFields)
  const edgesAt = readInts(buf, nodesAt + 9, nodes)
  readInts(buf, buf.indexOf('"edges":[', edgesAt) + 9, edges)
  const strings = readStrings(buf, buf.lastIndexOf('"strings":[') + 11)

  const TYPE = meta.node_fields.indexOf("type")
  const NAME = meta.node_fields.indexOf("name")
  const SIZE = meta.node_fields.indexOf("self_size")
  const EDGES = meta.node_fields.indexOf("edge_count")
  const E_TYPE = meta.edge_fields.indexOf("type")
  const E_NAME = meta.edge_fields.indexOf("name_or_index")
  const E_TO = meta.edge_fields.indexOf("to_node")
  const nodeTypes = meta.node_types[0]
  const edgeTypes = meta.edge_types[0]
  const typeOf = (node: number) => nodeTypes[nodes[node * nodeFields + TYPE]!]!
  // Plain objects are all "Object": name them by their first properties, which says which literal they are.
  const shape = new Map<number, string>()
  const nameOf = (node: number) => shape.get(node) ?? strings[nodes[node * nodeFields + NAME]!]!

  // The first retainer of every node (in snapshot order), skipping weak edges and the synthetic roots.
  const owner = new Int32Array(header.node_count).fill(-1)
  const ownerEdge = new Array<string>(header.node_count)
  let edge = 0
  for (let node = 0; node < header.node_count; node++) {
    const holds = typeOf(node) !== "synthetic"
    const plain = typeOf(node) === "object" && nameOf(node) === "Object"
    const keys: Array<string> = []
    const count = nodes[node * nodeFields + EDGES]!
    for (let k = 0; k < count; k++, edge++) {
      const type = edgeTypes[edges[edge * edgeFields + E_TYPE]!]!
      if (plain && type === "property" && strings[edges[edge * edgeFields + E_NAME]!] !== "__proto__") keys.push(strings[edges[edge * edgeFields + E_NAME]!]!)
      if (!holds || type === "weak" || type === "shortcut") continue
      const to = edges[edge * edgeFields + E_TO]! / nodeFields
      if (owner[to] !== -1) continue
      owner[to] = node
      const name = edges[edge * edgeFields + E_NAME]!
      ownerEdge[to] = type === "element" || type === "hidden" || /^\d+$/.test(strings[name] ?? "") ? "[]" : type === "context" ? `(context ${strings[name]})` : strings[name]!
    }
    // More keys than a literal has: a dictionary (a module cache, a lookup table), named as one.
    if (plain) shape.set(node, keys.length > 16 ? "Object (dictionary)" : `{${keys.slice(0, 5).join(",")}${keys.length > 5 ? ",…" : ""}}`)
  }

  const stringTypes = new Set(["string", "concatenated string", "sliced string"])
  // What a field can hold for the catalogue, beside strings: collections, byte views and their stores.
  const containers = new Set(["Array", "Map", "Set", "Buffer", "Uint8Array", "ArrayBuffer", "system / JSArrayBufferData"])
  // A holder is an object's constructor and field; an array or internal table is named by what holds it.
  const holder = (node: number, depth = 0): string => {
    const by = owner[node]!
    if (by === -1) return "(root)"
    const type = typeOf(by)
    const field = ownerEdge[node]!
    if ((type === "array" || type === "hidden") && depth < 3) return `${holder(by, depth + 1)}${field === "[]" ? "" : `.${field}`}[]`
    const name = type === "object" || type === "native" ? nameOf(by) : `(${type})`
    return field === "[]" ? `${name}[]` : `${name}.${field}`
  }

  const byType = new Map<string, Row>()
  const byHolder = new Map<string, Row>()
  const add = (map: Map<string, Row>, key: string, bytes: number) => {
    const row = map.get(key) ?? { count: 0, bytes: 0 }
    row.count++
    row.bytes += bytes
    map.set(key, row)
  }
  let total = 0
  for (let node = 0; node < header.node_count; node++) {
    const type = typeOf(node)
    const bytes = nodes[node * nodeFields + SIZE]!
    total += bytes
    const key = stringTypes.has(type) ? `(${type})` : type === "object" || type === "native" || type === "array" || type === "hidden" ? `${type}: ${nameOf(node) || "(unnamed)"}` : `(${type})`
    add(byType, key, bytes)
    const held = stringTypes.has(type) ? "string" : type === "array" || type === "number" ? type : containers.has(nameOf(node)) && (type === "object" || type === "native") ? nameOf(node) : undefined
    if (held !== undefined) add(byHolder, `${held} in ${holder(node)}`, bytes)
  }
  return { total, byType, byHolder, nodes: header.node_count, edges: header.edge_count }
}

/** Serves `dir`, snapshots it, summarises the snapshot and prints the memory figures. */
const measure = async (dir: string) => {
  const served = await serve(dir)
  const t = performance.now()
  const summary = summarise(snapshotFile)
  rmSync(snapshotFile, { force: true })
  console.log(`parsed: ${summary.nodes.toLocaleString("en")} nodes, ${summary.edges.toLocaleString("en")} edges in ${seconds(t)}`)
  let files = 0
  let bytes = 0
  const count = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = Path.join(folder, entry.name)
      if (entry.isDirectory()) count(path)
      else if (entry.isFile()) {
        files++
        bytes += statSync(path).size
      }
    }
  }
  count(dir)
  const { after, before, listening } = served
  console.log(`served: ${files.toLocaleString("en")} files, ${mib(bytes)} of content; start-up ${(served.startMs / 1000).toFixed(1)} s`)
  console.log(`  RSS listening ${mib(listening?.rss ?? NaN)} (peak ${mib(listening?.peak ?? NaN)}); after the snapshot's GC: RSS ${mib(after.rss)}, heapUsed ${mib(after.heapUsed)} (before GC ${mib(before.heapUsed)}), heapTotal ${mib(after.heapTotal)}, external ${mib(after.external)}, arrayBuffers ${mib(after.arrayBuffers)}; snapshot self sizes ${mib(summary.total)}`)
  return { ...summary, files, bytes, memory: { ...after, rss: listening?.rss ?? after.rss } }
}

type Measured = Awaited<ReturnType<typeof measure>>

/**
 * Rows by bytes; with a baseline, by what each row grows per file added (count and bytes), which is
 * what the catalogue costs beyond the server itself.
 */
const table = (title: string, pick: (m: Measured) => Map<string, Row>, at: Measured, base: Measured | undefined) => {
  const added = base === undefined ? 1 : at.files - base.files
  const before = (key: string) => (base === undefined ? undefined : pick(base).get(key)) ?? { count: 0, bytes: 0 }
  const rows = [...pick(at)]
    .map(([key, row]) => ({ key, row, count: (row.count - before(key).count) / added, bytes: (row.bytes - before(key).bytes) / added }))
    .sort((a, b) => (base === undefined ? b.row.bytes - a.row.bytes : b.bytes - a.bytes))
    .slice(0, top)
  const growth = base === undefined ? "" : ` | count added / file | bytes added / file`
  console.log(`\n| ${title} | count | self | share | bytes / file${growth} |`)
  console.log(`|---|---:|---:|---:|---:|${base === undefined ? "" : "---:|---:|"}`)
  for (const { key, row, count, bytes } of rows) {
    const cells = [key.replace(/\|/g, "\\|").slice(0, 90), row.count.toLocaleString("en"), mib(row.bytes), `${((row.bytes / at.total) * 100).toFixed(1)}%`, (row.bytes / at.files).toFixed(0)]
    if (base !== undefined) cells.push(count.toFixed(2), bytes.toFixed(0))
    console.log(`| ${cells.join(" | ")} |`)
  }
}

try {
  const skills = generated ? Number(arg) : undefined
  // At 10 skills the heap is the server itself; the difference to it is what the catalogue costs.
  const base = skills !== undefined && skills > 10 ? await measure(await catalogue(10)) : undefined
  const at = await measure(skills === undefined ? Path.resolve(arg) : await catalogue(skills))
  if (base !== undefined) {
    const added = at.files - base.files
    const per = (key: "rss" | "heapUsed" | "external" | "arrayBuffers") => `${key} ${((at.memory[key] - base.memory[key]) / added).toFixed(0)}`
    console.log(`\nadded per file over ${base.files} files (B): content ${((at.bytes - base.bytes) / added).toFixed(0)}, ${per("rss")} (listening), ${per("heapUsed")}, ${per("external")}, ${per("arrayBuffers")}, snapshot ${((at.total - base.total) / added).toFixed(0)}`)
  }
  table("type: constructor", (m) => m.byType, at, base)
  table("strings, arrays, collections, buffers by holder (first retainer)", (m) => m.byHolder, at, base)
} finally {
  cleanup()
}
