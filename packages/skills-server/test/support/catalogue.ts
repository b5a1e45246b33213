/**
 * The catalogue most wire tests serve: the spec §8 skill, a deep path, a nested pair (R10), an
 * unlisted skill, a dynamic skill, and files that must go out as blobs.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import { Skill } from "../../src/index.js"
import { pdfProcessing, simple, skillMd } from "./fixtures.js"

export const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9]) // "café" in Latin-1: not UTF-8
export const withBom = new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]) // BOM + "hi": round-trips exactly

export const dailyMd = skillMd("daily", "Build today's operations report from live data", "metadata:\n  owner: ops\n")
export const dynamicReads: Array<string> = []

export const daily = Skill.dynamic({
  path: "reports/daily",
  frontmatter: { name: "daily", description: "Build today's operations report from live data", metadata: { owner: "ops" } },
  read: (path) =>
    Effect.sync(() => {
      dynamicReads.push(path)
      return path === "SKILL.md" ? dailyMd : path === "data/today.json" ? `{"day":${dynamicReads.length}}` : undefined
    }),
  list: Effect.succeed(["SKILL.md", "data/today.json"])
})

export const catalogue = [
  pdfProcessing,
  Skill.make({
    path: "acme/billing/refunds",
    files: {
      "SKILL.md": skillMd("refunds", "Issue refunds"),
      "references/policy.md": "# Refund policy\n",
      "references/deep/notes.txt": "notes\n",
      "data/latin1.txt": latin1,
      "data/bom.txt": withBom
    }
  }),
  simple("toolbox", { "guide.md": "# Guide\n" }),
  // Nested in toolbox: toolbox's manifest must list these files too (R10).
  simple("toolbox/git", { "cheatsheet.md": "git status\n" }),
  simple("secret/hidden-gem", { "notes.md": "unlisted\n" }, false),
  daily
]

export const listedUris = [
  "skill://acme/billing/refunds/SKILL.md",
  "skill://broken/SKILL.md",
  "skill://pdf-processing/SKILL.md",
  "skill://reports/daily/SKILL.md",
  "skill://toolbox/SKILL.md",
  "skill://toolbox/git/SKILL.md"
]

export const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

/** The raw bytes of one `resources/read` content item. */
export const bytesOf = (content: { text?: string; blob?: string }): Uint8Array =>
  content.text !== undefined ? new TextEncoder().encode(content.text) : new Uint8Array(Buffer.from(content.blob!, "base64"))
