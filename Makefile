# `make demo` and `make test` each create .venv when it is missing, install
# lucent into it, and run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-all test-debugmode lab venv clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

test: $(STAMP)
	$(PY) -m pytest -q -n 2 -m "not slow"

test-all: $(STAMP)
	$(PY) -m pytest -q -n 2

# Every both-path test once more under DebugMode (both paths per node, rewrites checked).
test-debugmode: $(STAMP)
	$(PY) -m pytest -q -n 2 --debugmode -k "[debug" tests

# JupyterLab on the tutorials (http://127.0.0.1:8888/lab).
lab: $(STAMP)
	$(PY) -m jupyterlab --notebook-dir=tutorials --ip=127.0.0.1 --no-browser \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
