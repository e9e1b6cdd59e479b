"""From a sandbox answer to a Verdict: decode values, compare, verify usage, classify.

A pass needs, besides right values: the sandbox's last record ("end": nothing after the
tests crashed or was cut), no violation anywhere (even one the candidate caught), no
change to state shared between tests, no output overflow, and, in every test, a
catalogued zwc function that ran during that test's computation (counted by the zwc
runtime). Array constructors (the "conversion" kind: ``zwc.<array>(x)``) do not count
unless the task names them: wrapping plain-Python results is not using the library.
With ``UsageRule.strict``, a single-function task must run its own function in every test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envs.zwc.checks import Rejection
from envs.zwc.equality import parse_printed, printed_equal, values_equal
from envs.zwc.task import Task
from envs.zwc.verdict import Failure, TestOutcome, Verdict

# a test's error category -> failure class, in precedence order
_CATEGORY_FAILURE = {
    "violation": Failure.BYPASS_ATTEMPT,
    "syntax": Failure.SYNTAX_ERROR,
    "unknown_api": Failure.UNKNOWN_API,
    "zwc": Failure.WRONG_ARGUMENTS,
    "memory": Failure.RESOURCE_LIMIT,
    "output": Failure.RESOURCE_LIMIT,
    "runtime": Failure.RUNTIME_ERROR,
}


@dataclass(frozen=True)
class UsageRule:
    """How run-time zwc calls are judged for one task.

    Args:
        names: the name each catalogued function is counted under (its last path part) ->
            its zwc path.
        constructors: counted names that do not show use of the library on their own.
        targets: counted names of the functions the task itself names.
        strict: a single-function task must run its own function in every test.
        required: False in the NumPy control (nothing of zwc is expected to run).
    """

    names: Mapping[str, str]
    constructors: frozenset[str] = frozenset()
    targets: frozenset[str] = frozenset()
    strict: bool = False
    required: bool = True

    def ran(self, record: dict) -> set[str]:
        calls = record.get("calls") or {}
        return {name for name, count in calls.items() if name in self.names and count}

    def problem(self, ran: set[str]) -> str:
        """Why one test's calls do not count as using zwc ('' when they do)."""
        if not self.required:
            return ""
        if self.strict and len(self.targets) == 1 and not self.targets <= ran:
            [target] = self.targets
            return f"the task's function {self.names[target]} did not run (--usage strict)"
        if any(name not in self.constructors or name in self.targets for name in ran):
            return ""
        if ran:
            return f"only array constructors ran ({', '.join(sorted(self.names[n] for n in ran))})"
        return "no zwc function ran"


