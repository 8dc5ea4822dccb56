# The README's two commands: `make demo` (the main job) and `make test` (the whole test suite).
# Both create .venv when missing and (re)install when pyproject.toml changed; re-runs are fast.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.linkage-lab-installed
# Python 3.12 is required by Isaac Lab 3.0. Override with `make PYTHON=/path/to/python3.12 ...`.
PYTHON ?= $(firstword $(wildcard /root/.pyenv/versions/3.12.*/bin/python) $(shell command -v python3.12 2>/dev/null))

.PHONY: demo test test-unit test-sim venv assets lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@if [ ! -x "$(PY)" ]; then \
	  if [ -z "$(PYTHON)" ]; then \
	    echo "error: no Python 3.12 found. Isaac Lab 3.0 needs 3.12; pass one with make PYTHON=/path/to/python3.12" >&2; exit 1; \
	  fi; \
	  ver=$$("$(PYTHON)" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null); \
	  if [ "$$ver" != "3.12" ]; then \
	    echo "error: $(PYTHON) is Python $${ver:-?}, but Isaac Lab 3.0 needs 3.12; pass one with make PYTHON=/path/to/python3.12" >&2; exit 1; \
	  fi; \
	  echo "creating $(VENV) with $(PYTHON)"; \
	  "$(PYTHON)" -m venv $(VENV); \
	fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

assets: venv
	$(VENV)/bin/linkage-lab assets build

demo: venv
	$(VENV)/bin/linkage-lab demo

test: venv lint
	$(VENV)/bin/python -m pytest

test-unit: venv
	$(VENV)/bin/python -m pytest -m unit

test-sim: venv
	$(VENV)/bin/python -m pytest -m sim

lint: venv
	$(VENV)/bin/ruff check source tests scripts
	$(VENV)/bin/ruff format --check source tests scripts

clean:
	rm -rf logs outputs .pytest_cache
