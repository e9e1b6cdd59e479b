"""Split hygiene: a test task must not be a train task in other clothes.

A memory learner stores train tasks and retrieves the nearest one at test time. That is
learning when it brings back how the library works, and leakage when it brings back the test
answer itself: the same query (retrieve the trajectory, copy the code) or the same input
(retrieve the expected output). So between train and each test split, for every function a
test task needs:

- *verbatim queries*: no test query equals any train query once case, spacing and numbers
  are normalised (``normalise_query``);
- *near-duplicate queries*: no test/train pair of one function with a cosine of the sentence
  embedder at or above ``NEAR_DUPLICATE`` (the embedder is injected: ``envs`` imports nothing
  of ours outside ``envs``; without one this check is recorded as not run);
- *shared inputs*: no test case whose argument *values* (names, spelling, ``np.array`` and
  int/float aside) equal a test case of a train task of one of its functions (``input_key``).

"One function" counts aliases as one (``abs``/``absolute``, ``pow``/``power``: the same NumPy
object), since a train task of one is the test task of the other.

The build avoids these by construction (disjoint phrasings per split, train inputs excluded
from the test draws, see build.py) and ``audit`` counts what remains, for the build report.
"""

from __future__ import annotations

import ast
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from envs.zwc.errors import TaskFormatError
from envs.zwc.library.catalogue import CATALOGUE
from envs.zwc.task import Task
from envs.zwc.tasks.inputs import numpy_callable

# Cosine (MiniLM-L6-v2, the memory's embedder) at or above which a test and a train query of
# one function are near-duplicates. Measured on the seed-0 build (docs/results/tasks.md): with the
# old single phrasing pool, the 180 same-function pairs that differed only in their closing
# sentence (everything else word for word) scored 0.908-0.996, so 0.90 catches every one; a
# train and a test query in their own styles score 0.50-0.88 (median 0.70, 99th pct 0.85).
# Pairs that differed only in the opening scene scored down to 0.75, which no threshold can
# separate from honest rewording: the disjoint styles rule those out by construction instead.
NEAR_DUPLICATE = 0.90
Embed = Callable[[Sequence[str]], "np.ndarray"]

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE)


def normalise_query(text: str) -> str:
    """The query with case, spacing and numbers normalised: what 'verbatim' compares."""
    text = _NUMBER.sub("#", text.lower())
    return " ".join(text.split())


class InputError(TaskFormatError):
    """A test input that is not keyword-argument literal text (lists, numbers, ``np.array``,
    ``float('nan')``): its values cannot be compared with train's."""


_CONSTANTS = {"np.inf": math.inf, "np.nan": math.nan, "np.pi": math.pi, "np.e": math.e,
              "numpy.inf": math.inf, "numpy.nan": math.nan, "numpy.pi": math.pi, "numpy.e": math.e}
_LITERALS = "write inputs as literals: numbers, lists, tuples, strings, np.array([...]), float('nan')"


def _value(node: ast.AST):
    """The canonical value of a literal input node: arrays as lists, numbers as floats."""
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name in ("float", "int", "complex") and len(node.args) == 1 and not node.keywords:
            try:  # float('nan'), float('-inf'), int(3)
                inner = ast.literal_eval(node.args[0])
                return _number({"float": float, "int": int, "complex": complex}[name](inner))
            except (ValueError, TypeError):
                raise InputError(f"{ast.unparse(node)} in a test input is not a number") from None
        if name in ("np.array", "numpy.array", "np.asarray", "array") and node.args:
            return _value(node.args[0])
        raise InputError(f"unsupported call {name}() in a test input; {_LITERALS}")
    if isinstance(node, ast.List | ast.Tuple):
        return ("seq", *(_value(e) for e in node.elts))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand)
        if isinstance(node.op, ast.UAdd) or inner == "nan":
            return inner
        if isinstance(inner, float):
            return -inner
        if isinstance(inner, tuple) and inner[0] == "complex":
            return ("complex", *(p if p == "nan" else -p for p in inner[1:]))
        raise InputError(f"a sign applied to a non-number in a test input: {ast.unparse(node)!r}")
    if isinstance(node, ast.BinOp):  # 1+2j
        try:
            return _number(ast.literal_eval(node))
        except (ValueError, TypeError, SyntaxError):
            raise InputError(f"unsupported expression {ast.unparse(node)!r} in a test input; {_LITERALS}") from None
    if isinstance(node, ast.Attribute) and ast.unparse(node) in _CONSTANTS:
        return _number(_CONSTANTS[ast.unparse(node)])
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool | str) or node.value is None:  # True must not equal 1.0
            return (type(node.value).__name__, node.value)
        return _number(node.value)
    raise InputError(f"unsupported expression {ast.unparse(node)!r} in a test input; {_LITERALS}")


