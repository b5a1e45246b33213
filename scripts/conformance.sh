#!/usr/bin/env bash
# Run the official MCP conformance suite's Skills-extension (SEP-2640) scenarios against a running
# server (and, optionally, a client command), with a strict verdict.
#
# Usage:
#   scripts/conformance.sh [options] SERVER_URL [SCENARIO_FILTER]
#   scripts/conformance.sh [options] --client-only --client-cmd CMD [SCENARIO_FILTER]
#
#   SERVER_URL       the MCP endpoint of a running streamable-HTTP server, e.g. http://127.0.0.1:3000/mcp
#   SCENARIO_FILTER  optional extended regex on scenario names, e.g. 'enumeration' or 'manifest|directory'
#
# Options:
#   --spec-version V  2026-07-28, 2025-11-25 or both (default: both). Always passed with --force, because
#                     the runner silently skips extension scenarios given an explicit version without it.
#   --client-cmd CMD  also run the 4 client scenarios; the runner appends the mock server URL to CMD (it is
#                     split on spaces: point it at a wrapper script whose path has none)
#   --client-only     run only the client scenarios (no SERVER_URL)
#   --out DIR         keep the results in DIR (default: a fresh temporary folder)
#   --timeout MS      per-scenario timeout passed to the runner (default 30000)
#   -h, --help        show this help
#
# A scenario passes only when its checks.json exists and holds no FAILURE, no WARNING and no SKIPPED
# check, except the two cache-attribute checks that the suite itself skips on 2025-11-25 (ttlMs and
# cacheScope only exist from 2026-07-28). A non-zero runner exit, a server that never declares
# io.modelcontextprotocol/skills and a client that never calls skills/list are failures too: the
# runner exits 0 for both of those, with every check SKIPPED.
#
# Uses only what `npm ci` installed: node_modules/.bin/node (Node 22; the suite does not load on
# Node 20) and the pinned devDependency @modelcontextprotocol/conformance. No network access.
#
# Prints one PASS/FAIL line per scenario run and ends with "conformance: N passed, N failed".
# Exit status: 0 when every scenario passed, 1 otherwise, 2 on usage errors or when nothing matched.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE="$REPO/node_modules/.bin/node"
CLI="$REPO/node_modules/@modelcontextprotocol/conformance/dist/index.js"

SERVER_SCENARIOS=(sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory)
CLIENT_SCENARIOS=(sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size sep-2640-client-verify-frontmatter)

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

SPEC="both"; CLIENT_CMD=""; CLIENT_ONLY=0; OUT=""; TIMEOUT=30000
POS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --spec-version) SPEC="${2:?--spec-version needs a value}"; shift 2 ;;
    --client-cmd) CLIENT_CMD="${2:?--client-cmd needs a value}"; shift 2 ;;
    --client-only) CLIENT_ONLY=1; shift ;;
    --out) OUT="${2:?--out needs a value}"; shift 2 ;;
    --timeout) TIMEOUT="${2:?--timeout needs a value}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; POS+=("$@"); break ;;
    -*) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    *) POS+=("$1"); shift ;;
  esac
done

URL=""; FILTER=""
if [ "$CLIENT_ONLY" = 1 ]; then
  [ -n "$CLIENT_CMD" ] || { echo "--client-only needs --client-cmd" >&2; exit 2; }
  FILTER="${POS[0]:-}"
else
  URL="${POS[0]:-}"; FILTER="${POS[1]:-}"
  [ -n "$URL" ] || { usage >&2; exit 2; }
fi
case "$SPEC" in
  2026-07-28) SPECS=(2026-07-28) ;;
  2025-11-25) SPECS=(2025-11-25) ;;
  both) SPECS=(2026-07-28 2025-11-25) ;;
  *) echo "unsupported --spec-version $SPEC (use 2026-07-28, 2025-11-25 or both)" >&2; exit 2 ;;
esac

[ -x "$NODE" ] || { echo "missing $NODE: run npm install first" >&2; exit 2; }
[ -f "$CLI" ] || { echo "missing $CLI: run npm install first" >&2; exit 2; }

[ -n "$OUT" ] || OUT="$(mktemp -d "${TMPDIR:-/tmp}/skills-conformance.XXXXXX")"
mkdir -p "$OUT"
echo "conformance $("$NODE" -p "require('$REPO/node_modules/@modelcontextprotocol/conformance/package.json').version") on node $("$NODE" --version); results in $OUT" >&2

