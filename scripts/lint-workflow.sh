#!/usr/bin/env bash
# `snakemake --lint`, failing on every lint except one: "Specify a conda
# environment or container for each rule". qlab's software comes from Debian
# packages (scripts/setup.sh) and, for containerized runs, from the images of
# containers/ (issue 7); conda environments are not available on qlab's machines.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(.venv/bin/snakemake --lint 2>&1) || true
other=$(printf '%s\n' "$out" | grep -E '^    \* ' | grep -v 'Specify a conda environment or container for each rule' || true)
if [ -n "$other" ]; then
  printf '%s\n' "$out" >&2
  echo "snakemake --lint: problems above" >&2
  exit 1
fi
echo "snakemake --lint: clean (software comes from scripts/setup.sh, not conda)"
