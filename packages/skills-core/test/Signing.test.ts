import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { Digest, Manifest, Signing, Skill, SkillUri } from "../src/index.js"

const keys = Effect.runSync(Signing.generateKeyPair)
const key = Result.getOrThrow(Signing.privateKey(keys.privateKey))
const other = Result.getOrThrow(Signing.privateKey(Effect.runSync(Signing.generateKeyPair).privateKey))

const signed = (skill: Skill.Skill, by = key) => Signing.withSignatures(skill, [Result.getOrThrow(Signing.sign(skill, by))])

// The entry as a client decodes it from the wire.
const received = (text: string) => Result.getOrThrow(Skill.decode(JSON.parse(text)))

// The same JSON value with every object's keys in another order.
const shuffled = (value: Schema.Json, seed: number): Schema.Json => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map((item) => shuffled(item, seed))
  const entries = Object.entries(value as Record<string, Schema.Json>)
  const rotated = entries.length === 0 ? entries : [...entries.slice(seed % entries.length), ...entries.slice(0, seed % entries.length)]
  return Object.fromEntries(rotated.reverse().map(([k, v]) => [k, shuffled(v, seed + 1)]))
}

const otherDigest = (digest: Digest.Digest): Digest.Digest =>
  `sha256:${digest.slice(7, 70).split("").map((c, i) => (i === 0 ? (c === "0" ? "1" : "0") : c)).join("")}` as Digest.Digest

describe("Signing.canonicalize (RFC 8785)", () => {
  it("writes the examples of RFC 8785 the way it specifies", () => {
    expect(Signing.canonicalize({ b: 2, a: [1, "x", null, true], c: { z: 1e21, y: 0.1, x: -0 } })).toBe(
      `{"a":[1,"x",null,true],"b":2,"c":{"x":0,"y":0.1,"z":1e+21}}`
    )
    // Keys sort by UTF-16 code units, not code points: U+FB33 sorts after U+1F600's high surrogate.
    expect(Signing.canonicalize({ "\ufb33": 1, "\u{1f600}": 2, "\u00e9": 3, "a": 4 })).toBe(`{"a":4,"\u00e9":3,"\u{1f600}":2,"\ufb33":1}`)
    expect(Signing.canonicalize("\u2028\n\"")).toBe(`"\u2028\\n\\""`)
  })

  it.prop("is the same for any key order and whitespace of the same value", { json: Schema.Json, seed: Schema.Int }, ({ json, seed }) => {
    const respaced = JSON.parse(JSON.stringify(shuffled(json, Math.abs(seed)), null, 3)) as Schema.Json
    expect(Signing.canonicalize(respaced)).toBe(Signing.canonicalize(json))
    expect(JSON.parse(Signing.canonicalize(json))).toEqual(JSON.parse(JSON.stringify(json)))
  })
})

