"""Did a test's answer come from what zwc returned? Judged in the grader from the library's log.

Usage rules that only count calls (``usage.py``) are met by a token call whose result is thrown
away while plain Python computes the answer. So the library also logs, per test, every value it
handed out from data of the test's input, each with its *lineage*: the counted calls on the
test's data that the value came from (``library_child.py``: an array made by a call carries the
call's name and its arguments' lineage; an array a function writes into, ``copyto``, gains the
function's; plain values the candidate hands back in keep theirs). Handles count by their shape.

An answer *comes from* a set of calls when every number, string and boolean in it (at any depth;
an empty container holds none) equals, within the task's tolerance, a value the library handed
out in that test whose lineage holds one of those calls. So ``zwc.f(x)``, ``f(x).tolist()``,
``[float(v) for v in f(x)]``, ``round(float(f(x)), 4)`` or a dict of two calls' results come
from ``f``; the answer of plain Python next to a call on ``x[0]``, on ``0 * x``, on dummy data,
or next to a result never read, does not.

What it cannot tell: a value that the candidate computed itself and that equals one the library
handed out from the call (it must have made the right call on the test's data and read its
result, and then it may as well return it); and an answer that is arithmetic on such values
(``2 * float(f(x))``) does not count, so a rule asks for it only where the task's reference
solution's own answer came from the call (``UsageRule``).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterator
from typing import Any

MAX_LEAVES = 1_000_000  # values read from one test's handouts; beyond, the evidence is partial


def leaves(value: Any, depth: int = 0) -> Iterator[Any]:
    """The scalars of a decoded answer (numbers, strings, booleans, None), containers opened."""
    if depth > 64:
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from leaves(item, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(key, depth + 1)
            yield from leaves(item, depth + 1)
    else:
        yield value


def _tag_leaves(tag: Any, out: list, depth: int = 0) -> None:
    """The scalars a wire tag (``wire.py``) handed to the candidate; a handle gives its shape."""
    if depth > 64 or len(out) >= MAX_LEAVES:
        return
    if isinstance(tag, list):
        for item in tag:
            _tag_leaves(item, out, depth + 1)
    elif isinstance(tag, dict):
        if "$h" in tag:
            shape = [d for d in tag.get("s", []) if type(d) is int]
            out.extend(shape)
            out.extend((len(shape), math.prod(shape)))
        elif "$f" in tag:
            out.append(float(tag["$f"]))
        elif "$c" in tag:
            real, imag = (float(p["$f"]) if isinstance(p, dict) else p for p in tag["$c"])
            out.append(complex(real, imag))
        elif "$t" in tag:
            _tag_leaves(tag["$t"], out, depth + 1)
        elif "$d" in tag:
            _tag_leaves(tag["$d"], out, depth + 1)
    else:
        out.append(tag)


class HandedValues:
    """The scalars handed out in one test whose lineage passes a test, searchable with tolerance."""

    def __init__(self, handouts: list, accept: Callable[[frozenset], bool]):
        found: list = []
        for entry in handouts:
            if isinstance(entry, list) and len(entry) == 2 and accept(frozenset(entry[0])):
                _tag_leaves(entry[1], found)
        self.numbers = sorted(float(v) for v in found if type(v) in (int, float) and not math.isnan(v))
        self.nan = any(type(v) is float and math.isnan(v) for v in found)
        self.complex = [v for v in found if type(v) is complex]
        self.other = {v for v in found if type(v) in (str, bool) or v is None}
        self.bools = {v for v in found if type(v) is bool}

    def holds(self, value: Any, rel_tol: float, abs_tol: float) -> bool:
        if type(value) is bool:
            return value in self.bools or float(value) in self._near(float(value), rel_tol, abs_tol)
        if type(value) in (int, float):
            number = float(value)
            if math.isnan(number):
                return self.nan
            return bool(self._near(number, rel_tol, abs_tol))
        if type(value) is complex:
            return any(abs(value - c) <= max(rel_tol * max(abs(value), abs(c)), abs_tol) or value == c
                       for c in self.complex) or (value.imag == 0 and bool(self._near(value.real, rel_tol, abs_tol)))
        return value in self.other

    def _near(self, number: float, rel_tol: float, abs_tol: float) -> list[float]:
        if math.isinf(number):
            i = bisect.bisect_left(self.numbers, number)
            return [number] if i < len(self.numbers) and self.numbers[i] == number else []
        slack = max(abs_tol, rel_tol * abs(number)) * 1.0000001
        lo = bisect.bisect_left(self.numbers, number - slack)
        hi = bisect.bisect_right(self.numbers, number + slack)
        return [n for n in self.numbers[lo:hi]
                if abs(n - number) <= max(rel_tol * max(abs(n), abs(number)), abs_tol)]


def comes_from(answer: Any, handed: HandedValues, rel_tol: float, abs_tol: float) -> bool:
    """Whether every scalar of ``answer`` is a value ``handed`` holds (None alone never is)."""
    if answer is None:
        return False
    return all(handed.holds(leaf, rel_tol, abs_tol) for leaf in leaves(answer))
