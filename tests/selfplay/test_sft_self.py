"""Closed-SFT-self and Open-SFT-self on the tiny random-initialised SmolLM2 (``tiny_dir``): one
round changes the weights, through ``Agent(model, learner).evolve(env)`` and through the shell
(``sebench selfplay``, then ``sebench evolve`` on the same state, which finds the round finished
and does not redo it).

The teacher proposes and the reference solves (scripted: a tiny model keeps neither the proposal
format nor the solutions), so what is under test is the learner: its rounds, its training data
and prompts, the weights it trains (at a learning rate where every LoRA-adapted weight moves),
its files and its resume. The checker (tests/learners/checker/test_checker.py) checks both names for
test data, limit, save/load and kill-resume."""

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from agents import Agent
from benchmarks.cli import app
from learners import make
from learners.training.sft_data import read_samples
from selfplay.sft_self import OpenSFTSelfLearner, SFTSelfError

TINY = {"limit": 2, "rounds": 1, "proposals": 2, "samples": 1, "proposer_model": "reference",
        "gather_model": "reference", "docs_chars": 300, "max_steps": 1, "batch_size": 2, "max_length": 512,
        "save_steps": 100, "logging_steps": 1, "lora": True, "warmup_ratio": 0.0,  # no warmup: step 1 has lr > 0
        "learning_rate": 1e-2}


def changed_weights(model_dir: Path, base_dir: Path) -> list[str]:
    """The weights of ``model_dir`` that differ from ``base_dir``'s."""
    base = load_file(Path(base_dir) / "model.safetensors")
    tuned = load_file(Path(model_dir) / "model.safetensors")
    assert base.keys() == tuned.keys()
    return [k for k in base if not torch.equal(tuned[k], base[k])]


def assert_lora_moved(model_dir: Path, base_dir: Path) -> None:
    """LoRA on every projection, merged: each projection's weight moved, and nothing else did."""
    changed = set(changed_weights(model_dir, base_dir))
    for name in load_file(Path(base_dir) / "model.safetensors"):
        moved = name in changed
        assert moved == name.endswith("_proj.weight"), f"{name} {'moved' if moved else 'did not move'}"


def test_open_sft_self_changes_the_agents_weights_through_agent_evolve(task_env, tiny, tiny_dir, tmp_path):
    learner = OpenSFTSelfLearner(state_dir=str(tmp_path / "state"), **TINY)
    agent = Agent(model=tiny, learner=learner, max_tokens=32)
    report = agent.evolve(task_env)

    details = report.details
    assert details["rounds"] == 1 and details["kept"] == 2 and details["steps"] == 1
    assert details["proposer"] == "reference" and details["solver"] == "reference" and not details.get("warnings")
    assert Path(agent.model.path) == learner.model_dir and agent.model is not tiny
    assert_lora_moved(learner.model_dir, tiny_dir)
    samples = read_samples(tmp_path / "state" / "round-0" / "trajectories.jsonl")
    assert len(samples) == 2 and all(s.task_id.startswith("sp-") for s in samples)
    assert all("Documentation:" in s.prompt_open[1]["content"] for s in samples)  # solved with the docs
    [record] = [json.loads(line) for line in (tmp_path / "state" / "rounds.jsonl").read_text().splitlines()]
    assert record["accepted"] == 2 and record["solve_rate"] == 1.0 and record["learnability"] == 0.0

    learner.save(tmp_path / "saved")
    again = make("open-sft-self")
    again.load(tmp_path / "saved")
    assert again.model_dir == learner.model_dir and again.rounds[0]["round"] == 0
    assert (tmp_path / "saved" / "buffer-sebench.jsonl").is_file()  # the tasks it trained on, beside its state
    other = OpenSFTSelfLearner(state_dir=str(tmp_path / "state"), **{**TINY, "proposals": 3})
    with pytest.raises(SFTSelfError, match="other settings.*proposals differ"):  # a resumed state keeps its settings
        Agent(model=tiny, learner=other).evolve(task_env)


