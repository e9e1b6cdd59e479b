"""The teacher proposer (``--proposer-model reference``): it re-proposes the train tasks it is given,
in the proposal format, through the parser and validator every proposal goes through; never a test
task. And ``make_proposer``, which picks it or a model-backed ``Proposer`` limited to the same tasks."""

import pytest

from selfplay.proposal import Proposal
from selfplay.proposer import Proposer
from selfplay.teacher import TeacherProposer, make_proposer
from selfplay.validate import Accepted, Validator
from tests.agents.fixed_answer import FixedAnswerModel


def test_the_teacher_reproposes_its_train_tasks_and_they_validate(task_env):
    train = task_env.tasks("train")[:4]
    teacher = TeacherProposer(task_env, train)
    items = teacher.propose(4, round=0)
    assert items == teacher.propose(4, round=0)  # deterministic per seed and round
    assert all(isinstance(p, Proposal) for p in items)
    assert {p.problem for p in items} == {t.query.strip() for t in train}  # four functions, each drawn once
    for item in items:
        [function] = item.functions
        source = next(t for t in train if t.query.strip() == item.problem)
        assert task_env.function_paths(source) == [function]
    results = Validator(task_env).validate_many(items)
    accepted = [r for r in results if isinstance(r, Accepted)]
    assert len(accepted) >= 3, [str(r) for r in results if not isinstance(r, Accepted)]
    assert all(r.task.split == "selfplay" and r.task.task_id.startswith("sp-") for r in accepted)
    more = teacher.propose(6, round=1)  # more proposals than tasks: every function, then again
    assert len(more) == 6 and {p.problem for p in more} == {t.query.strip() for t in train}


def test_the_teacher_never_takes_test_tasks(task_env):
    with pytest.raises(ValueError, match="re-proposes train tasks only; given 2 test tasks"):
        TeacherProposer(task_env, task_env.tasks("single_test")[:2])


def test_make_proposer_picks_the_teacher_by_name_and_limits_a_model_to_the_same_tasks(task_env):
    train = task_env.tasks("train")[:3]
    assert isinstance(make_proposer(task_env, "reference", tasks=train), TeacherProposer)
    proposer = make_proposer(task_env, FixedAnswerModel(""), tasks=train)
    assert isinstance(proposer, Proposer)
    used = {p for t in train for p in task_env.function_paths(t)}
    assert set(proposer.functions) == used  # functions are drawn among the given tasks' only
    assert {t.task_id for t, _ in proposer.examples} <= {t.task_id for t in train}
    assert all(set(r.functions) <= used for r in proposer.requests(5))
    assert len(Proposer(task_env, FixedAnswerModel("")).functions) > len(used)  # unlimited: every documented one
