# qlab: the two commands are `make reproduce` and `make test` (README.md).
PROFILE ?= quick
RUNTIME ?= native
CORES ?= $(shell nproc)
RESULTS ?= results
# Default: every backend this machine runs (`qlab backends --available` says
# which and why the others are left out), e.g. BACKENDS='[ns3]'.
BACKENDS ?=
# Where the jobs run: local (this machine), or slurm / kubernetes through
# Snakemake's executor plugins and workflows/profiles/EXECUTOR (README,
# "Running on a cluster"); EXECUTOR_ARGS passes options to it, e.g.
# EXECUTOR_ARGS='--slurm-no-account' or '--default-storage-prefix s3://bucket/qlab'.
EXECUTOR ?= local
EXECUTOR_ARGS ?=
VENV := .venv
PY := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake --workflow-profile workflows/profiles/local
# Progress and a summary on the terminal; Snakemake's whole log in a file (qlab/progress.py);
# with nothing changed since the last reproduction, Snakemake is not started (qlab/uptodate.py).
WATCH = $(PY) -m qlab.progress --results $(RESULTS) --site reports/_site

.PHONY: all setup core build reproduce test test-docker test-testbed fuzz lint clean help

all: help

help:
	@echo "make reproduce [PROFILE=quick|paper] [CORES=n]   regenerate every figure and the report"
	@echo "make reproduce RUNTIME=docker                    the same, every job in qlab's Docker images"
	@echo "make reproduce EXECUTOR=slurm|kubernetes         the same, the jobs submitted to a cluster (README)"
	@echo "make test                                        install what is missing and run every test"
	@echo "make test-docker                                 build the images, compare an ns-3 job with native, run a Mininet job in its image"
	@echo "make test-testbed [TESTBED=smoke]                boot the virtual testbed (3 QEMU VMs): a job with each kernel qdisc, the fault tests"
	@echo "make build                                       build the discipline core and the runners"
	@echo "make fuzz [FUZZ_CASES=n]                         the scenario fuzz suite at length (hostile input)"

setup:
	@scripts/setup.sh

# ns-2 too where it is available (a reproduction would build it otherwise,
# about a minute and a half of one core)
build: setup
	@targets="build/core/qcore-replay build/ns3/qlab-ns3-run"; \
	case "$$($(VENV)/bin/qlab backends --available 2>/dev/null)" in *ns2*) targets="$$targets build/ns2/ns";; esac; \
	$(SNAKEMAKE) $$targets --cores $(CORES) --quiet all

# The core's replay tool, which `qlab validate` asks about discipline
# parameters, through the core's own Makefile (nothing to do when it is up to
# date), under either runtime: validation runs on the host. The workflow
# builds the runners a reproduction needs as jobs of its own; under docker
# they are built into the images.
core: setup
	@mkdir -p $(RESULTS)/logs && $(MAKE) -s -C disciplines/core -j$(CORES) > $(RESULTS)/logs/build-core.log 2>&1 \
	  || { echo "make: building the discipline core failed, see $(RESULTS)/logs/build-core.log" >&2; exit 1; }

# qlab's own modules compiled once (`qlab run-job` starts once per run; with
# PYTHONDONTWRITEBYTECODE set, as on some machines, Python would compile them every time)
reproduce: core
	@$(PY) -m compileall -q qlab > /dev/null
ifneq ($(EXECUTOR),local)
ifneq ($(RUNTIME),native)
	@echo "make reproduce: EXECUTOR=$(EXECUTOR) takes its software from the cluster (the nodes' shared checkout, or the pods' image), not RUNTIME=$(RUNTIME)" >&2; exit 2
endif
endif
ifeq ($(RUNTIME),docker)
	@$(VENV)/bin/qlab validate --profile $(PROFILE) --stamp $(RESULTS)/.qlab-validated
	@backends="$(if $(BACKENDS),$(BACKENDS),$$($(VENV)/bin/qlab backends --available))"; \
	$(WATCH) --what "building the images" --no-summary --log $(RESULTS)/logs/images.log -- \
	  $(VENV)/bin/snakemake --workflow-profile workflows/profiles/docker --cores $(CORES) \
	    --config backends="$$backends" $(if $(QUARTO_DEB),quarto_deb=$(QUARTO_DEB)) --quiet host -- images \
	&& $(WATCH) --log $(RESULTS)/logs/reproduce.log --stamp $(RESULTS)/.qlab-reproduced -- \
	  $(VENV)/bin/snakemake --workflow-profile workflows/profiles/docker --cores $(CORES) \
	    --config profile=$(PROFILE) results=$(RESULTS) backends="$$backends" \
	    $(if $(QUARTO_DEB),quarto_deb=$(QUARTO_DEB)) --quiet host
