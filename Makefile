# flexmb: two commands for a newcomer.
#   make demo      set up (venv, system packages, flexmb) and run the main example
#   make test      set up the same way and run the fast test suite
#   make validate  run every validation case (slow) and the slow tests
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.flexmb-installed
CHOLMOD_H := $(firstword $(wildcard /usr/include/suitesparse/cholmod.h /usr/include/cholmod.h))

.PHONY: setup sysdeps demo test validate bench clean

setup: $(STAMP)

# libsuitesparse-dev gives scikit-sparse (CHOLMOD) its headers. Installed when missing and we are
# root or have password-less sudo; otherwise flexmb falls back to SciPy (slower modal reduction).
sysdeps:
	@if [ -z "$(CHOLMOD_H)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "note: libsuitesparse-dev missing and no root: modal reduction uses the SciPy fallback"; exit 0; fi; \
	  if command -v apt-get >/dev/null; then \
	    echo "installing libsuitesparse-dev (CHOLMOD headers for scikit-sparse)"; \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsuitesparse-dev >/dev/null || \
	    echo "note: could not install libsuitesparse-dev: modal reduction uses the SciPy fallback"; \
	  fi; \
	fi

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory sysdeps
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[plot,test]"
	@$(PY) -m pip install -q -e ".[sparse]" || echo "note: scikit-sparse did not build: modal reduction uses the SciPy fallback"
	@touch $(STAMP)

demo: $(STAMP)
	$(PY) -m flexmb demo --out results/demo

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow"

validate: $(STAMP)
	$(PY) -m flexmb validate --json results/validation.json --report results/validation
	$(PY) -m pytest -q -m slow

bench: $(STAMP)
	$(PY) benchmarks/chain.py
	$(PY) benchmarks/modes.py

clean:
	rm -rf $(VENV) results .pytest_cache *.egg-info
