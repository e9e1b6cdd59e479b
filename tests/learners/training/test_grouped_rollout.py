"""Grouped rollouts (``learners.training.grouped_rollout``) against trl's padded ``generate``, on the tiny
random-initialised Qwen2.5 (``tiny_qwen_dir``: the real architecture and 151k-token tokenizer, 2
layers). The tiny model's words are noise; what is tested is the mechanics: the same tokens as
``model.generate`` where the sampling is the same (greedy), rows that stop at different lengths,
seeds that reproduce a sample whatever else is in the batch, and a GRPO step that trains on them."""

import pytest
import torch

from learners.rl import rollout_prompts
from learners.training.grouped_rollout import sample_grouped, supported
from learners.training.rl_settings import RLSettings
from learners.training.rl_train import build_trainer

TEXTS = ["def add(a, b):", "Write a function that sums a list of numbers and returns the total.", "x = 1"]


@pytest.fixture(scope="module")
def qwen(tiny_qwen_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_qwen_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_qwen_dir, dtype=torch.float32).eval()
    return model, tokenizer


def _plain(model, ids, tokens, eos, pad):
    """trl's path for one row: ``generate`` greedy, cut after the first end token."""
    out = model.generate(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                         max_new_tokens=tokens, do_sample=False, eos_token_id=eos, pad_token_id=pad)[0, len(ids):]
    out = out.tolist()
    end = next((i for i, t in enumerate(out) if t in eos), None)
    return out if end is None else out[:end + 1]


def test_greedy_rows_are_generate_s_tokens_and_stop_at_their_own_end(qwen):
    model, tokenizer = qwen
    prompts = [tokenizer(t)["input_ids"] for t in TEXTS]
    rows = [prompts[0]] * 3 + [prompts[1]] * 3 + [prompts[2]] * 2
    pad = tokenizer.pad_token_id
    # end tokens the tiny model's greedy text reaches at different points, so rows leave the batch
    # at different steps (the real end-of-turn token never comes from noise)
    free = [_plain(model, p, 12, [tokenizer.eos_token_id], pad) for p in prompts]
    eos = [tokenizer.eos_token_id, free[0][3], free[2][7]]
    grouped = sample_grouped(model, rows, max_new_tokens=12, temperature=0.0, eos_ids=eos, pad_id=pad, seed=0)
    expected = [_plain(model, r, 12, eos, pad) for r in rows]
    assert grouped == expected
    assert len({len(c) for c in grouped}) > 1, "some rows ended before the others"


def test_a_seed_reproduces_each_row_whatever_else_is_in_the_batch(qwen):
    model, tokenizer = qwen
    prompts = [tokenizer(t)["input_ids"] for t in TEXTS]
    rows = [prompts[0]] * 4 + [prompts[1]] * 4
    kwargs = {"max_new_tokens": 10, "temperature": 1.0, "eos_ids": [tokenizer.eos_token_id],
              "pad_id": tokenizer.pad_token_id}
    first = sample_grouped(model, rows, seed=3, **kwargs)
    assert first == sample_grouped(model, rows, seed=3, **kwargs)
    assert sample_grouped(model, rows[:4], seed=3, **kwargs) == first[:4]  # half the batch: the same draws
    assert len({tuple(c) for c in first[:4]}) > 1, "copies of one prompt draw different completions"
    assert sample_grouped(model, rows, seed=4, **kwargs) != first


def test_sampling_beyond_temperature_falls_back_to_generate():
    from transformers import GenerationConfig

    assert supported(GenerationConfig(do_sample=True, temperature=0.7, top_k=0, top_p=1.0))
    assert not supported(GenerationConfig(do_sample=True, top_k=50))
    assert not supported(GenerationConfig(do_sample=True, top_k=0, top_p=0.9))
    assert not supported(GenerationConfig(do_sample=True, top_k=0, repetition_penalty=1.1))


def _token_sum(completion_ids, **_):
    """A reward that is a real function of the real rollouts (noise never passes the sandbox): distinct
    completions get distinct rewards, so the group advantage is not zero and the step has a gradient."""
    return [(sum(ids) % 97) / 97 for ids in completion_ids]


@pytest.mark.parametrize("engine", ["grouped", "generate"])
def test_a_grpo_step_trains_on_either_rollout_path(task_env, tiny_qwen_dir, tmp_path, engine):
    tasks = task_env.tasks("train")[:2]
    settings = RLSettings(max_steps=1, prompts_per_step=2, num_generations=2, max_completion_length=8,
                          save_steps=100, rollout_engine=engine, dtype="float32", learning_rate=1e-2)
    trainer = build_trainer(rollout_prompts(task_env, tasks, 200), tiny_qwen_dir, "closed", tmp_path, settings,
                            task_env)
    assert trainer.grouped_rollouts == (engine == "grouped")
    trainer.reward_funcs[0] = _token_sum
    calls = []
    original = trainer._generate_grouped

    def counted(prompt_ids):
        calls.append(len(prompt_ids))
        return original(prompt_ids)

    trainer._generate_grouped = counted
    policy = trainer.accelerator.unwrap_model(trainer.model)
    before = {k: v.detach().clone() for k, v in policy.named_parameters()}
    trainer.train()
    assert (calls == [4]) == (engine == "grouped")
    assert trainer.rollout_tokens > 0 and trainer.state.global_step == 1
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    assert losses and all(torch.isfinite(torch.tensor(v)) for v in losses)
    for name, value in policy.named_parameters():
        assert not torch.equal(before[name], value.detach()), f"{name} did not move"