def _number(value):
    """Ints and floats of one value compare equal (2 and 2.0, 3+0j); nan equals nan."""
    if isinstance(value, bool) or not isinstance(value, int | float | complex):
        raise InputError(f"{value!r} in a test input is not a number")
    if isinstance(value, complex):
        return ("complex", _number(value.real), _number(value.imag)) if value.imag else _number(value.real)
    value = float(value)
    return "nan" if math.isnan(value) else value


def input_key(text: str) -> tuple:
    """The values of a test input, in order, without their names: what 'shared' compares."""
    try:
        call = ast.parse(f"f({text})", mode="eval").body
    except SyntaxError as exc:
        raise InputError(f"test input {text[:80]!r} is not keyword-argument text: {exc.msg}") from None
    return (*(_value(a) for a in call.args), *(_value(k.value) for k in call.keywords))


def _case_keys(task: Task) -> list[tuple]:
    keys = []
    for i, case in enumerate(task.test_cases):
        try:
            keys.append(input_key(case.input))
        except InputError as exc:
            raise InputError(f"task {task.task_id}: {exc}", field=f"test_cases[{i}].input") from None
    return keys


def task_input_keys(task: Task) -> set[tuple]:
    """The input keys of a task's test cases (an ``InputError`` names the task and case)."""
    return set(_case_keys(task))


@dataclass
class SplitHygiene:
    """What a test split shares with train. Pairs are (test task, train task) of one function."""

    verbatim_pairs: int = 0
    near_duplicate_pairs: int | None = None  # None: no embedder, the check did not run
    shared_inputs: int = 0  # test cases whose values equal a train test case of one of its functions
    tasks_sharing_inputs: int = 0
    max_cosine: float | None = None  # the highest test/train cosine among pairs of one function
    regenerated: int = 0  # test drafts redrawn because their query was too close to a train query
    offenders: list[str] = field(default_factory=list)  # test task ids, for a failing report


def _alias_groups() -> dict[str, str]:
    """Selected name -> its group's first name; names of one NumPy object share a group."""
    first: dict[int, str] = {}
    groups = {}
    for entry in CATALOGUE:
        name = entry.numpy[len("numpy."):]
        groups[name] = first.setdefault(id(numpy_callable(entry)), name)
    return groups


ALIASES = _alias_groups()


def function_group(name: str) -> str:
    """The hygiene unit of a selected function: its alias group (itself when uncatalogued)."""
    return ALIASES.get(name, name)


def _groups(task: Task) -> list[str]:
    return list(dict.fromkeys(function_group(f) for f in task.selected_functions))


def train_index(train: Iterable[Task]) -> dict[str, list[Task]]:
    """Function group -> the train tasks of that group."""
    by_group: dict[str, list[Task]] = defaultdict(list)
    for task in train:
        for group in _groups(task):
            by_group[group].append(task)
    return by_group


def avoided_inputs(train: Iterable[Task]) -> dict[str, frozenset[tuple]]:
    """Function group -> the input keys its train tasks use: what a test task must not draw."""
    return {group: frozenset(k for t in tasks for k in task_input_keys(t))
            for group, tasks in train_index(train).items()}


