"""Reproducible to the sample: every sampled answer's seed derives from (run seed, task, sample,
turn), so the same seed gives the same samples twice, whatever else shares the batch, and another
seed gives others. On the tiny random model: its near-uniform next-token distribution makes
every draw visible in the text (the words are noise; that they repeat is the point)."""

import json

from agents import Agent
from agents.models.transformers_model import TransformersModel
from agents.seeding import derive_seed, row_seeds

PROMPT = [{"role": "user", "content": "Write a function."}]


def test_a_seeded_row_samples_the_same_alone_or_in_any_batch(tiny):
    assert isinstance(tiny, TransformersModel) and tiny.supports_seeds
    [[alone]] = tiny.generate([PROMPT], temperature=1.0, max_tokens=12, seeds=[7])
    other = [{"role": "user", "content": "Something else entirely, and longer, to change the padding."}]
    batch = tiny.generate([other, PROMPT, other], temperature=1.0, max_tokens=12, seeds=[1, 7, 2])
    assert batch[1][0].text == alone.text
    assert batch[0][0].text != batch[2][0].text  # other seeds, other samples
    [[again]] = tiny.generate([PROMPT], temperature=1.0, max_tokens=12, seeds=[8])
    assert again.text != alone.text
    # n samples of one prompt each draw from their own seed, and are reproduced one by one
    [three] = tiny.generate([PROMPT], n=3, temperature=1.0, max_tokens=12, seeds=[7])
    assert len({c.text for c in three}) == 3
    assert [c.text for c in tiny.generate([PROMPT], n=3, temperature=1.0, max_tokens=12, seeds=[7])[0]] == \
        [c.text for c in three]
    assert row_seeds([7], 2) == [derive_seed(7, 0), derive_seed(7, 1)]


def test_the_same_evaluation_twice_gives_the_same_samples_and_another_seed_others(task_env, tiny_dir, tmp_path):
    def run(seed, name):
        agent = Agent(model=str(tiny_dir), max_tokens=16, seed=seed)
        report = agent.evaluate(task_env, split="single_test", n=2, mode="closed", out=str(tmp_path / name),
                                limit=3)
        assert report.config["seed"] == seed and report.config["temperature"] > 0
        records = [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]
        return {(r["task_id"], r["sample"]): (r["answer"], r["code"], r["failure"], r["tokens"]) for r in records}, records

    first, records = run(3, "a.jsonl")
    second, _ = run(3, "b.jsonl")
    third, _ = run(4, "c.jsonl")
    assert len(first) == 6 and first == second
    assert first != third
    assert len({r["answer"] for r in records}) == 6  # every (task, sample) drew its own answer


def test_derived_seeds_are_stable_and_distinct():
    assert derive_seed(0, "t1", 0, 0) == derive_seed(0, "t1", 0, 0)
    seeds = {derive_seed(s, t, k, turn) for s in (0, 1) for t in ("t1", "t2") for k in range(3) for turn in (0, 1)}
    assert len(seeds) == 24 and all(0 <= s < 2**63 for s in seeds)
