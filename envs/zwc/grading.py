"""From a sandbox answer to a Verdict: decode values, compare, classify the failure."""

from __future__ import annotations

import math
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


def grade(task: Task, answer: dict) -> Verdict:
    """Grade one sandbox answer for ``task`` (official records by the official rule)."""
    if answer.get("server_error"):
        return Verdict(passed=False, failure=Failure.SANDBOX_ERROR, detail=answer["server_error"],
                       reason="server_error", seconds=answer.get("seconds", 0.0))
    records = answer.get("records", [])
    seconds = float(answer.get("seconds", 0.0))
    load = next((r for r in records if r.get("event") == "load"), None)
    end = next((r for r in records if r.get("event") == "end"), {})
    violations = (load or {}).get("violations", []) + end.get("violations", [])
    stdout = end.get("stdout", (load or {}).get("stdout", ""))
    if load is not None and not load.get("ok"):
        failure = _CATEGORY_FAILURE.get(load.get("category", "runtime"), Failure.RUNTIME_ERROR)
        if violations:
            failure = Failure.BYPASS_ATTEMPT
        return Verdict(passed=False, failure=failure, detail=f"while loading: {load.get('error', '')}",
                       reason=load.get("category", ""), stdout=stdout, seconds=seconds)
    expected = task.expected_outputs()
    by_index = {r["i"]: r for r in records if r.get("event") == "test"}
    outcomes = []
    for i, want in enumerate(expected):
        record = by_index.get(i)
        if record is None:
            outcomes.append(TestOutcome(passed=False, expected=want, error="did not run"))
        elif not record.get("ok"):
            outcomes.append(TestOutcome(passed=False, expected=want, error=record.get("error", ""),
                                        seconds=record.get("seconds", 0.0)))
        else:
            got = decode(record.get("value"))
            ok = _matches(task, got, record.get("printed", ""), want)
            outcomes.append(TestOutcome(passed=ok, expected=want, got=_jsonable(got),
                                        printed=record.get("printed") or repr(got)[:2000],
                                        seconds=record.get("seconds", 0.0)))
    failure, reason, detail = _failure(answer, load, by_index, outcomes, violations)
    return Verdict(passed=failure is Failure.PASSED, failure=failure, detail=detail, reason=reason,
                   tests=outcomes, stdout=stdout, seconds=seconds)


def _matches(task: Task, got: Any, printed: str, want: str) -> bool:
    if task.is_official:
        return printed_equal(printed, want)
    try:
        expected = parse_printed(want)
    except (ValueError, RecursionError):
        return isinstance(got, str) and got.strip() == want.strip()
    tolerance = {k: v for k, v in (("rel_tol", task.rel_tol), ("abs_tol", task.abs_tol)) if v is not None}
    return values_equal(got, expected, **tolerance)


def _failure(answer: dict, load: dict | None, by_index: dict, outcomes: list[TestOutcome],
             violations: list[str]) -> tuple[Failure, str, str]:
    if violations:
        return Failure.BYPASS_ATTEMPT, "violation", f"blocked at run time: {', '.join(violations[:3])}"
    errors = [r for r in by_index.values() if not r.get("ok")]
    if errors:
        order = list(_CATEGORY_FAILURE)
        first = min(errors, key=lambda r: (order.index(r.get("category", "runtime"))
                                           if r.get("category") in order else len(order), r["i"]))
        category = first.get("category", "runtime")
        return (_CATEGORY_FAILURE.get(category, Failure.RUNTIME_ERROR), category,
                f"test {first['i']}: {first.get('error', '')}")
    killed = answer.get("killed", "")
    if killed == "timeout":
        return Failure.TIMEOUT, "timeout", f"stopped after {answer.get('seconds', 0):.1f}s"
    if killed == "output":
        return Failure.RESOURCE_LIMIT, "output", "sent more output than the sandbox accepts"
    if load is None or len(by_index) < len(outcomes):
        sig = answer.get("signal", 0)
        return Failure.RUNTIME_ERROR, "crashed", f"the candidate process ended early (signal {sig})"
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
