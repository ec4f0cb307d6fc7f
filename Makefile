# Needs only python3 (>= 3.11, with venv/ensurepip) and make; everything else goes into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Stamps live inside the venv: they vanish with it and are redone when pyproject.toml changes.
INSTALL_STAMP := $(VENV)/.installed
TEST_STAMP    := $(VENV)/.installed-test
# Offline Cypher lint: Neo4j's own parser and semantic analysis under Node (tools/cypher-lint/).
CYPHER_LINT       := tools/cypher-lint
CYPHER_LINT_STAMP := $(CYPHER_LINT)/node_modules/.installed

.PHONY: venv install test demo clean

venv: $(BIN)/python

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

install: $(INSTALL_STAMP)

# setup.py builds the C loop of linalg/greedy_mod_p in place: a change of it reinstalls too.
EXTENSION := setup.py basispath_graph/linalg/greedy_mod_p_ext.c

$(INSTALL_STAMP): pyproject.toml $(EXTENSION) | $(BIN)/python
	$(BIN)/python -m pip install -e .
	touch $@

# PyTorch and torchvision for the 'spec from-torch' tests, from PyPI, so that CI runs them instead
# of skipping. PyPI's default Linux wheel brings its CUDA libraries (about 6 GB in .venv, about a
# minute to install); they are not used here, the tests run on the CPU. Pinned here, not in the
# [torch] extra: the pair is a choice of the test environment (torchvision is used only by tests),
# and `pip install basispath-graph[torch]` keeps a user's own PyTorch. The stamp depends on this
# Makefile too, so a change of the pins reinstalls.
TORCH_PINS := torch==2.15.0 torchvision==0.29.2
# scikit-learn ships the digits data set of the G-SGD notebook (tested) and experiment;
# onnxscript is what torch.onnx.export(dynamo=True), the default exporter, needs (tested).
TEST_PINS := scikit-learn==1.9.1 onnxscript==0.7.2

$(TEST_STAMP): pyproject.toml Makefile $(EXTENSION) | $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]' $(TORCH_PINS) $(TEST_PINS)
	touch $@

test: $(TEST_STAMP) $(CYPHER_LINT_STAMP) neo4j-deps
	$(BIN)/python -m pytest

# The default engine first (deah-complete: certified, no repair), then the paper's Algorithm DEAH
# run faithfully, whose kept paths need a repair on this network.
demo: install
	$(BIN)/basispath solve examples/resnet-style.json
	@echo
	@echo "Above: the default engine (deah-complete): certified, 0 repairs. Below: the paper's Algorithm DEAH, run faithfully (--engine deah): its kept paths are NOT a basis here, and the repair that fixes them is shown."
	@echo
	$(BIN)/basispath solve examples/resnet-style.json --engine deah

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -not -path './.git/*' -exec rm -rf {} +

.PHONY: cypher-lint-deps lint-cypher

cypher-lint-deps: $(CYPHER_LINT_STAMP)

# Redone when the lock or package.json changes; npm ci empties node_modules, stamp included.
$(CYPHER_LINT_STAMP): $(CYPHER_LINT)/package-lock.json $(CYPHER_LINT)/package.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(CYPHER_LINT) --no-audit --no-fund && touch $@; \
	else \
		echo "warning: npm not found: Cypher lint not installed, tests/test_cypher_lint.py will skip" >&2; \
	fi

lint-cypher: $(CYPHER_LINT_STAMP)
	node $(CYPHER_LINT)/lint.mjs --repo .

.PHONY: bench

# Benchmark suite (bench/README.md): each case in its own process with a timeout, < 27 minutes
# on 2 cores (the G-SGD step cases need torch: installed as for the tests); writes
# bench/results.md and bench/results.json. Quick check: bench/run.py --quick.
bench: $(TEST_STAMP)
	$(BIN)/python bench/run.py

# The G-SGD experiment (bench/gsgd_experiment.py, about 15 minutes on 2 cores): SGD, global G-SGD
# over the skeleton and deah-complete bases and the official block-wise scheme on scikit-learn's
# digits; writes docs/gsgd-experiment.md, .json and .png.
.PHONY: gsgd-bench
gsgd-bench: $(TEST_STAMP)
	$(BIN)/python bench/gsgd_experiment.py

# The resource estimator's measurements (about 25 minutes): bench/calibration.md and .json, which
# tests/test_guards.py holds the estimates of basispath_graph/guards.py to (within 2x).
.PHONY: calibrate
calibrate: $(INSTALL_STAMP)
	$(BIN)/python bench/run.py --calibration --mem-cap-gb 21

# Faithful DEAH vs deah-complete on 10,000 random networks plus every preset (about 15 minutes
# on 2 cores); writes bench/fidelity.md. Exit 1 if deah-complete needs a repair anywhere.
.PHONY: fidelity
FIDELITY_N ?= 10000
fidelity: $(INSTALL_STAMP)
	$(BIN)/python bench/fidelity.py $(FIDELITY_N) --jobs 2 --out bench/fidelity.md

# A local Neo4j Community 5.26 without Docker (tools/neo4j_local.py): jars from Maven Central into
# the ignored .neo4j/lib (GPLv3, never committed), our launcher compiled beside them. `make neo4j`
# starts a server in the background (or reuses the running one) and writes .neo4j/env; then
# `. .neo4j/env` and `--store "$$NEO4J_URI"`. `make neo4j-stop` stops it; the data stays.
.PHONY: neo4j neo4j-stop neo4j-deps

neo4j-deps:
	@$(PYTHON) tools/neo4j_local.py install --if-possible

neo4j:
	@$(PYTHON) tools/neo4j_local.py start

neo4j-stop:
	@$(PYTHON) tools/neo4j_local.py stop

# Fingerprint of every export, kept set, certificate and stored graph on the bench, example, preset
# and fidelity networks (tools/output_hashes.py, about 2 minutes on 2 cores): exit 1 when any
# differs from the baseline tools/output-hashes.json (issue 15: refactors keep behaviour).
.PHONY: hashes
hashes: $(INSTALL_STAMP)
	$(BIN)/python tools/output_hashes.py --check tools/output-hashes.json
