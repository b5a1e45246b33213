import * as Effect from "effect/Effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Tamper from "./TamperServer.js"

const enc = new TextEncoder()

/** A skills folder for round trips, by path relative to the folder: text, binary, nested folders, a space in a name. */
export const fixture: ReadonlyArray<readonly [string, Uint8Array]> = [
  ...Tamper.exampleFiles().map((f) => [f.uri.slice("skill://".length), f.bytes] as const),
  ["pdf-processing/references/my notes.md", enc.encode("Notes with a space in the name.\n")],
  [
    "release-notes/SKILL.md",
    enc.encode(
      "---\nname: release-notes\ndescription: \"Write release notes: summary first, then changes\"\nlicense: MIT\nmetadata:\n  owner: docs\n---\n\nRead `guide/STYLE.md`.\n"
    )
  ],
  ["release-notes/guide/STYLE.md", enc.encode("# Style\n\n- short lines\n")],
  ["release-notes/data.bin", Uint8Array.from([0, 255, 1, 254, 0x80, 0x81])]
]

/** Writes the fixture into a fresh temporary folder, removed with the scope. */
export const makeFixture = Effect.acquireRelease(
  Effect.promise(async () => {
    const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "skills-fixture-"))
    for (const [path, bytes] of fixture) {
      await Fs.mkdir(Path.dirname(Path.join(dir, path)), { recursive: true })
      await Fs.writeFile(Path.join(dir, path), bytes)
    }
    return dir
  }),
  (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
)

/** Every regular file under `dir` (dot-files and dot-folders skipped), as relative `/` paths. */
export const filesUnder = async (dir: string): Promise<Array<string>> => {
  const entries = await Fs.readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => Path.relative(dir, Path.join(e.parentPath, e.name)).split(Path.sep).join("/"))
    .filter((p) => !p.split("/").some((segment) => segment.startsWith(".")))
    .sort()
}
