/**
 * `mcp-skills search`: a server with the skills tools (`serve --tools`) answers from its
 * `search_skills`, typos forgiven; a server without them has its listing filtered by the client,
 * which says so on stderr.
 */
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { runCli, serveHttp } from "./support/helpers.js"

const examples = Path.resolve(import.meta.dirname, "../../../examples/skills")

const served = <A>(args: ReadonlyArray<string>, f: (url: string) => Promise<A>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(serveHttp(examples, args), ({ url }) => Effect.promise(() => f(url)))))

describe.concurrent("mcp-skills search", () => {
  it("asks the server's search_skills tool: best first, a typo forgiven", () =>
    served(["--tools"], async (url) => {
      const run = await runCli(["search", url, "pdf", "procesing"])
      expect(run.stderr).toBe("")
      expect(run.status).toBe(0)
      expect(run.stdout.split("\n")[0]).toMatch(/^skill:\/\/pdf-processing\/SKILL\.md\tpdf-processing\t/)
      const json = JSON.parse((await runCli(["search", url, "csv", "--json"])).stdout)
      expect(json.via).toBe("search_skills")
      expect(json.skills[0].uri).toBe("skill://csv-cleaning/SKILL.md")
    }))

  it("filters the listing of a server without the tool, and says so", () =>
    served([], async (url) => {
      const run = await runCli(["search", url, "PDF"])
      expect(run.status).toBe(0)
      expect(run.stderr).toBe(`${url} has no search_skills tool: its listing was filtered here instead\n`)
      expect(run.stdout).toMatch(/^skill:\/\/pdf-processing\/SKILL\.md\tpdf-processing\t/)
      expect(run.stdout.trim().split("\n")).toHaveLength(1)
      // A typo finds nothing here: the filter matches words as they are.
      expect((await runCli(["search", url, "procesing"])).stdout).toBe("")
    }))

  it("needs a query", async () => {
    const run = await runCli(["search", "http://127.0.0.1:1/mcp"])
    expect(run.status).toBe(1)
    expect(run.stderr).toBe("mcp-skills: search needs a QUERY after TARGET; run 'mcp-skills search --help'\n")
  })
})
