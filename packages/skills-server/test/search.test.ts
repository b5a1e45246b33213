/**
 * The search index (`internal/search.ts`): its ranking, typo tolerance and paging; the same pages
 * as the linear scan on random catalogues and queries; one index per snapshot; and the expected
 * skill first among 50,000 generated in memory.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Skill, SkillRegistry, ToolLimits } from "../src/index.js"
import type { Snapshot } from "../src/index.js"
import * as Search from "../src/internal/search.js"
import { skillMd } from "./support/fixtures.js"

const skill = (path: string, description = `The ${path.split("/").at(-1)} skill`) =>
  Skill.make({ path, files: { "SKILL.md": skillMd(path.split("/").at(-1)!, description) } })

const snapshotOf = (definitions: ReadonlyArray<Skill.Definition>) =>
  Effect.flatMap(SkillRegistry.make(definitions), (registry) => registry.snapshot)

const everyone = { admits: () => true, limit: 100 }

const uris = (page: Search.Page) => page.hits.map((hit) => hit.uri.replace(/^skill:\/\/|\/SKILL\.md$/g, ""))

// Every hit of a query, page after page.
const all = (index: Search.Index, query: string, limit: number) => {
  const hits: Array<string> = []
  let after: Search.Position | undefined
  do {
    const page = Search.search(index, query, { admits: () => true, after, limit })
    hits.push(...uris(page))
    after = page.next
  } while (after !== undefined)
  return hits
}

describe("search", () => {
  it.effect("ranks the exact name, then names it begins, then name words, then path and description words; ties by URI", () =>
    Effect.gen(function*() {
      const snapshot = yield* snapshotOf([
        skill("z/pdf", "Plain PDF handling"),
        skill("b/pdf-forms", "Fill forms"),
        skill("a/pdf-tools", "Tools"),
        skill("c/forms-pdf", "Forms again"),
        skill("pdf/other", "Something else"),
        skill("d/reader", "Reads a pdf aloud"),
        skill("e/unrelated", "Nothing to see")
      ])
      const index = Search.make(snapshot.listed)
      assert.deepStrictEqual(uris(Search.search(index, "pdf", everyone)), [
        "z/pdf", // the name
        "a/pdf-tools", // begins with it, by URI
        "b/pdf-forms",
        "c/forms-pdf", // a word of the name
        "pdf/other", // a word of the path
        "d/reader" // a word of the description
      ])
      // More of the query's words matched rank first.
      assert.deepStrictEqual(uris(Search.search(index, "pdf forms", everyone)).slice(0, 2), ["b/pdf-forms", "c/forms-pdf"])
      assert.deepStrictEqual(uris(Search.search(index, "zebra quokka", everyone)), [])
    }))

  it("typos: one edit from four letters, two from eight, a swap of neighbours is one; none below four", () => {
    assert.strictEqual(Search.quality("forms", "forms"), 0)
    assert.strictEqual(Search.quality("for", "forms"), 1)
    assert.strictEqual(Search.quality("froms", "forms"), 2) // a swap
    assert.strictEqual(Search.quality("form", "farm"), 2)
    assert.strictEqual(Search.quality("fxrx", "form"), -1)
    assert.strictEqual(Search.quality("pdf", "pdx"), -1) // three letters: exact or prefix only
    assert.strictEqual(Search.quality("procesing", "processing"), 2)
    assert.strictEqual(Search.quality("prcesing", "processing"), 3)
    assert.strictEqual(Search.quality("procssing", "prcessing"), 3)
    assert.strictEqual(Search.quality("invoise", "invoices"), -1) // two edits at seven letters
    assert.strictEqual(Search.distance("kitten", "sitting", 5), 3)
    assert.strictEqual(Search.distance("kitten", "sitting", 1), 2)
  })

  it.effect("typo-tolerant search finds the skill, exact matches first", () =>
    Effect.gen(function*() {
      const snapshot = yield* snapshotOf([
        skill("tools/spreadsheet-cleanup", "Clean spreadsheets"),
        skill("tools/spreadshirt", "Order shirts"),
        skill("tools/invoice", "Bill customers")
      ])
      const index = Search.make(snapshot.listed)
      assert.deepStrictEqual(uris(Search.search(index, "spredsheet", everyone)), ["tools/spreadsheet-cleanup"])
      assert.deepStrictEqual(uris(Search.search(index, "invocie", everyone)), ["tools/invoice"])
      // Two edits apart at eleven letters: both found, the exact one first.
      assert.deepStrictEqual(uris(Search.search(index, "spreadshirt", everyone)), ["tools/spreadshirt", "tools/spreadsheet-cleanup"])
    }))

  it.effect("pages: every hit once, in rank order, hidden skills left out before paging; a position outlives its snapshot", () =>
    Effect.gen(function*() {
      const definitions = Array.from({ length: 57 }, (_, i) => skill(`team${i % 5}/report-${String(i).padStart(2, "0")}`, `Report ${i}`))
      const registry = yield* SkillRegistry.make(definitions)
      const index = Search.make((yield* registry.snapshot).listed)
      const whole = uris(Search.search(index, "report", { admits: () => true, limit: 1000 }))
      assert.strictEqual(whole.length, 57)
      for (const limit of [1, 7, 20, 56, 57]) assert.deepStrictEqual(all(index, "report", limit), whole, `pages of ${limit}`)
      const hidden = (hit: Snapshot.SkillEntry) => !hit.path[0]!.endsWith("3")
      const visible = Search.search(index, "report", { admits: hidden, limit: 1000 })
      assert.deepStrictEqual(uris(visible), whole.filter((uri) => !uri.startsWith("team3/")))
      const first = Search.search(index, "report", { admits: hidden, limit: 10 })
      assert.strictEqual(first.hits.length, 10)
      // A skill added before the position, and one after: the next page goes on after the position.
      yield* registry.upsert([skill("team0/report-00a"), skill("team9/report-99")])
      const later = Search.make((yield* registry.snapshot).listed)
      const next = uris(Search.search(later, "report", { admits: hidden, after: first.next, limit: 1000 }))
      assert.deepStrictEqual(next.filter((uri) => uri !== "team9/report-99" && uri !== "team0/report-00a"), uris(visible).slice(10))
      assert.notInclude(next, uris(first)[0])
    }))

  it.effect("the index gives the linear scan's pages on random catalogues and queries", () =>
    Effect.gen(function*() {
      let seed = 7
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
      const pick = <A>(values: ReadonlyArray<A>) => values[Math.floor(random() * values.length)]!
      const words = ["pdf", "form", "forms", "invoice", "invoices", "report", "reports", "spreadsheet", "data", "chart", "ab", "a"]
      const typo = (word: string) => {
        const i = Math.floor(random() * word.length)
        return pick([word.slice(0, i) + word.slice(i + 1), word.slice(0, i) + "x" + word.slice(i), word.slice(0, i) + "q" + word.slice(i + 1)])
      }
      const definitions = Array.from({ length: 300 }, (_, i) =>
        skill(
          `${pick(words)}/${pick(words)}-${pick(words)}-${i}`,
          Array.from({ length: 1 + Math.floor(random() * 6) }, () => random() < 0.2 ? typo(pick(words)) : pick(words)).join(" ")
        ))
      const snapshot = yield* snapshotOf(definitions)
      const index = Search.make(snapshot.listed)
      const admits = (hit: Snapshot.SkillEntry) => hit.uri.length % 3 !== 0
      for (let q = 0; q < 300; q++) {
        const query = Array.from({ length: 1 + Math.floor(random() * 3) }, () => random() < 0.3 ? typo(pick(words)) : pick(words)).join(" ")
        let after: Search.Position | undefined
        for (let pageNumber = 0; pageNumber < 3; pageNumber++) {
          const options = { admits, after, limit: 1 + Math.floor(random() * 15) }
          const indexed = Search.search(index, query, options)
          assert.deepStrictEqual(uris(indexed), uris(Search.scan(snapshot.listed, query, options)), `"${query}" page ${pageNumber}`)
          assert.deepStrictEqual(indexed.next, Search.scan(snapshot.listed, query, options).next)
          if (indexed.next === undefined) break
          after = indexed.next
        }
      }
    }))

  it.effect("one index per snapshot: kept while the snapshot lives, a new one after a change", () =>
    Effect.gen(function*() {
      const registry = yield* SkillRegistry.make([skill("a/one")])
      const indexOf = Search.makeMemo()
      const before = yield* registry.snapshot
      assert.strictEqual(indexOf(before), indexOf(before))
      yield* registry.upsert([skill("b/two")])
      const after = indexOf(yield* registry.snapshot)
      assert.notStrictEqual(after, indexOf(before))
      assert.deepStrictEqual(uris(Search.search(after, "two", everyone)), ["b/two"])
    }))

  it("a query counts its first MaxQueryWords distinct words", () => {
    const words = Array.from({ length: ToolLimits.MaxQueryWords + 5 }, (_, i) => `w${i}`)
    assert.deepStrictEqual(Search.queryWords([...words, "w0"].join(" ")), words.slice(0, ToolLimits.MaxQueryWords))
  })

  it.effect("finds the expected skill first among 50,000 generated skills, in milliseconds", () =>
    Effect.gen(function*() {
      const topics = ["billing", "invoice", "report", "deploy", "review", "audit", "schema", "ledger", "forecast", "triage"]
      const definitions = Array.from({ length: 50_000 }, (_, i) =>
        skill(
          `${topics[i % 10]}/${topics[(i * 7) % 10]}-${topics[(i * 3) % 10]}-${i}`,
          `Helps with ${topics[(i * 11) % 10]} and ${topics[(i * 13) % 10]} work, case ${i}`
        ))
      definitions.push(skill("finance/quarterly-reconciliation", "Reconcile the ledger at quarter end"))
      const snapshot = yield* snapshotOf(definitions)
      const index = Search.make(snapshot.listed)
      const start = performance.now()
      const exact = Search.search(index, "quarterly-reconciliation", everyone)
      const typo = Search.search(index, "quartely reconcilation", everyone)
      const elapsed = performance.now() - start
      assert.strictEqual(exact.hits[0]!.uri, "skill://finance/quarterly-reconciliation/SKILL.md")
      assert.strictEqual(typo.hits[0]!.uri, "skill://finance/quarterly-reconciliation/SKILL.md")
      const common = Search.search(index, "invoice", { admits: () => true, limit: ToolLimits.SearchPageSize })
      assert.strictEqual(common.hits.length, ToolLimits.SearchPageSize)
      assert.isDefined(common.next)
      assert.isBelow(elapsed, 500)
    }), 60_000)
})
