#!/usr/bin/env bash
# Builds @mcp-skills/core, @mcp-skills/server and @mcp-skills/client from a clean output folder
# and packs them into DIR (default: packs/), printing the path of each tarball. Install all three
# in one `npm install` (the server and the client depend on the core, which is not on a registry):
#
#   npm install effect@4.1.5 @effect/platform-node@4.1.5 DIR/mcp-skills-*.tgz
set -euo pipefail

# DIR is taken from where the script is run; the default is packs/ in the repository.
out="${1:-$(dirname "${BASH_SOURCE[0]}")/../packs}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

packages=(packages/skills-core packages/skills-server packages/skills-client)
# tsc -b keeps the output of sources that are gone, and npm pack would ship it.
for package in "${packages[@]}"; do rm -rf "$package/dist"; done
tsc -b "${packages[@]}"
for package in "${packages[@]}"; do
  (cd "$package" && echo "$out/$(npm pack --silent --pack-destination "$out")")
done
