"""Read chosen fields of many Python objects without touching the objects.

Why: a sandbox child is a fork of the fork server, sharing its memory page by page until a
page is written. Reading an attribute from Python writes the object's reference count, so a
check that reads ~900 functions' names and dicts copies ~1,500 pages and cost ~3 ms per
candidate, more than everything else the sandbox does. Here the fields are read as machine
words, by address, through one ctypes view of the address space (no NumPy: the stub server
never imports it); the objects' pages are only read, never written.

The addresses come from CPython's object layout, found by probing objects whose fields are
known (``FunctionLayout.probe``, ``dict_version_word``). Where a layout cannot be found (another
interpreter), the probes return None and callers fall back to reading through Python.
Every object whose words are read must be kept alive by the caller: its memory stays mapped.
"""

from __future__ import annotations

import ctypes
import operator
from dataclasses import dataclass

_WORD = ctypes.sizeof(ctypes.c_void_p)
_SCAN = 24  # words of an object searched for a field


def _words(obj: object, count: int = _SCAN) -> list[int]:
    return list((ctypes.c_size_t * count).from_address(id(obj)))


def _index_of(obj: object, target: object, count: int = _SCAN) -> int | None:
    """The one word of ``obj`` that holds the address of ``target`` (None unless exactly one)."""
    found = [i for i, word in enumerate(_words(obj, count)) if word == id(target)]
    return found[0] if len(found) == 1 else None


def dict_version_word() -> int | None:
    """Which word of a dict changes on every write (CPython's ``ma_version_tag``), or None."""
    probes = []
    for _ in range(2):
        d = {"k": object()}
        before = _words(d, 8)
        d["k"] = object()  # a value replaced: size and keys unchanged, only the version moves
        after = _words(d, 8)
        probes.append([i for i in range(1, 8) if before[i] != after[i]])
    return probes[0][0] if probes[0] == probes[1] and len(probes[0]) == 1 else None


@dataclass(frozen=True)
class FunctionLayout:
    """Words of a function object holding its name, qualname, doc, module, dict, code and defaults."""

    words: tuple[int, ...]

    @classmethod
    def probe(cls) -> FunctionLayout | None:
        def probe_fn(a=object(), *, b=object()):
            return a, b

        fields = {"__name__": "".join(["probe", "_name"]), "__qualname__": "".join(["probe", "_qualname"]),
                  "__doc__": "".join(["probe", "_doc"]), "__module__": "".join(["probe", "_module"])}
        for name, value in fields.items():
            setattr(probe_fn, name, value)
        targets = [*fields.values(), probe_fn.__dict__, probe_fn.__code__, probe_fn.__defaults__,
                   probe_fn.__kwdefaults__]
        words = tuple(_index_of(probe_fn, t) for t in targets)
        return cls(words) if None not in words and len(set(words)) == len(words) else None


class WordWatch:
    """Words at fixed addresses, read all at once; compare a reading with the baseline."""

    def __init__(self, addresses: list[int]):
        top = max(addresses, default=_WORD) + _WORD
        # a view of the address space from its first word up to the last address (nothing is read
        # until indexed); indices are word numbers
        self._memory = (ctypes.c_size_t * (top // _WORD)).from_address(_WORD)
        index = [a // _WORD - 1 for a in addresses]
        self._gather = operator.itemgetter(*index)  # one loop in C
        self._single = len(index) == 1  # itemgetter of one index returns the item, not a tuple
        self._baseline = self.read()

    def read(self) -> tuple[int, ...]:
        words = self._gather(self._memory)
        return (words,) if self._single else words

    def changed(self) -> list[int]:
        """Positions (in ``addresses``) whose word differs from the baseline."""
        now = self.read()
        if now == self._baseline:  # the usual case, compared in C
            return []
        return [i for i, (word, then) in enumerate(zip(now, self._baseline, strict=True)) if word != then]
