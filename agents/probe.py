"""The API-recall probe: does the model know the ZWC name of a function from what it does?

For every catalogued function, the model is asked closed-book (no docs, no names) which zwc
function does what the function's description says: the first sentence of its docstring,
the same words the tasks use, cleaned of code names. The first ``zwc.<path>`` in the answer
is its guess. ``recall`` is the fraction named exactly; a name for the same NumPy object
(``abs``/``absolute``) counts in ``recall_with_aliases`` only. A cheap, direct measure of
internalisation that moves long before task success does on small models.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agents.models import Model
from agents.prompts import LIBRARY, SYSTEM
from envs.zwc.library.names import Mapping

QUESTION = ("Which zwc function does the following? {description}\n"
            "Answer with one line of Python that calls it, like `zwc.<name>(x)`.")
_NAME = re.compile(r"\bzwc((?:\.[A-Za-z_]\w*)+)")
_NUMPY = re.compile(r"\b(?:np|numpy)\.\w")


@dataclass
class ProbeAnswer:
    numpy: str
    zwc: str
    description: str
    answer: str
    named: str          # the first zwc.<path> in the answer, '' if none
    correct: bool       # named exactly
    alias: bool         # named a ZWC function for the same NumPy object
    valid: bool         # named some real ZWC function
    numpy_used: bool    # the answer reaches for numpy


@dataclass
class ProbeReport:
    model: str
    zwc: str
    n: int
    recall: float
    recall_with_aliases: float
    valid_name_rate: float
    numpy_rate: float
    seconds: float
    config: dict = field(default_factory=dict)
    answers: list[ProbeAnswer] = field(default_factory=list)

    def recall_on(self, numpy_paths) -> float:
        """Exact recall over a subset of functions (e.g. those a learner trained on)."""
        wanted = set(numpy_paths)
        chosen = [a for a in self.answers if a.numpy in wanted]
        return sum(a.correct for a in chosen) / len(chosen) if chosen else 0.0

    def write(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(asdict(self), indent=1) + "\n")


def probe_prompt(description: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"{LIBRARY['closed']}\n\n{QUESTION.format(description=description)}"}]


def first_name(text: str) -> str:
    match = _NAME.search(text)
    return "zwc" + match.group(1) if match else ""


def _same_object(mapping: Mapping) -> dict[str, set[str]]:
    """zwc path -> the zwc paths of every catalogued name for the same NumPy object."""
    import importlib

    def resolve(path: str):
        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name, None)

    groups: dict[int, set[str]] = {}
    objects = {}
    for entry in mapping:
        obj = resolve(entry.numpy)
        objects[entry.zwc] = id(obj) if obj is not None else entry.zwc
        groups.setdefault(objects[entry.zwc], set()).add(entry.zwc)
    return {zwc: groups[key] for zwc, key in objects.items()}


def probe(model: Model, mapping: Mapping, *, limit: int | None = None, max_tokens: int = 40) -> ProbeReport:
    """Ask ``model`` about every catalogued function (or the first ``limit``) and score its answers."""
    from envs.zwc.library.catalogue import BY_PATH
    from envs.zwc.tasks.phrasing import summary

    entries = list(mapping)[:limit]
    if not entries:
        raise ValueError("the probe has no functions to ask about (an empty mapping, or limit < 1)")
    descriptions = [summary(BY_PATH[e.numpy]) for e in entries]
    started = time.perf_counter()
    outputs = model.generate([probe_prompt(d) for d in descriptions], n=1, temperature=0.0, max_tokens=max_tokens)
    seconds = time.perf_counter() - started
    valid_names = {e.zwc for e in mapping}
    aliases = _same_object(mapping)
    answers = []
    for entry, description, [completion] in zip(entries, descriptions, outputs, strict=True):
        named = first_name(completion.text)
        answers.append(ProbeAnswer(numpy=entry.numpy, zwc=entry.zwc, description=description,
                                   answer=completion.text.strip(), named=named, correct=named == entry.zwc,
                                   alias=named in aliases[entry.zwc], valid=named in valid_names,
                                   numpy_used=bool(_NUMPY.search(completion.text))))
    n = len(answers)
    return ProbeReport(model=model.name, zwc=mapping.origin, n=n, recall=sum(a.correct for a in answers) / n,
                       recall_with_aliases=sum(a.alias for a in answers) / n,
                       valid_name_rate=sum(a.valid for a in answers) / n,
                       numpy_rate=sum(a.numpy_used for a in answers) / n, seconds=round(seconds, 2),
                       config={"max_tokens": max_tokens, "limit": limit, "question": QUESTION}, answers=answers)
