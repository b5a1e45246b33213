/**
 * `mcp-skills search TARGET QUERY`: the skills of a server that match a query, best first, from
 * its `search_skills` tool (`mcp-skills-server serve --tools`), which ranks over the whole
 * catalogue with typos forgiven; from a server without it, the listing filtered here (every word
 * of the query in the skill's URI, name or description), which it says on stderr.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Command, Flag } from "effect/cli"
import * as SkillsClient from "../../SkillsClient.js"
import { arity, common, operandsOf, withTarget } from "./target.js"

/** The tool of `mcp-skills-server` this command asks first. */
const SearchTool = "search_skills"

const Hit = Schema.Struct({ uri: Schema.String, name: Schema.String, description: Schema.String })

const Page = Schema.Struct({ skills: Schema.Array(Hit), nextCursor: Schema.optionalKey(Schema.String) })

type Hit = typeof Hit.Type

const words = (text: string) => text.toLowerCase().split(/\s+/).filter((word) => word.length > 0)

// The listing's skills holding every word of the query, in the listing's order.
const filtered = (client: SkillsClient.Service, query: string) =>
  Effect.map(client.listSkills(), (listing) =>
    listing.skills
      .map((skill): Hit => ({ uri: skill.uri, name: skill.frontmatter.name, description: skill.frontmatter.description }))
      .filter((hit) => {
        const text = `${hit.uri} ${hit.name} ${hit.description}`.toLowerCase()
        return words(query).every((word) => text.includes(word))
      }))

const search = (client: SkillsClient.Service, query: string) =>
  Effect.gen(function*() {
    const tools = yield* client.mcp.listTools()
    const tool = tools.find((candidate) => candidate.name === SearchTool)
    if (tool === undefined) {
      yield* Console.error(`${client.server} has no ${SearchTool} tool: its listing was filtered here instead`)
      return { via: "listing" as const, skills: yield* filtered(client, query), nextCursor: undefined }
    }
    const page = yield* client.mcp.callTool({ tool, schema: Page, arguments: { query } })
    return { via: SearchTool, skills: page.skills, nextCursor: page.nextCursor }
  })

/** The `search` command. */
export const command = Command.make("search", {
  ...common,
  args: operandsOf("TARGET QUERY...", "; QUERY: words to look for in the skills' names, descriptions and paths"),
  json: Flag.Boolean("json").pipe(Flag.withDescription("Print the hits as JSON"), Flag.withDefault(false))
}, (input) =>
  withTarget("search", input, (client, rest) =>
    Effect.gen(function*() {
      const query = rest.join(" ")
      const found = yield* search(client, query)
      if (input.json) {
        yield* Console.log(JSON.stringify({ server: client.server, query, ...found }, null, 2))
        return
      }
      for (const hit of found.skills) yield* Console.log(`${hit.uri}\t${hit.name}\t${hit.description}`)
    }))).pipe(
  arity("search", (rest) => rest.length > 0 ? undefined : "needs a QUERY after TARGET"),
  Command.withDescription(
    "Search the skills of a server (one line each: URI, name, description), best first, with its search_skills tool; a server without it has its listing filtered here"
  ),
  Command.withExamples([
    { command: "mcp-skills search http://127.0.0.1:3000/mcp pdf forms", description: "skills about PDF forms" }
  ])
)
