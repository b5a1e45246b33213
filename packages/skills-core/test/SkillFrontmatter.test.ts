import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { Limits, SkillFrontmatter } from "../src/index.js"

const failure = (input: string) => {
  const result = SkillFrontmatter.parse(input)
  if (Result.isSuccess(result)) throw new Error(`parsed: ${JSON.stringify(result.success)}`)
  expect(result.failure._tag).toBe("FrontmatterError")
  return result.failure
}

describe("SkillFrontmatter.parse", () => {
  it("splits frontmatter and body; YAML 1.2 core typing (spec §7 item 6)", () => {
    const doc = Result.getOrThrow(SkillFrontmatter.parse(
      "---\nname: demo\ndescription: Does things\nflag: yes\nversion: 1.0\ndate: 2024-01-01\ncount: 0o17\nnothing: ~\nlist: [a, 1]\n---\n# Body\n"
    ))
    expect(doc.frontmatter).toEqual({
      name: "demo",
      description: "Does things",
      flag: "yes",
      version: 1,
      date: "2024-01-01",
      count: 15,
      nothing: null,
      list: ["a", 1]
    })
    expect(doc.body).toBe("# Body\n")
  })

  it("tolerates a BOM and CRLF line ends, keeping the body as written", () => {
    const doc = Result.getOrThrow(SkillFrontmatter.parse(new TextEncoder().encode("\uFEFF---\r\nname: demo\r\ndescription: d\r\n---\r\nbody\r\n")))
    expect(doc.frontmatter).toEqual({ name: "demo", description: "d" })
    expect(doc.body).toBe("body\r\n")
  })

  it("keeps __proto__ as a plain key", () => {
    const doc = Result.getOrThrow(SkillFrontmatter.parse("---\nname: a\ndescription: b\n__proto__: {x: 1}\n---\n"))
    expect(Object.getPrototypeOf(doc.frontmatter)).toBe(Object.prototype)
    expect(Object.hasOwn(doc.frontmatter, "__proto__")).toBe(true)
  })

  const refused: ReadonlyArray<[string, string, string, number | undefined]> = [
    ["no opening line", "name: a\n", "must start with", 1],
    ["no closing line", "---\nname: a\n", "not closed", undefined],
    ["an anchor", "---\nname: a\ndescription: &d x\nother: 1\n---\n", "anchor", 3],
    ["an alias", "---\nname: &n a\ndescription: *n\n---\n", "anchor", 2],
    ["a custom tag", "---\nname: a\ndescription: !shout x\n---\n", "tag", 3],
    ["a duplicate key", "---\nname: a\ndescription: x\nname: b\n---\n", "unique", 4],
    ["a duplicate key 1,000 keys later", `---\nname: a\ndescription: x\n${Array.from({ length: 1_000 }, (_, i) => `k${i}: v\n`).join("")}k1: again\n---\n`, "unique", 1_004],
    ["a duplicate key in a nested flow map", "---\nname: a\ndescription: x\nm:\n  a: 1\n  b: {c: 1, c: 2}\n---\n", "unique", 6],
    ["a number key", "---\nname: a\ndescription: x\n1: one\n---\n", "not a string", 4],
    ["a null key", "---\nname: a\ndescription: x\n~: none\n---\n", "not a string", 4],
    ["a complex key", "---\nname: a\ndescription: x\n? [a]\n: v\n---\n", "not a string", 4],
    ["infinity", "---\nname: a\ndescription: x\nn: .inf\n---\n", "JSON", 4],
    ["a huge integer", "---\nname: a\ndescription: x\nn: 12345678901234567890\n---\n", "JSON", 4],
    ["an integer beyond 2^53 that a double holds exactly", "---\nname: a\ndescription: x\nn: 18446744073709551616\n---\n", "2^53", 4],
    ["2^53 + 1", "---\nname: a\ndescription: x\nn: [1, 9007199254740993]\n---\n", "2^53", 4],
    ["a float beyond 2^53", "---\nname: a\ndescription: x\nn:\n  m: 1.5e300\n---\n", "2^53", 5],
    ["a sequence at the top", "---\n- a\n---\n", "mapping", 2],
    ["an empty block", "---\n---\n", "empty", 2],
    ["a second document", "---\nname: a\n...\nname: b\n---\n", "several", undefined]
  ]
  for (const [title, input, mentions, line] of refused) {
    it(`refuses ${title}, naming the problem and its line`, () => {
      const error = failure(input)
      expect(error.message).toContain(mentions)
      if (line !== undefined) expect(error.line).toBe(line)
    })
  }

  it("reports a YAML error on the line of the file, once", () => {
    const error = failure("---\nname: a\ndescription: b\nc\n---\n")
    expect(error.line).toBe(4)
    expect(error.message).not.toContain("at line")
  })

  it("refuses bytes that are not UTF-8", () => {
    const result = SkillFrontmatter.parse(new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0x0a]))
    expect(Result.isFailure(result) && result.failure.reason).toContain("UTF-8")
  })
})