def pairs(train: Iterable[Task], tests: Iterable[Task]) -> list[tuple[Task, Task]]:
    """(test, train) pairs that share a function group: the pairs hygiene is about."""
    index = train_index(train)
    return [(test, twin) for test in tests for g in _groups(test) for twin in index[g]]


def cosines(embed: Embed, texts_a: Sequence[str], texts_b: Sequence[str]) -> np.ndarray:
    """Row-wise cosine of ``texts_a[i]`` and ``texts_b[i]``; each distinct text embedded once, in order."""
    unique = list(dict.fromkeys([*texts_a, *texts_b]))
    if not unique:
        return np.zeros(0)
    vectors = np.asarray(embed(unique), dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    row = {t: i for i, t in enumerate(unique)}
    a = vectors[[row[t] for t in texts_a]]
    b = vectors[[row[t] for t in texts_b]]
    return np.einsum("ij,ij->i", a, b)


def audit(train: Sequence[Task], tests: Sequence[Task], embed: Embed | None = None,
          threshold: float = NEAR_DUPLICATE) -> SplitHygiene:
    """Count verbatim and near-duplicate query pairs and shared inputs between ``tests`` and ``train``."""
    report = SplitHygiene()
    offenders: set[str] = set()
    written: dict[str, int] = defaultdict(int)
    for twin in train:
        written[normalise_query(twin.query)] += 1
    for test in tests:
        same = written.get(normalise_query(test.query), 0)
        report.verbatim_pairs += same
        if same:
            offenders.add(test.task_id)
    avoided = avoided_inputs(train)
    for test in tests:
        seen = frozenset().union(*(avoided.get(g, frozenset()) for g in _groups(test)))
        shared = sum(key in seen for key in _case_keys(test))
        report.shared_inputs += shared
        if shared:
            report.tasks_sharing_inputs += 1
            offenders.add(test.task_id)
    if embed is not None:
        both = pairs(train, tests)
        values = cosines(embed, [t.query for t, _ in both], [w.query for _, w in both])
        close = values >= threshold
        report.near_duplicate_pairs = int(close.sum())
        report.max_cosine = round(float(values.max()), 3) if len(values) else None
        offenders |= {both[i][0].task_id for i in np.flatnonzero(close)}
    report.offenders = sorted(offenders)
    return report


class EmbeddingCache:
    """An ``Embed`` that embeds each distinct text once (in first-seen order, so a build is
    reproducible) and answers repeats from memory: the build's guard and its report share it."""

    def __init__(self, embed: Embed):
        self.embed = embed
        self.vectors: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if new:
            vectors = np.asarray(self.embed(new), dtype=np.float64)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            self.vectors.update(zip(new, vectors, strict=True))
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, 1))


class Guard:
    """What a test draft must keep clear of, built from the kept train tasks: their inputs per
    function group (``avoid``, used while drawing) and their queries (``too_close``, checked
    on finished drafts, which the build then redraws)."""

    def __init__(self, train: Sequence[Task], embed: Embed | None = None, threshold: float = NEAR_DUPLICATE):
        self.avoid = avoided_inputs(train)
        self.index = train_index(train)
        self.written = {normalise_query(t.query) for t in train}
        self.embed = EmbeddingCache(embed) if embed is not None and not isinstance(embed, EmbeddingCache) else embed
        self.threshold = threshold

    def avoid_for(self, functions: Iterable[str]) -> frozenset[tuple]:
        groups = dict.fromkeys(function_group(f) for f in functions)
        return frozenset().union(*(self.avoid.get(g, frozenset()) for g in groups))

    def too_close(self, tasks: Sequence[Task]) -> set[int]:
        """Positions in ``tasks`` whose query is verbatim a train query or a near-duplicate of one."""
        close = {i for i, t in enumerate(tasks) if normalise_query(t.query) in self.written}
        if self.embed is not None:
            both = [(i, twin) for i, t in enumerate(tasks) for g in _groups(t) for twin in self.index[g]]
            values = cosines(self.embed, [tasks[i].query for i, _ in both], [w.query for _, w in both])
            close |= {both[j][0] for j in np.flatnonzero(values >= self.threshold)}
        return close
