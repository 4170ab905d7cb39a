# The README's commands. Each bootstraps its own environment (.venv) on a fresh machine.
# bash: snakemake_report's set -o pipefail
SHELL := bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
# Which torch build: the default index's (on Linux PyPI's is a CUDA build of several GB), or PyTorch's own:
#   make reproduce TORCH_INDEX=https://download.pytorch.org/whl/cpu     CPU only (a few hundred MB)
#   make reproduce TORCH_INDEX=https://download.pytorch.org/whl/cu128   for a CUDA 12.8 driver
TORCH_INDEX ?=
TORCH := $(shell grep -o '"torch==[^"]*"' pyproject.toml | tr -d '"')
# Offline machines and CI: a local copy of the corpus (checksum-verified) instead of the download.
SHARED_CORPUS := $(wildcard ../shared/data/tinyshakespeare/input.txt)
ifneq ($(SHARED_CORPUS),)
export ATTNLAB_CORPUS ?= $(abspath $(SHARED_CORPUS))
endif

# Snakemake's own report (rule graph, runtimes) of a profile. Snakemake has no record (.snakemake/) of a job
# this machine did not run, as every published one in a clone, and warns once per file ("Missing metadata
# ... non critical warning"; no setting turns it off): one line counts them instead.
snakemake_report = set -o pipefail; $(BIN)/snakemake --report results/$(1)/snakemake_report.html --config profile=$(1) 2>&1 \
	| awk '/^Missing metadata for file/ {n++; next} {print} END {if (n) print n " files have no Snakemake record here (not built on this machine): the report gives no runtimes for them"}'

.PHONY: help reproduce reproduce-gpu quick smoke test test-fast report env clean-smoke ablate table variants

help:  ## the targets and what each does
	@sed -n 's/^\([a-z-]*\):.*## \(.*\)/\1\t\2/p' $(firstword $(MAKEFILE_LIST)) | expand -t 14

$(BIN)/snakemake: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(if $(TORCH_INDEX),$(BIN)/pip install -q '$(TORCH)' --index-url $(TORCH_INDEX))
	$(BIN)/pip install -q -e '.[test]'
	touch $@

env: $(BIN)/snakemake  ## the virtual environment .venv alone, for calling Snakemake or Hydra yourself

reproduce: env  ## every table, figure, the ledger and report.html at the chapter's settings (from scratch: the hours the pipeline_time table gives)
	$(BIN)/snakemake --cores $(CORES) --config profile=full
	@$(call snakemake_report,full)

# One machine with one GPU: the training first, GPU_SLOTS jobs sharing the GPU (each holds one gpu_slots,
# TRAIN_RESOURCES in workflow/rules/train.smk), each folding up to SEED_BATCH seeds without results (train.seed_batch); then
# the measurements, which take every core, alone. What the training costs is printed before it starts.
GPU_SLOTS ?= 15
SEED_BATCH ?= $(shell $(BIN)/python -c 'from attnlab.campaign import GPU_SEED_BATCH; print(GPU_SEED_BATCH)')
GPU_CORES ?= $(shell nproc)
GPU_SNAKEMAKE = $(BIN)/snakemake --cores $(GPU_CORES) --resources gpu_slots=$(GPU_SLOTS) --config profile=full seed_batch=$(SEED_BATCH)
reproduce-gpu: env  ## `make reproduce` on a machine with one GPU: runs sharing the GPU first, measurements after
	@measurements="$$($(BIN)/snakemake --list-rules 2>/dev/null | grep -o '^measure_[a-z_]*' | tr '\n' ' ')"; \
	$(GPU_SNAKEMAKE) -n --omit-from $$measurements | sed -n 's/^ *output: //p' | tr ',' '\n' \
		| grep -o 'results/full/[^ ]*/metrics.json' | $(BIN)/python -m attnlab.campaign cost --profile full \
	&& $(GPU_SNAKEMAKE) --omit-from $$measurements && $(GPU_SNAKEMAKE)
	@$(call snakemake_report,full)

quick: env  ## the same DAG with a tenth of the budgets
	$(BIN)/snakemake --cores $(CORES) --config profile=quick
	@$(call snakemake_report,quick)

smoke: env  ## the whole DAG on a corpus slice in a few minutes
	$(BIN)/snakemake --cores $(CORES) --config profile=smoke

test: env  ## unit tests and the smoke DAG end to end (what CI runs; lists its 15 slowest tests)
	$(BIN)/python -m pytest -q --durations=15

test-fast: env  ## the tests that run in-process: under a minute, for the edit-test loop
	$(BIN)/python -m pytest -q -m "not slow"

# One ablation as a variant beside the published results (results/<profile>/variants/<name>/: its
# runs, the tables and figures that read them with the published rows beside, its ledger and report),
# in the quick profile unless PROFILE= says otherwise; a full-profile one shows what it trains and what
# that costs, and goes on only with CONFIRM=yes:
#   make ablate RUN=ladder/average OVERRIDE='train.lr=3e-3'
# (one change: a profile scales train.steps, so a steps override would also change the budget the rows compare)
ABLATE_PROFILE = $(if $(filter command line,$(origin PROFILE)),$(PROFILE),quick)
# a second override left unquoted reaches make as a variable of its own: name it instead of dropping it
MAKE_VARIABLES := RUN OVERRIDE PROFILE CONFIRM CORES ID TORCH_INDEX PYTHON
UNQUOTED = $(filter-out $(addsuffix =%,$(MAKE_VARIABLES)) $(OVERRIDE),$(MAKEOVERRIDES))
ABLATION = --cores $(CORES) --config profile=$(ABLATE_PROFILE) 'override=$(RUN): $(OVERRIDE)'
ifeq ($(MAKECMDGOALS),ablate)
ifeq ($(strip $(RUN)),)
$(error usage: make ablate RUN=<run or family> OVERRIDE='<hydra overrides>' [PROFILE=full CONFIRM=yes])
endif
ifeq ($(strip $(OVERRIDE)),)
$(error usage: make ablate RUN=<run or family> OVERRIDE='<hydra overrides>' [PROFILE=full CONFIRM=yes])
endif
ifneq ($(strip $(UNQUOTED)),)
$(error $(UNQUOTED) reached make as a variable of its own: put every override in one quoted OVERRIDE='...')
endif
endif
ablate: env  ## one ablation beside the published results: make ablate RUN=ladder/average OVERRIDE='train.lr=3e-3'
	@$(BIN)/python -m attnlab.price --confirm '$(CONFIRM)' -- $(ABLATION)
	$(BIN)/snakemake $(ABLATION)

table: env  ## one table and what it reads: make table ID=ladder [PROFILE=quick]
	@test -n "$(ID)" || { echo "usage: make table ID=<table id> [PROFILE=quick]"; exit 2; }
	$(BIN)/snakemake --cores $(CORES) -f results/$(or $(PROFILE),full)/tables/$(ID).csv --config profile=$(or $(PROFILE),full)

variants:  ## the variants built here, each with what it changed (delete a folder to drop one)
	@for d in results/*/variants/*; do [ -d "$$d" ] && echo "$$d: $$(sed -n 's/^> Variant \*\*\(.*\)\*\*.*/\1/p' $$d/claims.md 2>/dev/null)"; done; true

clean-smoke:  ## delete the smoke profile's outputs
	rm -rf results/smoke figures/smoke
