#!/usr/bin/env bash
# The packages as a user gets them, outside this repository: packs the three packages
# (scripts/pack.sh), installs the tarballs into a scratch project with effect and
# @effect/platform-node from the registry (at each end of the peer range: its lowest release and
# the newest in it), and checks
# that the project has one effect and a clean `npm ls`, type-checks an app importing every public
# module and the packages' README examples (skipLibCheck false, exactOptionalPropertyTypes on
# and off), that public declaration files import no internal one, runs a server, a client and a
# property test there (scripts/consumer), runs both executables, refuses internal subpaths, and
# that an effect outside the range is a loud peer conflict. Each check counts as one test; with a
# path argument the counts are written there as JSON for .ci/run's total.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"
results="${1:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# npm and all it starts run on the repository's Node 22 (the system Node may be 20, which the
# packages' engines refuse); nothing else of the repository is on PATH.
mkdir "$work/bin"
ln -s "$repo/node_modules/.bin/node" "$work/bin/node"
export PATH="$work/bin:$PATH"
npm_install() { npm install --no-audit --no-fund --loglevel=error "$@"; }

dev() { echo "$1@$(node -p "require('$repo/package.json').devDependencies['$1']")"; }
# Below the peer range (4.1.0 has no skills in effect's McpServer; 4.0.6 is the last 4.0): each must
# be refused, not installed beside a nested copy. No release above the range exists yet.
below=4.0.6
just_below=4.1.0

# shellcheck source=scripts/checks.sh
. "$repo/scripts/checks.sh"

