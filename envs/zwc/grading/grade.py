"""From a sandbox answer to a Verdict: decode values, compare, verify usage, classify.

A record the harness could not have written (a field of the wrong type, a value that
does not decode) fails the candidate as ``bypass_attempt`` before anything else reads it: only
the candidate's own process writes to its result pipe, so nothing there can fail the grader.

A pass needs, besides right values: the sandbox's last record ("end": nothing after the
tests crashed or was cut), no violation anywhere (even one the candidate caught), no
change to state shared between tests, no output overflow, and zwc used as ``usage.py``
judges it. Which zwc functions ran comes from the library process's log (the ``library``
part of the answer), never from the candidate's own records: a record for a test the
library never began, a request the library refused as out of protocol, or more than
``MAX_GUESSES`` unknown names asked of the library fail as ``bypass_attempt``.
"""

from __future__ import annotations

import math
from typing import Any

from envs.zwc.grading.checks import Rejection
from envs.zwc.grading.equality import parse_printed, printed_equal, values_equal
from envs.zwc.grading.usage import ReferenceUsage, UsageRule
from envs.zwc.grading.verdict import Failure, TestOutcome, Verdict
from envs.zwc.task import Task

__all__ = ["MAX_GUESSES", "ReferenceUsage", "UsageRule", "decode", "grade", "library_tests", "rejected"]
MAX_GUESSES = 3  # distinct unknown zwc names a candidate may ask for before it counts as guessing

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
    """Undo ``child.encode``: tuples, complex numbers, non-finite floats."""
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


def library_tests(answer: dict) -> tuple[dict[int, dict], dict]:
    """The library's per-test log ({i: {"calls", "prints"}}) and its summary (``end``, anomalies,
    how the library child ended); ``({}, {})`` for an answer of the NumPy control."""
    library = answer.get("library")
    if library is None:
        return {}, {}
    records = library.get("records", [])
    tests = {r["i"]: r for r in records if r.get("event") == "test" and type(r.get("i")) is int}
    end = next((r for r in records if r.get("event") == "end"), None)
    summary = {"end": end, "anomalies": [r.get("what", "") for r in records if r.get("event") == "anomaly"],
               "killed": library.get("killed", ""), "server_error": library.get("server_error", ""),
               "unknown": (end or {}).get("unknown", [])}
    return tests, summary


def grade(task: Task, answer: dict, usage: UsageRule) -> Verdict:
    """Grade one sandbox answer for ``task`` (official records by the official rule);
    ``usage`` judges the zwc calls the library logged for each test."""
    library, summary = library_tests(answer)
    error = answer.get("server_error") or summary.get("server_error")
    if error:
        return Verdict(passed=False, failure=Failure.SANDBOX_ERROR, detail=error,
                       reason="server_error", seconds=answer.get("seconds", 0.0))
    records = answer.get("records", [])
    malformed = _malformed(records)
    if malformed:  # the harness never writes such a record: the candidate wrote to its own pipe
        return Verdict(passed=False, failure=Failure.BYPASS_ATTEMPT, detail=f"wrote records the harness never "
                       f"writes: {malformed}", reason="malformed_record", seconds=answer.get("seconds", 0.0))
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
    by_index = {r["i"]: r for r in tests if type(r.get("i")) is int}
    calls_of = library if "library" in answer else by_index  # the NumPy control counts in-process
    outcomes, ran_all = [], set()
    for i, want in enumerate(expected):
        record = by_index.get(i)
        if record is None:
            outcomes.append(TestOutcome(passed=False, expected=want, error="did not run"))
            continue
        ran = usage.ran(calls_of.get(i, {}))
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
    failure, reason, detail = _failure(answer, load, end, by_index, outcomes, violations, usage,
                                       calls_of, summary)
    used = usage.used(calls_of, len(expected)) if usage.required and usage.targets else {}
    return Verdict(passed=failure is Failure.PASSED, failure=failure, detail=detail, reason=reason,
                   tests=outcomes, stdout=stdout, seconds=seconds,
                   zwc_calls=sorted(usage.names[n] for n in ran_all),
                   target_used=all(used.values()) if used else None, targets_used=used)


_TYPES = {"event": (str,), "category": (str,), "error": (str,), "printed": (str,), "stdout": (str,),
          "ok": (bool,), "output_exceeded": (bool,), "i": (int,), "seconds": (int, float)}


def _malformed(records: list) -> str:
    """What in the candidate's records the harness (``child``) could not have written,
    so that grading them cannot fail ("" when nothing). The server already dropped every line
    from the first that is not a JSON object, or is nested too deep (``child_process``)."""
    for record in records:
        if type(record) is not dict:
            return "a record that is not an object"
        for key, value in record.items():
            if key in _TYPES and type(value) not in _TYPES[key]:
                return f"a record whose {key!r} is a {type(value).__name__}"
            if key in ("violations", "state_changes") and not (
                    type(value) is list and all(type(v) is str for v in value)):
                return f"a record whose {key!r} is not a list of texts"
            if key == "calls" and not (type(value) is dict and all(
                    type(n) is str and type(c) is int for n, c in value.items())):
                return "a record whose 'calls' is not a count per name"
        if "value" in record:
            try:
                decode(record["value"])
            except (TypeError, ValueError, KeyError, AttributeError, RecursionError, OverflowError):
                return "a value that cannot be read back"
    return ""


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
             violations: list[str], usage: UsageRule, calls_of: dict, summary: dict) -> tuple[Failure, str, str]:
    if violations:
        return Failure.BYPASS_ATTEMPT, "violation", f"blocked at run time: {', '.join(violations[:3])}"
    if summary.get("anomalies"):
        return (Failure.BYPASS_ATTEMPT, "library_protocol",
                f"sent the library requests outside its protocol: {'; '.join(summary['anomalies'][:3])}")
    if len(summary.get("unknown", [])) > MAX_GUESSES:
        return (Failure.BYPASS_ATTEMPT, "guessing_names",
                f"asked the library for {len(summary['unknown'])} names that do not exist: "
                f"{', '.join(summary['unknown'][:5])}")
    if summary and any(r.get("ok") and i not in calls_of for i, r in by_index.items()) and not summary.get("killed"):
        return Failure.BYPASS_ATTEMPT, "forged_record", "reported a test the library never began"
    if end is not None and end.get("state_changes"):
        return (Failure.BYPASS_ATTEMPT, "shared_state",
                f"changed state shared between tests: {', '.join(end['state_changes'][:3])}")
    killed = answer.get("killed", "") or summary.get("killed", "")
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
    problem = usage.problem(calls_of, len(outcomes))
    if problem:
        return Failure.NO_ZWC_CALL, "no_zwc_call", problem
    if not all(o.passed for o in outcomes):
        wrong = next(i for i, o in enumerate(outcomes) if not o.passed)
        return (Failure.WRONG_ANSWER, "wrong_answer",
                f"test {wrong}: expected {outcomes[wrong].expected[:200]}, got {outcomes[wrong].printed[:200]}")
    if "library" in answer:  # right answers: did they come from what zwc returned? (dependence.py)
        answers = {i: decode(r.get("value")) for i, r in by_index.items() if r.get("ok")}
        problem = usage.problem(calls_of, len(outcomes), answers)
        if problem:
            return Failure.NO_ZWC_CALL, "no_zwc_call", problem
    return Failure.PASSED, "", ""


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
