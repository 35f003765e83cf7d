# qlab: the two commands are `make reproduce` and `make test` (README.md).
PROFILE ?= quick
RUNTIME ?= native
CORES ?= $(shell nproc)
RESULTS ?= results
VENV := .venv
PY := $(VENV)/bin/python
SNAKEMAKE := $(VENV)/bin/snakemake --workflow-profile workflows/profiles/local

.PHONY: all setup build reproduce test lint clean help

all: help

help:
	@echo "make reproduce [PROFILE=quick|paper] [CORES=n]   regenerate every figure and the report"
	@echo "make test                                        install what is missing and run every test"
	@echo "make build                                       build the discipline core and the runners"

setup:
	@scripts/setup.sh

build: setup
	@$(SNAKEMAKE) build/core/qcore-replay build/ns3/qlab-ns3-run --cores $(CORES) --quiet all

reproduce: build
ifneq ($(RUNTIME),native)
	@echo "make reproduce: RUNTIME=$(RUNTIME) is not available yet (only native); see issue 7" >&2; exit 2
endif
	@$(VENV)/bin/qlab validate
	@$(SNAKEMAKE) --cores $(CORES) --config profile=$(PROFILE) results=$(RESULTS) \
	    --quiet rules reason host
	@echo "report: $(abspath reports/_site/index.html)"

test: setup
	@scripts/test.sh

lint: setup
	@$(VENV)/bin/ruff check qlab tests benchmarks disciplines
	@scripts/lint-workflow.sh

clean:
	rm -rf build reports/_site
