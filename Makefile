# Two commands: `make run` sets everything up and starts the agent; `make test` sets up and runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test check bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,servers]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/agent $(ARGS)

test: $(STAMP)
	$(BIN)/ruff check agent tests bench
	$(BIN)/mypy
	$(BIN)/pytest -q $(PYTEST_ARGS) || test $$? -eq 5  # exit 5: no test collected

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
