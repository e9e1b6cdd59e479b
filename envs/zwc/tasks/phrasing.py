"""Problem texts: what to compute, in words, never naming a NumPy or ZWC function.

What a function does comes from the first sentence of its NumPy docstring, cleaned of
code names; what each parameter means from the docstring's Parameters section. Several
phrasings per kind (an opening, a way to state inputs, a way to ask for the output) are
chosen by the seed, so a function's train and test tasks differ in wording as well as data.
"""

from __future__ import annotations

import random
import re
from functools import cache

from envs.zwc.catalogue import Entry
from envs.zwc.docs import numpy_doc

OPENINGS = [
    "You are writing a small numerical utility.",
    "A data analyst needs a helper for a processing pipeline.",
    "You maintain a scientific computing script.",
    "An engineering team is cleaning up measurement code.",
    "You are building a feature for a data dashboard.",
    "A research group needs a reusable function for their experiments.",
]
ASKS = [
    "Return the result; arrays may be returned as they are.",
    "Return what the computation produces.",
    "Give back the computed result.",
]
_CODE = re.compile(r"``[^`]*``|`[^`]*`|:\w+:|\b(?:np|numpy)\.[\w.]+", re.IGNORECASE)


def _clean(text: str) -> str:
    text = _CODE.sub(lambda m: m.group(0).strip("`") if re.fullmatch(r"`\w+`", m.group(0)) else "", text)
    text = re.sub(r"\b\w+\(\)", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\bndarray\b", "array", text)
    return re.sub(r"\bnumpy\b", "", text, flags=re.IGNORECASE)


@cache
def summary(entry: Entry) -> str:
    """The first sentence of the docstring's summary, without code names."""
    doc = numpy_doc(entry.numpy)
    paragraphs = [p for p in doc.split("\n\n") if p.strip()]
    for para in paragraphs:
        first = para.strip().split("\n")[0]
        if re.match(r"^[\w.]+\(", first) or first.startswith(("..", "Parameters")):
            continue
        sentence = _clean(" ".join(para.split()))
        sentence = sentence.split(". ")[0].rstrip(".")
        if len(sentence) > 12:
            return sentence + "."
    return "Apply the operation."


@cache
def parameter_notes(entry: Entry) -> dict[str, str]:
    """Parameter name -> its docstring description's first sentence, cleaned."""
    doc = numpy_doc(entry.numpy)
    section = doc.split("Parameters\n----------\n", 1)
    if len(section) < 2:
        return {}
    body = re.split(r"\n\w[\w ]*\n-{3,}\n", section[1], maxsplit=1)[0]
    notes: dict[str, str] = {}
    for match in re.finditer(r"^(\w+)(?:, \w+)* ?:[^\n]*\n((?:[ \t]+[^\n]*\n?)+)", body, re.MULTILINE):
        text = _clean(" ".join(match.group(2).split())).split(". ")[0].rstrip(".")
        notes[match.group(1)] = text
    return notes


def describe_value(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, tuple):
        return "a tuple of integers"
    if isinstance(value, list):
        depth, inner = 0, value
        while isinstance(inner, list) and inner:
            depth, inner = depth + 1, inner[0]
        what = {bool: "booleans", int: "integers", float: "numbers", complex: "complex numbers"}.get(
            type(inner), "values")
        return f"a list of {what}" if depth <= 1 else f"a {depth}-level nested list of {what}"
    return "a value"


def single_problem(entry: Entry, params: tuple[str, ...], example_args: tuple, rng: random.Random) -> str:
    """The problem text of a single-function task."""
    notes = parameter_notes(entry)
    lines = [rng.choice(OPENINGS), f"Task: {summary(entry)}"]
    inputs = []
    for name, value in zip(params, example_args, strict=True):
        note = notes.get(name, "")
        inputs.append(f"`{name}` ({describe_value(value)})" + (f": {note}" if note else ""))
    lines.append("Inputs: " + "; ".join(inputs) + ".")
    lines.append("Apply the operation to the inputs exactly as given, using the library's defaults for "
                 "everything else. " + rng.choice(ASKS))
    return "\n".join(lines)


def step_phrase(entry: Entry) -> str:
    text = summary(entry).rstrip(".")
    return text[0].lower() + text[1:]
