"""RL learners with real trl and the real sandbox, on the tiny random-initialised SmolLM2
(``tiny_dir``: the real architecture and tokenizer, 2 layers), at tiny sizes.

The tiny model answers with noise and earns no reward, so a GRPO step on its own rollouts has
zero advantages and cannot show that rewards move the weights. Where a test needs rewards,
generation alone is scripted (``_scripted``: the reference solution for even rollouts, a wrong
answer for odd ones); the trainer, its loss, the sandbox verdicts and the saved model are the
real ones, trained at a learning rate (``LR``) at which every parameter a step reaches moves.
The capable model's real rollouts are measured in ``make bench``."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

from agents import Agent
from agents.models import load_model
from learners import make
from learners.rl import PRESETS, RLLearnerConfig, rollout_prompts
from learners.training import rl_trainer as rl_trainer_module
from learners.training.rl_reward import SandboxReward
from learners.training.rl_settings import RLSettings
from learners.training.rl_train import build_trainer

TINY = {"max_steps": 1, "prompts_per_step": 2, "num_generations": 2, "steps_per_generation": 1,
        "max_completion_length": 16, "save_steps": 100, "docs_chars": 300, "limit": 2}
LR = 1e-2  # one Adam step moves each parameter with a gradient by ~LR: unmistakable, even in bf16
WRONG = "```python\nimport zwc\n\ndef {name}(*args):\n    return zwc.nonexistent_name(1)\n```"


def _settings(**changes) -> RLSettings:
    values = {k: v for k, v in TINY.items() if k not in ("docs_chars", "limit")}
    return RLSettings(**{**values, **changes})


def _scripted(trainer, tasks_by_prompt):
    """Replace the trainer's generation with answers of known verdicts (see the module doc)."""
    tokenizer = trainer.processing_class
    eos = tokenizer.eos_token_id

    def generate(prompt_ids, images, fields, num_generations):
        out = []
        for i, ids in enumerate(prompt_ids):
            task = tasks_by_prompt(tokenizer.decode(ids))
            text = f"```python\n{task.reference}```" if i % 2 == 0 else WRONG.format(name=task.entry_point)
            out.append(tokenizer(text, add_special_tokens=False)["input_ids"] + [eos])
        return out, None

    trainer._generate_single_turn = generate


def _weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.named_parameters()}


def _moved(before: dict[str, torch.Tensor], after: dict[str, torch.Tensor]) -> None:
    """Every parameter changed (a full fine-tuning step reaches them all)."""
    assert before.keys() == after.keys()
    for name, value in before.items():
        assert not torch.equal(value, after[name]), f"{name} did not move"


def _task_finder(tasks):
    def find(text: str):
        [task] = [t for t in tasks if t.query in text]
        return task

    return find


def test_the_reward_of_a_completion_is_its_sandbox_verdict(task_env):
    tasks = task_env.tasks("train")[:4]
    by_id = {t.task_id: t for t in tasks}
    reward = SandboxReward(task_env, by_id)
    completions = [
        f"```python\n{tasks[0].reference}```",                                   # passes
        WRONG.format(name=tasks[1].entry_point),                                 # unknown_api
        "I would call the library here.",                                        # no code at all
        "```python\n" + tasks[3].reference.replace(tasks[3].function_name,
                                                     tasks[3].function_name + "\n    while True:\n        pass") + "```",
        f"```python\n{tasks[0].reference}```".replace("return", "return 1 + "),  # wrong answer or an error
    ]
    ids = [tasks[0].task_id, tasks[1].task_id, tasks[2].task_id, tasks[3].task_id, tasks[0].task_id]
    rewards = reward(None, [[{"role": "assistant", "content": c}] for c in completions], ids)
    from agents.prompts import extract_code

    verdicts = [task_env.check(by_id[i], extract_code(c)) for i, c in zip(ids, completions, strict=True)]
    assert rewards == [1.0 if v.passed else 0.0 for v in verdicts]
    assert rewards[:4] == [1.0, 0.0, 0.0, 0.0]
    assert [v.failure.value for v in verdicts[1:4]] == ["unknown_api", "no_code", "timeout"]
    assert reward.completions == 5 and reward.passed == 1 and reward.failures["passed"] == 1


