"""Absolute-Zero's three task types over zwc programs, and their executor-verified grading.

A validated proposal (``validate.py``) is a zwc program ``solve`` with test inputs and the
outputs the sandbox gave for them. From it Absolute-Zero (Zhao et al. 2025) makes three
kinds of task for the solver:

- **deduction**: given the program and one input, predict the output. The answer is a
  literal, read with ``envs.zwc.grading.equality.parse_printed`` (``ast.literal_eval`` or a small
  parser: nothing runs) and compared with the recorded output as the grader compares values.
- **abduction**: given the program and one output, give an input that produces it. The answer
  is ``INPUT = dict(name=value, ...)`` with literal values only (read as ``proposal.py`` reads
  INPUTS); the *program* then runs on it in the sandbox (``env.check``) and must return the
  output. Any input that does counts, as in Absolute-Zero.
- **induction**: given the problem text and half of the input/output pairs, write the program.
  It is the SE-Bench episode (``env.observe(..., phase="train", mode="open")``) on a copy of the
  task whose tests are the other, hidden half (Absolute-Zero hides half of the pairs and grades
  on those), graded by ``env.check`` under the grading-integrity rules.

Every path from an answer to a verdict either parses literals in this process or runs in
the sandbox; an answer that cannot be read is a format error (``Graded.formatted`` False).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.prompts import extract_code, first_prompt
from envs.zwc import Failure, Task, TestCase, parse_printed, values_equal
from sebench.errors import SettingError
from selfplay.proposal import ENTRY, _entry, _one_input, _parameters, _Unusable

if TYPE_CHECKING:
    from envs.zwc import ZWCEnv

TASK_TYPES = ("deduction", "abduction", "induction")
INPUT_NAME = "INPUT"
ABDUCTION_RUNS = 2  # runs of the program on an abduction answer; every one must give the output
MAX_ANSWER_CHARS = 4000  # a literal answer longer than any recorded output or input (validator caps those)
SYSTEM = ("You reason about Python programs that use zwc, a Python array library (never numpy). "
          "Answer with a single ```python code block.")
_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class SolverTask:
    """One task for the solver, made from a validated program.

    Attributes:
        kind: deduction | abduction | induction.
        task: the validated program as a Task (reference, inputs, recorded outputs).
        case: the test case shown (deduction: its input; abduction: its output); -1 for induction.
        prompt: the chat prompt the solver answers.
    """

    kind: str
    task: Task
    case: int
    prompt: list[dict[str, str]]


@dataclass(frozen=True)
class Graded:
    """A solver answer's verdict: ``formatted`` False when it could not be read at all; ``fault``
    True when the grader itself failed (``sandbox_error``): no outcome of the solver's."""

    passed: bool
    formatted: bool
    fault: bool = False


def make_task(env: ZWCEnv, kind: str, task: Task, case: int = 0, docs_chars: int | None = 1200) -> SolverTask:
    """The solver task of ``kind`` from the validated program ``task``, showing test case ``case``."""
    if kind not in TASK_TYPES:
        raise SettingError(f"unknown task type {kind!r}; one of {', '.join(TASK_TYPES)}")
    if not task.reference:
        raise ValueError(f"task {task.task_id} has no program (reference) to make a {kind} task of")
    if task.is_official:  # graded against right_exe_result by the official rule: recorded outputs first
        task = with_recorded_outputs(task)
    if kind == "induction":  # AZR's: the first half of the pairs shown, graded on the hidden half only
        given, hidden = split_pairs(task)
        graded = task.model_copy(update={"task_id": f"{task.task_id}-induction", "test_cases": hidden,
                                         "example": given[0]})
        prompt = first_prompt(env.observe(graded, phase="train", mode="open", docs_chars=docs_chars))
        more = "\n".join(f"With {c.input} the result is {c.output}" for c in given[1:])
        if more:
            prompt[-1] = {**prompt[-1], "content": f"{prompt[-1]['content']}\n\nMore examples:\n{more}"}
        return SolverTask(kind, graded, -1, prompt)
    shown = task.test_cases[case % len(task.test_cases)]
    program = f"```python\n{task.reference.strip()}\n```"
    if kind == "deduction":
        ask = (f"What does `{ENTRY}({shown.input})` return? Answer with one ```python block that holds only the "
               "returned value, written as Python prints it (arrays as nested lists), nothing else.")
    else:
        ask = (f"Give arguments for which `{ENTRY}` returns exactly:\n{shown.output}\n\nAnswer with one ```python "
               f"block that holds only `{INPUT_NAME} = dict(name=value, ...)`, a literal value for every "
               f"parameter of `{ENTRY}`.")
    user = f"Program:\n\n{program}\n\n{ask}"
    return SolverTask(kind, task, case % len(task.test_cases),
                      [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}])


