# Sourced by the scripts whose checks .ci/run counts as tests (consumer-test.sh, docs-check.sh).
# `check NAME COMMAND...` runs one check in a subshell, prints `ok` or `FAIL` (then the last 40
# lines of its output) and counts it; `report NAME [RESULTS]` prints the counts and, given a path,
# writes them there as JSON for .ci/run's total, and fails when a check failed. The caller sets
# `work`, a scratch folder it removes.

passed=0
failed=0
checks_started=$SECONDS

check() {
  local name="$1"
  shift
  if ("$@") >"$work/log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    tail -n 40 "$work/log" | sed 's/^/     /'
  fi
}

report() {
  local name="$1" results="${2:-}"
  echo "$name: $passed passed, $failed failed ($((SECONDS - checks_started)) s)"
  if [ -n "$results" ]; then
    echo "{\"numPassedTests\": $passed, \"numFailedTests\": $failed, \"success\": $([ "$failed" -eq 0 ] && echo true || echo false)}" >"$results"
  fi
  [ "$failed" -eq 0 ]
}
