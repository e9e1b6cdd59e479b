"""Single-function tasks: one catalogued function, >= 8 executed test cases, and tests
that discriminate (a constant answer, the identity and a different function of the same
kind each fail at least one). A test task skips every input a train task of its function
used (``avoid``) and is worded in the test style (split hygiene)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from envs.zwc.grading.equality import values_equal
from envs.zwc.library.catalogue import CATALOGUE, Entry
from envs.zwc.task import Task, TestCase
from envs.zwc.tasks.hygiene import input_key
from envs.zwc.tasks.inputs import as_numpy, call_spec, generate_inputs, literal, numpy_callable
from envs.zwc.tasks.phrasing import single_problem
from envs.zwc.tasks.reference import (
    CUSTOM,
    SHAPE_ONLY,
    SHAPE_ONLY_NOTE,
    compile_reference,
    numpy_reference,
    output_text,
    run_reference,
)

MIN_TESTS = 8
MAX_TESTS = 10
DRAWS = 24  # candidate inputs drawn per task; the reference must accept at least MIN_TESTS
AVOIDING_DRAWS = 96  # for a test task, whose draws may hit inputs train used (small domains)
# functions that return their input's values by definition: the identity answer cannot fail
IDENTITY_BY_DEFINITION = {"numpy.copy", "numpy.positive"}
# results one ulp from the input: graded exactly, or the identity would pass within tolerance
EXACT = {"numpy.nextafter", "numpy.spacing"}


@dataclass
class Draft:
    """A task before sandbox verification, or the reason it was dropped."""

    task: Task | None
    entry: Entry
    dropped: str = ""


def selected_name(entry: Entry) -> str:
    """The name SE-Bench records in ``selected_functions`` (``mean``, ``linalg.inv``)."""
    return entry.numpy[len("numpy."):]


def same_value(a, b, exact: bool = False) -> bool:
    return values_equal(a, b, rel_tol=0.0 if exact else 1e-9, abs_tol=0.0 if exact else 1e-12)


def _as_called(entry: Entry) -> tuple:
    """The catalogue sample with array arguments made arrays, as the reference calls it."""
    spec = call_spec(entry)
    return tuple(np.array(a) if i in spec.array_params else as_numpy(a) for i, a in enumerate(spec.sample))


def _alternatives(entry: Entry) -> list[Entry]:
    """Same-kind functions that really differ from ``entry`` (not aliases such as abs/absolute)."""
    target = numpy_callable(entry)
    sample = _as_called(entry)
    own_ok, own = run_reference(lambda *a: target(*a), sample)
    found = []
    kind = [e for e in CATALOGUE if e.kind == entry.kind and e.numpy != entry.numpy]
    for other in kind:
        fn = numpy_callable(other)
        if fn is target:
            continue
        ok, value = run_reference(lambda *a, fn=fn: fn(*a), sample)
        if ok and own_ok and same_value(value, own):
            continue  # an alias on the sample: not a *different* function
        found.append(other)
    return found


def discriminates(entry: Entry, cases: list[tuple], outputs: list) -> str:
    """'' if the tests tell the function apart from trivial answers, else the reason."""
    if all(same_value(o, outputs[0]) for o in outputs[1:]):
        return "a constant answer passes"
    exact = entry.numpy in EXACT
    if entry.numpy not in IDENTITY_BY_DEFINITION and all(
            same_value(plain_first(args), out, exact) for args, out in zip(cases, outputs, strict=True)):
        return "the identity passes"
    for other in _alternatives(entry)[:2]:
        fn = numpy_callable(other)
        results = [run_reference(lambda *a, fn=fn: fn(*a), args) for args in cases]
        if all(ok and same_value(value, out) for (ok, value), out in zip(results, outputs, strict=True)):
            return f"{selected_name(other)} passes too"
    return ""


def plain_first(args: tuple):
    return args[0] if args else None


def make_single(entry: Entry, rng: random.Random, task_id: str, split: str,
                avoid: frozenset[tuple] | None = None) -> Draft:
    """A task for ``entry``. ``avoid``: input keys (``hygiene.input_key``) of the train tasks
    of this function; given for test splits, which also draw constructor sizes wider."""
    spec = call_spec(entry)
    params, source = numpy_reference(entry, spec)
    solve = compile_reference(source)
    wide, count = (avoid is not None), (DRAWS if avoid is None else AVOIDING_DRAWS)
    if entry.numpy in CUSTOM:
        draws = [c[:1] for c in generate_inputs(entry.__class__(entry.numpy, "unary"), rng, count, wide)]
    else:
        draws = generate_inputs(entry, rng, count, wide)
    cases, outputs, seen = [], [], set(avoid or ())
    for args in draws:
        key = input_key(", ".join(literal(a) for a in args))
        if key in seen:
            continue
        ok, value = run_reference(solve, args)
        if ok:
            seen.add(key)
            cases.append(args)
            outputs.append(value)
        if len(cases) == MAX_TESTS:
            break
    if len(cases) < MIN_TESTS:
        return Draft(None, entry, f"only {len(cases)} valid inputs")
    why = discriminates(entry, cases, outputs) if entry.numpy not in CUSTOM else ""
    if why:
        return Draft(None, entry, why)
    test_cases = [TestCase(input=", ".join(f"{p}={literal(a)}" for p, a in zip(params, args, strict=True)),
                           output=output_text(out)) for args, out in zip(cases, outputs, strict=True)]
    query = single_problem(entry, params, cases[0], rng, split)
    if entry.numpy in CUSTOM:
        query += "\n" + CUSTOM[entry.numpy][2]
    if entry.numpy in SHAPE_ONLY:
        query += "\n" + SHAPE_ONLY_NOTE
    if entry.kind == "inplace":
        query += "\nThe first input is to be changed in place, as an array of floats; return it afterwards."
    task = Task(task_id=task_id, split=split, kind=entry.kind, selected_functions=[selected_name(entry)],
                query=query, function_name=f"def solve({', '.join(params)}):", test_cases=test_cases,
                example=test_cases[0], example_output=[source])
    if entry.numpy in EXACT:
        task.rel_tol = task.abs_tol = 0.0
    return Draft(task, entry)