def split_pairs(task: Task) -> tuple[list[TestCase], list[TestCase]]:
    """Absolute-Zero's induction split: the first half of the input/output pairs (rounded down, at
    least one) shown, the rest hidden and graded."""
    if len(task.test_cases) < 2:
        raise ValueError(f"task {task.task_id}: induction needs >= 2 input/output pairs (one shown, one hidden), "
                         f"it has {len(task.test_cases)}")
    half = max(1, len(task.test_cases) // 2)
    return list(task.test_cases[:half]), list(task.test_cases[half:])


def with_recorded_outputs(task: Task) -> Task:
    """An official task (graded against ``right_exe_result``) as one whose test cases hold the
    graded truth as outputs, so a single test case can be shown and graded on its own."""
    if not task.is_official:
        return task
    cases = [TestCase(input=c.input, output=o) for c, o in zip(task.test_cases, task.expected_outputs(), strict=True)]
    return task.model_copy(update={"test_cases": cases, "right_exe_result": None, "example": None})


def answer_block(text: str) -> str | None:
    """The first fenced block of an answer (or the whole answer when it has none); None when
    empty or too long to be a literal answer."""
    match = _FENCE.search(text)
    block = (match.group(1) if match else text).strip()
    return block if block and len(block) <= MAX_ANSWER_CHARS else None


def grade_deduction(item: SolverTask, text: str) -> Graded:
    """The predicted value against the recorded output; no code runs."""
    block = answer_block(text)
    if block is None:
        return Graded(False, False)
    expected = item.task.test_cases[item.case].output
    try:
        got = parse_printed(block)
    except Exception:  # noqa: BLE001 - whatever the text does to the parser, it is unreadable, never a crash
        return Graded(False, False)
    try:
        want = parse_printed(expected)
    except (ValueError, RecursionError):
        return Graded(isinstance(got, str) and got.strip() == expected.strip(), True)
    tolerance = {k: v for k, v in (("rel_tol", item.task.rel_tol), ("abs_tol", item.task.abs_tol)) if v is not None}
    try:
        return Graded(values_equal(got, want, **tolerance), True)
    except Exception:  # noqa: BLE001 - values that cannot be compared are not equal
        return Graded(False, True)


def abduction_input(item: SolverTask, text: str) -> str | None:
    """The answer's ``INPUT`` as keyword-argument text for the program's ``solve`` (literal
    values only, every required parameter), or None."""
    block = answer_block(text)
    if block is None:
        return None
    try:
        tree = ast.parse(block)
        entry = _entry(ast.parse(item.task.reference))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(entry, str):
        return None
    names, required = _parameters(entry)
    value = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == INPUT_NAME for t in node.targets):
            value = node.value
        elif isinstance(node, ast.Expr) and value is None and len(tree.body) == 1:
            value = node.value  # a bare dict(...) as the whole answer
    if value is None:
        return None
    try:
        return _one_input(value, names, required)
    except _Unusable:
        return None


def grade_many(env: ZWCEnv, items: list[SolverTask], texts: list[str]) -> list[Graded]:
    """Every answer's verdict; the sandbox runs (abduction, induction) go in one batch."""
    verdicts: list[Graded | None] = [None] * len(items)
    jobs: list[tuple[int, Task, str]] = []
    for i, (item, text) in enumerate(zip(items, texts, strict=True)):
        if item.kind == "deduction":
            verdicts[i] = grade_deduction(item, text)
        elif item.kind == "abduction":
            given = abduction_input(item, text)
            if given is None:
                verdicts[i] = Graded(False, False)
                continue
            want = item.task.test_cases[item.case].output
            probe = item.task.model_copy(update={"task_id": f"{item.task.task_id}-abduction",
                                                 "test_cases": [TestCase(input=given, output=want)],
                                                 "example": None})
            # the program itself runs on the proposed input, twice: a program whose answer on inputs
            # other than its own is random (it passed the validator's determinism check on its own
            # INPUTS only) must not pay its proposer for lucky draws
            jobs += [(i, probe, item.task.reference)] * ABDUCTION_RUNS
        else:
            code = extract_code(text)
            if not code.strip():
                verdicts[i] = Graded(False, False)
                continue
            jobs.append((i, item.task, code))
    if jobs:
        results = env.check_many([(task, code) for _, task, code in jobs])
        passed: dict[int, bool] = {}
        faults: set[int] = set()
        for (i, _, _), verdict in zip(jobs, results, strict=True):
            passed[i] = passed.get(i, True) and verdict.passed
            if verdict.failure is Failure.SANDBOX_ERROR:
                faults.add(i)
        for i, ok in passed.items():
            verdicts[i] = Graded(False, True, fault=True) if i in faults else Graded(ok, True)
    return [v if v is not None else Graded(False, False) for v in verdicts]
