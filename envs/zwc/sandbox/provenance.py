"""Where a call's arguments came from: the evidence strict usage reads in the library's log.

A call of the task's function counts as a call "on the test's data" (``usage.py``) only if
its arguments both *differ* from that function's calls in the other tests (a constant dummy
does not) and *come from this test's input*. The second half is judged here, in the library
process, from what the library alone sees:

* an array handle is **derived** if the array was the test's input or was made by a call, a
  method or a constructor that was given derived data;
* a plain value (a list, a number, a string) is derived if it holds a value of this test's
  input that no other test's input holds (its *distinctive* values; all of its values where it
  has none), or a value the library handed out from derived data in this test (``tolist``, a
  scalar result).

So a counter kept across tests, a clock, a handle number or a random draw is not the test's
data, while the input itself, any part of it, anything computed from it by zwc, and plain
Python over values that zwc returned are. A call on data that plain Python transformed
beyond recognition (``[v / 100 for v in x]``) is not derived; where the reference solution's
own call of the function is not derived either, the rule does not ask for it
(``UsageRule``), so references always meet their own rule.
"""

from __future__ import annotations

import hashlib
import json
import re

OFF_DATA = "~"  # the library's mark on a fingerprint of arguments that did not come from the input
MAX_VALUES = 200_000  # values kept per test (input and handed-out); beyond, evidence is partial
_HANDLE = re.compile(r'\{"\$(h|fn|cb)":(\d+)\}')
# JSON scalars of the wire text: strings, and numbers not inside a name (``x1``)
_JSON_SCALAR = re.compile(r'"((?:[^"\\]|\\.)*)"|(?<![\w.$"])(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])')
# Python literals of an input text: quoted strings and numbers not inside a name
_PY_SCALAR = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\""
                        r"|(?<![\w.])(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])")
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _number(text: str):
    value = float(text)
    return ("n", value) if value == value else None


def wire_values(text: str) -> set:
    """The plain values in a wire text (tags' own keys and handle numbers left out)."""
    out = set()
    for string, number in _JSON_SCALAR.findall(_HANDLE.sub("", text)):
        if number:
            value = _number(number)
            if value is not None:
                out.add(value)
        elif string and not string.startswith("$"):
            out.add(("s", string))
        if len(out) >= MAX_VALUES:
            break
    return out


def input_values(text: str) -> set:
    """The literal values in a test's input text (``x=[1, 2.5], names=['a']``)."""
    out = set()
    for single, double, number in _PY_SCALAR.findall(text):
        if number:
            value = _number(number)
            if value is not None:
                out.add(value)
        elif single or double:
            out.add(("s", single or double))
        if len(out) >= MAX_VALUES:
            break
    return out


def distinctive_values(inputs: list[str]) -> list[frozenset]:
    """Per test, the values of its input that no test with a different input holds (all of its
    values where every one of them is shared)."""
    values = [input_values(text) for text in inputs]
    out = []
    for i, mine in enumerate(values):
        others = set().union(*(v for j, v in enumerate(values) if j != i and inputs[j] != inputs[i]))
        own = mine - others
        out.append(frozenset(own or mine))
    return out


def fingerprint(text: str, objects: dict) -> str:
    """A digest of a call's arguments as they came (the wire text of ``a`` and ``k``): their
    values, with each array by its dtype, shape and contents; handle and callback numbers,
    which say nothing about the data, are left out."""
    digest = hashlib.blake2b(digest_size=8)
    for kind, number in _HANDLE.findall(text):
        array = objects.get(int(number)) if kind == "h" else None
        nd = getattr(array, "_zwc_nd", None)
        if nd is not None:
            digest.update(f"A{nd.dtype.str}{nd.shape}".encode())
            digest.update(repr(nd.tolist()).encode() if nd.dtype.hasobject else nd.tobytes())
        digest.update(kind.encode())
    digest.update(_HANDLE.sub(lambda m: m.group(1), text).encode())
    return digest.hexdigest()


def handles_in(text: str) -> list[int]:
    """The array and function handle numbers a wire text names."""
    return [int(number) for kind, number in _HANDLE.findall(text) if kind != "cb"]


def arguments_text(message: dict) -> str:
    """The wire text of a request's arguments (what fingerprints and provenance read)."""
    return _dumps([message.get("a"), message.get("k")])


def reply_text(encoded) -> str:
    return _dumps(encoded)
