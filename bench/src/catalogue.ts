/**
 * A deterministic skills catalogue: `skills` skills of `filesPerSkill` files each (Markdown text,
 * a Python script, JSON and binary assets), sizes and contents drawn from a seeded PRNG, so every
 * run and every server sees the same bytes. Optional extra skills add a 1 MiB binary and a skill
 * at the spec limits (512 files, 16 MiB) for the client benchmark.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"

export interface File {
  readonly path: string
  readonly bytes: Uint8Array
  readonly text: boolean
}

export interface SkillSpec {
  /** `/`-separated skill path; the last segment is the name. */
  readonly path: string
  readonly files: ReadonlyArray<File>
}

export interface Catalogue {
  readonly skills: ReadonlyArray<SkillSpec>
  readonly bytes: number
  readonly files: number
}

export interface Options {
  readonly skills: number
  readonly filesPerSkill?: number
  readonly seed?: number
  /** Add `big/huge-asset` with a 1 MiB binary (`assets/big.bin`). */
  readonly bigFile?: boolean
  /** Add `bulk/full-skill`: 512 files, 16 MiB in total (the spec limits). */
  readonly fullSkill?: boolean
}

/** mulberry32: small, fast, deterministic. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const words = [
  "data", "report", "invoice", "table", "chart", "parse", "extract", "merge", "render", "deploy", "review",
  "audit", "schema", "query", "index", "cache", "stream", "batch", "export", "import", "format", "lint",
  "test", "build", "release", "triage", "summary", "policy", "ledger", "budget", "forecast", "metric"
]

const encoder = new TextEncoder()

const text = (random: () => number, bytes: number, heading: string): Uint8Array => {
  let out = `# ${heading}\n\n`
  while (out.length < bytes) {
    const n = 6 + Math.floor(random() * 10)
    for (let i = 0; i < n; i++) out += (i === 0 ? "" : " ") + words[Math.floor(random() * words.length)]
    out += ".\n"
  }
  return encoder.encode(out.slice(0, bytes - 1) + "\n")
}

/** Random bytes after a PNG signature: never valid UTF-8, so servers send them as base64 blobs. */
const binary = (random: () => number, bytes: number): Uint8Array => {
  const out = new Uint8Array(bytes)
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  for (let i = 0; i < bytes; i++) out[i] = i < signature.length ? signature[i]! : Math.floor(random() * 256)
  if (bytes > 8) out[8] = 0xff // 0xff never appears in UTF-8
  return out
}

const between = (random: () => number, low: number, high: number) => low + Math.floor(random() * (high - low))

export const skillName = (index: number, random: () => number) =>
  `${words[Math.floor(random() * words.length)]}-${words[Math.floor(random() * words.length)]}-${index.toString().padStart(5, "0")}`

const skillMd = (name: string, description: string, body: Uint8Array): Uint8Array =>
  Buffer.concat([encoder.encode(`---\nname: ${name}\ndescription: ${description}\nlicense: MIT\nmetadata:\n  team: bench\n---\n\n`), body])

/** The supporting files of a regular skill, in order; the first `filesPerSkill - 1` are used. */
const supporting = (random: () => number): Array<File> => [
  { path: "references/guide.md", bytes: text(random, between(random, 600, 1600), "Guide"), text: true },
  { path: "assets/logo.png", bytes: binary(random, between(random, 1024, 4096)), text: false },
  { path: "references/api.md", bytes: text(random, between(random, 800, 2400), "API"), text: true },
  { path: "scripts/run.py", bytes: text(random, between(random, 300, 900), "run"), text: true },
  { path: "templates/report.md", bytes: text(random, between(random, 200, 600), "Report"), text: true },
  { path: "assets/icon.bin", bytes: binary(random, between(random, 256, 1024)), text: false },
  {
    path: "data/sample.json",
    bytes: encoder.encode(JSON.stringify({ rows: Array.from({ length: between(random, 5, 30) }, (_, i) => ({ i, v: random() })) })),
    text: true
  }
]

export const generate = (options: Options): Catalogue => {
  const random = prng(options.seed ?? 2640)
  const perSkill = options.filesPerSkill ?? 8
  const skills: Array<SkillSpec> = []
  for (let i = 0; i < options.skills; i++) {
    const name = skillName(i, random)
    const group = `team-${(i % 97).toString().padStart(2, "0")}`
    const extra = supporting(random)
    while (extra.length < perSkill - 1) {
      extra.push({ path: `references/extra-${extra.length}.md`, bytes: text(random, between(random, 300, 1200), "Extra"), text: true })
    }
    skills.push({
      path: `${group}/${name}`,
      files: [
        { path: "SKILL.md", bytes: skillMd(name, `Work with ${name.replace(/-/g, " ")}`, text(random, between(random, 300, 1200), name)), text: true },
        ...extra.slice(0, perSkill - 1)
      ]
    })
  }
  if (options.bigFile === true) {
    skills.push({
      path: "big/huge-asset",
      files: [
        { path: "SKILL.md", bytes: skillMd("huge-asset", "A skill with a 1 MiB binary asset", text(random, 400, "Huge asset")), text: true },
        { path: "assets/big.bin", bytes: binary(random, 1 << 20), text: false }
      ]
    })
  }
  if (options.fullSkill === true) skills.push(fullSkill(random))
  let bytes = 0
  let files = 0
  for (const skill of skills) {
    for (const file of skill.files) {
      bytes += file.bytes.length
      files++
    }
  }
  return { skills, bytes, files }
}

/** 512 files, 16 MiB in total: `SKILL.md` plus 511 files of 32 KiB minus a share of `SKILL.md`. */
const fullSkill = (random: () => number): SkillSpec => {
  const md = skillMd("full-skill", "A skill at the spec limits of 512 files and 16 MiB", text(random, 2000, "Full skill"))
  const budget = 16 * 1024 * 1024 - md.length
  const each = Math.floor(budget / 511)
  const files: Array<File> = [{ path: "SKILL.md", bytes: md, text: true }]
  for (let i = 0; i < 511; i++) {
    const path = `part-${Math.floor(i / 64)}/file-${i.toString().padStart(3, "0")}`
    files.push(i % 2 === 0
      ? { path: `${path}.bin`, bytes: binary(random, each), text: false }
      : { path: `${path}.md`, bytes: text(random, each, `Part ${i}`), text: true })
  }
  return { path: "bulk/full-skill", files }
}

export const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

/** Writes the catalogue under `dir` (created); returns `dir`. */
export const write = (catalogue: Catalogue, dir: string): string => {
  mkdirSync(dir, { recursive: true })
  const folders = new Set<string>()
  for (const skill of catalogue.skills) {
    for (const file of skill.files) folders.add(Path.dirname(Path.join(dir, skill.path, file.path)))
  }
  for (const folder of folders) mkdirSync(folder, { recursive: true })
  // Synchronous writes: for tens of thousands of small files they beat the promise API by far.
  for (const skill of catalogue.skills) {
    for (const file of skill.files) writeFileSync(Path.join(dir, skill.path, file.path), file.bytes)
  }
  return dir
}

/**
 * A fresh folder for a catalogue: under `BENCH_TMPDIR`, else `/dev/shm` where it exists (tmpfs:
 * writing 80,000 files to this VM's disk takes 40 s, to tmpfs 4 s; servers read from the page
 * cache either way), else the OS temp folder.
 */
export const tempDir = (label: string) => {
  const base = process.env["BENCH_TMPDIR"] ?? (existsSync("/dev/shm") ? "/dev/shm" : Os.tmpdir())
  return Fs.mkdtemp(Path.join(base, `mcp-skills-bench-${label}-`))
}
