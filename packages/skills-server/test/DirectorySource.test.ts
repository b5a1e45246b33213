import { NodeServices } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Digest, Limits, Manifest } from "@mcp-skills/core"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as DirectorySource from "../src/DirectorySource.js"
import * as MimeType from "../src/MimeType.js"
import { exampleUris, examples } from "./support/cli-server.js"
import { httpServer, modernHttp, ServerUrl } from "./support/wire.js"
import { tree } from "./support/tree.js"
import type * as DirectoryModel from "../src/DirectoryModel.js"


const skillMd = (name: string, extra = "") =>
  `---\nname: ${name}\ndescription: The ${name} skill, for tests.\n${extra}---\n\n# ${name}\n`

const uris = (loaded: DirectoryModel.Loaded) => loaded.skills.map((skill) => skill.manifest.uri)
const filesOf = (loaded: DirectoryModel.Loaded, uri: string) =>
  Array.from(loaded.skills.find((skill) => skill.manifest.uri === uri)?.manifest.files ?? [], (file) => file.path)

layer(NodeServices.layer)("DirectorySource", (it) => {
  describe("examples/skills", () => {
    it.effect("loads every example skill, none skipped", () =>
      Effect.gen(function*() {
        const loaded = yield* DirectorySource.load(examples, { strict: true })
        expect(loaded.skipped).toEqual([])
        expect(loaded.ignored).toEqual([])
        expect(uris(loaded)).toEqual(exampleUris)
        expect(loaded.skills[0]!.path).toEqual(["acme", "billing", "refunds"])
        expect(loaded.skills[0]!.directory).toBe("acme/billing/refunds")
      }))

    it.effect("R10: an enclosing skill lists its nested skill's files; the nested skill has its own entry", () =>
      Effect.gen(function*() {
        const loaded = yield* DirectorySource.load(examples)
        const outer = filesOf(loaded, "skill://acme/billing/refunds/SKILL.md")!
        expect(outer).toContain("escalation/SKILL.md")
        expect(outer).toContain("escalation/references/CHECKLIST.md")
        expect(outer[0]).toBe("SKILL.md")
        expect(filesOf(loaded, "skill://acme/billing/refunds/escalation/SKILL.md")).toEqual([
          "SKILL.md",
          "references/CHECKLIST.md"
        ])
      }))

    it.effect("R9/R14: every digest and size is that of the bytes on disk, binary and non-ASCII included", () =>
      Effect.gen(function*() {
        const loaded = yield* DirectorySource.load(examples)
        let checked = 0
        for (const skill of loaded.skills) {
          const folder = path.join(examples, ...skill.path)
          for (const file of skill.manifest.files) {
            const bytes = fs.readFileSync(path.join(folder, file.path))
            expect(file.size).toBe(bytes.byteLength)
            expect(file.digest).toBe(Digest.make(bytes))
            const resource = Manifest.entry(skill.manifest).resources
            expect(resource).not.toBe("dynamic")
            expect(resource).toContainEqual({ uri: file.uri, digest: file.digest, size: file.size })
            checked++
          }
        }
        expect(checked).toBeGreaterThan(20)
        const logo = Array.from(loaded.skills.find((s) => s.manifest.uri === "skill://pdf-processing/SKILL.md")!.manifest.files)
          .find((f) => f.path === "assets/logo.png")!
        expect([...logo.bytes!.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
        const style = Array.from(loaded.skills.find((s) => s.manifest.uri === "skill://changelog-writer/SKILL.md")!.manifest.files)
          .find((f) => f.path === "references/STYLE.md")!
        const text = new TextDecoder().decode(style.bytes!)
        expect(text).toContain("José")
        expect(text).toContain("漢字")
        expect(text).toContain("🐛")
        expect(style.bytes!.byteLength).toBeGreaterThan(text.length)
      }))

    it.effect("R3: the frontmatter is kept whole, with optional fields typed as written", () =>
      Effect.gen(function*() {
        const loaded = yield* DirectorySource.load(examples)
        const git = loaded.skills.find((s) => s.manifest.uri === "skill://git-workflow/SKILL.md")!
        expect(git.manifest.frontmatter).toEqual({
          name: "git-workflow",
          description: expect.stringContaining("Conventional Commits"),
          license: "Apache-2.0",
          compatibility: expect.stringContaining("git 2.38"),
          metadata: { author: "acme-devex", version: "1.4.0", "last-reviewed": "2026-10-01" },
          "allowed-tools": "Bash(git:*) Bash(gh pr create:*) Read"
        })
        for (const skill of loaded.skills) {
          const metadata = skill.manifest.frontmatter.metadata ?? {}
          expect(Object.keys(metadata).filter((key) => key.startsWith("io.modelcontextprotocol/"))).toEqual([])
        }
      }))

    it.effect("a prefix and a scheme are applied to every skill path", () =>
      Effect.gen(function*() {
        const loaded = yield* DirectorySource.load(examples, { prefix: ["example.org", "v1"], scheme: "docs" })
        expect(uris(loaded)).toContain("docs://example.org/v1/acme/billing/refunds/escalation/SKILL.md")
        expect(uris(loaded)).toContain("docs://example.org/v1/pdf-processing/SKILL.md")
      }))
  })

  describe("what is never served", () => {
    it.effect("hidden files and folders", () =>
      Effect.gen(function*() {
        const root = tree({
          "alpha/SKILL.md": skillMd("alpha"),
          "alpha/notes.md": "notes",
          "alpha/.env": "SECRET=1",
          "alpha/.git/config": "[core]",
          "alpha/refs/.hidden/inner.md": "inner",
          ".hidden-skill/SKILL.md": skillMd("hidden-skill")
        })
        const loaded = yield* DirectorySource.load(root)
        expect(uris(loaded)).toEqual(["skill://alpha/SKILL.md"])
        expect(filesOf(loaded, "skill://alpha/SKILL.md")).toEqual(["SKILL.md", "notes.md"])
      }))

    it.effect("symbolic links leaving the root, to folders, to hidden files or broken; links to inside files are served", () =>
      Effect.gen(function*() {
        const outside = tree({ "secret.txt": "outside the root", "dir/file.md": "outside dir" })
        const root = tree({
          "alpha/SKILL.md": skillMd("alpha"),
          "alpha/real.md": "real content",
          "shared/common.md": "shared content",
          ".private/key.pem": "private key"
        })
        fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "alpha/escape.txt"))
        fs.symlinkSync(path.join(outside, "dir"), path.join(root, "alpha/escape-dir"))
        fs.symlinkSync("../../../" + path.basename(outside) + "/secret.txt", path.join(root, "alpha/relative-escape.txt"))
        fs.symlinkSync(path.join(root, ".private/key.pem"), path.join(root, "alpha/key.pem"))
        fs.symlinkSync(path.join(root, "shared/common.md"), path.join(root, "alpha/common.md"))
        fs.symlinkSync(path.join(root, "shared"), path.join(root, "alpha/shared-dir"))
        fs.symlinkSync(path.join(root, "alpha"), path.join(root, "alpha/loop"))
        fs.symlinkSync(path.join(root, "nowhere.md"), path.join(root, "alpha/broken.md"))
        const loaded = yield* DirectorySource.load(root)
        expect(filesOf(loaded, "skill://alpha/SKILL.md")).toEqual(["SKILL.md", "common.md", "real.md"])
        const common = Array.from(loaded.skills[0]!.manifest.files).find((file) => file.path === "common.md")!
        expect(new TextDecoder().decode(common.bytes!)).toBe("shared content")
        expect(loaded.ignored.map((entry) => entry.path).sort()).toEqual([
          "alpha/broken.md",
          "alpha/escape-dir",
          "alpha/escape.txt",
          "alpha/key.pem",
          "alpha/loop",
          "alpha/relative-escape.txt",
          "alpha/shared-dir"
        ])
        for (const skill of loaded.skills) {
          for (const file of skill.manifest.files) {
            expect(new TextDecoder().decode(file.bytes!)).not.toMatch(/outside|private key/)
          }
        }
      }))

    it.effect("a root that is itself a symbolic link is resolved, and containment uses its real path", () =>
      Effect.gen(function*() {
        const root = tree({ "alpha/SKILL.md": skillMd("alpha") })
        const link = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "skills-link-")), "skills")
        fs.symlinkSync(root, link)
        const loaded = yield* DirectorySource.load(link)
        expect(uris(loaded)).toEqual(["skill://alpha/SKILL.md"])
      }))
  })

  describe("invalid skills", () => {
    const broken = () =>
      tree({
        "good/SKILL.md": skillMd("good"),
        "renamed/SKILL.md": skillMd("not-the-folder-name"),
        "no-frontmatter/SKILL.md": "# just markdown\n",
        "Bad_Name/SKILL.md": skillMd("Bad_Name")
      })

    it.effect("are skipped with their typed error while the others load", () =>
      Effect.gen(function*() {
        const loaded = yield* DirectorySource.load(broken())
        expect(uris(loaded)).toEqual(["skill://good/SKILL.md"])
        expect(loaded.skipped.map((entry) => entry.directory).sort()).toEqual(["Bad_Name", "no-frontmatter", "renamed"])
        for (const entry of loaded.skipped) {
          expect(entry._tag).toBe("InvalidSkillDirectory")
          expect(entry.error._tag).toBe("InvalidSkill")
        }
        const renamed = loaded.skipped.find((entry) => entry.directory === "renamed")!
        expect(renamed.error.message).toContain("not-the-folder-name")
        expect(renamed.error.message).toContain("renamed")
      }))

    it.effect("fail the whole load in strict mode, listing every invalid folder", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(DirectorySource.load(broken(), { strict: true }))
        expect(error._tag).toBe("InvalidSkills")
        if (error._tag !== "InvalidSkills") return
        expect(error.invalid.map((entry) => entry.directory).sort()).toEqual(["Bad_Name", "no-frontmatter", "renamed"])
        expect(error.message).toContain("renamed")
      }))

    it.effect("a skill over the limits is skipped from its file sizes", () =>
      Effect.gen(function*() {
        const root = tree({
          "small/SKILL.md": skillMd("small"),
          "big/SKILL.md": skillMd("big"),
          "big/a.bin": new Uint8Array(600),
          "big/b.bin": new Uint8Array(600)
        })
        const limits: Limits.Limits = { maxResources: 2, maxTotalBytes: 1000 }
        const loaded = yield* DirectorySource.load(root, { limits })
        expect(uris(loaded)).toEqual(["skill://small/SKILL.md"])
        const problems = loaded.skipped[0]!.error
        expect(problems._tag).toBe("InvalidSkill")
        if (problems._tag !== "InvalidSkill") return
        expect(problems.problems.map((problem) => problem.reason).join("\n")).toMatch(/3 files exceed the limit of 2[\s\S]*bytes exceed the limit of 1000/)
      }))

    it.effect("an unreadable file skips its skill with UnreadableFile", () =>
      Effect.gen(function*() {
        if (process.getuid?.() === 0) return // root reads everything regardless of permissions
        const root = tree({ "alpha/SKILL.md": skillMd("alpha"), "alpha/locked.md": "locked" })
        fs.chmodSync(path.join(root, "alpha/locked.md"), 0o000)
        const loaded = yield* DirectorySource.load(root)
        expect(loaded.skipped[0]!.error._tag).toBe("UnreadableFile")
      }))
  })

  describe("the root", () => {
    it.effect("a root holding SKILL.md is one skill named after its folder, with nested skills below it", () =>
      Effect.gen(function*() {
        const parent = fs.mkdtempSync(path.join(os.tmpdir(), "skills-root-"))
        const root = path.join(parent, "solo")
        fs.mkdirSync(path.join(root, "inner"), { recursive: true })
        fs.writeFileSync(path.join(root, "SKILL.md"), skillMd("solo"))
        fs.writeFileSync(path.join(root, "inner/SKILL.md"), skillMd("inner"))
        const loaded = yield* DirectorySource.load(root)
        expect(uris(loaded)).toEqual(["skill://solo/SKILL.md", "skill://solo/inner/SKILL.md"])
        expect(loaded.skills[0]!.directory).toBe(".")
        expect(filesOf(loaded, "skill://solo/SKILL.md")).toEqual(["SKILL.md", "inner/SKILL.md"])
      }))

    it.effect("a missing root or a file fails with SourceDirectoryError", () =>
      Effect.gen(function*() {
        const missing = yield* Effect.flip(DirectorySource.load(path.join(os.tmpdir(), "no-such-skills-folder-9f3a")))
        expect(missing._tag).toBe("SourceDirectoryError")
        const file = path.join(tree({ "x.md": "x" }), "x.md")
        const notFolder = yield* Effect.flip(DirectorySource.load(file))
        expect(notFolder._tag).toBe("SourceDirectoryError")
        expect(notFolder.message).toContain("not a folder")
      }))

    it.effect("a misspelt skill.md outside every skill is reported, not served", () =>
      Effect.gen(function*() {
        const loaded = yield* DirectorySource.load(tree({ "alpha/skill.md": skillMd("alpha"), "beta/SKILL.md": skillMd("beta") }))
        expect(uris(loaded)).toEqual(["skill://beta/SKILL.md"])
        expect(loaded.ignored).toEqual([
          { path: "alpha/skill.md", reason: "not a skill: the file must be named exactly SKILL.md" }
        ])
      }))

    it.effect("an empty root loads nothing", () =>
      Effect.gen(function*() {
        const loaded = yield* DirectorySource.load(tree({ "README.md": "not a skill" }))
        expect(loaded).toEqual({ skills: [], skipped: [], ignored: [], warnings: [], repairs: [] })
      }))
  })
})