pack() { scripts/pack.sh "$work/packs"; }
# One app per end of the range: `$effect` is the effect, `@effect/platform-node` and `@effect/vitest`
# release it is installed with (the lowest end pins its own; the newest takes the newest in range).
install() {
  cd "$app" && npm_install "$work"/packs/*.tgz "effect@$effect" "@effect/platform-node@$effect" \
    "@effect/vitest@$effect" "$(dev typescript)" "$(dev vitest)" "$(dev @types/node)"
}
one_effect() {
  cd "$app"
  local copies
  copies="$(find node_modules -type d -path '*node_modules/effect')"
  echo "$copies"
  [ "$(echo "$copies" | wc -l)" -eq 1 ] && [ -f node_modules/effect/package.json ]
}
npm_ls() { cd "$app" && npm ls --all; }

# modules.ts: each package's index next to the modules its package.json exports by subpath.
modules() {
  cd "$app" && node - <<'JS'
const fs = require("node:fs")
const lines = []
const entries = []
for (const name of ["core", "server", "client"]) {
  const pkg = `@mcp-skills/${name}`
  const manifest = JSON.parse(fs.readFileSync(`node_modules/${pkg}/package.json`, "utf8"))
  lines.push(`import * as ${name} from "${pkg}"`)
  const subpaths = Object.keys(manifest.exports).filter((key) => key !== "." && key !== "./package.json").map((key) => key.slice(2))
  for (const sub of subpaths) lines.push(`import * as ${name}_${sub} from "${pkg}/${sub}"`)
  entries.push(`  ["${pkg}", ${name}, { ${subpaths.map((sub) => `${sub}: ${name}_${sub}`).join(", ")} }]`)
}
lines.push("", `export const modules = [\n${entries.join(",\n")}\n] as const`, "")
fs.writeFileSync("modules.ts", lines.join("\n"))
JS
}

# readme-*.ts: every TypeScript block of the installed packages' READMEs, one module each.
readmes() {
  cd "$app" && node - <<'JS'
const fs = require("node:fs")
let count = 0
for (const name of ["core", "server", "client"]) {
  const readme = fs.readFileSync(`node_modules/@mcp-skills/${name}/README.md`, "utf8")
  for (const [, code] of readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) fs.writeFileSync(`readme-${name}-${++count}.ts`, `${code}export {}\n`)
}
if (count === 0) throw new Error("no TypeScript example in the READMEs")
console.log(`${count} examples`)
JS
}

typecheck() {
  cd "$app" && cat >"tsconfig.$1.json" <<JSON
{
  "compilerOptions": {
    "target": "ES2024",
    "lib": ["ES2024", "DOM"],
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "types": ["node"],
    "strict": true,
    "exactOptionalPropertyTypes": $1,
    "skipLibCheck": false,
    "noEmit": true,
    "allowImportingTsExtensions": true
  },
  "include": ["app.ts", "modules.ts", "readme-*.ts"]
}
JSON
  npx --no-install tsc -p "tsconfig.$1.json"
}

# A public module's declarations naming an internal one would make a user's own declarations
# unnameable (TS2742): none may.
public_declarations() {
  cd "$app/node_modules/@mcp-skills" && ! grep -nE '(from |import\()"\./(internal|bin)/' ./*/dist/src/*.d.ts
}

run_tests() { cd "$app" && npx --no-install vitest run; }
bins() { cd "$app" && npx --no-install mcp-skills --help >/dev/null && npx --no-install mcp-skills-server --help >/dev/null; }

internals() {
  cd "$app" && node --input-type=module - <<'JS'
const blocked = [
  "@mcp-skills/core/internal/generated",
  "@mcp-skills/server/internal/effectMcp",
  "@mcp-skills/server/bin/serve",
  "@mcp-skills/client/internal/transport",
  "@mcp-skills/client/Cli",
  "@mcp-skills/client/bin/mcp-skills",
  "@mcp-skills/client/dist/src/index.js"
]
let wrong = 0
for (const specifier of blocked) {
  const code = await import(specifier).then(() => "imported", (error) => error.code)
  console.log(`${specifier}: ${code}`)
  if (code !== "ERR_PACKAGE_PATH_NOT_EXPORTED") wrong++
}
process.exitCode = wrong === 0 ? 0 : 1
JS
}

# The core alone peers on effect only, so the conflict is the packages' range, not a dependency's.
conflict() {
  local outside="$1"
  mkdir -p "$work/outside-$outside" && cd "$work/outside-$outside" && echo '{ "name": "outside-app", "private": true }' >package.json
  local output
  if output="$(npm_install --dry-run "$work"/packs/mcp-skills-core-*.tgz "effect@$outside" 2>&1)"; then
    echo "$output"
    echo "effect@$outside was accepted beside @mcp-skills/core without a conflict"
    return 1
  fi
  echo "$output"
  grep -q ERESOLVE <<<"$output"
}

check "pack the three packages (scripts/pack.sh)" pack
# The range the packages declare support for (their peer range, as a test in the repository checks).
range="$(node --input-type=module -e 'console.log((await import(process.argv[1])).range)' \
  "$repo/packages/skills-core/dist/src/EffectSupport.js")"
# Both ends of the range: its lowest release, and the newest the registry has in it.
lowest="$(sed -E 's/^>=([0-9.]+) .*/\1/' <<<"$range")"
for effect in "$lowest" "$range"; do
  app="$work/app-${effect//[^0-9.]/_}"
  mkdir "$app"
  echo '{ "name": "consumer-app", "private": true, "type": "module" }' >"$app/package.json"
  cp scripts/consumer/app.ts scripts/consumer/app.test.ts "$app/"
  check "npm install the tarballs with effect@$effect, @effect/platform-node@$effect and @effect/vitest@$effect from the registry" install
  check "[effect@$effect] exactly one copy of effect is installed" one_effect
  check "[effect@$effect] npm ls --all is clean" npm_ls
  check "[effect@$effect] write modules.ts from the installed exports" modules
  check "[effect@$effect] extract the README examples" readmes
  check "[effect@$effect] type-check the app and README examples (skipLibCheck false, exactOptionalPropertyTypes true)" typecheck true
  check "[effect@$effect] type-check the app and README examples (skipLibCheck false, exactOptionalPropertyTypes false)" typecheck false
  check "[effect@$effect] public declaration files import no internal module" public_declarations
  check "[effect@$effect] run a server, a client and a property test in the app (vitest)" run_tests
  check "[effect@$effect] mcp-skills --help and mcp-skills-server --help" bins
  check "[effect@$effect] internal subpaths fail with ERR_PACKAGE_PATH_NOT_EXPORTED" internals
done
check "effect@$below with @mcp-skills/core is refused as a peer conflict" conflict "$below"
check "effect@$just_below with @mcp-skills/core is refused as a peer conflict" conflict "$just_below"

report "consumer test" "$results"
