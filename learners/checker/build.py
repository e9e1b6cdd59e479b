"""The learner checker's own small ZWC build, with a canary planted in every test task.

``CheckBuild.create(root)`` writes a fresh obfuscation (package, docs, mapping), a handful of
train tasks (one per function, the first few catalogued functions a seed draws), one
single-function test task per function and a couple of compositions, each verified in the
sandbox. It takes a few seconds, so every check runs on a build no learner has seen before.

The canary (``SEBENCH-CANARY-<hex>``) is written into every field of every test task that
can carry text without changing how the task grades: the task id, the query, the signature
(a trailing comment), the kind, the NumPy source and the ZWC reference (a comment), each test
input (a comment line inside the call the sandbox evaluates) and an extra field on the task
and on each test case. Expected outputs cannot carry it (they are compared as values), so a
learner that copies hidden outputs and nothing else is caught only where those outputs reach
with the task's other text. The references are graded again after planting: a test task that
no longer passes with its own reference is dropped, so the build stays gradable.
"""

from __future__ import annotations

import random
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path

from envs.zwc import Task, ZWCEnv, write_tasks
from envs.zwc.env import build_directory
from envs.zwc.library.catalogue import CATALOGUE
from envs.zwc.library.names import Mapping
from envs.zwc.library.translate import translate_numpy
from envs.zwc.task import TestCase
from envs.zwc.tasks.compose import make_multi
from envs.zwc.tasks.hygiene import Guard
from envs.zwc.tasks.single import make_single, selected_name
from sebench.errors import SebenchError

TEST_SPLITS = ("single_test", "multiple_test")


class CheckBuildError(SebenchError, RuntimeError):
    """The checker could not make a gradable build (a bug in the task generators, not the learner's)."""


def new_canary() -> str:
    return f"SEBENCH-CANARY-{secrets.token_hex(6)}"


def plant(task: Task, canary: str) -> Task:
    """A copy of test ``task`` carrying ``canary`` in every text field that grading ignores."""
    note = f"# {canary}"

    def case(tc: TestCase) -> TestCase:
        # the sandbox evaluates f"__collect__({input})": a comment on its own line inside the call is inert
        return TestCase.model_validate({**tc.model_dump(), "input": f"{tc.input}\n{note}\n", "canary": canary})

    planted = task.model_copy(deep=True)
    planted.task_id = f"{task.task_id}-{canary}"
    planted.query = f"{task.query}\n({canary})"
    planted.function_name = f"{task.function_name}  {note}"
    planted.kind = f"{task.kind} {canary}"
    planted.reference = f"{(task.reference or '').rstrip()}\n{note}\n"
    planted.example_output = [f"{source.rstrip()}\n{note}\n" for source in task.example_output or []]
    planted.test_cases = [case(tc) for tc in task.test_cases]
    planted.example = case(task.example) if task.example is not None else None
    setattr(planted, "canary", canary)  # noqa: B010 - an extra field (the model keeps unknown fields)
    return planted


def _draw_entries(seed: int, count: int) -> list:
    """``count`` catalogued functions of distinct kinds, drawn by ``seed`` (distinct kinds keep the
    tiny build varied); the conversion kind is left out (a constructor alone is not library use)."""
    rng = random.Random(f"check-learner-{seed}")
    pool = [e for e in CATALOGUE if e.kind != "conversion"]
    rng.shuffle(pool)
    chosen, kinds = [], set()
    for entry in pool:
        if entry.kind not in kinds:
            chosen.append(entry)
            kinds.add(entry.kind)
        if len(chosen) == count * 3:  # spares for drafts the generators drop
            break
    return chosen