describe("Signing.sign / verify", () => {
  it.prop("a signature verifies after the entry crossed the wire in any key order and spacing", {
    manifest: Manifest.Manifest,
    seed: Schema.Int
  }, ({ manifest, seed }) => {
    const entry = signed(Manifest.entry(manifest))
    const wire = received(JSON.stringify(shuffled(entry as unknown as Schema.Json, Math.abs(seed)), null, 2))
    expect(Signing.evaluate(wire, (id) => id === key.publicKey.keyId)).toEqual({ _tag: "Verified", keyIds: [key.publicKey.keyId] })
  })

  it.prop("a signature survives re-hosting: another scheme and prefix, same name and files", {
    manifest: Manifest.Manifest,
    prefix: Schema.Array(Schema.Literals(["gateway", "mirror", "acme"])).check(Schema.isMaxLength(3))
  }, ({ manifest, prefix }) => {
    const entry = signed(Manifest.entry(manifest))
    const uri = Result.getOrThrow(SkillUri.skillMd("docs", [...prefix, entry.frontmatter.name]))
    const moved: Skill.Skill = {
      ...entry,
      uri,
      resources: (entry.resources as ReadonlyArray<Skill.SkillResource>).map((resource) => ({
        ...resource,
        uri: Result.getOrThrow(SkillUri.file(uri, SkillUri.relativePath(entry.uri, resource.uri)!))
      }))
    }
    expect(Signing.evaluate(received(JSON.stringify(moved)))._tag).toBe("Verified")
  })

  it.prop("any change to any covered field breaks verification", {
    manifest: Manifest.Manifest,
    pick: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
    field: Schema.Literals(["name", "description", "extra", "path", "digest", "size", "drop", "add"])
  }, ({ manifest, pick, field }) => {
    const entry = signed(Manifest.entry(manifest))
    const resources = entry.resources as ReadonlyArray<Skill.SkillResource>
    const at = pick % resources.length
    const changeResource = (f: (resource: Skill.SkillResource) => Skill.SkillResource) =>
      resources.map((resource, i) => (i === at ? f(resource) : resource))
    const tampered: Skill.Skill = (() => {
      switch (field) {
        case "name": {
          // A renamed skill moves with its name: the entry stays valid, only the signature breaks.
          const name = (entry.frontmatter.name === "renamed" ? "renamed-again" : "renamed") as typeof entry.frontmatter.name
          const uri = Result.getOrThrow(SkillUri.skillMd("skill", [name]))
          return {
            ...entry,
            uri,
            frontmatter: { ...entry.frontmatter, name },
            resources: resources.map((r) => ({ ...r, uri: Result.getOrThrow(SkillUri.file(uri, SkillUri.relativePath(entry.uri, r.uri)!)) }))
          }
        }
        case "description":
          return { ...entry, frontmatter: { ...entry.frontmatter, description: entry.frontmatter.description + "!" } }
        case "extra":
          return { ...entry, frontmatter: { ...entry.frontmatter, "x-added": pick } }
        case "path":
          return {
            ...entry,
            resources: changeResource((r) => ({ ...r, uri: `${r.uri.slice(0, r.uri.lastIndexOf("/"))}/Moved-${pick}.bin` as SkillUri.SkillUri }))
          }
        case "digest":
          return { ...entry, resources: changeResource((r) => ({ ...r, digest: otherDigest(r.digest) })) }
        case "size":
          return { ...entry, resources: changeResource((r) => ({ ...r, size: r.size + 1 + (pick % 7) })) }
        case "drop":
          return resources.length === 1
            ? { ...entry, resources: [...resources, { uri: `${SkillUri.root(entry.uri)}/added`, digest: resources[0]!.digest, size: 0 }] as never }
            : { ...entry, resources: resources.filter((_, i) => i !== Math.max(1, at)) }
        case "add":
          return { ...entry, resources: [...resources, { uri: `${SkillUri.root(entry.uri)}/zz-added-${pick}`, digest: resources[0]!.digest, size: pick }] as never }
      }
    })()
    const verdict = Signing.evaluate(tampered)
    expect(verdict).toEqual({ _tag: "Invalid", keyId: key.publicKey.keyId, problem: "signature" })
  })

  it.prop("a signature by one key does not pass as another's, nor does a swapped public key", { manifest: Manifest.Manifest }, ({ manifest }) => {
    const entry = signed(Manifest.entry(manifest), other)
    const trustKey = (id: Signing.KeyId) => id === key.publicKey.keyId
    expect(Signing.evaluate(entry, trustKey)).toEqual({ _tag: "Untrusted", keyIds: [other.publicKey.keyId] })
    // Claiming the trusted fingerprint while carrying another key fails on the fingerprint.
    const [record] = Signing.signaturesOf(entry).signatures
    const forged = Signing.withSignatures(entry, [{ ...record!, keyId: key.publicKey.keyId }])
    expect(Signing.evaluate(forged, trustKey)).toEqual({ _tag: "Invalid", keyId: key.publicKey.keyId, problem: "fingerprint" })
    // Carrying the trusted key with the other key's signature fails on the signature.
    const swapped = Signing.withSignatures(entry, [{ ...record!, keyId: key.publicKey.keyId, publicKey: Buffer.from(key.publicKey.spki).toString("base64") }])
    expect(Signing.evaluate(swapped, trustKey)).toEqual({ _tag: "Invalid", keyId: key.publicKey.keyId, problem: "signature" })
  })

  it("several signatures: any trusted one that verifies is enough; none at all is Unsigned", () => {
    const manifest = Result.getOrThrow(Manifest.make({
      uri: Result.getOrThrow(SkillUri.skillMd("skill", ["refunds"])),
      files: [{ path: "SKILL.md", bytes: new TextEncoder().encode("---\nname: refunds\ndescription: Refunds\n---\n") }]
    }))
    const both = Signing.withSignatures(Manifest.entry(manifest), [
      Result.getOrThrow(Signing.sign(Manifest.entry(manifest), other)),
      Result.getOrThrow(Signing.sign(Manifest.entry(manifest), key))
    ])
    expect(Signing.evaluate(both)).toEqual({ _tag: "Verified", keyIds: [other.publicKey.keyId, key.publicKey.keyId] })
    expect(Signing.evaluate(both, (id) => id === key.publicKey.keyId)).toEqual({ _tag: "Verified", keyIds: [key.publicKey.keyId] })
    expect(Signing.evaluate(Manifest.entry(manifest))).toEqual({ _tag: "Unsigned" })
    expect(Signing.withSignatures(both, [])).toEqual(Manifest.entry(manifest))
    const garbage = received(JSON.stringify({ ...Manifest.entry(manifest), _meta: { [Signing.MetaKey]: "nope" } }))
    expect(Signing.evaluate(garbage)).toEqual({ _tag: "Invalid", keyId: undefined, problem: "malformed" })
    const dynamic: Skill.Skill = { ...Manifest.entry(manifest), resources: "dynamic" }
    expect(Result.isFailure(Signing.sign(dynamic, key))).toBe(true)
    expect(Signing.evaluate(Signing.withSignatures(dynamic, Signing.signaturesOf(both).signatures))._tag).toBe("Invalid")
  })

  it("keys: PEM in, fingerprint of the SPKI DER; other key types and garbage are refused", () => {
    const pub = Result.getOrThrow(Signing.publicKey(keys.publicKey))
    expect(pub.keyId).toBe(keys.keyId)
    expect(pub.keyId).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(Signing.fingerprint(pub.spki)).toBe(keys.keyId)
    expect(Result.isFailure(Signing.publicKey("not a key"))).toBe(true)
    const privateGiven = Signing.publicKey(keys.privateKey)
    expect(Result.isFailure(privateGiven) && privateGiven.failure.reason).toMatch(/a private key/)
    expect(Result.isFailure(Signing.privateKey(keys.publicKey))).toBe(true)
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256", publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs8", format: "pem" } })
    const refused = Signing.publicKey(ec.publicKey)
    expect(Result.isFailure(refused) && refused.failure.reason).toMatch(/ec, not ed25519/)
    expect(Result.isFailure(Signing.privateKey(ec.privateKey))).toBe(true)
  })

  it.prop("Signature records decode only in their exact shape", [Schema.Json], ([json]) => {
    const entry = Signing.withSignatures(
      Result.getOrThrow(Skill.decode({ uri: "skill://a/SKILL.md", frontmatter: { name: "a", description: "d" }, resources: "dynamic" })),
      []
    )
    const { signatures } = Signing.signaturesOf({ ...entry, _meta: { [Signing.MetaKey]: [json] } })
    expect(signatures.length === 0 || Schema.is(Signing.Signature)(signatures[0])).toBe(true)
  })
})
