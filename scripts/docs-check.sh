#!/usr/bin/env bash
# The documentation site as a person reads it: installs Debian's Chromium if it is missing (as
# root, or with sudo -n), builds the site (`npm run docs`: the guides of docs/ and the reference of
# the three packages, into site/), then reads it in headless Chromium (docs/browser-check.mjs):
# every page reachable from the index loads, every internal link and anchor resolves, no page
# throws, and the search box finds SkillsClient. Screenshots of the index, the search and the
# SkillsClient reference page go to site-check/. Each check counts as one test; with a path
# argument the counts are written there as JSON for .ci/run's total. Not part of `npm test`: it
# needs a Debian package.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
results="${1:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Every command runs on the repository's Node 22, whatever `node` the shell has.
export PATH="$PWD/node_modules/.bin:$PATH"

# shellcheck source=scripts/checks.sh
. scripts/checks.sh

chromium_installed() {
  if [ -x /usr/bin/chromium ]; then return 0; fi
  local as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo -n)
  "${as_root[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq chromium &&
    [ -x /usr/bin/chromium ]
}
# A failed build must not leave an older site to be checked.
build() { rm -rf site && npm run docs; }

check "Debian's chromium is installed (apt-get install chromium)" chromium_installed
check "npm run docs builds the site into site/" build
if [ -f site/index.html ] && [ -x /usr/bin/chromium ]; then
  node docs/browser-check.mjs site site-check "$work/browser.json"
else
  echo "FAIL the browser check: no site or no chromium to read it with"
fi
if [ -f "$work/browser.json" ]; then
  passed=$((passed + $(node -p "require('$work/browser.json').numPassedTests")))
  failed=$((failed + $(node -p "require('$work/browser.json').numFailedTests")))
else
  failed=$((failed + 1))
fi

report "docs check" "$results"
