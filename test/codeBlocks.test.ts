import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { bareExamples, blocks, check, checkAll, examples, root } from "./codeBlocks.js"

const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8")

const packages = ["skills-core", "skills-server", "skills-client"]
const readmes = ["README.md", ...packages.map((name) => `packages/${name}/README.md`)]
// Every Markdown file of docs/ is a guide (its index included): docs/typedoc-plugin.mjs puts the
// ones the index links on the site, and refuses one it does not.
const guides = fs.readdirSync(path.join(root, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)
// Every source's JSDoc, internal modules' too: an example is code someone will copy.
const sources = packages.flatMap((name) =>
  fs.readdirSync(path.join(root, "packages", name, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .sort()
    .map((file) => `packages/${name}/src/${file.split(path.sep).join("/")}`)
)

describe("the code a user reads", () => {
  // One tsc run for every block of every file: each run compiles the three packages' sources.
  let errors: ReadonlyArray<string> = []
  beforeAll(() => {
    errors = checkAll([
      ...[...readmes, ...guides].map((file) => ({ file, markdown: read(file) })),
      ...sources.map((file) => ({ file, markdown: examples(read(file)) }))
    ])
  }, 600_000)
  const errorsOf = (files: ReadonlyArray<string>) => errors.filter((error) => files.some((file) => error.startsWith(`${file}:`)))

  describe.each(readmes)("%s", (file) => {
    it("every TypeScript block compiles as written, imports included", () => {
      expect(blocks(read(file)).length).toBeGreaterThan(0)
      expect(errorsOf([file]), `blocks that do not compile:\n${errorsOf([file]).join("\n")}`).toEqual([])
    })
  })

  describe.each(guides)("%s", (file) => {
    it("every TypeScript block compiles as written, imports included", () => {
      expect(errorsOf([file]), `blocks that do not compile:\n${errorsOf([file]).join("\n")}`).toEqual([])
    })
  })

  describe.each(packages)("packages/%s/src", (name) => {
    it("every JSDoc @example is a ```ts block that compiles as written, imports included", () => {
      const files = sources.filter((file) => file.startsWith(`packages/${name}/`))
      const found = [...files.flatMap((file) => bareExamples(file, read(file))), ...errorsOf(files)]
      expect(found, `examples that do not compile:\n${found.join("\n")}`).toEqual([])
    })
  })

  // The public modules, as each package's index re-exports them: each shows itself in use.
  describe.each(packages)("packages/%s/src/index.ts", (name) => {
    it("every public module has at least one compiled @example", () => {
      const modules = [...read(`packages/${name}/src/index.ts`).matchAll(/^export \* as (\w+) from "\.\/(.+)\.js"/gm)]
      expect(modules.length).toBeGreaterThan(0)
      const without = modules.filter(([, , file]) => blocks(examples(read(`packages/${name}/src/${file}.ts`))).length === 0).map(([, module]) => module)
      expect(without, `public modules without a \`\`\`ts @example`).toEqual([])
    })
  })

  it("tsc reports nothing but errors in the blocks", () => {
    expect(errors.filter((error) => !errorsOf([...readmes, ...guides, ...sources]).includes(error))).toEqual([])
  })
})

describe("the code block check", () => {
  const markdown = [
    "# Title",
    "",
    "```sh",
    "npm test",
    "```",
    "",
    "```ts",
    "import { Effect } from \"effect\"",
    "export const ok = Effect.succeed(1)",
    "```",
    "",
    "  ```typescript title=\"x.ts\"",
    "  export const fine: number = \"1\"",
    "  ```",
    "",
    "````ts",
    "const program = Effect.succeed(renderReport)",
    "// ``` inside a longer fence is code",
    "````"
  ].join("\n")

  it("finds ts and typescript blocks, with the Markdown line of their first code line", () => {
    expect(blocks(markdown)).toEqual([
      { line: 8, indent: 0, code: "import { Effect } from \"effect\"\nexport const ok = Effect.succeed(1)" },
      { line: 13, indent: 2, code: "export const fine: number = \"1\"" },
      { line: 17, indent: 0, code: "const program = Effect.succeed(renderReport)\n// ``` inside a longer fence is code" }
    ])
  })

  it("fails a block that lacks an import, uses an undefined name or a wrong type, at its Markdown line and column", () => {
    const errors = check("EXAMPLE.md", markdown)
    expect(errors).toEqual([
      "EXAMPLE.md:13:16 - error TS2322: Type 'string' is not assignable to type 'number'.",
      "EXAMPLE.md:17:17 - error TS2304: Cannot find name 'Effect'.",
      "EXAMPLE.md:17:32 - error TS2304: Cannot find name 'renderReport'."
    ])
  })

  it("resolves the workspace packages from their sources", () => {
    const code = [
      "```ts",
      "import { SkillName } from \"@mcp-skills/core\"",
      "import { SkillsServer } from \"@mcp-skills/server\"",
      "import { SkillsClient } from \"@mcp-skills/client\"",
      "export const all = [SkillName.isSkillName(\"a\"), SkillsServer, SkillsClient]",
      "const wrong: string = SkillName.isSkillName(\"a\")",
      "```"
    ].join("\n")
    expect(check("X.md", code)).toEqual([expect.stringMatching(/^X\.md:6:7 - error TS2322: Type 'boolean' is not assignable to type 'string'/)])
  })

  const source = [
    "import { Effect } from \"effect\"",
    "",
    "/**",
    " * Doubles a number; a block outside an example is prose, not compiled:",
    " * ```ts",
    " * double(",
    " * ```",
    " *",
    " * @example",
    " * ```ts",
    " * import { Effect } from \"effect\"",
    " * const two: number = Effect.succeed(2)",
    " * ```",
    " *",
    " * @example",
    " * double(2) // 4",
    " *",
    " * @since 0.1.0",
    " */",
    "export const double = (n: number) => n * 2",
    "",
    "// ```ts",
    "// a line comment is not JSDoc: not compiled",
    "// ```",
    "const text = \"```ts\\nnot compiled either\\n```\"",
    "export const effect = Effect.succeed(text)"
  ].join("\n")

  it("reads a source's examples as Markdown, line for line and column for column", () => {
    const markdown = examples(source).split("\n")
    expect(markdown.length).toBe(source.split("\n").length)
    expect(markdown[11]).toBe("   const two: number = Effect.succeed(2)")
    expect(markdown.filter((line) => line.trim().length > 0)).toEqual([
      "   ```ts",
      "   import { Effect } from \"effect\"",
      "   const two: number = Effect.succeed(2)",
      "   ```",
      "   double(2) // 4"
    ])
    expect(blocks(examples(source)).map((block) => block.line)).toEqual([11])
  })

  it("fails an example at its source line and column", () => {
    expect(check("double.ts", examples(source))).toEqual([
      expect.stringMatching(/^double\.ts:12:10 - error TS2322: Type 'Effect<number, never, never>' is not assignable to type 'number'/)
    ])
  })

  it("refuses an @example without a ```ts block, at the @example's line", () => {
    expect(bareExamples("double.ts", source)).toEqual(["double.ts:15 - @example holds no ```ts block, so nothing compiles it"])
  })
})