def decode(value: Any) -> Any:
    """Undo ``sandbox_child.encode``: tuples, complex numbers, non-finite floats."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "$tuple" in value:
            return tuple(decode(v) for v in value["$tuple"])
        if "$complex" in value:
            return complex(*value["$complex"])
        if "$float" in value:
            return float(value["$float"])
        if "$dict" in value:
            return {_hashable(decode(k)): decode(v) for k, v in value["$dict"]}
        if "$repr" in value:
            return value["$repr"]
    return value


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def rejected(rejection: Rejection) -> Verdict:
    return Verdict(passed=False, failure=rejection.failure, detail=str(rejection),
                   reason=rejection.reason.value)


def grade(task: Task, answer: dict, usage: UsageRule) -> Verdict:
    """Grade one sandbox answer for ``task`` (official records by the official rule);
    ``usage`` judges the zwc calls each test made."""
    if answer.get("server_error"):
        return Verdict(passed=False, failure=Failure.SANDBOX_ERROR, detail=answer["server_error"],
                       reason="server_error", seconds=answer.get("seconds", 0.0))
    records = answer.get("records", [])
    seconds = float(answer.get("seconds", 0.0))
    load = next((r for r in records if r.get("event") == "load"), None)
    end = next((r for r in records if r.get("event") == "end"), None)
    tests = [r for r in records if r.get("event") == "test"]
    violations = [v for r in (load or {}, *tests, end or {}) for v in r.get("violations", [])]
    stdout = (end or load or {}).get("stdout", "")
    if load is not None and not load.get("ok"):
        failure = _CATEGORY_FAILURE.get(load.get("category", "runtime"), Failure.RUNTIME_ERROR)
        if violations:
            failure = Failure.BYPASS_ATTEMPT
        elif load.get("output_exceeded"):
            failure = Failure.RESOURCE_LIMIT
        return Verdict(passed=False, failure=failure, detail=f"while loading: {load.get('error', '')}",
                       reason=load.get("category", ""), stdout=stdout, seconds=seconds)
    expected = task.expected_outputs()
    by_index = {r["i"]: r for r in tests}
    outcomes, ran_all = [], set()
    for i, want in enumerate(expected):
        record = by_index.get(i)
        if record is None:
            outcomes.append(TestOutcome(passed=False, expected=want, error="did not run"))
            continue
        ran = usage.ran(record)
        ran_all |= ran
        calls = sorted(usage.names[n] for n in ran)
        if not record.get("ok"):
            outcomes.append(TestOutcome(passed=False, expected=want, error=record.get("error", ""),
                                        seconds=record.get("seconds", 0.0), zwc_calls=calls))
        else:
            got = decode(record.get("value"))
            ok = _matches(task, got, record.get("printed", ""), want)
            outcomes.append(TestOutcome(passed=ok, expected=want, got=_jsonable(got),
                                        printed=record.get("printed") or repr(got)[:2000],
                                        seconds=record.get("seconds", 0.0), zwc_calls=calls))
    failure, reason, detail = _failure(answer, load, end, by_index, outcomes, violations, usage)
    target_used = usage.targets <= ran_all if usage.required and usage.targets else None
    return Verdict(passed=failure is Failure.PASSED, failure=failure, detail=detail, reason=reason,
                   tests=outcomes, stdout=stdout, seconds=seconds,
                   zwc_calls=sorted(usage.names[n] for n in ran_all), target_used=target_used)


def _matches(task: Task, got: Any, printed: str, want: str) -> bool:
    if task.is_official:
        return printed_equal(printed, want)
    try:
        expected = parse_printed(want)
    except (ValueError, RecursionError):
        return isinstance(got, str) and got.strip() == want.strip()
    tolerance = {k: v for k, v in (("rel_tol", task.rel_tol), ("abs_tol", task.abs_tol)) if v is not None}
    return values_equal(got, expected, **tolerance)


def _failure(answer: dict, load: dict | None, end: dict | None, by_index: dict, outcomes: list[TestOutcome],
             violations: list[str], usage: UsageRule) -> tuple[Failure, str, str]:
    if violations:
        return Failure.BYPASS_ATTEMPT, "violation", f"blocked at run time: {', '.join(violations[:3])}"
    if end is not None and end.get("state_changes"):
        return (Failure.BYPASS_ATTEMPT, "shared_state",
                f"changed state shared between tests: {', '.join(end['state_changes'][:3])}")
    killed = answer.get("killed", "")
    if killed == "syscall":
        return Failure.BYPASS_ATTEMPT, "syscall", "made a system call the sandbox forbids"
    errors = [r for r in by_index.values() if not r.get("ok")]
    if errors:
        order = list(_CATEGORY_FAILURE)
        first = min(errors, key=lambda r: (order.index(r.get("category", "runtime"))
                                           if r.get("category") in order else len(order), r["i"]))
        category = first.get("category", "runtime")
        return (_CATEGORY_FAILURE.get(category, Failure.RUNTIME_ERROR), category,
                f"test {first['i']}: {first.get('error', '')}")
    if killed == "timeout":
        return Failure.TIMEOUT, "timeout", f"stopped after {answer.get('seconds', 0):.1f}s"
    if killed == "output" or any(r.get("output_exceeded") for r in (*by_index.values(), end or {})):
        return Failure.RESOURCE_LIMIT, "output", "printed or sent more output than the sandbox accepts"
    if load is None or end is None or len(by_index) < len(outcomes):
        sig = answer.get("signal", 0)
        return Failure.RUNTIME_ERROR, "crashed", f"the candidate process ended early (signal {sig})"
    for i in sorted(by_index):
        problem = usage.problem(usage.ran(by_index[i]))
        if problem:
            return Failure.NO_ZWC_CALL, "no_zwc_call", f"test {i}: {problem}"
    if all(o.passed for o in outcomes):
        return Failure.PASSED, "", ""
    wrong = next(i for i, o in enumerate(outcomes) if not o.passed)
    return (Failure.WRONG_ANSWER, "wrong_answer",
            f"test {wrong}: expected {outcomes[wrong].expected[:200]}, got {outcomes[wrong].printed[:200]}")


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, complex):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value
