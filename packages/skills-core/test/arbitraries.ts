/**
 * Hand-built arbitraries for values whose schema has cross-field checks (a name that must equal a URI
 * segment), which a generator derived field by field would almost never satisfy. Shared by the
 * server and client test suites.
 */
import { Arbitrary, Result, Schema } from "effect"
import { Manifest, SkillFrontmatter, SkillName, SkillUri } from "../src/index.js"

/** Whether a string has no lone surrogates, so it can be written as UTF-8. */
export const isWellFormed = (s: string): boolean => {
  try {
    encodeURIComponent(s)
    return true
  } catch {
    return false
  }
}

const reserved = new Set(["name", "description", "license", "compatibility", "metadata", "allowed-tools"])

/**
 * Valid skill names, folded from arbitrary strings: a generator filtered by the naming regex discards
 * most candidates at larger sizes.
 */
export const skillName: Arbitrary.Arbitrary<SkillName.SkillName> = Arbitrary.map(Arbitrary.schema(Schema.String), (s) => {
  const folded = s.toLowerCase().replace(/[^a-z0-9-]/g, "").replace(/-+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64).replace(/-+$/, "")
  return (folded.length > 0 ? folded : "skill") as SkillName.SkillName
})

/** Valid Agent Skills frontmatter with arbitrary extra keys. */
export const frontmatter = (name: Arbitrary.Arbitrary<string> = skillName) =>
  Arbitrary.map(
    Arbitrary.all({
      name,
      description: Arbitrary.map(Arbitrary.schema(Schema.String), (s) => s.slice(0, 1024) || "d"),
      license: Arbitrary.schema(Schema.UndefinedOr(Schema.String)),
      metadata: Arbitrary.schema(Schema.UndefinedOr(Schema.Record(Schema.String, Schema.String))),
      allowedTools: Arbitrary.schema(Schema.UndefinedOr(Schema.Union([Schema.String, Schema.Array(Schema.String)]))),
      extra: Arbitrary.schema(Schema.Record(Schema.String, Schema.Json))
    }),
    ({ name, description, license, metadata, allowedTools, extra }): SkillFrontmatter.SkillFrontmatter => {
      const rest = Object.fromEntries(Object.entries(JSON.parse(JSON.stringify(extra)) as object).filter(([k]) => !reserved.has(k)))
      return ({
        ...rest,
        name,
        description,
        ...(license === undefined ? {} : { license }),
        ...(metadata === undefined ? {} : { metadata }),
        ...(allowedTools === undefined ? {} : { "allowed-tools": allowedTools })
      }) as SkillFrontmatter.SkillFrontmatter
    }
  )

const segment = Arbitrary.schema(Schema.Literals(["acme", "billing", "team-a", "v2", "café", "a b", "x"]))
const fileName = Arbitrary.schema(Schema.Literals(["README.md", "notes.txt", "logo.png", "data.json", "é.md", "a b.md", "script.sh"]))
const dirName = Arbitrary.schema(Schema.Literals(["references", "assets", "templates", "scripts", "deep/er"]))

/** A skill path (prefix segments then a valid name) and its files, SKILL.md included. */
export const skillFiles = Arbitrary.map(
  Arbitrary.all({
    prefix: Arbitrary.array(segment, { maxLength: 3 }),
    name: skillName,
    frontmatter: frontmatter(Arbitrary.Constant("placeholder")),
    body: Arbitrary.schema(Schema.String),
    others: Arbitrary.array(
      Arbitrary.all({ dir: Arbitrary.schema(Schema.UndefinedOr(Schema.Literal("x"))), d: dirName, f: fileName, bytes: Arbitrary.schema(Schema.Uint8Array) }),
      { maxLength: 6 }
    )
  }),
  ({ prefix, name, frontmatter, body, others }) => {
    const files = new Map<string, Uint8Array>()
    files.set("SKILL.md", new TextEncoder().encode(SkillFrontmatter.render({ ...frontmatter, name }, isWellFormed(body) ? body : "")))
    for (const other of others) files.set(other.dir === undefined ? other.f : `${other.d}/${other.f}`, other.bytes)
    return {
      path: [...prefix, name] as ReadonlyArray<string>,
      files: [...files].map(([path, bytes]) => ({ path, bytes }))
    }
  }
)

/** A valid manifest built from arbitrary skill files. */
export const manifest = Arbitrary.map(skillFiles, ({ path, files }) =>
  Result.getOrThrow(Manifest.make({ uri: Result.getOrThrow(SkillUri.skillMd("skill", path)), files }))
)
