# qlab: the two commands are `make reproduce` and `make test` (README.md).
PROFILE ?= quick
RUNTIME ?= native
CORES ?= $(shell nproc)
RESULTS ?= results
# Default: every backend this machine runs (`qlab backends --available` says
# which and why the others are left out), e.g. BACKENDS='[ns3]'.
BACKENDS ?=
VENV := .venv
PY := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake --workflow-profile workflows/profiles/local

.PHONY: all setup build reproduce test test-docker lint clean help

all: help

help:
	@echo "make reproduce [PROFILE=quick|paper] [CORES=n]   regenerate every figure and the report"
	@echo "make reproduce RUNTIME=docker                    the same, every job in qlab's Docker images"
	@echo "make test                                        install what is missing and run every test"
	@echo "make test-docker                                 build the images, compare an ns-3 job with native, run a Mininet job in its image"
	@echo "make build                                       build the discipline core and the runners"

setup:
	@scripts/setup.sh

build: setup
	@$(SNAKEMAKE) build/core/qcore-replay build/ns3/qlab-ns3-run --cores $(CORES) --quiet all

# Under docker the runners are built into the images (no native build).
reproduce: $(if $(filter docker,$(RUNTIME)),setup,build)
ifeq ($(RUNTIME),docker)
	@$(VENV)/bin/qlab validate
	@backends="$(if $(BACKENDS),$(BACKENDS),$$($(VENV)/bin/qlab backends --available))"; \
	$(VENV)/bin/snakemake --workflow-profile workflows/profiles/docker --cores $(CORES) \
	    --config backends="$$backends" $(if $(QUARTO_DEB),quarto_deb=$(QUARTO_DEB)) --quiet rules -- images \
	&& $(VENV)/bin/snakemake --workflow-profile workflows/profiles/docker --cores $(CORES) \
	    --config profile=$(PROFILE) results=$(RESULTS) backends="$$backends" \
	    $(if $(QUARTO_DEB),quarto_deb=$(QUARTO_DEB)) --quiet rules reason host
	@echo "report: $(abspath reports/_site/index.html)"
else ifneq ($(RUNTIME),native)
	@echo "make reproduce: RUNTIME=$(RUNTIME) is not available (native or docker)" >&2; exit 2
else
	@$(VENV)/bin/qlab validate
	@$(SNAKEMAKE) --cores $(CORES) --config profile=$(PROFILE) results=$(RESULTS) \
	    backends="$(if $(BACKENDS),$(BACKENDS),$$($(VENV)/bin/qlab backends --available))" \
	    --quiet rules reason host
	@echo "report: $(abspath reports/_site/index.html)"
endif

test: setup
	@scripts/test.sh

# Minutes from a cold Docker cache; a note and exit 0 when no engine answers.
test-docker: setup
	@tests/test_docker.sh

lint: setup
	@$(VENV)/bin/ruff check qlab tests benchmarks disciplines
	@scripts/lint-workflow.sh

clean:
	rm -rf build reports/_site