describe("SkillFrontmatter.decode", () => {
  it("types the Agent Skills fields and keeps every other key (R3)", () => {
    const fm = Result.getOrThrow(SkillFrontmatter.decode({
      name: "demo",
      description: "d",
      license: "MIT",
      compatibility: "node >= 22",
      metadata: { owner: "ops" },
      "allowed-tools": ["Read", "Bash(git:*)"],
      custom: { nested: [1, true, null] }
    }))
    expect(fm.custom).toEqual({ nested: [1, true, null] })
    expect(fm["allowed-tools"]).toEqual(["Read", "Bash(git:*)"])
  })

  const invalid: ReadonlyArray<[string, Schema.JsonObject, string]> = [
    ["missing name", { description: "d" }, "name"],
    ["missing description", { name: "a" }, "description"],
    ["an upper-case name", { name: "Demo", description: "d" }, "name"],
    ["a name with --", { name: "a--b", description: "d" }, "name"],
    ["an empty description", { name: "a", description: "" }, "description"],
    ["a description over 1024 characters", { name: "a", description: "x".repeat(1025) }, "description"],
    ["non-string metadata values", { name: "a", description: "d", metadata: { n: 1 } }, "metadata"],
    ["allowed-tools of numbers", { name: "a", description: "d", "allowed-tools": [1] }, "allowed-tools"],
    ["an empty compatibility", { name: "a", description: "d", compatibility: "" }, "compatibility"]
  ]
  for (const [title, input, field] of invalid) {
    it(`refuses ${title}, naming the field`, () => {
      const result = SkillFrontmatter.decode(input)
      if (Result.isSuccess(result)) throw new Error("decoded")
      expect(result.failure.field).toBe(field)
    })
  }

  it.prop("any JSON in any field is accepted or refused with the field named once, never thrown", {
    valid: SkillFrontmatter.SkillFrontmatter,
    field: Schema.Literals(["name", "description", "license", "compatibility", "metadata", "allowed-tools"]),
    value: Schema.Json
  }, ({ valid, field, value }) => {
    const result = SkillFrontmatter.decode({ ...valid, [field]: value })
    if (Result.isSuccess(result)) return
    expect(result.failure.field).toBe(field)
    expect(result.failure.reason).not.toContain(`["${field}"]`)
  })
})

describe("SkillFrontmatter.render and diff", () => {
  const JsonObject = Schema.Record(Schema.String, SkillFrontmatter.Value)
  it.prop("render then parse round-trips arbitrary JSON frontmatter and body", {
    frontmatter: JsonObject,
    body: Arbitrary.schema(Schema.String)
  }, ({ frontmatter, body }) => {
    const normalised = JSON.parse(JSON.stringify(frontmatter)) as Schema.JsonObject
    const rendered = SkillFrontmatter.render(normalised, body)
    const doc = Result.getOrThrow(SkillFrontmatter.parse(rendered))
    expect(SkillFrontmatter.diff(normalised, doc.frontmatter)).toEqual([])
    expect(doc.body).toBe(body)
  }, { arbitrary: { runs: 300 } })

  it.prop("render then parseSkillMd round-trips valid frontmatter", [SkillFrontmatter.SkillFrontmatter], ([frontmatter]) => {
    const rendered = SkillFrontmatter.render(frontmatter, "# Body\n")
    const parsed = Result.getOrThrow(SkillFrontmatter.parseSkillMd(rendered))
    expect(SkillFrontmatter.diff(frontmatter, parsed.frontmatter)).toEqual([])
  })

  it("diff reports every differing field", () => {
    expect(SkillFrontmatter.diff(
      { name: "a", description: "one", metadata: { k: "v" }, gone: 1 },
      { name: "a", description: "two", metadata: { k: "v" }, added: [1] }
    )).toEqual([
      { field: "added", expected: undefined, actual: [1] },
      { field: "description", expected: "one", actual: "two" },
      { field: "gone", expected: 1, actual: undefined }
    ])
    expect(SkillFrontmatter.diff({ a: { x: 1, y: [1, 2] } }, { a: { y: [1, 2], x: 1 } })).toEqual([])
    expect(SkillFrontmatter.diff({ a: 1 }, { a: "1" })).toHaveLength(1)
  })

  it.prop("parse never throws on arbitrary text", [Schema.String], ([s]) => {
    for (const input of [s, `---\n${s}\n---\n`, `---\nname: a\ndescription: b\n${s}\n---\n`]) {
      const result = SkillFrontmatter.parseSkillMd(input)
      if (Result.isFailure(result)) expect(result.failure._tag).toBe("FrontmatterError")
    }
  })
})