layer(httpServer(DirectorySource.layer(examples).pipe(Layer.provide(NodeServices.layer))))("DirectorySource.layer", (it) => {
  it.effect("serves every example skill from an effect McpServer, with the bytes on disk", () =>
    Effect.gen(function*() {
      const client = modernHttp(yield* ServerUrl)
      const list = yield* client.call("skills/list")
      expect(list.skills.map((skill: { uri: string }) => skill.uri)).toHaveLength(6)
      const read = yield* client.call("resources/read", { uri: "skill://changelog-writer/references/STYLE.md" })
      expect(read.contents[0].text).toBe(fs.readFileSync(path.join(examples, "changelog-writer/references/STYLE.md"), "utf8"))
      expect(read.contents[0].mimeType).toBe("text/markdown")
      const logo = yield* client.call("resources/read", { uri: "skill://pdf-processing/assets/logo.png" })
      expect(Buffer.from(logo.contents[0].blob, "base64").equals(fs.readFileSync(path.join(examples, "pdf-processing/assets/logo.png")))).toBe(true)
      expect(logo.contents[0].mimeType).toBe("image/png")
    }))
})

describe("MimeType.fromPath", () => {
  it("R25: natural MIME types of common skill files", () => {
    const cases: Record<string, string> = {
      "SKILL.md": "text/markdown",
      "references/FORMS.md": "text/markdown",
      "notes.TXT": "text/plain",
      "data.json": "application/json",
      "config.yaml": "application/yaml",
      "config.yml": "application/yaml",
      "pyproject.toml": "application/toml",
      "table.csv": "text/csv",
      "page.html": "text/html",
      "style.css": "text/css",
      "a.js": "text/javascript",
      "a.mjs": "text/javascript",
      "a.cjs": "text/javascript",
      "a.ts": "text/typescript",
      "scripts/fill_form.py": "text/x-python",
      "check.sh": "application/x-sh",
      "feed.xml": "application/xml",
      "icon.svg": "image/svg+xml",
      "assets/logo.png": "image/png",
      "photo.jpg": "image/jpeg",
      "photo.JPEG": "image/jpeg",
      "anim.gif": "image/gif",
      "pic.webp": "image/webp",
      "doc.pdf": "application/pdf",
      "bundle.zip": "application/zip",
      "mod.wasm": "application/wasm",
      "LICENSE": "text/plain",
      // Where effect's standard table types otherwise, the skill's kind wins: TypeScript, not
      // MPEG-TS; Rust, not an RLS services list; YAML as RFC 9512 registers it.
      "src/main.rs": "text/x-rust",
      "a.mts": "text/typescript",
      // What only effect's table names is served with its type, not as bytes.
      "book.epub": "application/epub+zip",
      "notes.log": "text/plain",
      "clip.mov": "video/quicktime",
      "bin/tool": MimeType.fallback,
      "file.unknownext": MimeType.fallback,
      ".hidden": MimeType.fallback,
      "dir.md/file": MimeType.fallback
    }
    for (const [file, mime] of Object.entries(cases)) expect([file, MimeType.fromPath(file)]).toEqual([file, mime])
  })
})
