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

# -rs: say why each skipped test was skipped (a missing browser, ...).
test: $(STAMP)
	$(PY) -m pytest -q -rs -n 2 -m "not slow"

test-all: $(STAMP)
	$(PY) -m pytest -q -rs -n 2

# Every both-path test once more under DebugMode (both paths per node, rewrites checked).
test-debugmode: $(STAMP)
	$(PY) -m pytest -q -n 2 --debugmode -k "[debug" tests

# JupyterLab (http://127.0.0.1:8888/lab) opened on scratch/, a folder for
# your own notebooks next to tutorials/ (git ignores it; the tests only read
# tutorials/). Both folders are in the file browser.
lab: $(STAMP)
	mkdir -p scratch
	$(PY) -m jupyterlab --notebook-dir=. --LabApp.default_url=/lab/tree/scratch \
		--ip=127.0.0.1 --no-browser $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
