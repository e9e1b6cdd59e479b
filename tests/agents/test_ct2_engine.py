"""The CTranslate2 engine on tiny random-initialised models (mechanics, not skill): the Model
protocol holds, float32 greedy answers are transformers' answers token for token, seeded sampling
stays on transformers, a conversion is made once per weights, a model trained in place answers on
its own weights, and a learner's trained model is evaluated through CTranslate2."""

import json
import weakref
from pathlib import Path

import pytest
import torch

from agents import Agent
from agents.models import load_model
from agents.models.conformance import check_model
from agents.models.ct2_convert import converted_directory, weights_key
from agents.models.ct2_model import CT2Model, length_buckets
from agents.models.errors import ModelUnavailableError
from agents.models.local_model import EngineError, LocalModel, fast_engine
from agents.models.transformers_model import TransformersModel

PROMPTS = [[{"role": "user", "content": "Count from one to five in words, separated by commas."}],
           [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."}],
           [{"role": "user", "content": "Write a Python function that adds two numbers."}]]


@pytest.fixture(scope="module")
def float32_tiny(tiny_qwen_dir):
    return TransformersModel(tiny_qwen_dir, dtype="float32")


@pytest.mark.parametrize("quantization", ["float32", "int8"])
def test_the_model_protocol_holds_in_both_quantizations(tiny_qwen_dir, quantization):
    model = CT2Model(tiny_qwen_dir, quantization=quantization)
    report = check_model(model)
    assert report.passed, "\n".join(report.lines())
    assert model.supports_seeds is False  # its samples cannot be seeded one by one (the module says why)


@pytest.mark.parametrize("stop", [None, [","], ["\n", "the"]])
def test_float32_greedy_answers_are_the_transformers_answers(tiny_qwen_dir, float32_tiny, stop):
    ct2 = CT2Model(tiny_qwen_dir, quantization="float32")
    ours = ct2.generate(PROMPTS, max_tokens=24, stop=stop)
    theirs = float32_tiny.generate(PROMPTS, max_tokens=24, stop=stop)
    for [a], [b] in zip(ours, theirs, strict=True):
        assert (a.text, a.tokens, a.finish_reason, a.prompt_tokens) == (b.text, b.tokens, b.finish_reason,
                                                                        b.prompt_tokens)


def test_length_buckets_group_similar_prompts_and_cover_every_row_once():
    lengths = [900, 40, 45, 1200, 60, 910, 41]
    buckets = length_buckets(lengths, batch_size=2, spread=32)
    assert sorted(r for b in buckets for r in b) == list(range(len(lengths)))
    for bucket in buckets:
        assert len(bucket) <= 2
        assert max(lengths[r] for r in bucket) - min(lengths[r] for r in bucket) <= 32
    assert [1, 6] in buckets and [0, 5] in buckets  # the two shortest together, the two ~900s together


def test_mixed_length_batches_answer_in_the_order_asked_as_one_prompt_at_a_time(tiny_qwen_dir):
    ct2 = CT2Model(tiny_qwen_dir, quantization="float32", batch_size=2)
    long = [{"role": "user", "content": "Explain, step by step and with care, " * 40 + "how to add."}]
    prompts = [long, PROMPTS[0], long, PROMPTS[1], PROMPTS[2]]
    together = ct2.generate(prompts, max_tokens=12)
    alone = [ct2.generate([p], max_tokens=12)[0] for p in prompts]
    assert [[c.text for c in row] for row in together] == [[c.text for c in row] for row in alone]
    assert [row[0].prompt_tokens for row in together] == [row[0].prompt_tokens for row in alone]


def test_auto_answers_greedy_requests_on_ct2_and_seeded_samples_on_transformers(tiny_qwen_dir, float32_tiny):
    model = load_model(str(tiny_qwen_dir), engine="auto", dtype="float32", cache=False)
    assert isinstance(model, LocalModel) and model.supports_seeds
    assert model.engine_for(0.0) == "ct2-float32" and model.engine_for(0.8) == "transformers"
    [[greedy]] = model.generate(PROMPTS[:1], max_tokens=16)
    assert model._transformers is None, "a greedy request must not load the torch weights"
    assert greedy.text == float32_tiny.generate(PROMPTS[:1], max_tokens=16)[0][0].text
    seeds = [11, 12, 13]
    sampled = model.generate(PROMPTS, n=2, temperature=0.8, max_tokens=16, seeds=seeds)
    assert sampled == float32_tiny.generate(PROMPTS, n=2, temperature=0.8, max_tokens=16, seeds=seeds)
    ct2_only = load_model(str(tiny_qwen_dir), engine="ct2-int8", cache=False)
    assert not ct2_only.supports_seeds and ct2_only.engine_for(0.8) == "ct2-int8"
    with pytest.raises(ValueError, match="cannot seed"):
        ct2_only.generate(PROMPTS[:1], temperature=0.8, max_tokens=4, seeds=[1])
    with pytest.raises(EngineError, match="not one of"):
        load_model(str(tiny_qwen_dir), engine="fastest")
    model.close()
    assert model._ct2 is None and model._transformers is None


def test_a_conversion_is_made_once_per_weights(tiny_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SEBENCH_CACHE", str(tmp_path / "cache"))
    from ctranslate2.converters import TransformersConverter

    calls = []
    original = TransformersConverter.convert
    monkeypatch.setattr(TransformersConverter, "convert", lambda self, *a, **k: calls.append(a) or original(self, *a, **k))
    first = converted_directory(tiny_dir, "int8")
    assert converted_directory(tiny_dir, "int8") == first and len(calls) == 1  # cached: not converted again
    assert json.loads((first / "source.json").read_text())["quantization"] == "int8"

    other = tmp_path / "retrained"
    model = TransformersModel(tiny_dir, dtype="float32")
    with torch.no_grad():
        next(model.model.parameters()).add_(1.0)
    model.model.save_pretrained(other)
    model.tokenizer.save_pretrained(other)
    assert weights_key(other) != weights_key(tiny_dir)
    assert converted_directory(other, "int8") != first and len(calls) == 2  # new weights, new conversion


def test_the_cache_drops_the_least_recently_used_copy_over_its_bound(tiny_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SEBENCH_CACHE", str(tmp_path / "cache"))
    first = converted_directory(tiny_dir, "int8")
    one_copy = sum(p.stat().st_size for p in first.iterdir())
    monkeypatch.setenv("SEBENCH_CT2_CACHE_GB", str(1.5 * one_copy / (1 << 30)))  # room for one copy, not two
    second = converted_directory(tiny_dir, "float32")
    assert second.is_dir() and not first.exists()  # the older copy went, the one in use stayed
    monkeypatch.setenv("SEBENCH_CT2_CACHE_GB", "lots")
    with pytest.raises(ModelUnavailableError, match="SEBENCH_CT2_CACHE_GB"):
        converted_directory(tiny_dir, "int8")


def test_a_model_trained_in_place_answers_on_its_own_weights(tiny_qwen_dir):
    model = TransformersModel(tiny_qwen_dir, dtype="float32")  # its own copy: this test changes it
    agent = Agent(model=model, max_tokens=12, engine="auto")
    [[before]] = agent._generator().generate(PROMPTS[:1], max_tokens=12)
    assert agent.engine_for(0.0) == "ct2-float32" and agent._fast._ct2 is not None
    with torch.no_grad():
        for parameter in model.model.parameters():
            parameter.mul_(1.5)  # an update the directory on disk does not have
    assert not model.matches_directory() and agent.engine_for(0.0) == "transformers"
    [[after]] = agent._generator().generate(PROMPTS[:1], max_tokens=12)
    assert after.text == model.generate(PROMPTS[:1], max_tokens=12)[0][0].text
    fast = weakref.ref(agent._fast)
    agent.close()
    assert fast() is None and agent._fast is None  # the CTranslate2 copy goes with the agent's batcher
    assert fast_engine(model, "transformers") is None


def test_a_learner_trained_model_is_evaluated_through_ct2(task_env, tiny_dir, tmp_path):
    """Closed-SFT on the tiny model (2 steps), then evaluation: the greedy answers come from the
    trained model's directory converted on first use, and they are the trained model's own."""
    from learners import make
    from tests.learners.test_sft import TINY

    learner = make("closed-sft", state_dir=str(tmp_path / "state"), **{**TINY, "dtype": "float32"})
    agent = Agent(model=load_model(str(tiny_dir), cache=False, dtype="float32"), learner=learner, max_tokens=16,
                  dtype="float32", engine="auto", temperature=0)  # greedy (asked for): what ct2 answers
    agent.evolve(task_env)
    assert Path(agent.model.path) == learner.model_dir and agent.model.matches_directory()
    report = agent.evaluate(task_env, split="single_test", n=1, limit=2, out=str(tmp_path / "eval.jsonl"))
    config = json.loads((tmp_path / "eval.config.json").read_text())["config"]
    assert config["engine"] == "ct2-float32"
    assert agent._fast is not None and agent._fast._ct2 is not None
    assert Path(agent._fast._ct2.path) == learner.model_dir
    records = [json.loads(line) for line in Path(report.results_path).read_text().splitlines()]
    assert len(records) == 2
    task = task_env.tasks("single_test")[0]
    trajectory = agent.run_episode(task_env, task, phase="test", mode="closed")
    [[own]] = agent.model.generate([trajectory.messages[:2]], max_tokens=16)
    assert trajectory.messages[2]["content"] == own.text
    agent.close()