def test_closed_sft_self_from_sebench_selfplay_and_sebench_evolve(task_env, tiny_dir, tmp_path):
    run = tmp_path / "run"
    sets = [x for k in ("proposals", "samples", "gather_model", "docs_chars", "max_steps", "batch_size", "max_length",
                        "save_steps", "lora", "warmup_ratio", "learning_rate")
            for x in ("--set", f"{k}={json.dumps(TINY[k])}")]
    common = ["--zwc", str(task_env.root), "--learner", "closed-sft-self", "--model", str(tiny_dir), "--limit", "2",
              "--out", str(run), *sets]
    result = CliRunner().invoke(app, ["selfplay", *common, "--rounds", "1", "--proposer-model", "reference"])
    assert result.exit_code == 0, result.output
    assert "self-play: closed-sft-self" in result.output  # the table of rounds
    for name in ("run.json", "buffer-sebench.jsonl", "rounds.jsonl", "rounds.png", "model/config.json",
                 "learner/learner.json", "report.json"):
        assert (run / name).is_file(), name
    assert json.loads((run / "run.json").read_text())["learner"] == "closed-sft-self"
    assert_lora_moved(run / "model", tiny_dir)
    samples = read_samples(run / "round-0" / "trajectories.jsonl")
    assert samples and not any("Documentation:" in s.prompt_closed[1]["content"] for s in samples)  # closed prompt

    # the same state through `sebench evolve` and the registry: the round is finished, so nothing is redone
    trained = (run / "model" / "model.safetensors").stat().st_mtime_ns
    result = CliRunner().invoke(app, ["evolve", *common, "--set", f"state_dir={run}", "--set", "rounds=1",
                                      "--set", "proposer_model=reference"])
    assert result.exit_code == 0, result.output
    details = json.loads((run / "report.json").read_text())["details"]
    assert details["resumed_from"] == "round 1" and details["rounds_run"] == 0 and details["kept"] == 2
    assert (run / "model" / "model.safetensors").stat().st_mtime_ns == trained  # the same weights, not retrained


def test_the_selfplay_command_names_the_self_play_learners(task_env, tmp_path):
    result = CliRunner().invoke(app, ["selfplay", "--zwc", str(task_env.root), "--learner", "closed-sft",
                                      "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a self-play learner" in result.output and "closed-sft-self" in result.output


def test_a_round_whose_samples_are_all_too_long_leaves_the_model_and_names_max_length(task_env, tiny, tmp_path):
    # each role has its budget (solutions: max_length, proposals: proposer_max_length): below every sample
    # of both the round trains nothing, is recorded as such, and evolve names both settings
    learner = OpenSFTSelfLearner(state_dir=str(tmp_path / "state"), **{**TINY, "max_length": 64,
                                                                      "proposer_max_length": 64})
    with pytest.raises(SFTSelfError, match=r"no round trained: every sample of round\(s\) 0 is longer than its "
                                           r"role's budget \(solutions: max_length=64 tokens, proposals: "
                                           r"proposer_max_length=64\); raise them"):
        Agent(model=tiny, learner=learner, max_tokens=32).evolve(task_env)
    [record] = [json.loads(line) for line in (tmp_path / "state" / "rounds.jsonl").read_text().splitlines()]
    extra = record["extra"]
    assert extra["trained"] is False and extra["model"] is None and extra["kept"] == 2
    assert extra["too_long_dropped"] == extra["kept"] + extra["proposer_targets"] == 4
    assert (extra["dropped_solutions"], extra["dropped_proposer_targets"]) == (2, 2)


def test_a_round_that_left_examples_out_says_how_many_in_its_record_and_the_report(task_env, tiny, tmp_path):
    from benchmarks.report_runs import Run
    from benchmarks.report_training import ROUND_HEADER, TRAIN_COLUMNS, round_lines
    from benchmarks.selfplay_compare import rounds_of

    state = tmp_path / "state"  # solutions over max_length=64, the proposals within their own default budget
    learner = OpenSFTSelfLearner(state_dir=str(state), **{**TINY, "max_length": 64})
    report = Agent(model=tiny, learner=learner, max_tokens=32).evolve(task_env)
    [record] = rounds_of(state)
    extra = record["extra"]
    assert extra["trained"] and extra["train_samples"] == extra["proposer_targets"] == 2
    assert (extra["too_long_dropped"], extra["dropped_solutions"], extra["dropped_proposer_targets"]) == (2, 2, 0)
    assert report.details["too_long_dropped"] == 2 and "2 too long to train" in report.details["per_round"][0]
    lines, _, _ = round_lines([Run("selfplay-compare", tmp_path, {}, [], {"rounds": {"open-sft-self": [record]}})])
    assert lines[0][ROUND_HEADER.index("too long, dropped")] == "2 (2 solutions)"
    assert "too long, dropped" in dict(TRAIN_COLUMNS["selfplay"])  # and the self-play table's column
