#!/usr/bin/env bash
# Runs shellcheck (severity warning and above) on every tracked shell script:
# *.sh files and files whose first line runs sh or bash.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v shellcheck >/dev/null || { echo "lint-shell: shellcheck not found (scripts/setup.sh installs it)" >&2; exit 2; }
mapfile -t scripts < <(git ls-files -z | while IFS= read -r -d '' f; do
  [[ -f $f ]] || continue
  if [[ $f == *.sh ]] || head -n1 "$f" 2>/dev/null | grep -Eq '^#!.*\b(ba)?sh\b'; then
    printf '%s\n' "$f"
  fi
done)
shellcheck -S warning "${scripts[@]}"
echo "shellcheck: ${#scripts[@]} scripts clean"
