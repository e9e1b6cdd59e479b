"""The importance ratio rho = pi / pi_old that GRPO's loss used, read back from the RL log: 1
exactly at every optimiser step when each rollout batch is used for one step (SE-Bench's own
recipe: train batch = mini-batch), and moved from 1 on the second step of a batch used twice,
where clipping can bind and the SFT-like estimator stops being SFT's gradient. Tiny model, a
high learning rate so a step moves the policy unmistakably; rollouts scripted (all pass)."""

import json

import pytest
import torch

from learners.rl import rollout_prompts
from learners.training.rl_settings import RLSettings
from learners.training.rl_train import build_trainer
from tests.learners.test_rl import _scripted, _task_finder


def _all_pass(trainer, tasks_by_prompt):
    """Every rollout the task's reference solution: each micro-batch has a gradient (trl shuffles
    the batch, and a half-passing script can leave a whole step with zero advantages)."""
    tokenizer = trainer.processing_class

    def generate(prompt_ids, images, fields, num_generations):
        return [tokenizer(f"```python\n{tasks_by_prompt(tokenizer.decode(ids)).reference}```",
                          add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
                for ids in prompt_ids], None

    trainer._generate_single_turn = generate


def _ratios(task_env, tiny_dir, tmp_path, **settings):
    tasks = task_env.tasks("train")[:4]
    prompts = rollout_prompts(task_env, tasks, 200)
    values = {"max_steps": 2, "prompts_per_step": 2, "num_generations": 2, "max_completion_length": 16,
              "save_steps": 100, "learning_rate": 5e-2, "advantage": "binary", "clip": False, **settings}
    trainer = build_trainer(prompts, tiny_dir, "closed", tmp_path, RLSettings(**values), task_env)
    _all_pass(trainer, _task_finder(tasks))
    trainer.train()
    records = [json.loads(line) for line in (tmp_path / "rl_log.jsonl").read_text().splitlines()]
    return [r for r in records if r.get("event") == "ratio"]


def test_one_optimiser_step_per_rollout_batch_keeps_rho_at_one(task_env, tiny_dir, tmp_path):
    ratios = _ratios(task_env, tiny_dir, tmp_path, steps_per_generation=1)
    assert {r["step"] for r in ratios} == {0, 1}  # every optimiser step logged its ratio
    assert all(r["mean"] == r["min"] == r["max"] == 1.0 for r in ratios), ratios


def test_a_rollout_batch_used_for_two_steps_moves_rho_on_the_second(task_env, tiny_dir, tmp_path):
    ratios = _ratios(task_env, tiny_dir, tmp_path, steps_per_generation=2, max_steps=2)
    first = [r for r in ratios if r["step"] == 0]
    second = [r for r in ratios if r["step"] == 1]
    assert first and second
    assert all(r["min"] == pytest.approx(1.0, abs=1e-4) and r["max"] == pytest.approx(1.0, abs=1e-4) for r in first)
    assert any(abs(r["max"] - 1.0) > 1e-3 or abs(r["min"] - 1.0) > 1e-3 for r in second), json.dumps(ratios)
    assert all(r["old_logps"] for r in second)


def test_the_default_takes_one_optimiser_step_per_rollout_batch():
    assert RLSettings().steps_per_generation == 1 and RLSettings().num_iterations == 1


def _sft_loss(model, inputs) -> torch.Tensor:
    """What SFT's trainer computes on the passing completions after the same (doc-less) prompts: the
    model's own cross-entropy with labels -100 outside the completion (trl's completion-only loss),
    a token mean over the completion tokens."""
    passing = inputs["advantages"] > 0
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)[passing]
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)[passing]
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, : inputs["prompt_ids"].shape[1]] = -100
    return model(input_ids=ids, attention_mask=mask, labels=labels).loss


