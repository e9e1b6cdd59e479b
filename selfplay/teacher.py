"""The teacher proposer (``--proposer-model reference``), and ``make_proposer`` for any backend.

``TeacherProposer`` is a teacher that re-proposes known train tasks: it tests the loop, it is
not self-play. Asked for a task about a sampled function, it answers with ``render_task`` of a
train task that uses that function (the task's own query, ZWC reference and inputs, in the
proposal format), and that answer goes through ``parse_proposal`` and the validator like any
model's. It exists because a self-play loop needs proposals that parse to be tested at all,
and the small embedded models cannot keep the proposal format (smollm2-135m: 0/8 kept).

What it proposes is a task the build already has, so a learner trained on its proposals
learns the train split again (as Closed-SFT with the ``reference`` gatherer does): use it to
test a loop, or as a labelled teacher baseline, never as a measurement of self-play. It is
the proposer-side twin of the ``reference`` model (``agents.models.reference``), which
answers a task with its verified solution.

It sees only the train tasks it is given (a learner's first ``limit``), never a test split:
a task whose split is a test split is refused.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from agents.models import Model
from envs.zwc import Task, ZWCEnv
from sebench.errors import DataError, SettingError
from selfplay.proposal import Proposal, parse_proposal, render_task
from selfplay.proposer import ProposalRequest, Proposer, ProposerConfig, proposal_prompt, with_prompt
from selfplay.reasons import Rejected

TEACHER = "reference"  # the --proposer-model name that picks the teacher
TEST_SPLITS = ("single_test", "multiple_test")


class TeacherProposer:
    """Re-proposes the given train tasks, one sampled function at a time (see the module docstring:
    it tests a self-play loop, it is not self-play).

    Args:
        env: the environment (the zwc paths each task uses).
        tasks: the train tasks it may re-propose (default: the whole train split).
        config: only ``seed`` is used (the sampling of functions and tasks, per round).
    """

    name = TEACHER

    def __init__(self, env: ZWCEnv, tasks: Sequence[Task] | None = None, config: ProposerConfig | None = None):
        self.env = env
        self.config = config or ProposerConfig()
        tasks = list(env.tasks("train") if tasks is None else tasks)
        leaked = [t.task_id for t in tasks if t.split in TEST_SPLITS]
        if leaked:
            raise SettingError(f"the teacher re-proposes train tasks only; given {len(leaked)} test tasks "
                             f"({', '.join(leaked[:3])}); pass env.tasks('train')[:limit]")
        self.by_function: dict[str, list[tuple[Task, str]]] = {}
        for task in tasks:
            paths = env.function_paths(task)  # every given task is looked at, usable or not
            rendered = _rendered(task)
            if rendered is None:
                continue
            for path in paths:
                self.by_function.setdefault(path, []).append((task, rendered))
        if not self.by_function:
            raise DataError(f"{env.root}: none of the {len(tasks)} train tasks given renders as a proposal (each "
                             "needs a ZWC reference defining solve and enough literal inputs); rebuild the tasks "
                             f"with `sebench tasks build --zwc {env.root}` or give more of them (limit)")
        self.functions = sorted(self.by_function)

    def requests(self, count: int, references: Sequence[Task] = (), round: int = 0) -> list[ProposalRequest]:
        """``count`` requests, each for one sampled function and the train task that will answer
        it (``example``). Functions are drawn without repeats until each has been drawn, so a
        round of ``count <= len(functions)`` proposals covers distinct functions. ``references``
        are ignored: the teacher only knows its train tasks. Deterministic per seed and round."""
        if count < 0:
            raise SettingError(f"count ({count}) must be >= 0")
        rng = random.Random(f"{self.config.seed}-teacher-{round}")
        order: list[str] = []
        while len(order) < count:
            order += rng.sample(self.functions, len(self.functions))
        requests = []
        for function in order[:count]:
            task, _ = rng.choice(self.by_function[function])
            # the prompt a model would be asked with (a worked example of another task where there is one):
            # what the proposer role of SFT self-play trains after
            shown = next((text for f, pairs in self.by_function.items() if f != function for t, text in pairs
                          if t.task_id != task.task_id), self.by_function[function][0][1])
            requests.append(ProposalRequest(prompt=proposal_prompt(self.env, self.config, (function,), shown),
                                            functions=(function,), example=task.task_id))
        return requests

    def answer(self, request: ProposalRequest) -> str:
        """The teacher's answer: the requested train task, rendered in the proposal format."""
        return next(text for task, text in self.by_function[request.functions[0]] if task.task_id == request.example)

    def propose(self, count: int, references: Sequence[Task] = (), round: int = 0) -> list[Proposal | Rejected]:
        """``count`` proposals, parsed as a model's answers are."""
        return [with_prompt(parse_proposal(self.answer(r), functions=r.functions), r.prompt)
                for r in self.requests(count, references, round)]


def _rendered(task: Task) -> str | None:
    """``task`` in the proposal format, when it renders and parses back."""
    try:
        text = render_task(task)
    except (ValueError, SyntaxError):
        return None
    return text if isinstance(parse_proposal(text), Proposal) else None


def make_proposer(env: ZWCEnv, model: Model | str, *, tasks: Sequence[Task] | None = None,
                  config: ProposerConfig | None = None) -> Proposer | TeacherProposer:
    """The proposer for ``model``: ``"reference"`` gives the ``TeacherProposer``; any other name
    or backend a ``Proposer`` that prompts it. ``tasks``: the train tasks either may use."""
    if isinstance(model, str) and model == TEACHER:
        return TeacherProposer(env, tasks, config)
    return Proposer(env, model, config, tasks=tasks)
