#!/usr/bin/env bash
# The Docker tests (tests/test_docker.py with QLAB_TEST_DOCKER=1): build the
# base, ns-3, emu (and kmod) images through the workflow's rules, side by
# side (minutes from a cold Docker cache, a no-op when their tags exist), run
# a tiny ns-3 job inside and compare its trace tables byte for byte with the
# native run's; as root, run a Mininet job in the emu image through the
# workflow and kill another mid-way; export. Exits 0 with a note when no
# Docker engine answers.
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
# The images the tests use, built side by side (each after base): most of a
# cold build waits on Debian's archive and PyPI, so two or three at once take
# little longer than the longest (docs/benchmarks.md, "CI"). The tests' own
# builds are then no-ops; kmod only where the host's modules exist to compare.
images="build/images/ns3.json build/images/emu.json"
[ -e build/linux/kmod/sch_ncq.ko ] && images="$images build/images/kmod.json"
# shellcheck disable=SC2086  # the targets are words
.venv/bin/snakemake --workflow-profile workflows/profiles/docker --cores 6 --quiet rules -- $images \
  || { tail -n 40 logs/images/*.log >&2; exit 1; }
QLAB_TEST_DOCKER=1 .venv/bin/pytest -q tests/test_docker.py "$@"
