/**
 * Reads what a package's public declaration files import: the `.d.ts` files its `exports` name
 * (as `tsc -b` emitted them), and every relative module each one names, in an import or re-export
 * statement or an `import("...")` type. A public declaration that names a module the package does
 * not export makes a user's own declarations name a path they cannot import (the package's
 * `exports` refuse it), so every such name is a defect.
 */
import * as fs from "node:fs"
import * as path from "node:path"

// Statements and `import("...")` types alike; a declaration file holds no JSDoc example outside a
// comment line that starts with `*`, so lines starting so are skipped.
const named = /\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm

/** The relative modules a declaration text names, in order, JSDoc lines left out. */
export const relativeNames = (text: string): ReadonlyArray<string> =>
  text.split("\n")
    .filter((line) => !/^\s*\*/.test(line))
    .flatMap((line) => [...line.matchAll(named)].map((match) => match[1] ?? match[2] ?? match[3]!))
    .filter((name) => name.startsWith("."))

/** A public declaration file that names a module the package does not export. */
export interface Leak {
  /** The public declaration file, relative to the package. */
  readonly file: string
  /** The module it names, relative to the package. */
  readonly names: string
}

// Every `types` path of a package's `exports`, relative to the package and normalized.
const publicTypes = (manifest: { readonly exports?: Record<string, unknown> }): ReadonlyArray<string> =>
  Object.values(manifest.exports ?? {}).flatMap((entry) =>
    typeof entry === "object" && entry !== null && "types" in entry && typeof entry.types === "string"
      ? [path.posix.normalize(entry.types)]
      : []
  )

/**
 * Every name a public declaration file of the package at `dir` gives to a module that is not
 * public. Fails when a public declaration file is missing (the package is not built).
 */
export const leaks = (dir: string): ReadonlyArray<Leak> => {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
  const exported = publicTypes(manifest)
  const known = new Set(exported)
  return exported.flatMap((file) =>
    relativeNames(fs.readFileSync(path.join(dir, file), "utf8"))
      .map((name) => path.posix.join(path.posix.dirname(file), name).replace(/\.js$/, ".d.ts"))
      .filter((names) => !known.has(names))
      .map((names) => ({ file, names }))
  )
}
