# Needs only python3 (>= 3.11, with venv/ensurepip) and make; everything else goes into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Stamps live inside the venv: they vanish with it and are redone when pyproject.toml changes.
INSTALL_STAMP := $(VENV)/.installed
TEST_STAMP    := $(VENV)/.installed-test

.PHONY: venv install test demo clean

venv: $(BIN)/python

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

install: $(INSTALL_STAMP)

$(INSTALL_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]'
	touch $@

test: $(TEST_STAMP)
	$(BIN)/python -m pytest

demo: install
	$(BIN)/basispath solve examples/fig1b.json --engine deah

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -not -path './.git/*' -exec rm -rf {} +
