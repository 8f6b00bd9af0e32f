# flexmb: two commands for a newcomer.
#   make demo      set up (venv, system packages, flexmb) and run the main example (flexible slider-crank)
#   make demo-chain  the rigid 15-link chain demo
#   make test      set up the same way and run the fast test suite (on every core)
#   make validate  run every validation case (slow) and the slow tests
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.flexmb-installed

.PHONY: setup sysdeps demo demo-chain test validate bench clean

setup: $(STAMP)

# System packages, installed when missing and we are root or have password-less sudo:
#   libsuitesparse-dev  CHOLMOD headers for scikit-sparse (SPD factorizations of modal reduction)
#   libopenblas0        optimized BLAS for CHOLMOD (8x faster factorization than the reference BLAS,
#                       measured on a 92k-DOF block, benchmarks/README.md)
# Without them flexmb still works: modal reduction falls back to SciPy and runs slower.
SYSTEM_PACKAGES := libsuitesparse-dev libopenblas0

sysdeps:
	@missing=""; \
	if command -v dpkg-query >/dev/null; then \
	  for p in $(SYSTEM_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	  done; \
	fi; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "note: missing system packages:$$missing (no root): modal reduction uses the SciPy fallback"; exit 0; fi; \
	  echo "installing system packages:$$missing"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || \
	  echo "note: could not install$$missing: modal reduction uses the SciPy fallback"; \
	fi

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory sysdeps
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[plot,test,med,sweep]"
	@$(PY) -m pip install -q -e ".[sparse]" || echo "note: scikit-sparse did not build: modal reduction uses the SciPy fallback"
	@touch $(STAMP)

# the flexible slider-crank: mesh -> modes -> 3 crank revolutions -> plot and ParaView files (about 40 s)
demo: $(STAMP)
	$(PY) -m flexmb demo slider-crank --out results/demo

demo-chain: $(STAMP)
	$(PY) -m flexmb demo chain --out results/demo_chain

# the fast suite on every core (pytest-xdist; TEST_WORKERS=0 runs it in one process); worksteal: the
# long tests are not left to one worker at the end; tests/conftest.py loads (or, on a clean clone,
# compiles) the kernels once before the workers start
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" -n $(TEST_WORKERS) --dist worksteal

validate: $(STAMP)
	$(PY) -m flexmb validate --json results/validation.json --report results/validation
	$(PY) -m pytest -q -m slow

bench: $(STAMP)
	$(PY) benchmarks/chain.py
	$(PY) benchmarks/modes.py
	$(PY) benchmarks/sweep.py
	@$(PY) -c "import exudyn" 2>/dev/null && $(PY) benchmarks/compare_exudyn.py --quick || echo "note: pip install -e '.[bench]' for benchmarks/compare_exudyn.py (Exudyn side by side)"

clean:
	rm -rf $(VENV) results .pytest_cache *.egg-info
