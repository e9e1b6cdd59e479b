"""``--mode search`` with several tasks and samples at once, on a freshly loaded build: the
episodes' first searches arrive together, which is where the doc index used to race while it
was being built (``AttributeError: 'BM25' object has no attribute 'scores'``). A scripted model
searches first, then answers; what is checked is the loop, not the model's words."""

import json

from agents import Agent
from envs.zwc import ZWCEnv
from tests.agents.fixed_answer import ScriptedModel


def test_search_mode_with_many_episodes_at_once_runs_and_feeds_results_back(task_env, tmp_path):
    env = ZWCEnv.load(task_env.root, workers=2)  # a fresh env: its doc index not built yet
    try:
        model = ScriptedModel(script={"Search results for": ["```python\nimport zwc\ndef solve(x):\n"
                                                             "    return zwc.nope(x)\n```"]},
                              default="```search\nmean of an array\n```")
        agent = Agent(model=model, max_searches=2, concurrency=16)
        report = agent.evaluate(env, split="single_test", n=3, mode="search", out=str(tmp_path / "s.jsonl"),
                                limit=5)
        records = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
        assert report.n_samples == len(records) == 15
        assert all(r["searches"] == 1 for r in records), [r["searches"] for r in records]
        assert model.calls("Search results for") == 15  # every episode got its results back
        assert all(r["failure"] != "no_code" for r in records)
    finally:
        env.close()
