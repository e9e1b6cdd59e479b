"""Closed-SFT gathers what the paper gathers by default: the agent's own open-book rollouts on the train
tasks, kept when the grader passes them (rejection sampling). A teacher stays an option, and the row
it trains is named after it."""

from dataclasses import dataclass

import torch
from safetensors.torch import load_file

from agents import Agent
from learners import make
from learners.base import learner_teacher, teacher_label
from learners.training.sft_data import read_samples
from tests.agents.fixed_answer import ScriptedModel
from tests.learners.test_sft import TINY


@dataclass
class OwnModel(ScriptedModel):
    """The agent's own model, scripted: its open-book answers (right for some train tasks, wrong for
    the rest: a tiny random model passes none by itself) stand for rollouts, ``path`` for the weights
    they came from, which SFT then fine-tunes."""

    path: str = ""


def test_by_default_closed_sft_trains_on_the_agents_own_passing_rollouts(task_env, tiny_dir, tmp_path):
    tasks = task_env.tasks("train")[:4]
    own = OwnModel({t.query: [f"```python\n{t.reference}```"] for t in tasks[:3]}, name="own", path=str(tiny_dir))
    settings = {k: v for k, v in TINY.items() if k != "gather_model"}  # the default gatherer
    learner = make("closed-sft", state_dir=str(tmp_path / "state"), **settings)
    assert learner.config.gather_model is None and learner_teacher(learner) is None
    report = Agent(model=own, learner=learner, max_tokens=64).evolve(task_env)

    details = report.details
    assert details["gathered_with"] == "own" and details["teacher"] is None
    assert report.episodes == 4 and details["kept"] == 3 and details["acceptance"] == 0.75  # the wrong one dropped
    samples = read_samples(tmp_path / "state" / "trajectories.jsonl")
    assert {s.task_id for s in samples} == {t.task_id for t in tasks[:3]} and {s.source for s in samples} == {"own"}
    assert all("Documentation:" in s.prompt_open[1]["content"] for s in samples)  # gathered open-book
    base, tuned = load_file(tiny_dir / "model.safetensors"), load_file(learner.model_dir / "model.safetensors")
    assert [name for name in base if torch.equal(base[name], tuned[name])] == []  # trained on its own answers


def test_a_teacher_is_an_option_and_its_rows_are_named_after_it():
    assert learner_teacher(make("closed-sft", gather_model="reference")) == "reference"
    assert learner_teacher(make("open-sft", gather_model="self")) is None
    assert learner_teacher(make("closed-sft-rl", gather_model="reference")) == "reference"  # its SFT stage's
    assert learner_teacher(make("closed-sft-self", proposer_model="reference")) == "reference"
    assert learner_teacher(make("closed-rl")) is None
    assert teacher_label("closed-sft", "reference") == "closed-sft (teacher: reference)"
    assert teacher_label("closed-sft", None) == "closed-sft"
    # the agent's own weights served by vLLM gather for it: a faster engine, not a teacher
    assert learner_teacher(make("closed-sft", gather_model="vllm:/models/q"), own="/models/q") is None
    assert learner_teacher(make("closed-sft", gather_model="vllm:/models/big"), own="/models/q") == "vllm:/models/big"
