/**
 * Path traversal and non-canonical URIs (R74, spec §4): every method that takes a URI answers
 * -32602 and never a byte of any file, on both revisions and both transports.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SkillsServer } from "../src/index.js"
import { catalogue } from "./support/catalogue.js"
import type { Client } from "./support/wire.js"
import { httpServer, legacyHttp, legacyStdio, modernHttp, modernStdio, ServerUrl, StdioPipe, stdioServer } from "./support/wire.js"

const Skills = SkillsServer.layer({ skills: catalogue })

export const hostileUris = [
  "skill://pdf-processing/../pdf-processing/SKILL.md",
  "skill://pdf-processing/templates/../SKILL.md",
  "skill://pdf-processing/./SKILL.md",
  "skill://pdf-processing/%2e%2e/pdf-processing/SKILL.md",
  "skill://pdf-processing/%2E%2E/%2E%2E/etc/passwd",
  "skill://pdf-processing/templates/%2e/invoice.md",
  "skill://../../etc/passwd",
  "skill://pdf-processing//SKILL.md",
  "skill:///pdf-processing/SKILL.md",
  "skill://pdf-processing\\SKILL.md",
  "skill://pdf-processing/templates\\..\\SKILL.md",
  "skill://pdf-processing/templates%2Finvoice.md",
  "skill://pdf-processing/templates%5Cinvoice.md",
  "skill://pdf-processing/skill.md",
  "skill://pdf-processing/Skill.md",
  "skill://pdf-processing/SKILL.MD",
  "SKILL://pdf-processing/SKILL.md",
  "Skill://pdf-processing/SKILL.md",
  "skill://PDF-processing/SKILL.md",
  "skill://pdf-processing/SKILL.md?raw=1",
  "skill://pdf-processing/SKILL.md#top",
  "skill://pdf-processing/SKILL.md/",
  "skill://pdf-processing/",
  "skill://pdf-processing/%74emplates/invoice.md",
  "skill://pdf-processing/templates/invoice.md%00",
  "skill://reports/daily/../daily/SKILL.md",
  "skill://reports/daily/data/../SKILL.md",
  "skill://reports/daily/%2e%2e/daily/SKILL.md",
  "skill://reports/daily/data//today.json",
  "skill://reports/daily/Skill.md",
  "skill://toolbox/git/../SKILL.md",
  "skill://secret/hidden-gem/../hidden-gem/notes.md",
  "skill:",
  "skill://",
  ""
]

// Every file's content in the catalogue: none of it may appear in an error response.
const secrets = ["PDF processing", "Invoice template", "Refund policy", "git status", "unlisted", "\"day\""]

const methods = ["skills/get", "resources/read", "resources/directory/read"] as const

const check = (client: Client) =>
  Effect.gen(function*() {
    for (const method of methods) {
      for (const uri of hostileUris) {
        const response = yield* client.send(method, { uri })
        const body = response.body
        assert.isUndefined(body?.result, `${method} ${JSON.stringify(uri)} served ${JSON.stringify(body?.result)}`)
        assert.strictEqual(body?.error?.code, -32602, `${method} ${JSON.stringify(uri)}: ${JSON.stringify(body)}`)
        const text = JSON.stringify(body)
        for (const secret of secrets) assert.notInclude(text, secret, `${method} ${uri}`)
      }
    }
  })

describe("traversal", () => {
  layer(httpServer(Skills))("http", (it) => {
    it.effect("2026-07-28: -32602 and no bytes for every hostile URI and method", () =>
      Effect.gen(function*() {
        yield* check(modernHttp(yield* ServerUrl))
      }))
    it.effect("2025-11-25: -32602 and no bytes for every hostile URI and method", () =>
      Effect.gen(function*() {
        yield* check(yield* legacyHttp(yield* ServerUrl))
      }))
  })
  layer(stdioServer(Skills))("stdio 2026-07-28", (it) => {
    it.effect("-32602 and no bytes for every hostile URI and method", () =>
      Effect.gen(function*() {
        yield* check(modernStdio(yield* StdioPipe))
      }))
  })
  layer(stdioServer(Skills))("stdio 2025-11-25", (it) => {
    it.effect("-32602 and no bytes for every hostile URI and method", () =>
      Effect.gen(function*() {
        yield* check(yield* legacyStdio(yield* StdioPipe))
      }))
  })
})
