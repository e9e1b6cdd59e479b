"""Problem texts: what to compute, in words, never naming a NumPy or ZWC function.

What a function does comes from the first sentence of its NumPy docstring, cleaned of
code names; what each parameter means from the docstring's Parameters section. Train and
test tasks are written in two disjoint styles (openings, layout, the way inputs are stated
and the output asked for): a test query can never equal a train query, whatever the seed
draws, and stays far from it in embedding space (split hygiene, see hygiene.py). Within a
style the seed picks among several phrasings of each part.
"""

from __future__ import annotations

import random
import re
from functools import cache

from envs.zwc.library.catalogue import Entry
from envs.zwc.library.docs import numpy_doc

TRAIN_OPENINGS = [
    "You are writing a small numerical utility.",
    "A data analyst needs a helper for a processing pipeline.",
    "You maintain a scientific computing script.",
    "An engineering team is cleaning up measurement code.",
    "You are building a feature for a data dashboard.",
    "A research group needs a reusable function for their experiments.",
]
TRAIN_ASKS = [
    "Return the result; arrays may be returned as they are.",
    "Return what the computation produces.",
    "Give back the computed result.",
]
# test tasks (single and composed): other scenes, another layout, other closing words
TEST_OPENINGS = [
    "A colleague left a gap in a shared analysis notebook; fill it in.",
    "Code review found one missing routine in a simulation package.",
    "For a course assignment, implement the following helper.",
    "A monitoring tool at a factory needs one more calculation.",
    "While porting an old statistics program, this piece is still missing.",
    "A hobbyist astronomer wants a short routine for their observation logs.",
]
TEST_ASKS = [
    "Hand back the outcome unchanged.",
    "The value produced is the answer.",
    "Whatever the operation yields is what solve should output.",
]
OPENINGS = {"train": TRAIN_OPENINGS, "single_test": TEST_OPENINGS, "multiple_test": TEST_OPENINGS}
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


def opening(split: str, rng: random.Random) -> str:
    """The first sentence of a task of ``split``: train and test scenes never coincide."""
    return rng.choice(OPENINGS.get(split, TEST_OPENINGS))


def single_problem(entry: Entry, params: tuple[str, ...], example_args: tuple, rng: random.Random,
                   split: str = "train") -> str:
    """The problem text of a single-function task, in the style of its split."""
    notes = parameter_notes(entry)
    if split == "train":
        lines = [opening(split, rng), f"Task: {summary(entry)}"]
        inputs = []
        for name, value in zip(params, example_args, strict=True):
            note = notes.get(name, "")
            inputs.append(f"`{name}` ({describe_value(value)})" + (f": {note}" if note else ""))
        lines.append("Inputs: " + "; ".join(inputs) + ".")
        lines.append("Apply the operation to the inputs exactly as given, using the library's defaults for "
                     "everything else. " + rng.choice(TRAIN_ASKS))
        return "\n".join(lines)
    lines = [opening(split, rng), f"What solve must do: {step_phrase(entry)}."]
    for name, value in zip(params, example_args, strict=True):
        note = notes.get(name, "")
        lines.append(f"- `{name}` is {describe_value(value)}" + (f" ({note[0].lower() + note[1:]})" if note else ""))
    lines.append("Every setting not listed keeps its library default. " + rng.choice(TEST_ASKS))
    return "\n".join(lines)


def step_phrase(entry: Entry) -> str:
    text = summary(entry).rstrip(".")
    return text[0].lower() + text[1:]
