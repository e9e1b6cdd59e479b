"""Multi-function tasks: compositions of >= 3 functions whose kinds fit, as the paper
builds them: sample 10 functions, keep a chain in which each step's output is a valid
input of the next (array -> array steps, then an array -> array or array -> scalar step).
Worded in the test style, and never on an input a train task of one of its functions used."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from functools import cache

import numpy as np

from envs.zwc.library.catalogue import CATALOGUE, Entry
from envs.zwc.task import Task, TestCase
from envs.zwc.tasks.hygiene import input_key
from envs.zwc.tasks.inputs import call_spec, literal
from envs.zwc.tasks.phrasing import opening, step_phrase
from envs.zwc.tasks.reference import compile_reference, output_text, run_reference
from envs.zwc.tasks.single import MIN_TESTS, Draft, same_value, selected_name

ONE_ARRAY_KINDS = {"unary", "unary_positive", "unary_unit", "cumulative"}
ONE_ARRAY_NAMES = {"numpy.sort", "numpy.flip", "numpy.ravel", "numpy.transpose", "numpy.fliplr"}
TERMINAL_KINDS = {"reduction"}
SAMPLED = 10


def _one_array(entry: Entry) -> bool:
    return (entry.kind in ONE_ARRAY_KINDS | TERMINAL_KINDS or entry.numpy in ONE_ARRAY_NAMES) and \
        len(call_spec(entry).sample) == 1


@cache  # a function of the catalogue alone; recomputing it was most of a composition's drafting time
def _pool() -> tuple[list[Entry], list[Entry], list[Entry]]:
    middle = [e for e in CATALOGUE if _one_array(e) and e.kind not in TERMINAL_KINDS]
    first = middle + [e for e in CATALOGUE if e.kind == "binary" and len(call_spec(e).sample) == 2]
    last = middle + [e for e in CATALOGUE if _one_array(e) and e.kind in TERMINAL_KINDS]
    return first, middle, last


def _chain(rng: random.Random) -> list[Entry]:
    first, middle, last = _pool()
    sampled = rng.sample(sorted({*first, *last}, key=lambda e: e.numpy), SAMPLED)
    chain: list[Entry] = []
    for role in (first, middle, last):
        options = [e for e in sampled if e in role and e not in chain] or [e for e in role if e not in chain]
        chain.append(rng.choice(options))
    if rng.random() < 0.3:  # sometimes a fourth step before the last
        options = [e for e in middle if e not in chain]
        chain.insert(2, rng.choice(options))
    return chain


def make_multi(rng: random.Random, task_id: str, split: str = "multiple_test",
               avoid: Callable[[Iterable[str]], frozenset[tuple]] | None = None) -> Draft:
    """A composition task. ``avoid``: selected names -> input keys train tasks of them used."""
    chain = _chain(rng)
    avoided = avoid([selected_name(e) for e in chain]) if avoid is not None else frozenset()
    binary = chain[0].kind == "binary"
    params = ("x", "y") if binary else ("x",)
    expr = f"np.{chain[0].call_target[6:]}(x, y)" if binary else f"np.{chain[0].call_target[6:]}(x)"
    for entry in chain[1:]:
        expr = f"np.{entry.call_target[6:]}({expr})"
    source = f"import numpy as np\n\n\ndef solve({', '.join(params)}):\n    return {expr}\n"
    solve = compile_reference(source)
    cases, outputs = [], []
    for _ in range(16):
        n = rng.randint(3, 7)
        x = [round(rng.uniform(0.1, 4.0), 3) for _ in range(n)]
        args = (x, [round(rng.uniform(0.5, 3.0), 3) for _ in range(n)]) if binary else (x,)
        if avoided and input_key(", ".join(literal(a) for a in args)) in avoided:
            continue
        ok, value = run_reference(solve, args)
        if ok and np.all(np.isfinite(np.asarray(value, dtype=float))):
            cases.append(args)
            outputs.append(value)
        if len(cases) == MIN_TESTS:
            break
    names = [selected_name(e) for e in chain]
    if len(cases) < MIN_TESTS:
        return Draft(None, chain[0], "composition gives non-finite or invalid results")
    if all(same_value(o, outputs[0]) for o in outputs[1:]):
        return Draft(None, chain[0], "a constant answer passes")
    if all(same_value(args[0], o) for args, o in zip(cases, outputs, strict=True)):
        return Draft(None, chain[0], "the identity passes")
    steps = [f"Step 1: {step_phrase(chain[0])}" + (" (with `x` and `y`)." if binary else " (on `x`).")]
    steps += [f"Step {i}: on the result of step {i - 1}, {step_phrase(e)}." for i, e in enumerate(chain[1:], 2)]
    query = "\n".join([opening(split, rng),
                       "Inputs: " + ", ".join(f"`{p}` (a list of numbers)" for p in params) + ".",
                       *steps, "Use the library's defaults for everything the steps do not say. "
                       "Return the result of the last step."])
    tests = [TestCase(input=", ".join(f"{p}={literal(a)}" for p, a in zip(params, args, strict=True)),
                      output=output_text(out)) for args, out in zip(cases, outputs, strict=True)]
    task = Task(task_id=task_id, split=split, kind="composition", selected_functions=names, query=query,
                function_name=f"def solve({', '.join(params)}):", test_cases=tests, example=tests[0],
                example_output=[source])
    return Draft(task, chain[0])
