#!/usr/bin/env bash
# The Docker tests (tests/test_docker.py with QLAB_TEST_DOCKER=1): build the
# base, ns-3 and emu images through the workflow's rules (minutes from a cold
# Docker cache, a no-op when their tags exist), run a tiny ns-3 job inside and
# compare its trace tables byte for byte with the native run's; as root, run
# a Mininet job in the emu image through the workflow and kill another
# mid-way; export. Exits 0 with a note when no Docker engine answers.
#   tests/test_docker.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
export TZ=UTC
if ! docker info >/dev/null 2>&1; then
  echo "test_docker: no Docker engine reachable; skipped"
  exit 0
fi
command -v debootstrap >/dev/null || {
  echo "test_docker: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
# the native side of the comparison
.venv/bin/snakemake build/core/qcore-replay build/ns3/qlab-ns3-run --cores "$(nproc)" --quiet all \
  || { cat logs/build/*.log >&2; exit 1; }
QLAB_TEST_DOCKER=1 .venv/bin/pytest -q tests/test_docker.py "$@"