@pytest.mark.parametrize("advantage", ["binary", "group"])
def test_closed_rl_generates_with_the_docs_and_takes_the_gradient_without_them(task_env, tiny_dir, tmp_path,
                                                                               advantage):
    tasks = task_env.tasks("train")[:2]
    prompts = rollout_prompts(task_env, tasks, 300)
    trainer = build_trainer(prompts, tiny_dir, "closed", tmp_path, _settings(advantage=advantage, learning_rate=LR),
                            task_env)
    _scripted(trainer, _task_finder(tasks))
    reached_loss = []
    compute_loss = trainer.compute_loss

    def spy(model, inputs, *args, **kwargs):
        reached_loss.append((inputs["prompt_ids"].clone(), inputs["prompt_mask"].clone(), inputs["advantages"].clone(),
                             inputs["completion_ids"].clone()))
        return compute_loss(model, inputs, *args, **kwargs)

    trainer.compute_loss = spy
    before = _weights(trainer.model)
    trainer.train()

    tokenizer = trainer.processing_class
    generated_on = [tokenizer.decode(ids) for ids in trainer.last_rollout["generated_on"]]
    assert all("Documentation:" in text for text in generated_on), "rollouts must see the docs"
    assert reached_loss, "the loss was never computed"
    for ids, mask, _, _ in reached_loss:
        for row, keep in zip(ids, mask, strict=True):
            text = tokenizer.decode(row[keep.bool()])
            assert "Documentation:" not in text and "## zwc." not in text
            assert any(t.query in text for t in tasks)

    rewards = trainer.last_batch["rewards"]
    assert rewards == [1.0, 0.0] * (len(rewards) // 2)  # the scripted verdicts, graded by the sandbox
    # trl shuffles the batch before the update: pair each advantage with its own completion
    advantages = [float(a) for _, _, batch, _ in reached_loss for a in batch]
    passing = ["nonexistent_name" not in tokenizer.decode(c) for _, _, _, batch in reached_loss for c in batch]
    assert sorted(passing) == [False, False, True, True]
    if advantage == "binary":  # the SFT-like estimator: A is the reward itself, no baseline
        assert advantages == [1.0 if p else 0.0 for p in passing]
    else:  # GRPO: centred within each group (one passing and one failing rollout per task)
        assert sum(advantages) == pytest.approx(0, abs=1e-5)
        assert all((a > 0) == p for a, p in zip(advantages, passing, strict=True))
        assert sorted(trainer.last_batch["advantages"])[0] == pytest.approx(-sorted(trainer.last_batch["advantages"])[-1])
    _moved(before, _weights(trainer.model))  # a rewarded step moves the weights, all of them

    log = [json.loads(line) for line in (tmp_path / "rl_log.jsonl").read_text().splitlines()]
    rollouts = [e for e in log if e["event"] == "rollout"]
    logged = [e for e in log if e["event"] == "log" and "reward" in e]
    assert rollouts and rollouts[0]["pass_rate"] == 0.5 and rollouts[0]["failures"] == {"passed": 2, "unknown_api": 2}
    assert logged and {"reward", "clip_ratio/region_mean", "entropy"} <= set(logged[0])


def test_open_rl_trains_on_what_it_generated_from(task_env, tiny_dir, tmp_path):
    tasks = task_env.tasks("train")[:2]
    trainer = build_trainer(rollout_prompts(task_env, tasks, 300), tiny_dir, "open", tmp_path,
                            _settings(learning_rate=LR), task_env)
    _scripted(trainer, _task_finder(tasks))
    before = _weights(trainer.model)
    trainer.train()
    _moved(before, _weights(trainer.model))
    ids, mask = trainer.last_batch["prompt_ids"], trainer.last_batch["prompt_mask"]
    assert all("Documentation:" in trainer.processing_class.decode(r[m.bool()]) for r, m in zip(ids, mask, strict=True))
    assert trainer.last_rollout == {}  # no custom rollout: trl generates on the prompt it trains on


@pytest.mark.parametrize("name", ["open-rl", "closed-rl", "closed-sft-rl"])
def test_evolve_changes_the_agents_weights_and_the_agent_answers_with_them(task_env, tiny, tiny_dir, tmp_path,
                                                                          monkeypatch, name):
    class Scripted(rl_trainer_module.VerdictGRPOTrainer):
        def train(self, *args, **kwargs):
            _scripted(self, _task_finder(task_env.tasks("train")))
            return super().train(*args, **kwargs)

    monkeypatch.setattr(rl_trainer_module, "VerdictGRPOTrainer", Scripted)
    extra = {"sft_max_steps": 1, "sft_batch_size": 2, "sft_max_length": 512, "sft_learning_rate": LR,
             "sft_warmup_ratio": 0.0,  # no warmup: the one SFT step has lr > 0
             "gather_model": "reference"} if name == "closed-sft-rl" else {}
    learner = make(name, state_dir=str(tmp_path / "state"), preset="sft-like", learning_rate=LR, warmup_ratio=0.0,
                   **TINY, **extra)  # no warm-up: the one step has lr > 0
    agent = Agent(model=tiny, learner=learner, max_tokens=24, temperature=0)  # greedy, asked: compared below
    report = agent.evolve(task_env)

    details = report.details
    assert details["preset"] == "sft-like" and details["changed_settings"]["advantage"] == "binary"
    assert details["rollout_pass_rate"] == 0.5 and details["steps"] == 1 and not details.get("warnings")
    assert details["grading_seconds"] > 0 and 0 <= details["grading_share"] < 1
    assert details["update_tokens_per_second"] > 0
    from safetensors.torch import load_file

    base = load_file(tiny_dir / "model.safetensors")
    if name == "closed-sft-rl":  # RL must move the weights beyond what the SFT stage did
        assert details["sft"]["kept"] == 2 and details["sft"]["steps"] == 1
        sft = load_file(learner.sft.model_dir / "model.safetensors")
        _moved(base, sft)
        base = sft
    _moved(base, load_file(learner.model_dir / "model.safetensors"))
    assert Path(agent.model.path) == learner.model_dir and agent.model is not tiny

    task = task_env.tasks("single_test")[0]
    trajectory = agent.run_episode(task_env, task, phase="test", mode="closed")
    [[direct]] = agent.model.generate([trajectory.messages[:2]], max_tokens=24)
    assert trajectory.messages[2]["content"] == direct.text  # the episode's answer is the trained model's

    learner.save(tmp_path / "saved")
    again = make(name)
    again.load(tmp_path / "saved")
    assert again.model_dir == learner.model_dir
    [[by_path]] = load_model(str(again.model_dir)).generate([trajectory.messages[:2]], max_tokens=24)
    assert by_path.text == direct.text


def test_presets_are_documented_changes_and_bad_settings_are_named():
    config = RLLearnerConfig.from_overrides({"preset": "sft-like-small-lr", "max_steps": 3})
    # Table 3's schedule (two optimiser steps per rollout batch) and SFT's schedule, GRPO's learning rate
    assert config.changed() == {"max_steps": 3, "advantage": "binary", "clip": False, "prompts_per_step": 4,
                                "steps_per_generation": 2, "lr_scheduler": "cosine", "warmup_ratio": 0.05}
    assert RLLearnerConfig.from_overrides({"preset": "sft-like", "learning_rate": 1e-6}).train.learning_rate == 1e-6
    assert set(PRESETS) == {"grpo", "grpo-minibatch", "sft-like", "sft-like+clip", "sft-like+grpo-adv",
                            "sft-like-small-lr", "sft-like-small-batch"}
    like = RLLearnerConfig.from_overrides({"preset": "sft-like"}).train
    assert like.learning_rate == 10 * RLSettings().learning_rate  # GRPO's is a tenth of SFT's, as the official scripts
    for name in ("sft-like+clip", "sft-like+grpo-adv", "sft-like-small-lr", "sft-like-small-batch"):
        ablation = RLLearnerConfig.from_overrides({"preset": name}).train
        differs = {k for k, v in asdict(ablation).items() if getattr(like, k) != v}
        assert len(differs) == 1, (name, differs)  # each ablation changes one thing of sft-like
    with pytest.raises(ValueError, match="rollout_engine must be one of grouped, generate"):
        RLSettings(rollout_engine="vllm")
    with pytest.raises(ValueError, match="unknown preset 'sft'.*sft-like"):
        make("closed-rl", preset="sft")
    with pytest.raises(ValueError, match="unknown RL setting.*batch_size"):
        make("closed-rl", batch_size=4)
    with pytest.raises(ValueError, match="advantage must be one of group, binary"):
        make("open-rl", advantage="ppo")
    with pytest.raises(ValueError, match="num_generations must be >= 2"):
        RLSettings(num_generations=1, advantage="binary")
    with pytest.raises(ValueError, match="epsilon must be in"):
        RLSettings(epsilon=1.5)
    with pytest.raises(ValueError, match="loss_type must be one of"):
        RLSettings(loss_type="cispo")
    with pytest.raises(ValueError, match="collect_only cannot apply"):
        make("closed-sft-rl", collect_only=True)
    both = make("closed-sft-rl", limit=5)
    assert both.sft.config.limit == both.rl.config.limit == 5
    assert make("closed-sft-rl").sft.config.limit == make("closed-sft-rl").rl.config.limit


def test_too_few_train_tasks_for_one_rollout_batch_is_an_error_not_zero_steps(task_env, tiny_dir, tmp_path):
    prompts = rollout_prompts(task_env, task_env.tasks("train")[:3], 200)
    with pytest.raises(ValueError, match="one rollout batch needs 4 train tasks .* and 3 were given"):
        build_trainer(prompts, tiny_dir, "closed", tmp_path,
                      _settings(prompts_per_step=2, steps_per_generation=2), task_env)


def test_the_cli_refuses_bad_settings_with_a_message(task_env, tmp_path):
    result = subprocess.run([sys.executable, "-m", "benchmarks.cli", "evolve", "--zwc", str(task_env.root),
                             "--learner", "closed-rl", "--out", str(tmp_path / "run"), "--set", "preset=nope"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "unknown preset 'nope'" in result.stderr


@pytest.mark.xdist_group("rl-cli")
def test_a_killed_rl_evolve_resumes_from_its_last_checkpoint(task_env, tiny_dir, tmp_path):
    run = tmp_path / "run"
    evolve = [sys.executable, "-m", "benchmarks.cli", "evolve", "--zwc", str(task_env.root), "--learner", "open-rl",
              "--model", str(tiny_dir), "--limit", "2", "--out", str(run), "--set", "max_steps=3",
              "--set", "save_steps=1", "--set", "prompts_per_step=1", "--set", "num_generations=2",
              "--set", "steps_per_generation=1", "--set", "max_completion_length=8", "--set", "lora=true",
              "--set", "docs_chars=200"]
    killed = subprocess.Popen(evolve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    checkpoint = run / "learner" / "train" / "checkpoint-1" / "trainer_state.json"
    deadline = time.monotonic() + 300
    while not checkpoint.is_file() and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    assert checkpoint.is_file(), "the run should have checkpointed step 1 before the kill"
    assert not (run / "model" / "config.json").is_file()

    subprocess.run(evolve, check=True, capture_output=True, timeout=600)
    details = json.loads((run / "report.json").read_text())["details"]
    assert int(details["resumed_from"].split("-")[1]) >= 1 and details["steps"] == 3
    assert (run / "model" / "config.json").is_file() and not (run / "model" / "adapter_config.json").exists()
    log = [json.loads(line) for line in (run / "learner" / "train" / "rl_log.jsonl").read_text().splitlines()]
    assert [e["step"] for e in log if e["event"] == "log" and "reward" in e] == [1, 2, 3]
    assert [e["step"] for e in log if e["event"] == "rollout"] == [0, 1, 2]  # redone rollouts are not counted twice
    assert details["completions"] == 6 and len(details["reward_per_rollout"]) == 3
    assert [e["kind"] for e in log if e["event"] == "advantages"] == ["group"] * 3
    assert not list((run / "learner" / "train").glob("checkpoint-*"))  # a finished run keeps only the model

    again = subprocess.run(evolve, capture_output=True, text=True, timeout=300)  # finished: not redone
    assert again.returncode == 0 and json.loads((run / "report.json").read_text())["details"]["steps"] == 3

    other = subprocess.run([*evolve, "--set", "learning_rate=0.001"],
                           capture_output=True, text=True, timeout=300)
    assert other.returncode == 2 and "differs in settings" in other.stdout + other.stderr


def test_rollouts_run_on_a_bf16_copy_refreshed_from_the_trained_weights(task_env, tiny_dir, tmp_path):
    """``dtype=bfloat16`` asks for bf16 whatever the CPU: where it has no bf16 units torch
    emulates them (slower, and free at this model's size), so this runs on every CPU."""
    if torch.cuda.is_available():
        pytest.skip("the bf16 copy is the CPU's rollout path: a GPU samples from its policy (or vLLM)")
    tasks = task_env.tasks("train")[:2]
    trainer = build_trainer(rollout_prompts(task_env, tasks, 200), tiny_dir, "closed", tmp_path,
                            _settings(max_steps=1, dtype="bfloat16", learning_rate=LR, advantage="binary"), task_env)
    assert trainer.bf16_rollouts, "dtype=bfloat16 on a CPU rolls out on the bf16 copy"
    prompt_ids, _, _ = trainer._tokenize_prompts([p["prompt_open"] for p in rollout_prompts(task_env, tasks, 200)])
    first = trainer._generate_bf16(prompt_ids)  # the real rollout path, before any step
    assert len(first) == 2 and all(0 < len(c) <= 16 for c in first) and trainer._rollout_step == 0
    stale = _weights(trainer._rollout_copy)
    _scripted(trainer, _task_finder(tasks))  # rewards during training, so the steps move the weights
    trainer.train()
    trainer._generate_bf16(prompt_ids)  # after the steps: the copy is refreshed first
    assert trainer._rollout_step == trainer.state.global_step == 1
    policy = dict(trainer.accelerator.unwrap_model(trainer.model).named_parameters())
    copy = _weights(trainer._rollout_copy)
    assert copy.keys() == policy.keys()
    _moved(stale, copy)  # the step moved every weight, and the copy followed
    for k in policy:
        assert copy[k].dtype == torch.bfloat16 and torch.equal(copy[k], policy[k].detach().to(torch.bfloat16)), k