describe("SkillFrontmatter limits", () => {
  const max = Limits.MaxFrontmatterBytes
  const skillMd = (yaml: string) => `---\n${yaml}\n---\nbody\n`
  // `name: a\ndescription: b\npad: …` of exactly `bytes` UTF-8 bytes.
  const padded = (bytes: number, unit = "x") => {
    const head = "name: a\ndescription: b\npad: "
    const unitBytes = new TextEncoder().encode(unit).byteLength
    return head + unit.repeat(Math.floor((bytes - head.length) / unitBytes)) + "x".repeat((bytes - head.length) % unitBytes)
  }
  const refusedForSize = (result: Result.Result<unknown, SkillFrontmatter.FrontmatterError>) => {
    if (Result.isSuccess(result)) throw new Error("accepted")
    expect(result.failure._tag).toBe("FrontmatterError")
    expect(result.failure.reason).toContain("Limits.MaxFrontmatterBytes")
    expect(result.failure.reason).toContain(String(max))
  }

  it("accepts a frontmatter of exactly MaxFrontmatterBytes and refuses one byte more, naming the limit", () => {
    const at = Result.getOrThrow(SkillFrontmatter.parse(skillMd(padded(max))))
    expect(at.body).toBe("body\n")
    refusedForSize(SkillFrontmatter.parse(skillMd(padded(max + 1))))
  })

  it("counts UTF-8 bytes, not characters, as a client reading bytes does", () => {
    const yaml = padded(max + 2, "é")
    expect(yaml.length).toBeLessThan(max)
    refusedForSize(SkillFrontmatter.parse(skillMd(yaml)))
    refusedForSize(SkillFrontmatter.parse(new TextEncoder().encode(skillMd(yaml))))
  })

  it("refuses a frontmatter that no --- line closes within the limit, however long the file", () => {
    refusedForSize(SkillFrontmatter.parse(`---\n${padded(max + 1)}\n`))
    refusedForSize(SkillFrontmatter.parse(`---\n${padded(max * 4)}\n---\nbody\n`))
  })

  it("accepts nesting of exactly MaxFrontmatterDepth levels and refuses one more, at its line", () => {
    const depth = Limits.MaxFrontmatterDepth
    // The top-level mapping is the first level; `x` holds the rest as flow sequences, one per line
    // from line 4.
    const nested = (levels: number) => `name: a\ndescription: b\nx: ${"[\n ".repeat(levels - 1)}1${"]".repeat(levels - 1)}`
    const at = Result.getOrThrow(SkillFrontmatter.parse(skillMd(nested(depth))))
    let inner: unknown = at.frontmatter.x
    for (let level = 2; level < depth; level++) inner = (inner as ReadonlyArray<unknown>)[0]
    expect(inner).toEqual([1])
    const error = failure(skillMd(nested(depth + 1)))
    expect(error.reason).toContain("Limits.MaxFrontmatterDepth")
    expect(error.line).toBe(3 + depth)
    for (const deep of [`x: ${"[".repeat(5_000)}${"]".repeat(5_000)}`, `x:\n  ${"- ".repeat(5_000)}1`, `x: ${"{a: ".repeat(3_000)}1${"}".repeat(3_000)}`]) {
      expect(failure(skillMd(`name: a\ndescription: b\n${deep}`)).reason).toContain("Limits.MaxFrontmatterDepth")
    }
  })

  // Shapes that cost the yaml parser the most per byte; before the limit, each took seconds to minutes.
  const hostile: ReadonlyArray<[string, string]> = [
    ["30,000 metadata keys", "name: a\ndescription: b\nmetadata:\n" + Array.from({ length: 30_000 }, (_, i) => `  k${i}: v`).join("\n")],
    ["30,000 top-level keys", "name: a\ndescription: b\n" + Array.from({ length: 30_000 }, (_, i) => `k${i}: ${i}`).join("\n")],
    ["a line of 200,000 errors", `name: a\ndescription: b\nx: ${"}".repeat(200_000)}`],
    ["200,000 flow items", `name: a\ndescription: b\nx: [${"1,".repeat(200_000)}1]`]
  ]
  for (const [title, yaml] of hostile) {
    it(`refuses ${title} by the limit, within 5 s`, () => {
      const started = performance.now()
      refusedForSize(SkillFrontmatter.parseSkillMd(skillMd(yaml)))
      expect(performance.now() - started).toBeLessThan(5_000)
    })
  }
})

