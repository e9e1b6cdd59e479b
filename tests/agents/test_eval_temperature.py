"""One evaluation temperature for any n: the preset's unless asked otherwise, greedy only when asked,
recorded beside the results. Once n = 1 decoded greedily and n > 1 sampled at 0.8, so a pass@1 of
a one-sample run and of a five-sample run measured different things. On the tiny random model:
its near-uniform next-token distribution makes every draw visible in the text."""

import json

import pytest

from agents import Agent
from agents.presets import CPU, PAPER


def _answers(path) -> dict[tuple[str, int], str]:
    return {(r["task_id"], r["sample"]): r["answer"] for r in map(json.loads, path.read_text().splitlines())}


def test_the_first_sample_of_a_one_sample_run_is_the_first_sample_of_a_three_sample_run(task_env, tiny_dir,
                                                                                       tmp_path):
    # float32 and one episode at a time: nothing but the temperature and the seed decides a sample
    agent = Agent(model=str(tiny_dir), max_tokens=12, dtype="float32", concurrency=1)
    one = agent.evaluate(task_env, split="single_test", n=1, mode="closed", out=str(tmp_path / "one.jsonl"), limit=2)
    three = agent.evaluate(task_env, split="single_test", n=3, mode="closed", out=str(tmp_path / "three.jsonl"),
                           limit=2)
    assert one.config["temperature"] == three.config["temperature"] == CPU.temperature > 0
    assert one.config["preset"] == "cpu"
    single, triple = _answers(tmp_path / "one.jsonl"), _answers(tmp_path / "three.jsonl")
    assert single == {key: answer for key, answer in triple.items() if key[1] == 0}  # the same draw, sample for sample
    for task_id in {key[0] for key in triple}:  # and the samples of a task are draws, not one greedy answer copied
        assert len({triple[(task_id, s)] for s in range(3)}) > 1
    recorded = json.loads((tmp_path / "one.config.json").read_text())["config"]
    assert recorded["temperature"] == CPU.temperature


def test_greedy_only_when_asked_and_the_paper_preset_keeps_its_temperature_for_any_n(task_env, tiny_dir, tmp_path):
    greedy = Agent(model=str(tiny_dir), max_tokens=12, dtype="float32", temperature=0)
    report = greedy.evaluate(task_env, split="single_test", n=2, mode="closed", out=str(tmp_path / "g.jsonl"),
                             limit=2)
    assert report.config["temperature"] == 0.0
    answers = _answers(tmp_path / "g.jsonl")
    assert all(answers[(task_id, 0)] == answers[(task_id, 1)] for task_id, _ in answers)  # greedy: one answer
    for n in (1, 2):
        paper = Agent(model="reference", **PAPER.agent_settings())
        config = paper.evaluate(task_env, split="single_test", n=n, mode="closed", limit=1,
                                out=str(tmp_path / f"paper-{n}.jsonl")).config
        assert (config["preset"], config["temperature"]) == ("paper", PAPER.temperature)
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        Agent(model="reference", temperature=-0.1)
