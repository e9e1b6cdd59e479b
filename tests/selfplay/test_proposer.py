"""The proposer's prompts (docs, a real worked example, references) and its answers, with any backend."""

import re

import pytest

from envs.zwc import ProtocolError, ZWCEnvError
from selfplay.buffer import TaskBuffer
from selfplay.proposal import Proposal, parse_proposal
from selfplay.proposer import Proposer, ProposerConfig
from selfplay.reasons import Rejected
from selfplay.validate import Accepted, Validator
from tests.agents.fixed_answer import FixedAnswerModel
from tests.selfplay.proposals import answer

PLACEHOLDER = re.compile(r"<[a-z][\w ]*>|\.\.\.|\bTODO\b|your code", re.IGNORECASE)


def example_of(prompt: list[dict]) -> str:
    text = prompt[1]["content"]
    return text.split("A complete example task, in the exact format to use:\n\n", 1)[1].split("\n```", 1)[0] + "\n```"


def test_a_prompt_holds_the_sampled_functions_docs_and_a_real_worked_example(task_env):
    proposer = Proposer(task_env, FixedAnswerModel(""), ProposerConfig(functions_per_task=2, seed=1))
    requests = proposer.requests(3, round=0)
    assert requests == proposer.requests(3, round=0) and requests != proposer.requests(3, round=1)
    for request in requests:
        user = request.prompt[1]["content"]
        assert len(request.functions) == 2
        for path in request.functions:
            assert f"## {path}\n" in user and task_env.docs.lookup(path).text.strip()[:80] in user
            assert path in user.rsplit("Now write", 1)[1]  # and the instruction asks for them
        assert not PLACEHOLDER.search(user.rsplit("Now write", 1)[1])
        example = example_of(request.prompt)
        assert not PLACEHOLDER.search(example), example
        parsed = parse_proposal(example)  # complete: it parses, from the env's own train task
        train = {t.task_id: t for t in task_env.tasks("train")}[request.example]
        assert isinstance(parsed, Proposal) and parsed.problem == train.query.strip()
        assert task_env.function_paths(train)[0] in example and not set(request.functions) & set(
            task_env.function_paths(train))  # the example uses another function than the one asked for
        assert request.references == ()


def test_reference_tasks_from_a_buffer_are_shown(task_env, tmp_path):
    buffer = TaskBuffer.in_run(tmp_path, "sebench")
    buffer.extend(task_env.tasks("train")[40:45], round=0)
    proposer = Proposer(task_env, FixedAnswerModel(""), ProposerConfig(references=2))
    [request] = proposer.requests(1, references=buffer.tasks())
    user = request.prompt[1]["content"]
    assert len(request.references) == 2 and "Tasks that already exist (write a different one)" in user
    for task_id in request.references:
        assert buffer.entries[[e.task.task_id for e in buffer].index(task_id)].task.query.splitlines()[0] in user


def test_any_backend_proposes_and_a_good_answer_is_accepted(task_env):
    z = {e.numpy.removeprefix("numpy."): e.zwc for e in task_env.mapping}
    code = answer(f"    return {z['abs']}(readings)\n").split("```python\n", 1)[1].rsplit("```", 1)[0]
    model = FixedAnswerModel(code)
    proposer = Proposer(task_env, model)
    items = proposer.propose(2, round=0)
    assert len(model.seen) == 2 and all(isinstance(p, Proposal) for p in items)
    assert items[0].functions == proposer.requests(2, round=0)[0].functions
    results = Validator(task_env).validate_many(items)
    assert all(isinstance(r, Accepted) for r in results) and results[0].task.task_id == results[1].task.task_id


def test_proposing_reads_the_docs_so_it_is_closed_in_phase_test(task_env):
    task_env.phase = "test"
    try:
        with pytest.raises(ProtocolError):
            Proposer(task_env, FixedAnswerModel(""))
    finally:
        task_env.phase = "train"


def test_a_transformers_model_proposes_through_the_same_path(task_env, tiny):
    """The tiny random-initialised model: what it writes is noise (parsed or refused), the path is the point."""
    proposer = Proposer(task_env, tiny, ProposerConfig(max_tokens=64, docs_chars=200, example_chars=700))
    [item] = proposer.propose(1)
    assert isinstance(item, (Proposal, Rejected)) and item.functions and item.text


def test_a_build_without_train_tasks_says_how_to_make_them(env7):
    with pytest.raises(ZWCEnvError, match="worked example comes from the env's train tasks.*sebench tasks build"):
        Proposer(env7, FixedAnswerModel(""))


def test_proposals_are_seeded_the_same_seed_proposes_the_same_whatever_the_batch(task_env, tiny):
    """On the tiny random model (noise, rejected at parsing with its text kept): each proposal draws
    from a seed of its own (the proposer's seed, the round, its place), so a rerun proposes the same,
    a proposal does not depend on how many others share its batch, and another seed proposes others."""
    def texts(seed: int, count: int, round: int = 0) -> list[str]:
        config = ProposerConfig(seed=seed, temperature=1.0, max_tokens=64, docs_chars=200)
        proposer = Proposer(task_env, tiny, config)
        assert proposer.seeded
        return [p.text for p in proposer.propose(count, round=round)]

    first = texts(0, 2)
    assert all(first) and first == texts(0, 2)
    assert texts(0, 1) == first[:1]  # alone or beside another: the same draw
    assert texts(1, 2) != first and texts(0, 2, round=1) != first
    assert not Proposer(task_env, FixedAnswerModel("")).seeded  # a backend without seeds is not given any
