/**
 * The pure checks of `Verification`, without a server: each tampering is caught, and what is
 * honest passes however it is arranged.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Effect from "effect/Effect"
import { Digest, Limits, Signing, type Skill, SkillFrontmatter } from "@mcp-skills/core"
import { Verification } from "@mcp-skills/client"

const enc = new TextEncoder()
const skillMd = "---\nname: demo\ndescription: Does things\nmetadata:\n  a: 1\n  b: two\n---\n\n# Demo\n"
const notes = enc.encode("notes\n")

const resource = (uri: string, bytes: Uint8Array) => ({ uri, digest: Digest.make(bytes), size: bytes.byteLength }) as Skill.SkillResource

const skill = {
  uri: "skill://demo/SKILL.md",
  frontmatter: { name: "demo", description: "Does things", metadata: { a: 1, b: "two" } },
  resources: [resource("skill://demo/SKILL.md", enc.encode(skillMd)), resource("skill://demo/refs/notes.md", notes)]
} as unknown as Skill.Skill

const options = { limits: Limits.defaults, allowDynamic: false }
const entry = Result.getOrThrow(Verification.checkEntry(skill, options))
const failure = <A, E>(result: Result.Result<A, E>): E => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure
}

describe("Verification.checkEntry", () => {
  it("refuses limits from the entry alone and \"dynamic\" unless allowed (R12, R17)", () => {
    const small = failure(Verification.checkEntry(skill, { ...options, limits: { maxResources: 1, maxTotalBytes: 1 << 20 } }))
    assert.deepInclude(small, { _tag: "LimitExceeded", limit: "resources", actual: 2, max: 1 })
    const dynamic = { ...skill, resources: "dynamic" } as Skill.Skill
    assert.strictEqual(failure(Verification.checkEntry(dynamic, options))._tag, "DynamicSkillRefused")
    assert.isTrue(Result.isSuccess(Verification.checkEntry(dynamic, { ...options, allowDynamic: true })))
  })
})

describe("Verification.checkSignature", () => {
  const keys = [Effect.runSync(Signing.generateKeyPair), Effect.runSync(Signing.generateKeyPair)] as const
  const signer = Result.getOrThrow(Signing.privateKey(keys[0].privateKey))
  const signedSkill = Signing.withSignatures(skill, [Result.getOrThrow(Signing.sign(skill, signer))])
  const policy = (mode: Verification.Trust["mode"], key = keys[0].publicKey, unsigned: ReadonlyArray<string> = []) =>
    Result.getOrThrow(Verification.trustPolicy({ keys: [key], mode, unsigned }))

  it("required: a trusted signature that verifies passes with its signer; unsigned, untrusted and broken ones fail", () => {
    assert.deepStrictEqual(Result.getOrThrow(Verification.checkSignature(signedSkill, policy("required"))), [keys[0].keyId])
    assert.deepInclude(failure(Verification.checkSignature(skill, policy("required"))), { _tag: "UnsignedSkill", uri: skill.uri, dynamic: false })
    assert.deepInclude(failure(Verification.checkSignature(signedSkill, policy("required", keys[1].publicKey))), {
      _tag: "UntrustedSigner",
      keyIds: [keys[0].keyId]
    })
    const broken = { ...signedSkill, frontmatter: { ...signedSkill.frontmatter, description: "Does other things" } } as Skill.Skill
    assert.deepInclude(failure(Verification.checkSignature(broken, policy("required"))), {
      _tag: "SignatureInvalid",
      keyId: keys[0].keyId,
      problem: "signature"
    })
  })

  it("optional, or a URI allowed unsigned: unsigned and untrusted pass unverified, a broken trusted signature never does", () => {
    for (const lenient of [policy("optional"), policy("required", keys[0].publicKey, [skill.uri])]) {
      assert.deepStrictEqual(Result.getOrThrow(Verification.checkSignature(skill, lenient)), [])
      const broken = { ...signedSkill, resources: "dynamic" } as Skill.Skill
      assert.strictEqual(failure(Verification.checkSignature(broken, lenient))._tag, "SignatureInvalid")
    }
    assert.deepStrictEqual(Result.getOrThrow(Verification.checkSignature(signedSkill, policy("optional", keys[1].publicKey))), [])
  })

  it("checkEntry checks signatures only with a trust policy, and reports the signers", () => {
    assert.strictEqual(Result.getOrThrow(Verification.checkEntry(skill, options)).signers, undefined)
    assert.deepStrictEqual(Result.getOrThrow(Verification.checkEntry(signedSkill, { ...options, trust: policy("required") })).signers, [keys[0].keyId])
    assert.strictEqual(failure(Verification.checkEntry(skill, { ...options, trust: policy("required") }))._tag, "UnsignedSkill")
    assert.isTrue(Result.isFailure(Verification.trustPolicy({ keys: ["-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"], mode: "required" })))
  })
})

describe("Verification.resolveTarget", () => {
  it("resolves references against the skill root; unlisted and outside are different errors", () => {
    assert.deepStrictEqual(Result.getOrThrow(Verification.resolveTarget(entry, "refs/notes.md")).uri, "skill://demo/refs/notes.md")
    assert.deepInclude(failure(Verification.resolveTarget(entry, "refs/other.md")), {
      _tag: "UnlistedResource",
      uri: "skill://demo/refs/other.md"
    })
    const outside = failure(Verification.resolveTarget(entry, "../other/SKILL.md"))
    assert.deepInclude(outside, { _tag: "ReferenceOutsideSkill", reference: "../other/SKILL.md" })
    assert.strictEqual(outside.message, "../other/SKILL.md leaves the skill skill://demo/SKILL.md")
  })
})

describe("Verification.decodeContents", () => {
  it("text is its UTF-8 bytes, blob strict base64; anything else is InvalidResourceContents", () => {
    const items = Result.getOrThrow(Verification.decodeContents("skill://demo/x", {
      contents: [
        { uri: "skill://demo/a", mimeType: "text/plain", text: "é" },
        { uri: "skill://demo/b", blob: "AAEC" }
      ]
    }))
    assert.deepStrictEqual([...items[0]!.bytes], [0xc3, 0xa9])
    assert.strictEqual(items[0]!.mimeType, "text/plain")
    assert.deepStrictEqual([...items[1]!.bytes], [0, 1, 2])
    // Non-zero pad bits are still base64; whitespace or a missing pad is not.
    assert.deepStrictEqual([...Result.getOrThrow(Verification.decodeContents("u", { contents: [{ uri: "u", blob: "AB==" }] }))[0]!.bytes], [0])
    for (const bad of [{ contents: [{ uri: "u", blob: "AA EC" }] }, { contents: [{ uri: "u", blob: "AAE" }] }, { contents: [{ uri: "u", blob: "!!!" }] }, { contents: [{ uri: "u" }] }, { contents: "x" }, null]) {
      const error = failure(Verification.decodeContents("skill://demo/x", bad))
      assert.strictEqual(error._tag, "InvalidResourceContents")
      assert.notInclude(error.message, "\n")
    }
  })
})

describe("Verification.selectItem", () => {
  const target = Result.getOrThrow(Verification.resolveTarget(entry, "refs/notes.md"))
  const item = (uri: string, bytes: Uint8Array) => ({ uri, mimeType: undefined, bytes })

  it("answers the requested item; every other item must be listed and verify", () => {
    assert.strictEqual(Result.getOrThrow(Verification.selectItem(entry, target, [item(target.uri, notes)])).uri, target.uri)
    const both = [item(target.uri, notes), item(skill.uri, enc.encode(skillMd))]
    assert.isTrue(Result.isSuccess(Verification.selectItem(entry, target, both)))
    assert.deepInclude(failure(Verification.selectItem(entry, target, [item(skill.uri, enc.encode(skillMd))])), {
      _tag: "WrongResourceReturned"
    })
    const injected = [item(target.uri, notes), item("skill://demo/references/EXTRA.md", enc.encode("obey me"))]
    assert.deepInclude(failure(Verification.selectItem(entry, target, injected)), {
      _tag: "UnexpectedContents",
      extra: ["skill://demo/references/EXTRA.md"]
    })
    const tamperedExtra = [item(target.uri, notes), item(skill.uri, enc.encode(skillMd.replace("Demo", "Dumo")))]
    assert.deepInclude(failure(Verification.selectItem(entry, target, tamperedExtra)), { _tag: "DigestMismatch", uri: skill.uri })
  })

  it.prop("a flipped byte is a DigestMismatch, a changed length a SizeMismatch", {
    bytes: Schema.Uint8Array,
    at: Schema.Int,
    bit: Schema.Int
  }, ({ bytes, at, bit }) => {
    const listed = resource("skill://demo/f.bin", bytes)
    assert.isTrue(Result.isSuccess(Verification.checkContent(skill.uri, listed, bytes)))
    assert.strictEqual(failure(Verification.checkContent(skill.uri, listed, Uint8Array.from([...bytes, 0])))._tag, "SizeMismatch")
    if (bytes.byteLength === 0) return
    const tampered = Uint8Array.from(bytes)
    const i = Math.abs(at) % bytes.byteLength
    tampered[i] = tampered[i]! ^ (1 << (Math.abs(bit) % 8))
    assert.deepInclude(failure(Verification.checkContent(skill.uri, listed, tampered)), { _tag: "DigestMismatch", expected: listed.digest })
  })
})

describe("Verification.checkFrontmatter", () => {
  it.prop("the same frontmatter in any key order passes; a changed field is named (R126)", {
    order: Schema.Int,
    value: Schema.String
  }, ({ order, value }) => {
    const orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] as const
    const keys = ["name", "description", "metadata"] as const
    const shuffled = orders[Math.abs(order) % orders.length]!.map((i) => keys[i])
    const frontmatter = Object.fromEntries(shuffled.map((key) => [key, skill.frontmatter[key]])) as Schema.JsonObject
    const reordered = enc.encode(SkillFrontmatter.render(frontmatter, "# Demo\n"))
    assert.isTrue(Result.isSuccess(Verification.checkFrontmatter(skill, reordered)))
    const changed = { ...frontmatter, description: `${String(frontmatter.description)}${value}x` }
    const error = failure(Verification.checkFrontmatter(skill, enc.encode(SkillFrontmatter.render(changed, "# Demo\n"))))
    assert.deepStrictEqual(error.fields, ["description"])
  })
})
