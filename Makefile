# Every target creates or reuses .venv and installs what it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup test lint demo bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP) lint
	$(BIN)/python -m pytest -n 2 tests

demo: $(STAMP)
	$(BIN)/sebench zwc build --seed 0 --out runs/zwc-seed0
	$(BIN)/sebench tasks build --zwc runs/zwc-seed0 --seed 0
	$(BIN)/python -m envs.zwc.doc_examples runs/zwc-seed0 --json runs/zwc-seed0/doc_examples.json
	$(BIN)/python -m benchmarks.perf.sandbox_throughput --zwc runs/zwc-seed0 --candidates 100

bench: $(STAMP)
	$(BIN)/python -m benchmarks.perf.sandbox_throughput --candidates 200
	$(BIN)/python -m benchmarks.perf.task_build

clean:
	rm -rf $(VENV) runs .bench
