/**
 * Test support: skill folders on disk, in fresh temporary folders.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Writes one file below `root`, creating its folders. */
export const write = (root: string, relative: string, content: string | Uint8Array): void => {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
}

/** Builds a folder tree from relative paths to contents; returns its root. */
export const tree = (files: Record<string, string | Uint8Array>): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "skills-test-"))
  for (const [relative, content] of Object.entries(files)) write(root, relative, content)
  return root
}

/** A fresh folder in the system's temp folder, removed with the scope. */
export const tempDir = (prefix: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return yield* fs.makeTempDirectoryScoped({ prefix })
  }).pipe(Effect.provide(NodeFileSystem.layer), Effect.orDie)
