"""The doc-study learners (learners/doc_study.py) on a tiny random-initialised model: they learn from
the docs alone (no train task solved), every weight moves, and the data says where it came from.
Parsing and keeping a drafted exercise are checked on texts written here."""

import json
from pathlib import Path

import pytest
import torch

from agents import Agent
from agents.models import load_model
from learners.doc_study import DocSelfEditLearner, DocSFTLearner, calls, parse_exercise
from learners.parametric import SFTLearnerError
from learners.training.sft_data import read_samples

TINY = {"limit": 3, "docs_chars": 400, "max_steps": 2, "batch_size": 2, "max_length": 512, "save_steps": 100,
        "logging_steps": 1, "learning_rate": 5e-2, "warmup_ratio": 0.0}


def _trained(learner_class, task_env, tiny_dir, tmp_path, **settings):
    base = load_model(str(tiny_dir), cache=False)
    before = {k: v.detach().clone() for k, v in base.model.named_parameters()}
    learner = learner_class(state_dir=str(tmp_path / "state"), **TINY, **settings)
    agent = Agent(model=base, learner=learner, max_tokens=32)
    report = agent.evolve(task_env)
    from safetensors.torch import load_file

    tuned = load_file(learner.model_dir / "model.safetensors")
    for name, value in before.items():  # full fine-tuning at lr 5e-2 moves every parameter
        assert not torch.equal(tuned[name], value), name
    assert Path(agent.model.path) == learner.model_dir
    return learner, report


def test_doc_sft_trains_on_each_studied_functions_doc(task_env, tiny_dir, tmp_path):
    learner, report = _trained(DocSFTLearner, task_env, tiny_dir, tmp_path)
    studied = list(dict.fromkeys(p for t in task_env.tasks("train")[:3] for p in task_env.function_paths(t)))
    samples = read_samples(learner.state_dir / "study.jsonl")
    assert [s.task_id for s in samples] == [f"doc:{p}" for p in studied] and report.details["steps"] == 2
    entry = task_env.docs.entries[studied[0]].text
    assert samples[0].completion == entry[:400].strip() and studied[0] in samples[0].prompt_closed[0]["content"]


def test_doc_selfedit_from_the_docs_examples_keeps_what_runs_and_calls_the_function(task_env, tiny_dir, tmp_path):
    learner, report = _trained(DocSelfEditLearner, task_env, tiny_dir, tmp_path, writer="doc-examples")
    samples = read_samples(learner.state_dir / "study.jsonl")
    assert report.details["kept"] == len(samples) >= 1 and report.details["writer"] == "doc-examples"
    assert report.details["drafts"] == report.details["kept"] + sum(report.details["rejected"].values())
    for sample in samples:
        path = task_env.mapping.to_zwc(sample.functions[0])
        code = sample.completion.removeprefix("```python\n").removesuffix("\n```")
        assert calls(code, path) and path.rsplit(".", 1)[1] not in sample.prompt_closed[1]["content"]
        assert "Documentation" not in sample.prompt_closed[1]["content"]  # trained closed-book
    assert json.loads((learner.state_dir / "study_report.json").read_text())["kept"] == len(samples)


def test_a_writer_that_drafts_nothing_usable_is_an_error_naming_the_way_out(task_env, tiny_dir, tmp_path):
    learner = DocSelfEditLearner(state_dir=str(tmp_path / "state"), **TINY, edits=1, max_tokens=16)
    with pytest.raises(SFTLearnerError, match="no study example was kept.*writer='doc-examples'"):
        Agent(model=str(tiny_dir), learner=learner, max_tokens=16).evolve(task_env)  # random weights write no code


def test_an_exercise_is_parsed_only_whole_and_without_naming_its_function():
    text = ("QUESTION: Average the values.\nINPUT: x=[1.0, 3.0]\n```python\nimport zwc\n\ndef solve(x):\n"
            "    return zwc.kocito(x)\n```")
    parsed = parse_exercise(text, "zwc.kocito")
    assert parsed["question"] == "Average the values." and parsed["input"] == "x=[1.0, 3.0]"
    assert parsed["signature"] == "def solve(x):" and calls(parsed["code"], "zwc.kocito")
    assert parse_exercise(text.replace("Average", "Use kocito to average"), "zwc.kocito") is None
    assert parse_exercise(text.replace("INPUT: x=[1.0, 3.0]\n", ""), "zwc.kocito") is None
    assert not calls("import zwc\ndef solve(x):\n    f = zwc.kocito\n    return x", "zwc.kocito")  # named, not called
    assert not calls("def solve(x) return", "zwc.kocito")
