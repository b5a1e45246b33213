/**
 * What `mcp-skills-server keygen` and `sign` do: make an author's key pair, and sign every skill
 * under a folder, offline, storing each skill's signatures beside its `SKILL.md`.
 *
 * @since 0.1.0
 */
import { Signing } from "@mcp-skills/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as DirectorySource from "../DirectorySource.js"
import { describeError } from "../internal/build.js"
import { readConfig } from "../internal/directory/guard.js"
import * as Signatures from "../internal/directory/signatures.js"
import * as SkillRegistry from "../SkillRegistry.js"

/**
 * A key or signatures file that could not be read or written, or a key that is not ed25519.
 *
 * @since 0.1.0
 */
export class SigningFailed extends Schema.TaggedError<SigningFailed>()("SigningFailed", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

// A PEM private key is a few hundred bytes; anything past this is not one.
const KeyMaxBytes = 64 * 1024

const attempt = <A>(what: string, f: () => A) =>
  Effect.try({ try: f, catch: (error) => new SigningFailed({ reason: `${what}: ${describeError(error)}` }) })

/**
 * Writes a new key pair to `PREFIX.private.pem` (PKCS#8, readable by its owner only) and
 * `PREFIX.public.pem` (SPKI), refusing to replace either file.
 *
 * @since 0.1.0
 */
export const keygen = Effect.fnUntraced(function*(prefix: string) {
  const pair = yield* Signing.generateKeyPair
  const privatePath = `${prefix}.private.pem`
  const publicPath = `${prefix}.public.pem`
  for (const path of [privatePath, publicPath]) {
    if (NodeFs.existsSync(path)) return yield* new SigningFailed({ reason: `${path} exists; keygen never replaces a key` })
  }
  yield* attempt(`cannot write ${privatePath}`, () => NodeFs.writeFileSync(privatePath, pair.privateKey, { flag: "wx", mode: 0o600 }))
  yield* attempt(`cannot write ${publicPath}`, () => NodeFs.writeFileSync(publicPath, pair.publicKey, { flag: "wx", mode: 0o644 }))
  return { privatePath, publicPath, keyId: pair.keyId }
})

/**
 * One skill signed: its URI (as served without a prefix), its folder and whether a signature by
 * the same key was replaced.
 *
 * @since 0.1.0
 */
export interface Signed {
  readonly uri: string
  readonly directory: string
  readonly replaced: boolean
}

/**
 * Signs every skill under `directory` with the private key in `keyPath`: each skill's entry as a
 * server builds it (nested skills' files included, R10) is signed, and the signature put in the
 * skill folder's {@link DirectorySource.SignaturesFileName}, replacing an earlier one by the same
 * key and keeping the others. An invalid skill fails the whole run before anything is written.
 *
 * @since 0.1.0
 */
export const sign = Effect.fnUntraced(function*(directory: string, keyPath: string) {
  // Read as every operator's file named on a command line is: a pipe or a device of that name
  // never holds the process, and nothing past the bound is read.
  const pem = yield* Effect.promise(() => readConfig(keyPath, KeyMaxBytes))
  if ("reason" in pem) return yield* new SigningFailed({ reason: `cannot read ${keyPath}: ${pem.reason}` })
  const read = Signing.privateKey(pem.text)
  if (Result.isFailure(read)) return yield* new SigningFailed({ reason: `${keyPath}: ${read.failure.reason}` })
  const key = read.success
  const loaded = yield* DirectorySource.load(directory, { strict: true })
  // The entries a server publishes; the signatures already there are neither checked nor relayed.
  const definitions = DirectorySource.toDefinitions(loaded).map(({ signatures: _, ...definition }) => definition)
  const snapshot = yield* SkillRegistry.build(definitions)
  const real = yield* attempt(`cannot read ${directory}`, () => NodeFs.realpathSync(directory))
  const planned: Array<{ readonly folder: string; readonly signatures: ReadonlyArray<Signing.Signature>; readonly signed: Signed }> = []
  for (const skill of loaded.skills) {
    const served = snapshot.byUri.get(skill.manifest.uri)
    if (served?._tag !== "Static") continue
    const signature = yield* Effect.fromResult(Signing.sign(snapshot.entries.get(served), key)).pipe(
      Effect.mapError((error) => new SigningFailed({ reason: error.reason }))
    )
    const folder = NodePath.join(real, skill.directory)
    // As the strict load read them (a signatures file it cannot decode fails the load).
    const existing = skill.signatures ?? []
    const signatures = Signatures.merge(existing, signature)
    if (Result.isFailure(signatures)) return yield* new SigningFailed({ reason: `${folder}: ${signatures.failure}` })
    planned.push({
      folder,
      signatures: signatures.success,
      signed: { uri: skill.manifest.uri, directory: skill.directory, replaced: existing.some((other) => other.keyId === key.publicKey.keyId) }
    })
  }
  // Each file replaced whole (a temporary file renamed over it), so a server never reads half of one.
  for (const { folder, signatures } of planned) {
    const path = NodePath.join(folder, Signatures.FileName)
    const temp = `${path}.${process.pid}.tmp`
    yield* attempt(`cannot write ${path}`, () => {
      NodeFs.writeFileSync(temp, Signatures.render(signatures), { flag: "w" })
      NodeFs.renameSync(temp, path)
    })
  }
  return { keyId: key.publicKey.keyId, signed: planned.map((entry) => entry.signed) }
})
