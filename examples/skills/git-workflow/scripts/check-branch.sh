#!/bin/sh
# Check the current branch before pushing: branch name and every commit since the
# upstream default branch must follow references/CONVENTIONS.md.
# Usage: check-branch.sh [BASE]   (BASE defaults to origin/main)
set -eu

base="${1:-origin/main}"
types='feat|fix|perf|refactor|docs|test|build|ci|chore|revert'
status=0

branch="$(git symbolic-ref --short HEAD)"
if ! printf '%s\n' "$branch" | grep -Eq "^($types)/[a-z0-9][a-z0-9-]*$"; then
  echo "branch '$branch' should be named <type>/<short-topic>" >&2
  status=1
fi

for commit in $(git rev-list --no-merges "$base..HEAD"); do
  subject="$(git log -1 --format=%s "$commit")"
  if ! printf '%s\n' "$subject" | grep -Eq "^($types)(\([a-z0-9-]+\))?!?: [^A-Z].{0,70}$"; then
    echo "$(git log -1 --format=%h "$commit"): '$subject' is not a Conventional Commit summary" >&2
    status=1
  fi
  case "$subject" in
    *WIP*|*wip*|fixup!*|squash!*) echo "$(git log -1 --format=%h "$commit"): squash '$subject' before pushing" >&2; status=1 ;;
  esac
done

[ "$status" -eq 0 ] && echo "branch $branch is ready to push"
exit "$status"