else ifneq ($(RUNTIME),native)
	@echo "make reproduce: RUNTIME=$(RUNTIME) is not available (native or docker)" >&2; exit 2
else ifneq ($(filter slurm kubernetes,$(EXECUTOR)),)
	@$(VENV)/bin/qlab validate --profile $(PROFILE) --stamp $(RESULTS)/.qlab-validated
	@$(WATCH) --log $(RESULTS)/logs/reproduce.log --stamp $(RESULTS)/.qlab-reproduced -- \
	  $(VENV)/bin/snakemake --workflow-profile workflows/profiles/$(EXECUTOR) $(EXECUTOR_ARGS) \
	    --config profile=$(PROFILE) results=$(RESULTS) \
	    backends="$(if $(BACKENDS),$(BACKENDS),$$($(VENV)/bin/qlab backends --available --no-realtime))" --quiet host
else ifneq ($(EXECUTOR),local)
	@echo "make reproduce: EXECUTOR=$(EXECUTOR) is not available (local, slurm or kubernetes)" >&2; exit 2
else
	@$(VENV)/bin/qlab validate --profile $(PROFILE) --stamp $(RESULTS)/.qlab-validated
	@$(WATCH) --log $(RESULTS)/logs/reproduce.log --stamp $(RESULTS)/.qlab-reproduced -- \
	  $(SNAKEMAKE) --cores $(CORES) --config profile=$(PROFILE) results=$(RESULTS) \
	    backends="$(if $(BACKENDS),$(BACKENDS),$$($(VENV)/bin/qlab backends --available))" --quiet host
endif

# setup --test: also what only the tests need (SLURM and munge for tests/test_slurm.py)
test:
	@scripts/setup.sh --test
	@scripts/test.sh

# Minutes from a cold Docker cache; a note and exit 0 when no engine answers.
test-docker: setup
	@tests/test_docker.sh

# The virtual testbed (README, "The testbed backend"): qlab's modules and tc
# plugins, the cached VM image, three QEMU VMs (TCG): the roles' idempotence,
# the fault tests, then a job with each of the kernel's qlab qdiscs (about 20
# minutes); TESTBED=smoke, which .ci/run runs: idempotence, a dead host and
# the NCQ job (about 10 minutes on a fresh machine). Not part of make test.
TESTBED ?= 1
test-testbed: setup
	@disciplines/linux/vm/fetch-deps.sh build/linux
	@nice -n 10 $(MAKE) -s -C disciplines/linux modules plugins
	@QLAB_TEST_TESTBED=$(TESTBED) nice -n 10 $(PY) -m pytest -q -s tests/test_testbed.py

# The scenario fuzz suite at length (make test runs 1,500 cases); FUZZ_CASES, FUZZ_SEED.
FUZZ_CASES ?= 20000
FUZZ_SEED ?= $(shell date +%s)
fuzz: setup
	@echo "fuzz: $(FUZZ_CASES) scenario cases, seed $(FUZZ_SEED) (rerun one with FUZZ_SEED=...)"
	@mkdir -p results && ulimit -v 4194304 && $(PY) -m tests.fuzz_scenarios --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) \
	    --out results/fuzz-$(FUZZ_SEED).json > /dev/null \
	  && echo "fuzz: no failures (results/fuzz-$(FUZZ_SEED).json)" \
	  || { echo "fuzz: failures, see results/fuzz-$(FUZZ_SEED).json" >&2; exit 1; }

lint: setup
	@$(VENV)/bin/ruff check qlab tests benchmarks disciplines
	@$(VENV)/bin/ruff format --check qlab tests benchmarks disciplines
	@scripts/lint-workflow.sh
	@$(VENV)/bin/snakefmt --check Snakefile workflows/
	@$(VENV)/bin/hadolint containers/*/Dockerfile
	@scripts/lint-shell.sh

clean:
	rm -rf build reports/_site