# Prints "ok <tally>" or "fail <tally> | <reasons>" for one checks.json.
judge() { # checks.json kind spec
  "$NODE" -e '
    const [file, kind, spec] = process.argv.slice(1)
    const checks = JSON.parse(require("node:fs").readFileSync(file, "utf8"))
    const by = (status) => checks.filter((c) => c.status === status)
    const ids = (list) => list.map((c) => c.id).join(", ")
    const skipped = by("SKIPPED")
    const undeclared = skipped.filter((c) => /did not declare the io\.modelcontextprotocol\/skills extension/.test(c.errorMessage ?? ""))
    const neverListed = skipped.filter((c) => /never called skills\/list/.test(c.errorMessage ?? ""))
    // The only SKIPs the suite emits on purpose for a conforming server: no cache attributes before 2026-07-28.
    const expected = new Set(["sep-2640-skills-list-cache-attributes", "sep-2640-skills-get-cache-attributes"])
    const unexpected = skipped.filter((c) => !(spec === "2025-11-25" && expected.has(c.id)))
    const reasons = []
    if (checks.length === 0) reasons.push("no checks were run")
    if (by("FAILURE").length) reasons.push(`${by("FAILURE").length} FAILURE: ${ids(by("FAILURE"))}`)
    if (by("WARNING").length) reasons.push(`${by("WARNING").length} WARNING: ${ids(by("WARNING"))}`)
    if (kind === "server" && undeclared.length) reasons.push("the server does not declare io.modelcontextprotocol/skills")
    if (kind === "client" && neverListed.length) reasons.push("the client never called skills/list")
    if (unexpected.length) reasons.push(`${unexpected.length} SKIPPED: ${ids(unexpected)}`)
    const n = (status) => by(status).length
    const tally = `${n("SUCCESS")} success, ${n("FAILURE")} failure, ${n("WARNING")} warning, ${n("SKIPPED")} skipped`
    console.log(reasons.length ? `fail ${tally} | ${reasons.join("; ")}` : `ok ${tally}`)
  ' "$1" "$2" "$3"
}

PASSED=0; FAILED=0; SUMMARY=()
record() { # label verdict
  if [[ "$2" == ok* ]]; then PASSED=$((PASSED + 1)); SUMMARY+=("PASS $1 (${2#ok })")
  else FAILED=$((FAILED + 1)); SUMMARY+=("FAIL $1 (${2#fail })"); fi
}

run_one() { # kind scenario spec
  local kind="$1" scenario="$2" spec="$3" dir rc=0 checks verdict
  dir="$OUT/$kind-$spec-$scenario"
  rm -rf "$dir"; mkdir -p "$dir"
  local args=(--scenario "$scenario" --spec-version "$spec" --force -o "$dir" --timeout "$TIMEOUT")
  echo "=== $kind $scenario @ $spec ===" >&2
  if [ "$kind" = server ]; then
    "$NODE" "$CLI" server --url "$URL" "${args[@]}" >"$dir/runner.log" 2>&1 || rc=$?
  else
    "$NODE" "$CLI" client --command "$CLIENT_CMD" "${args[@]}" >"$dir/runner.log" 2>&1 || rc=$?
  fi
  checks="$(find "$dir" -mindepth 2 -maxdepth 2 -name checks.json | sort | tail -n 1)"
  if [ -z "$checks" ]; then
    verdict="fail runner exit $rc and no checks.json (server unreachable or wire rejected; see $dir/runner.log)"
  else
    verdict="$(judge "$checks" "$kind" "$spec")"
    if [ "$rc" -ne 0 ] && [[ "$verdict" == ok* ]]; then verdict="fail runner exit $rc (${verdict#ok })"; fi
  fi
  [[ "$verdict" == ok* ]] || sed 's/^/  | /' "$dir/runner.log" | tail -n 40 >&2
  record "$kind/$scenario@$spec" "$verdict"
  echo "${SUMMARY[${#SUMMARY[@]}-1]}"
}

match() { [ -z "$FILTER" ] || [[ "$1" =~ $FILTER ]]; }

for spec in "${SPECS[@]}"; do
  if [ "$CLIENT_ONLY" = 0 ]; then
    for s in "${SERVER_SCENARIOS[@]}"; do if match "$s"; then run_one server "$s" "$spec"; fi; done
  fi
  if [ -n "$CLIENT_CMD" ]; then
    for s in "${CLIENT_SCENARIOS[@]}"; do if match "$s"; then run_one client "$s" "$spec"; fi; done
  fi
done

if [ $((PASSED + FAILED)) -eq 0 ]; then echo "no scenario matched '$FILTER'" >&2; exit 2; fi
echo "conformance: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
