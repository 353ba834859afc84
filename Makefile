# loomnb: `make train` and `make test` set everything up from nothing (a .venv beside this file), then run.
# Both are idempotent: .venv is reused and reinstalled only when pyproject.toml changes (scripts/setup.sh).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
OUT ?= runs/train

.PHONY: setup system-deps katex test train docs readme export bench clean help

help:
	@echo "make train   set up, then train PPO on CartPole through papermill_runs/train.ipynb ($(OUT))"
	@echo "make test    set up, then run the whole test suite (what CI runs)"
	@echo "make docs    build the documentation site into _docs/"
	@echo "make bench   run the benchmarks in bench/ (installs the bench extra)"

setup:
	@PYTHON=$(PYTHON) bash scripts/setup.sh

# Debian packages the tests drive for real: a headless browser for the docs check and a Redis server; npm fetches KaTeX.
system-deps:
	@missing=""; command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# KaTeX from the npm registry into .cache/katex/, copied into the site so its maths renders offline.
katex: system-deps
	@bash scripts/vendor_katex.sh >/dev/null

test: setup system-deps katex
	@bash scripts/test.sh

train: setup
	@bash scripts/train.sh "$(OUT)"

docs: setup system-deps katex
	@source $(BIN)/activate && bash scripts/docs.sh

readme: setup
	$(BIN)/python scripts/readme.py

export: setup
	source $(BIN)/activate && bash scripts/check_sync.sh || true

bench: setup
	$(BIN)/python -m pip install -q -e ".[bench]" || echo "some benchmark peers failed to install; their rows will be skipped"
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf _docs _proc _exec runs .pytest_cache