describe("SkillFrontmatter numbers: one rule for parse, Schema and render", () => {
  const decodeNumber = (x: number) => SkillFrontmatter.decode({ name: "a", description: "b", x })
  const parseLiteral = (literal: string) => SkillFrontmatter.parse(`---\nname: a\ndescription: b\nx: ${literal}\n---\n`)
  const inRange = (n: bigint) => n >= -BigInt(Number.MAX_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER)

  it.prop("an integer literal is kept exactly or refused, alike in parse and Schema", {
    exponent: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 70 })),
    offset: Schema.Int.check(Schema.isBetween({ minimum: -3, maximum: 3 })),
    sign: Schema.Literals(["", "-", "+"]),
    base: Schema.Literals([10, 16, 8])
  }, ({ exponent, offset, sign, base }) => {
    const magnitude = 2n ** BigInt(exponent) + BigInt(offset) < 0n ? 0n : 2n ** BigInt(exponent) + BigInt(offset)
    // YAML 1.2 core hexadecimal and octal integers carry no sign.
    const signed = base === 10 ? sign : ""
    const n = signed === "-" ? -magnitude : magnitude
    const literal = base === 10 ? `${signed}${magnitude}` : `${base === 16 ? "0x" : "0o"}${magnitude.toString(base)}`
    const parsed = parseLiteral(literal)
    const decoded = decodeNumber(Number(n))
    if (inRange(n)) {
      const x = Result.getOrThrow(parsed).frontmatter.x as number
      expect(BigInt(x)).toBe(n)
      expect(JSON.stringify(x)).toBe(String(n === 0n ? 0 : n))
      expect(Result.isSuccess(decoded)).toBe(true)
      const again = Result.getOrThrow(SkillFrontmatter.parse(SkillFrontmatter.render({ x }, "")))
      expect(again.frontmatter.x).toBe(x)
    } else {
      if (Result.isSuccess(parsed)) throw new Error(`${literal} parsed as ${String(parsed.success.frontmatter.x)}`)
      expect(parsed.failure.line).toBe(4)
      expect(parsed.failure.reason).toContain("2^53")
      if (Result.isSuccess(decoded)) throw new Error(`${Number(n)} decoded`)
      expect(decoded.failure.field).toBe("x")
    }
  })

  it.prop("any number is within ±(2^53−1) and read back as itself, or refused, alike in parse and Schema", [Schema.Finite], ([d]) => {
    const parsed = parseLiteral(String(d))
    const decoded = decodeNumber(d)
    const exact = Math.abs(d) <= Number.MAX_SAFE_INTEGER
    expect(Result.isSuccess(parsed)).toBe(exact)
    expect(Result.isSuccess(decoded)).toBe(exact)
    if (Result.isSuccess(parsed)) expect(parsed.success.frontmatter.x).toBe(d === 0 ? 0 : d)
  })

  it("Schema refuses a number beyond 2^53 however deep, naming the top-level key", () => {
    const result = SkillFrontmatter.decode({ name: "a", description: "b", deep: { list: [1, { n: 2 ** 64 }] } })
    if (Result.isSuccess(result)) throw new Error("decoded")
    expect(result.failure.field).toBe("deep")
    expect(result.failure.reason).toContain("2^53")
  })
})