def test_the_sft_like_gradient_is_the_sft_gradient_on_the_same_batch(task_env, tiny_dir, tmp_path):
    """Closed-RL's sft-like estimator at one optimiser step per rollout batch, on a batch of one
    passing and one failing completion: its gradient equals SFT's on the passing one, parameter by
    parameter (full fine-tuning, the rollout temperature 1 at which trl's log-probabilities are the
    model's own)."""
    tasks = task_env.tasks("train")[:1]
    prompts = rollout_prompts(task_env, tasks, 200)
    settings = RLSettings(max_steps=1, prompts_per_step=1, num_generations=2, max_completion_length=64,
                          save_steps=100, learning_rate=1e-2, advantage="binary", clip=False, lora=False,
                          dtype="float32")  # the estimator's math, compared in float32 (bf16 units round per batch shape)
    trainer = build_trainer(prompts, tiny_dir, "closed", tmp_path, settings, task_env)
    _scripted(trainer, _task_finder(tasks))
    compared = []
    compute_loss = trainer.compute_loss

    def alongside(model, inputs, *args, **kwargs):
        loss = compute_loss(model, inputs, *args, **kwargs)
        params = [p for p in model.parameters() if p.requires_grad]
        rl = torch.autograd.grad(loss, params, retain_graph=True)
        sft = torch.autograd.grad(_sft_loss(model, inputs), params)
        compared.append((sorted(inputs["advantages"].tolist()), rl, sft))
        return loss

    trainer.compute_loss = alongside
    trainer.train()
    [(advantages, rl, sft)] = compared
    assert advantages == [0.0, 1.0]  # one failing, one passing completion in the batch
    assert len(rl) == len(sft) > 10
    for a, b in zip(rl, sft, strict=True):
        assert b.abs().max() > 0
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def _second_step(task_env, tiny_dir, tmp_path, *, clip: bool, lr: float):
    """Gradients and ratio records of a rollout batch of two mini-batches (two optimiser steps),
    every rollout passing (A = 1), with or without PPO clipping: the same seed, so the same batch
    and, at step 0 where rho is 1, the same first step."""
    tasks = task_env.tasks("train")[:2]
    settings = RLSettings(max_steps=2, prompts_per_step=1, num_generations=2, steps_per_generation=2,
                          max_completion_length=16, save_steps=100, learning_rate=lr, advantage="binary", clip=clip,
                          dtype="float32")
    trainer = build_trainer(rollout_prompts(task_env, tasks, 200), tiny_dir, "closed", tmp_path, settings, task_env)
    _all_pass(trainer, _task_finder(tasks))
    gradients = []
    compute_loss = trainer.compute_loss

    def alongside(model, inputs, *args, **kwargs):
        loss = compute_loss(model, inputs, *args, **kwargs)
        gradients.append(torch.autograd.grad(loss, [p for p in model.parameters() if p.requires_grad],
                                             retain_graph=True))
        return loss

    trainer.compute_loss = alongside
    trainer.train()
    records = [json.loads(line) for line in (tmp_path / "rl_log.jsonl").read_text().splitlines()]
    return gradients, [r for r in records if r.get("event") == "ratio"]


@pytest.mark.parametrize("lr, binds", [(5e-2, True), (1e-7, False)])
def test_clipping_changes_the_second_mini_batch_s_gradient_only_where_ratios_leave_the_range(
        task_env, tiny_dir, tmp_path, lr, binds):
    """Table 3's "+clip" against "sft-like" on the same batch: at a high learning rate the first step
    moves rho past 1 + epsilon and the clipped surrogate drops those tokens' gradient, so the second
    step's gradients differ; at a tiny one rho stays within the range and they are the same."""
    plain, plain_ratios = _second_step(task_env, tiny_dir, tmp_path / "plain", clip=False, lr=lr)
    clipped, clipped_ratios = _second_step(task_env, tiny_dir, tmp_path / "clip", clip=True, lr=lr)
    assert len(plain) == len(clipped) == 2
    for a, b in zip(plain[0], clipped[0], strict=True):  # step 0: rho is 1, the same gradient
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    assert all(r["ratio_free"] for r in plain_ratios) and not any(r["ratio_free"] for r in clipped_ratios)
    second = [r for r in clipped_ratios if r["step"] == 1]
    assert second and all(r["old_logps"] for r in second)
    # the largest change of a parameter's gradient, relative to that gradient's scale
    worst = max(((a - b).abs().max() / b.abs().max()).item() for a, b in zip(plain[1], clipped[1], strict=True))
    if binds:
        assert max(r["clip_fraction"] for r in second) > 0, second
        assert worst > 1e-2, "clipping bound on some tokens but the gradient did not change"
    else:
        assert all(r["clip_fraction"] == 0 for r in second) and max(abs(r["max"] - 1) for r in second) < 1e-3
        assert worst < 1e-3, worst  # rho within 1 +- 1e-3: the two gradients differ by rho's factor only
