# Small World by Mail. On a fresh machine with Python 3.11+ and nothing else:
#   make run    install into .venv (first time only) and run the whole service on this machine
#   make test   install with the development tools and run every test
# The virtual environment is created once and reinstalled only when pyproject.toml or
# constraints.txt change. VENV=/some/dir uses another one (CI uses a fresh one each run).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# pip brings uv (pinned in constraints.txt) into the new environment, and uv installs the rest: the same
# pinned packages in seconds instead of about 45 s, from uv's own cache once it has run on the machine. Compiled
# at install, as pip does, so that the first processes (four test workers at once) do not each compile them.
# The environment is made without a pip of its own: the pip of $(PYTHON) installs uv into it (pip 22.3 and newer:
# --python), 2.7 s against 6.3 s for a new pip first; a Python without pip, or with an older one, gets a pip in
# the environment (ensurepip) as before.
BOOTSTRAP := $(PYTHON) -m pip --python $(BIN)/python install --quiet --constraint constraints.txt uv 2>/dev/null \
	|| { $(BIN)/python -m ensurepip --default-pip >/dev/null \
	&& $(BIN)/python -m pip install --quiet --constraint constraints.txt uv; }
INSTALL := $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python --constraint constraints.txt

.PHONY: run test lint constraints compiled test-compiled

run: $(VENV)/.installed
	$(BIN)/smallworld serve $(SERVE_ARGS)

# The tests run in parallel (pytest-xdist): -n auto starts two processes per core (tests/conftest.py), since
# much of the suite waits for the processes, browsers and clocks it drives; TEST_WORKERS=0 runs them in one process.
TEST_WORKERS ?= auto

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy rules service worker emails

# An optional compiled build of the rules engine, by hand only (never the default, never in CI): mypyc
# compiles a copy of rules/ into build/compiled/rules (2-3 minutes of gcc on 2 cores), and test-compiled
# runs the rules' tests against it (tests/conftest.py stops the run unless every module of rules imported
# is a compiled one). A command run with PYTHONPATH=build/compiled ahead imports that copy; the benchmarks,
# which put their own tree first, are copied beside it (python build/compiled/bench/smawg_compare.py …).
# Build again after changing rules/. See rules/README.md, "A compiled build (optional)".
COMPILED := build/compiled
RULES_TESTS ?= tests/rules

compiled: $(VENV)/.installed-dev
	rm -rf $(COMPILED)
	mkdir -p $(COMPILED)
	cp -R rules $(COMPILED)/rules
	cp -R bench $(COMPILED)/bench
	find $(COMPILED) -name __pycache__ -prune -exec rm -rf {} +
	cd $(COMPILED) && $(abspath $(BIN))/mypyc rules/*.py rules/races/*.py rules/powers/*.py

test-compiled: $(VENV)/.installed-dev
	SMALLWORLD_COMPILED_RULES=1 PYTHONPATH=$(abspath $(COMPILED)):$(CURDIR) \
		$(BIN)/pytest --import-mode=append -n $(TEST_WORKERS) $(PYTEST_ARGS) $(RULES_TESTS)

# Re-pin every dependency (needs PyPI). Commit the new constraints.txt.
constraints: $(VENV)/.installed-dev
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 --upgrade -o constraints.txt

$(BIN)/python:
	$(PYTHON) -m venv --without-pip $(VENV)

$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	$(BOOTSTRAP)
	$(INSTALL) --editable .
	touch $@

$(VENV)/.installed-dev: pyproject.toml constraints.txt | $(BIN)/python
	$(BOOTSTRAP)
	$(INSTALL) --editable '.[dev]'
	touch $@ $(VENV)/.installed
