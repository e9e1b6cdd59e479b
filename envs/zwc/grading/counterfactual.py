"""The counterfactual run: does a test's answer move when the library changes the call's result?

The library's handouts (``dependence.py``) show an answer that *is* what zwc returned; an honest
answer that does arithmetic on it in Python (``sum(int(v) for v in f(x))``, ``2 * float(f(x))``)
is not such a value. For a candidate whose answers are right and whose only fault is that, the
grader runs it once more with the results of those calls on the test's data changed beyond any
tolerance (``perturb.py``; the candidate's process is fresh and is told nothing) and keeps the
tests whose answers moved (another value, or an error). An answer computed in Python next to a
call whose result it never used stays where it was, and fails.

What it cannot tell: a candidate that checks the library's result against its own computation
and changes its answer when they differ makes its answer depend on the call on purpose.
"""

from __future__ import annotations

from dataclasses import replace

from envs.zwc.grading.equality import values_equal
from envs.zwc.grading.grade import decode, grade, library_tests
from envs.zwc.grading.usage import UsageRule
from envs.zwc.grading.verdict import Verdict
from envs.zwc.task import Task


def answers_of(answer: dict) -> dict[int, object]:
    """Each test's returned value (tests that returned)."""
    return {r["i"]: decode(r.get("value")) for r in answer.get("records", [])
            if r.get("event") == "test" and r.get("ok") and type(r.get("i")) is int}


def recheck(pool, items: list[tuple[Task, str, dict, UsageRule, Verdict]]) -> dict[int, Verdict]:
    """Verdicts regraded after counterfactual runs, by index into ``items`` ((task, code, sandbox
    answer, usage rule, verdict) each); only the candidates that need one are run again."""
    reruns = []
    for k, (task, code, answer, rule, verdict) in enumerate(items):
        if verdict.reason != "no_zwc_call" or not verdict.tests or not all(o.passed for o in verdict.tests):
            continue
        tests, _ = library_tests(answer)
        n_tests = len(task.test_cases)
        if rule.problem(tests, n_tests) or not (gaps := rule.answer_gaps(tests, answers_of(answer), n_tests)):
            continue  # something else failed it, or nothing to look for
        if any(not names for _, names, _ in gaps):
            continue  # no call of those functions ran where the answer needs one: nothing can move
        for label, names, missing in gaps:
            job = {"code": code, "entry": task.entry_point, "inputs": task.inputs(), "printed": task.is_official,
                   "perturb": sorted(names)}
            reruns.append((k, label, missing, job))
    if not reruns:
        return {}
    moved: dict[int, dict[str, frozenset[int]]] = {}
    for (k, label, missing, _), rerun in zip(reruns, pool.run_many([r[3] for r in reruns]), strict=True):
        rule = items[k][3]
        before = answers_of(items[k][2])
        after = {r["i"]: r for r in rerun.get("records", []) if r.get("event") == "test" and type(r.get("i")) is int}
        moved.setdefault(k, {})[label] = frozenset(
            i for i in missing if _moved(before.get(i), after.get(i), rule))
    return {k: grade(items[k][0], items[k][2], replace(items[k][3], moved=m)) for k, m in moved.items()}


def _moved(before, record: dict | None, rule: UsageRule) -> bool:
    if record is None:
        return False  # a test that never ran says nothing
    if not record.get("ok"):
        return True  # the changed result broke it: the answer depended on it
    return not values_equal(decode(record.get("value")), before, rel_tol=rule.rel_tol, abs_tol=rule.abs_tol)