@dataclass
class CheckBuild:
    """A ZWC build for the checker: ``env`` (a loaded ``ZWCEnv``), the ``canary`` planted in its
    test tasks, and the task ids per split. ``baselines`` caches the no-learner evaluation per
    model and settings, so checks of several learners on one build evaluate the baseline once."""

    root: Path
    env: ZWCEnv
    canary: str
    split_ids: dict[str, list[str]]
    baselines: dict[tuple, object] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, root: str | Path, *, seed: int = 0, functions: int = 4, compositions: int = 2,
               workers: int | None = 2) -> CheckBuild:
        """Write the build into ``root``: ``functions`` train tasks and as many single-function
        test tasks, and ``compositions`` multi-function test tasks."""
        root = Path(root)
        build_directory(Mapping.generate(seed), root)
        env = ZWCEnv.load(root, workers=workers)
        canary = new_canary()
        train, single, multiple = [], [], []
        for entry in _draw_entries(seed, functions):
            if len(train) == functions:
                break
            pair = _single_pair(env, entry, seed, len(train))
            if pair is not None:
                train.append(pair[0])
                single.append(pair[1])
        guard = Guard(train)
        for i in range(compositions * 8):
            if len(multiple) == compositions:
                break
            draft = make_multi(random.Random(f"check-learner-{seed}-multi-{i}"), f"multiple_test-{len(multiple)}",
                               avoid=guard.avoid_for)
            if draft.task is not None and _verified(env, [draft.task]):
                multiple.append(draft.task)
        if len(train) < functions or len(multiple) < compositions:
            raise CheckBuildError(f"only {len(train)} of {functions} functions and {len(multiple)} of "
                                  f"{compositions} compositions gave verified tasks for seed {seed}; try another seed")
        planted = {"single_test": [plant(t, canary) for t in single],
                   "multiple_test": [plant(t, canary) for t in multiple]}
        for split, tasks in planted.items():
            if not _verified(env, tasks):
                raise CheckBuildError(f"a {split} task no longer passes with its reference once the canary is "
                                      "planted: the planting changed how it grades")
        write_tasks(train, root / "train.jsonl")
        for split, tasks in planted.items():
            write_tasks(tasks, root / f"{split}.jsonl")
        ids = {"train": [t.task_id for t in train], **{s: [t.task_id for t in ts] for s, ts in planted.items()}}
        return cls(root=root, env=env, canary=canary, split_ids=ids)

    def split_of(self, task_id: str) -> str | None:
        return next((split for split, ids in self.split_ids.items() if task_id in ids), None)

    def test_tasks(self) -> list[Task]:
        return [t for split in TEST_SPLITS for t in self.env.tasks(split)]

    def functions(self) -> list[str]:
        """The NumPy paths of the functions the build's tasks name (the probe asks about these)."""
        names = {f for split in ("train", *TEST_SPLITS) for t in self.env.tasks(split) for f in t.selected_functions}
        return sorted(e.numpy for e in self.env.mapping if selected_name_of(e.numpy) in names)

    def close(self) -> None:
        self.env.close()


def selected_name_of(numpy_path: str) -> str:
    return numpy_path[len("numpy."):]


def _single_pair(env: ZWCEnv, entry, seed: int, index: int) -> tuple[Task, Task] | None:
    """A verified train task for ``entry`` and a verified test task on other inputs, or None."""
    train = make_single(entry, random.Random(f"check-learner-{seed}-{entry.numpy}"), f"train-{index}", "train")
    if train.task is None or not _verified(env, [train.task]):
        return None
    avoid = Guard([train.task]).avoid_for([selected_name(entry)])
    test = make_single(entry, random.Random(f"check-learner-{seed}-{entry.numpy}-test"), f"single_test-{index}",
                       "single_test", avoid)
    if test.task is None or not _verified(env, [test.task]):
        return None
    return train.task, test.task


def _verified(env: ZWCEnv, tasks: list[Task]) -> bool:
    """Give each task its ZWC reference (translated from the NumPy source, if it has none yet)
    and say whether every one passes in the sandbox."""
    for task in tasks:
        if not task.reference:
            task.reference = translate_numpy(task.example_output[0], env.mapping)
    return all(v.passed for v in env.check_many([(t, t.reference) for t in tasks]))
