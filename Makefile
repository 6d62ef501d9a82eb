# mbsbook: `make book` builds the static site, `make test` runs the unit and notebook tests.
# Both bootstrap a local virtual environment (.venv) from pyproject.toml on first use; only
# Python 3.11+ and make are needed. In an activated conda environment: `make test PY=python`.

PYTHON ?= python3
VENV := .venv
PY ?= $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: book test lab bench clean clean-cache

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "mbsbook needs Python 3.11 or newer, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e ".[book,test]"
	touch $@

# Every chapter executed at full paper fidelity, site in _build/html; any cell error or Sphinx
# warning fails the build. Executed chapters are cached per mode in _build/.jupyter_cache. The
# numba kernels are compiled first (once per version of mbslib, then loaded from the cache).
book: $(if $(filter $(PY),$(VENV)/bin/python),$(STAMP))
	$(PY) -m mbslib.precompile
	MBS_QUICK=0 $(PY) -m sphinx -W --keep-going -n -j 2 -b html notebooks _build/html
	@echo "book: _build/html/index.html"

# Unit tests + every chapter in quick mode under nbval, on 2 cores.
test: $(if $(filter $(PY),$(VENV)/bin/python),$(STAMP))
	MBS_QUICK=1 $(PY) -m pytest -n 2 --dist loadscope

# JupyterLab with jupytext: a double-click opens a chapter as a notebook.
lab: $(STAMP)
	$(VENV)/bin/python -m pip install --quiet -e ".[lab]"
	$(VENV)/bin/python -m mbslib.precompile
	mkdir -p $(VENV)/etc/jupyter/labconfig
	cp lab/default_setting_overrides.json $(VENV)/etc/jupyter/labconfig/
	$(VENV)/bin/jupyter lab notebooks $(if $(filter 0,$(shell id -u)),--allow-root)

# Cost per step of chapter 002's compiled integrators against Exudyn on the same models, and of
# generalized-α on the shoot-out's chain of N rods against Exudyn's sparse solver (tables of
# µs/step and ratios; a benchmark, nothing passes or fails on a time). One BLAS thread for both,
# as in the book (notebooks/conf.py) and the tests, unless the caller sets OMP_NUM_THREADS.
bench: export OMP_NUM_THREADS ?= 1
bench: $(if $(filter $(PY),$(VENV)/bin/python),$(STAMP))
	$(PY) -m mbslib.precompile
	$(PY) benchmarks/bench_002.py
	$(PY) benchmarks/bench_chain.py

clean:
	rm -rf _build

# The compiled numba kernels of every version of mbslib (one folder per source fingerprint,
# shared by all clones of this user; nothing else ever deletes them).
clean-cache:
	rm -rf $${XDG_CACHE_HOME:-$$HOME/.cache}/mbsbook
