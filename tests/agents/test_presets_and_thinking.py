"""Evaluation presets (cpu, paper) recorded in every result's config, and reasoning blocks: the code
is the answer's (after ``</think>``), an answer cut off inside its reasoning says so."""

import json

import pytest
from typer.testing import CliRunner

from agents import Agent
from agents.presets import PAPER, PresetError, preset
from agents.thinking import TRUNCATED_THINKING, split_thinking
from benchmarks.cli import app
from tests.agents.fixed_answer import ScriptedModel

FENCE = "```"


def test_the_answer_is_what_follows_the_reasoning():
    draft = f"<think>first try:\n{FENCE}python\ndef solve(x):\n    return 0\n{FENCE}\nno.</think>"
    split = split_thinking(draft + f"\n{FENCE}python\ndef solve(x):\n    return 1\n{FENCE}")
    assert "return 1" in split.answer and "return 0" not in split.answer and "first try" in split.thinking
    assert not split.cut_in_thinking
    assert split_thinking("opened in the prompt</think>the answer") == split_thinking("<think>opened in the prompt"
                                                                                     "</think>the answer")
    cut = split_thinking(f"<think>let me draft {FENCE}python\ndef solve(x):")
    assert cut.cut_in_thinking and cut.answer == ""
    plain = split_thinking("no reasoning here")
    assert plain.answer == "no reasoning here" and plain.thinking == "" and not plain.cut_in_thinking


def _right_and_drafted(task) -> tuple[str, str]:
    right = task.reference
    drafted = f"<think>maybe\n{FENCE}python\ndef {task.entry_point}(*a):\n    return None\n{FENCE}\nno</think>"
    return right, drafted


def test_a_thinking_answer_is_graded_on_its_answer_and_a_cut_one_is_named(task_env, tmp_path):
    task = task_env.tasks("single_test")[0]
    right, drafted = _right_and_drafted(task)
    model = ScriptedModel({task.query: [f"{drafted}\n{FENCE}python\n{right}{FENCE}"]})
    passed = Agent(model=model).run_episode(task_env, task, phase="train", mode="open")
    assert passed.verdict.passed, passed.verdict.detail
    cut = ScriptedModel({task.query: [f"<think>I will use {FENCE}python\n{right}"]})
    failed = Agent(model=cut, max_tokens=64).run_episode(task_env, task, phase="train", mode="open")
    assert not failed.verdict.passed and failed.verdict.reason == TRUNCATED_THINKING
    assert "max_tokens=64" in failed.verdict.detail  # the budget that was too small, named


def test_the_paper_preset_sets_and_records_the_papers_settings(task_env, tmp_path):
    assert (PAPER.temperature, PAPER.n, PAPER.max_tokens) == (0.6, 1, 8192)
    with pytest.raises(PresetError, match="not one of cpu, paper"):
        preset("fast")
    with pytest.raises(PresetError):
        Agent(model="reference", preset="fast")
    out = tmp_path / "paper.jsonl"
    result = CliRunner().invoke(app, ["eval", "--zwc", str(task_env.root), "--model", "reference", "--preset", "paper",
                                      "--limit", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    config = json.loads(out.with_suffix(".config.json").read_text())["config"]
    assert (config["preset"], config["n"], config["temperature"], config["max_tokens"]) == ("paper", 1, 0.6, 8192)
    explicit = tmp_path / "explicit.jsonl"
    result = CliRunner().invoke(app, ["eval", "--zwc", str(task_env.root), "--model", "reference", "--preset", "paper",
                                      "--max-tokens", "100", "--n", "2", "--limit", "1", "--out", str(explicit)])
    assert result.exit_code == 0, result.output
    config = json.loads(explicit.with_suffix(".config.json").read_text())["config"]
    assert (config["preset"], config["n"], config["temperature"], config["max_tokens"]) == ("paper", 2, 0.6, 100)
    default = tmp_path / "cpu.jsonl"
    result = CliRunner().invoke(app, ["eval", "--zwc", str(task_env.root), "--model", "reference", "--n", "1",
                                      "--limit", "1", "--out", str(default)])
    assert result.exit_code == 0, result.output
    config = json.loads(default.with_suffix(".config.json").read_text())["config"]
    # one temperature for any n: the cpu preset samples even a single answer (greedy only when asked)
    assert (config["preset"], config["temperature"], config["max_tokens"]) == ("cpu", 0.8, 512)
