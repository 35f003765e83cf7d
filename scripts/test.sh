#!/usr/bin/env bash
# Every test of qlab: C core, ns-3 runner, ns-2 adapter, Linux qdiscs (VM), emulator,
# R analysis, lint, Python + end-to-end (ns-3, ns-2 and Mininet).
# Called by `make test` (after scripts/setup.sh). pytest runs last, so its
# summary line is the run's closing line.
set -euo pipefail
cd "$(dirname "$0")/.."
export TZ=UTC
VENV=.venv
step() { printf '\n== %s (at %d s)\n' "$*" "$SECONDS"; }

step "build (core, ns-3 runner, ns-2)"
"$VENV/bin/snakemake" build/core/qcore-replay build/ns3/qlab-ns3-run build/ns3/qlab-ns3-golden build/ns3/qlab-ns3-test-typed build/ns3/qlab-ns3-test-flow-hash build/ns3/qlab-ns3-test-tcp-handshake build/ns2/ns build/ns2/qlab-ns2-golden --cores "$(nproc)" --quiet all \
  || { cat logs/build/*.log >&2; exit 1; }

step "C: discipline core unit and replay tests"
make -s -C disciplines/core test

step "ns-3: runner, golden vectors through the adapter, typed queue discs"
bash disciplines/ns3/tests/test_runner.sh build/ns3/qlab-ns3-run
bash disciplines/ns3/tests/test_golden.sh build/ns3/qlab-ns3-golden
bash disciplines/ns3/tests/test_typed.sh build/ns3

step "ns-2: golden vectors through the adapter (Queue/Qlab in qlab's ns-2.35)"
bash disciplines/ns2/tests/test_golden.sh build/ns2/qlab-ns2-golden

step "Linux qdiscs: modules and tc plugins, tested in a VM booting Debian's kernel"
bash disciplines/linux/tests/run.sh

step "emulation: qlab-emu build, the golden vectors through its queue, Ansible lint"
make -s -C disciplines/emu test
PATH="$PWD/$VENV/bin:$PATH" ansible-lint --offline -q roles/emu_preflight roles/emu_host roles/emu_run roles/testbed_* playbooks/run-job.yml playbooks/prepare-host.yml playbooks/testbed-run.yml playbooks/testbed-prepare.yml playbooks/mnkernel-run.yml

step "R: analysis (testthat)"
Rscript -e 'res <- testthat::test_dir("analysis/tests/testthat", reporter = "summary", stop_on_failure = TRUE)'

step "lint (ruff check and format, snakemake --lint, snakefmt, hadolint, shellcheck, lintr)"
"$VENV/bin/ruff" check qlab tests benchmarks disciplines
"$VENV/bin/ruff" format --check qlab tests benchmarks disciplines
scripts/lint-workflow.sh
"$VENV/bin/snakefmt" --check Snakefile workflows/
"$VENV/bin/hadolint" containers/*/Dockerfile
scripts/lint-shell.sh
scripts/lint-r.sh

# two workers: the workflow's tests on one, in order; what changes the host
# (Mininet, Ansible) as a group too; the rest spread (tests/conftest.py)
step "Python and end-to-end (pytest, two workers)"
"$VENV/bin/pytest" -q -n 2 --durations=25 tests
