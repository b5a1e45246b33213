import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { blocks, check, root } from "./readme.js"

const readmes = ["README.md", ...["core", "server", "client"].map((name) => `packages/skills-${name}/README.md`)]

describe.each(readmes)("%s", (file) => {
  it("every TypeScript block compiles as written, imports included", () => {
    const readme = fs.readFileSync(path.join(root, file), "utf8")
    expect(blocks(readme).length).toBeGreaterThan(0)
    const errors = check(file, readme)
    expect(errors, `README blocks that do not compile:\n${errors.join("\n")}`).toEqual([])
  })
})

describe("the README check", () => {
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
})
